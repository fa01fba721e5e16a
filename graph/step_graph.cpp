#include "graph/step_graph.hpp"

#include <fmt/format.h>

#include <charconv>

#include <map>
#include <tuple>

#include "graph/control_flow.hpp"
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
  if (id == kNoNode) return Status(Error::not_found, fmt::format("no node named '{}'", ops::abbreviate(name)));
  if (port < 0 || port >= g.num_outputs(id))
    return Status(Error::not_found, fmt::format("node '{}' ({}) has {} outputs, so '{}' names none",
                                                name, g.node(id).op, g.num_outputs(id), ops::abbreviate(text)));
  return Endpoint{id, port};
}

namespace {

DType output_type(const Graph& g, Endpoint e) {
  const Node& n = g.node(e.node);
  return static_cast<size_t>(e.port) < n.output_types.size()
             ? ops::base_dtype(n.output_types[static_cast<size_t>(e.port)])
             : DType::invalid;
}

// An `_Arg` or `_Retval` of the graph itself — a function body converted to
// a graph — rather than one a step graph adds for a feed or fetch.
bool is_function_io(const Node& n, const char* op) {
  const bool* step_io = n.attr<bool>("_step_io");
  return n.op == op && (step_io == nullptr || !*step_io);
}

// A fetch: "name[:port]", or the name of a function's `_Retval` node, which
// stands for the value it returns (its input).
Expected<Endpoint> fetch_endpoint(const Graph& g, const std::string& text) {
  NodeId id = g.find(text);
  if (id == kNoNode && text.size() > 2 && text.compare(text.size() - 2, 2, ":0") == 0)
    id = g.find(std::string_view(text).substr(0, text.size() - 2));
  if (id != kNoNode && is_function_io(g.node(id), "_Retval")) {  // "ret" or "ret:0"
    if (g.node(id).inputs.empty())
      return Status(Error::invalid_graph, fmt::format("_Retval '{}' has no input", text));
    return g.node(id).inputs.front();
  }
  return parse_endpoint(g, text);
}

bool is_placeholder(const std::string& op) {
  return op == "Placeholder" || op == "PlaceholderV2" || op == "PlaceholderWithDefault";
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
Graph prune(const Graph& g, const std::vector<NodeId>& roots,
            std::vector<NodeId>* kept_as = nullptr) {
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
  if (kept_as != nullptr) *kept_as = new_id;
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    if (!keep[static_cast<size_t>(id)]) continue;
    const Node& src = g.node(id);
    Node& dst = out.mutable_node(new_id[static_cast<size_t>(id)]);
    for (const Endpoint& e : src.inputs) dst.inputs.push_back({new_id[static_cast<size_t>(e.node)], e.port});
    for (NodeId c : src.control_inputs) dst.control_inputs.push_back(new_id[static_cast<size_t>(c)]);
  }
  return out;
}

// The frame the outputs of `id` live in: an Enter's are in the frame it
// opens, an Exit's in the parent of its own.
FrameId output_frame(const Graph& g, const ControlFlowInfo& cf, NodeId id) {
  const FrameId f = cf.frame_of[static_cast<size_t>(id)];
  switch (node_role(g.node(id))) {
    case ops::OpRole::enter:
      for (size_t child = 0; child < cf.frames.size(); ++child)
        for (NodeId e : cf.frames[child].enters)
          if (e == id) return static_cast<FrameId>(child);
      return f;
    case ops::OpRole::exit:
      return f == kRootFrame ? f : cf.frames[static_cast<size_t>(f)].parent;
    default:
      return f;
  }
}

// Feeds and fetches hold one value per step, so each must be a value of
// the root frame: a value inside a loop exists once per iteration of each
// frame instance. Checked on the graph the step reads, feeds not yet cut
// (frames come from the Enters upstream of the fed node); a graph whose
// frames cannot be analysed is left to the step's own analysis to report.
Status check_root_frame(const Graph& g, const std::vector<std::string>& feeds,
                        const std::vector<Endpoint>& feed_points,
                        const std::vector<std::string>& fetches,
                        const std::vector<Endpoint>& fetch_points, std::vector<NodeId> roots) {
  for (const Endpoint& e : feed_points) roots.push_back(e.node);
  for (const Endpoint& e : fetch_points) roots.push_back(e.node);
  std::vector<NodeId> new_id;
  Graph read = prune(g, roots, &new_id);
  auto cf = analyze_control_flow(read);
  if (!cf.ok()) return ok_status();
  auto check = [&](const std::string& what, const std::string& text, Endpoint e,
                   const char* instead) {
    const FrameId f = output_frame(read, *cf, new_id[static_cast<size_t>(e.node)]);
    if (f == kRootFrame) return ok_status();
    const Node& n = g.node(e.node);
    return Status(Error::invalid_argument,
                  fmt::format("{} '{}': {} '{}' is inside the loop frame '{}': it has a value in "
                              "every iteration of every instance of that frame, not one per "
                              "step, so {}",
                              what, ops::abbreviate(text), n.op, n.name,
                              cf->frames[static_cast<size_t>(f)].name, instead));
  };
  for (size_t i = 0; i < feed_points.size(); ++i)
    TF_RETURN_IF_ERROR(check("feed", feeds[i], feed_points[i],
                             "one fed value cannot stand for it (feed a value the loop reads, "
                             "outside the loop: the input of its Enter)"));
  for (size_t i = 0; i < fetch_points.size(); ++i)
    TF_RETURN_IF_ERROR(check("fetch", fetches[i], fetch_points[i],
                             "it cannot be fetched (fetch what the loop gives out through "
                             "its Exit)"));
  return ok_status();
}

}  // namespace

DeclaredOutput declared_output(const Graph& g, Endpoint e) {
  const Node& n = g.node(e.node);
  DeclaredOutput d;
  d.dtype = output_type(g, e);
  d.declared_by = fmt::format("{} '{}'", n.op, n.name);
  if (e.port == 0 && is_placeholder(n.op)) {
    const auto* shape = n.attr<ops::PartialShape>("shape");
    // TensorFlow reads an empty shape as unknown in graphs before version 22.
    const bool legacy_unknown = shape != nullptr && g.versions().producer <= 21 &&
                                !shape->unknown_rank && shape->dims.empty();
    if (shape != nullptr && !legacy_unknown) {
      d.shape = *shape;
      return d;
    }
  }
  if (e.port == 0 && n.op == "Const")
    if (const auto* value = n.attr<ops::Tensor>("value")) {
      d.shape = ops::PartialShape{false, value->shape().dims()};
      return d;
    }
  if (const auto* shapes = n.attr<ops::AttrList>("_output_shapes"))
    if (static_cast<size_t>(e.port) < shapes->shape.size()) {
      d.shape = shapes->shape[static_cast<size_t>(e.port)];
      d.declared_by += " (its _output_shapes)";
    }
  return d;
}

Status check_feed(const std::string& feed, const DeclaredOutput& declared, const ops::Tensor& value) {
  if (!value.valid())
    return Status(Error::invalid_argument, fmt::format("feed '{}' has no value", ops::abbreviate(feed)));
  bool fits = declared.dtype == DType::invalid || ops::base_dtype(value.dtype()) == declared.dtype;
  const ops::PartialShape& want = declared.shape;
  if (!want.unknown_rank) {
    fits = fits && static_cast<int>(want.dims.size()) == value.rank();
    for (int i = 0; fits && i < value.rank(); ++i) {
      const int64_t d = want.dims[static_cast<size_t>(i)];
      fits = d < 0 || d == value.dim(i);
    }
  }
  if (fits) return ok_status();
  return Status(Error::invalid_argument,
                fmt::format("feed '{}' is {} {} but {} declares {} {}", ops::abbreviate(feed),
                            ops::dtype_name(value.dtype()), value.shape().to_string(),
                            declared.declared_by, ops::dtype_name(declared.dtype),
                            want.to_string()));
}

Expected<StepGraph> make_step_graph(const Graph& g, const std::vector<std::string>& feeds,
                                    const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets) {
  StepGraph step;
  Graph work = g;
  std::vector<NodeId> roots;

  std::vector<Endpoint> feed_points;
  for (size_t i = 0; i < feeds.size(); ++i) {
    auto e = parse_endpoint(g, feeds[i]);
    if (!e.ok()) return e.status().with_prefix("feed '" + ops::abbreviate(feeds[i]) + "': ");
    for (const Endpoint& seen : feed_points)
      if (seen == *e)
        return Status(Error::invalid_argument, "feed '" + ops::abbreviate(feeds[i]) + "' is given twice");
    feed_points.push_back(*e);
    step.feeds.push_back(declared_output(g, *e));
    const DType t = step.feeds.back().dtype;
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
  std::vector<Endpoint> fetch_points;
  for (const std::string& fetch : fetches) {
    auto e = fetch_endpoint(g, fetch);
    if (!e.ok()) return e.status().with_prefix("fetch '" + ops::abbreviate(fetch) + "': ");
    fetch_points.push_back(*e);
  }
  std::vector<NodeId> targets_run;
  for (const std::string& t : targets) {
    NodeId id = g.find(t);
    if (id == kNoNode)
      return Status(Error::not_found, fmt::format("target '{}': no node of that name", ops::abbreviate(t)));
    const Node& n = g.node(id);
    if (!is_function_io(n, "_Retval")) {
      targets_run.push_back(id);
      continue;
    }
    // A function's result has no effect of its own: run what it returns.
    for (const Endpoint& in : n.inputs) targets_run.push_back(in.node);
    for (NodeId c : n.control_inputs) targets_run.push_back(c);
  }
  TF_RETURN_IF_ERROR(check_root_frame(g, feeds, feed_points, fetches, fetch_points, targets_run));
  for (size_t i = 0; i < fetches.size(); ++i) {
    auto e = fetch_points[i];
    // A fetch of a fed endpoint returns the fed value.
    for (size_t f = 0; f < feed_points.size(); ++f)
      if (feed_points[f] == e) e = Endpoint{work.find(fmt::format("_feed/{}", f)), 0};
    Node ret;
    ret.name = fmt::format("_fetch/{}", i);
    ret.op = "_Retval";
    ret.attrs["T"] = output_type(work, e);
    ret.attrs["index"] = static_cast<int64_t>(i);
    ret.attrs["_step_io"] = true;
    ret.inputs.push_back(e);
    TF_ASSIGN_OR_RETURN(NodeId ret_id, work.add_node(std::move(ret)));
    roots.push_back(ret_id);
    step.fetches.push_back(fetches[i]);
  }
  roots.insert(roots.end(), targets_run.begin(), targets_run.end());
  step.graph = prune(work, roots);
  for (const Node& n : step.graph.nodes()) {
    if (n.op == "Placeholder")
      return Status(Error::not_found,
                    fmt::format("Placeholder '{}' must be fed: the fetches and targets need it", n.name));
    if (is_function_io(n, "_Arg"))
      return Status(Error::not_found,
                    fmt::format("_Arg '{}' must be fed: the fetches and targets need this argument "
                                "of the function the graph was converted from", n.name));
  }
  TF_RETURN_IF_ERROR(validate(step.graph));
  return step;
}

}  // namespace tagflow::graph
