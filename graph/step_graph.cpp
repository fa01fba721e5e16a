#include "graph/step_graph.hpp"

#include <fmt/format.h>

#include <charconv>

#include <map>
#include <tuple>

#include "graph/device.hpp"
#include "graph/proto/graph_def.pb.h"
#include "graph/validate.hpp"

namespace tagflow::graph {

Expected<Endpoint> parse_endpoint(const Graph& g, const std::string& text) {
  std::string name = text;
  int port = 0;
  size_t colon = text.rfind(':');
  if (colon != std::string::npos) {
    const char* first = text.data() + colon + 1;
    const char* last = text.data() + text.size();
    auto [end, ec] = std::from_chars(first, last, port);
    if (ec == std::errc() && end == last && first != last) name = text.substr(0, colon);
    else port = 0;  // a ':' that is part of the name
  }
  NodeId id = g.find(name);
  if (id == kNoNode) return Status(Error::not_found, fmt::format("no node named '{}'", name));
  if (port < 0 || port >= g.num_outputs(id))
    return Status(Error::not_found, fmt::format("node '{}' ({}) has {} outputs, so '{}' names none",
                                                name, g.node(id).op, g.num_outputs(id), text));
  return Endpoint{id, port};
}

namespace {

DType output_type(const Graph& g, Endpoint e) {
  const Node& n = g.node(e.node);
  return static_cast<size_t>(e.port) < n.output_types.size()
             ? ops::base_dtype(n.output_types[static_cast<size_t>(e.port)])
             : DType::invalid;
}

// A user _Send/_Recv's rendezvous: (tensor_name, send_device, recv_device),
// devices canonical so that "/cpu:0" meets "/device:CPU:0".
using TransferName = std::tuple<std::string, std::string, std::string>;

TransferName transfer_name(const Node& n) {
  auto text = [&](const char* key) {
    const std::string* s = n.attr<std::string>(key);
    return s == nullptr ? std::string() : *s;
  };
  auto device = [&](const char* key) {
    auto d = parse_device_name(text(key));
    return d.ok() ? full_name(*d) : text(key);
  };
  return {text("tensor_name"), device("send_device"), device("recv_device")};
}

// Keeps the nodes reachable backwards from `roots`, in their original order;
// a kept _Recv keeps the _Sends of its rendezvous (they have no edge).
Graph prune(const Graph& g, const std::vector<NodeId>& roots) {
  std::map<TransferName, std::vector<NodeId>> sends;
  for (NodeId id = 0; id < g.num_nodes(); ++id)
    if (node_role(g.node(id)) == ops::OpRole::send) sends[transfer_name(g.node(id))].push_back(id);
  std::vector<bool> keep(static_cast<size_t>(g.num_nodes()), false);
  std::vector<NodeId> stack(roots);
  for (NodeId r : roots) keep[static_cast<size_t>(r)] = true;
  while (!stack.empty()) {
    const Node& n = g.node(stack.back());
    stack.pop_back();
    auto visit = [&](NodeId src) {
      if (!keep[static_cast<size_t>(src)]) {
        keep[static_cast<size_t>(src)] = true;
        stack.push_back(src);
      }
    };
    for (const Endpoint& e : n.inputs) visit(e.node);
    for (NodeId c : n.control_inputs) visit(c);
    if (node_role(n) == ops::OpRole::recv && !sends.empty())
      if (auto it = sends.find(transfer_name(n)); it != sends.end())
        for (NodeId send : it->second) visit(send);
  }
  std::vector<NodeId> new_id(static_cast<size_t>(g.num_nodes()), kNoNode);
  Graph out;
  out.set_versions(g.versions());
  out.mutable_library() = g.library();
  NodeId next = 0;
  for (NodeId id = 0; id < g.num_nodes(); ++id)
    if (keep[static_cast<size_t>(id)]) new_id[static_cast<size_t>(id)] = next++;
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    if (!keep[static_cast<size_t>(id)]) continue;
    Node n = g.node(id);
    n.inputs.clear();
    n.control_inputs.clear();
    (void)out.add_node(std::move(n));
  }
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    if (!keep[static_cast<size_t>(id)]) continue;
    const Node& src = g.node(id);
    Node& dst = out.mutable_node(new_id[static_cast<size_t>(id)]);
    for (const Endpoint& e : src.inputs) dst.inputs.push_back({new_id[static_cast<size_t>(e.node)], e.port});
    for (NodeId c : src.control_inputs) dst.control_inputs.push_back(new_id[static_cast<size_t>(c)]);
  }
  return out;
}

}  // namespace

Expected<StepGraph> make_step_graph(const Graph& g, const std::vector<std::string>& feeds,
                                    const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets) {
  StepGraph step;
  Graph work = g;
  std::vector<NodeId> roots;

  std::vector<Endpoint> feed_points;
  for (size_t i = 0; i < feeds.size(); ++i) {
    auto e = parse_endpoint(g, feeds[i]);
    if (!e.ok()) return e.status().with_prefix("feed '" + feeds[i] + "': ");
    for (const Endpoint& seen : feed_points)
      if (seen == *e) return Status(Error::invalid_argument, "feed '" + feeds[i] + "' is given twice");
    feed_points.push_back(*e);
    DType t = output_type(g, *e);
    step.feed_types.push_back(t);
    Node arg;
    arg.name = fmt::format("_feed/{}", i);
    arg.op = "_Arg";
    arg.attrs["T"] = t;
    arg.attrs["index"] = static_cast<int64_t>(i);
    arg.attrs["_step_io"] = true;
    TF_ASSIGN_OR_RETURN(NodeId arg_id, work.add_node(std::move(arg)));
    for (NodeId id = 0; id < g.num_nodes(); ++id)
      for (Endpoint& in : work.mutable_node(id).inputs)
        if (in == *e) in = Endpoint{arg_id, 0};
  }
  for (size_t i = 0; i < fetches.size(); ++i) {
    auto e = parse_endpoint(g, fetches[i]);
    if (!e.ok()) return e.status().with_prefix("fetch '" + fetches[i] + "': ");
    // A fetch of a fed endpoint returns the fed value.
    for (size_t f = 0; f < feed_points.size(); ++f)
      if (feed_points[f] == *e) *e = Endpoint{work.find(fmt::format("_feed/{}", f)), 0};
    Node ret;
    ret.name = fmt::format("_fetch/{}", i);
    ret.op = "_Retval";
    ret.attrs["T"] = output_type(work, *e);
    ret.attrs["index"] = static_cast<int64_t>(i);
    ret.attrs["_step_io"] = true;
    ret.inputs.push_back(*e);
    TF_ASSIGN_OR_RETURN(NodeId ret_id, work.add_node(std::move(ret)));
    roots.push_back(ret_id);
    step.fetches.push_back(fetches[i]);
  }
  for (const std::string& t : targets) {
    NodeId id = g.find(t);
    if (id == kNoNode) return Status(Error::not_found, fmt::format("target '{}': no node of that name", t));
    roots.push_back(id);
  }
  step.graph = prune(work, roots);
  for (const Node& n : step.graph.nodes())
    if (n.op == "Placeholder")
      return Status(Error::not_found,
                    fmt::format("Placeholder '{}' must be fed: the fetches and targets need it", n.name));
  TF_RETURN_IF_ERROR(validate(step.graph));
  return step;
}

}  // namespace tagflow::graph
