// `tagflow partition`: writes what each device runs in a step, as a session
// plans and runs it (Session::plan, graph::plan_step), so that a person can
// see the Send/Recv pairs and the control loops.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "actors/session.hpp"
#include "graph/device.hpp"
#include "graph/io/export.hpp"
#include "graph/io/import.hpp"
#include "net/cluster_hosts.hpp"
#include "tools/commands.hpp"

namespace tagflow::tools {

namespace {

// The step named by the flags; none: the whole graph — every node no other
// node reads a target, every Placeholder fed.
graph::StepSignature step_of(const PartitionArgs& args, const graph::Graph& g) {
  graph::StepSignature step;
  for (const std::string& f : args.feeds) step.feeds.push_back(f.substr(0, f.find('=')));
  step.fetches = args.fetches;
  step.targets = args.targets;
  if (!step.feeds.empty() || !step.fetches.empty() || !step.targets.empty()) return step;
  std::vector<bool> read(static_cast<size_t>(g.num_nodes()), false);
  for (const graph::Node& n : g.nodes()) {
    for (const graph::Endpoint& e : n.inputs) read[static_cast<size_t>(e.node)] = true;
    for (graph::NodeId c : n.control_inputs) read[static_cast<size_t>(c)] = true;
  }
  for (graph::NodeId id = 0; id < g.num_nodes(); ++id) {
    const graph::Node& n = g.node(id);
    if (n.op == "Placeholder" || n.op == "PlaceholderV2") step.feeds.push_back(n.name);
    else if (!read[static_cast<size_t>(id)]) step.targets.push_back(n.name);
  }
  return step;
}

}  // namespace

int partition_graph(const PartitionArgs& args) {
  auto placement = graph::parse_place_option(args.place);
  if (!placement.ok()) return fail(placement.status().with_prefix("--place: "));
  // The session validates the graph and reads the devices from the
  // configuration, exactly as `tagflow run` would (the configuration first,
  // so that its errors name its file), and plans the step as it would run
  // it: what is written is what runs.
  actors::SessionOptions o;
  o.placement = *placement;
  auto devices = num_devices(args.devices);
  if (!devices.ok()) return fail(devices.status());
  o.num_devices = *devices;
  o.config_file = args.config;
  o.cluster = args.cluster;
  o.lower_functional = args.lower_functional;
  o.optimize = args.optimize;
  auto hosts = std::make_shared<net::ClusterHosts>();
  auto cluster = actors::Session::names_cluster(o);
  if (!cluster.ok()) return fail(cluster.status());
  if (*cluster) o.hosts = hosts;
  // Nothing runs here: one thread. (Not the deterministic scheduler: the
  // middleman's brokers, loaded for the cluster, are never stopped under it.)
  o.threads = 1;
  auto resolved = actors::Session::resolve_options(o);
  if (!resolved.ok()) return fail(resolved.status());
  graph::ImportOptions limits;
  limits.max_nodes = *resolved->max_nodes;
  limits.max_constant_bytes = *resolved->memory_limit;
  auto g = graph::import_graph_file(args.graph, limits);
  if (!g.ok()) return fail(g.status());
  auto session = actors::Session::create(std::move(g).value(), *resolved);
  if (!session.ok()) return fail(session.status().with_prefix(args.graph + ": "));
  // The step's partitions as the session would build and run them.
  auto parts = (*session)->plan(step_of(args, (*session)->graph()));
  if (!parts.ok()) return fail(parts.status().with_prefix(args.graph + ": "));
  const std::vector<graph::Partition>& partitions = parts->partitions;

  std::error_code ec;
  std::filesystem::create_directories(args.out_dir, ec);
  if (ec)
    return fail(Status(ops::Error::not_found,
                       fmt::format("cannot create the directory '{}': {}", args.out_dir, ec.message())));
  int sends = 0, control_loops = 0;
  for (const graph::Partition& p : partitions) {
    auto name = graph::parse_device_name(p.device);
    const std::string file = args.out_dir + "/" + (name.ok() ? graph::short_name(*name) : "partition") + ".pbtxt";
    Status w = graph::export_graph_file(p.graph, file);
    if (!w.ok()) return fail(w);
    int p_sends = 0, p_recvs = 0, p_loops = 0;
    for (const graph::Node& n : p.graph.nodes()) {
      if (n.op == "_Send") ++p_sends;
      if (n.op == "_Recv") ++p_recvs;
      if (n.op == "Enter" && n.name.rfind("_cf/", 0) == 0) ++p_loops;
    }
    sends += p_sends;
    control_loops += p_loops;
    const std::string where = hosts->is_remote(p.device) ? " on " + hosts->describe(p.device) : "";
    std::printf("%s%s: %d nodes, %d _Send, %d _Recv, %d control loops -> %s\n", p.device.c_str(),
                where.c_str(), p.graph.num_nodes(), p_sends, p_recvs, p_loops, file.c_str());
  }
  const std::string dot = args.out_dir + "/partitions.dot";
  std::ofstream out(dot);
  out << graph::partitions_to_dot(partitions);
  if (!out) return fail(Status(ops::Error::not_found, "cannot write '" + dot + "'"));
  std::printf("%zu partitions, %d transfers, %d control loops -> %s\n", partitions.size(), sends,
              control_loops, dot.c_str());
  return 0;
}

}  // namespace tagflow::tools
