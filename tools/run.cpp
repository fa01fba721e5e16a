// `tagflow run`: runs a graph once and prints the fetched tensors.
#include "tools/commands.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "actors/session.hpp"
#include "graph/import.hpp"
#include "graph/placement.hpp"
#include "graph/step_graph.hpp"
#include "ops/tensor_literal.hpp"

namespace tagflow::tools {

namespace {

// The dtype a feed must have: what the graph produces at that endpoint.
ops::Expected<ops::DType> feed_dtype(const graph::Graph& g, const std::string& name) {
  TF_ASSIGN_OR_RETURN(graph::Endpoint e, graph::parse_endpoint(g, name));
  const graph::Node& n = g.node(e.node);
  if (static_cast<size_t>(e.port) >= n.output_types.size())
    return Status(ops::Error::invalid_argument,
                  fmt::format("feed '{}': the dtype of {} ({}) is not known", name, n.name, n.op));
  return ops::base_dtype(n.output_types[static_cast<size_t>(e.port)]);
}

}  // namespace

int run_graph(const RunArgs& args) {
  auto g = graph::import_graph_file(args.graph);
  if (!g.ok()) return fail(g.status());
  std::unique_ptr<actors::JsonlSink> trace;
  actors::SessionOptions o;
  o.threads = args.threads;
  o.max_iterations = args.max_iterations;
  o.timeout = std::chrono::milliseconds(args.timeout_ms);
  o.config_file = args.config;
  o.num_devices = args.devices;
  auto placement = graph::parse_place_option(args.place);
  if (!placement.ok()) return fail(placement.status().with_prefix("--place: "));
  o.placement = *placement;
  if (!args.trace.empty()) {
    trace = actors::JsonlSink::open(args.trace);
    if (!trace) return fail(Status(ops::Error::not_found, "cannot write the trace file '" + args.trace + "'"));
    o.events = trace.get();
  }
  auto session = actors::Session::create(std::move(g).value(), o);
  if (!session.ok()) return fail(session.status().with_prefix(args.graph + ": "));

  actors::Feeds feeds;
  for (const std::string& f : args.feeds) {
    size_t eq = f.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail(Status(ops::Error::invalid_argument, "--feed '" + f + "' is not NAME=VALUE"));
    std::string name = f.substr(0, eq);
    auto dtype = feed_dtype((*session)->graph(), name);
    if (!dtype.ok()) return fail(dtype.status().with_prefix("--feed " + name + ": "));
    auto value = ops::parse_tensor_literal(f.substr(eq + 1), *dtype);
    if (!value.ok()) return fail(value.status().with_prefix("--feed " + name + ": "));
    feeds.emplace_back(std::move(name), std::move(value).value());
  }
  auto result = (*session)->run(feeds, args.fetches, args.targets);
  if (!result.ok()) return fail(result.status());
  for (size_t i = 0; i < args.fetches.size(); ++i) {
    const ops::Tensor& t = (*result)[i];
    std::printf("%s = %s  (%s, shape %s)\n", args.fetches[i].c_str(),
                t.values_string(args.max_print).c_str(), ops::dtype_name(t.dtype()).c_str(),
                t.shape().to_string().c_str());
  }
  return 0;
}

}  // namespace tagflow::tools
