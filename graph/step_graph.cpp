#include "graph/step_graph.hpp"

#include <fmt/format.h>

#include <charconv>

#include <algorithm>
#include <map>
#include <tuple>

#include "graph/analysis/control_flow.hpp"
#include "graph/device.hpp"
#include "graph/functions/function_instantiator.hpp"
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

// The step's nodes: the graph's own (ids 0..n-1), then an _Arg per feed
// (n + f), then a _Retval per fetch (n + feeds + k). A data input that
// reads a fed endpoint reads the feed's _Arg instead.
class StepNodes {
 public:
  StepNodes(const Graph& g, const std::vector<Endpoint>& feeds, const std::vector<Endpoint>& fetches)
      : g_(g), feeds_(feeds), fetches_(fetches), fed_node_(static_cast<size_t>(g.num_nodes()), false) {
    for (const Endpoint& e : feeds) fed_node_[static_cast<size_t>(e.node)] = true;
  }

  NodeId arg(size_t f) const { return g_.num_nodes() + static_cast<NodeId>(f); }
  NodeId retval(size_t k) const { return arg(feeds_.size()) + static_cast<NodeId>(k); }
  size_t size() const { return static_cast<size_t>(retval(fetches_.size())); }

  // What a data input of one of the graph's nodes reads.
  Endpoint source(Endpoint e) const {
    if (fed_node_[static_cast<size_t>(e.node)])
      for (size_t f = 0; f < feeds_.size(); ++f)
        if (feeds_[f] == e) return Endpoint{arg(f), 0};
    return e;
  }
  Endpoint fetch_source(size_t k) const { return source(fetches_[k]); }

  // Keeps what `roots` need, backwards over every edge; a kept _Recv keeps
  // the _Sends of its rendezvous (they have no edge).
  std::vector<bool> needed(const std::vector<NodeId>& roots) const {
    std::map<TransferName, std::vector<NodeId>> sends;
    for (NodeId id = 0; id < g_.num_nodes(); ++id)
      if (node_role(g_.node(id)) == ops::OpRole::send) sends[transfer_name(g_.node(id))].push_back(id);
    std::vector<bool> keep(size(), false);
    std::vector<NodeId> stack;
    auto visit = [&](NodeId id) {
      if (!keep[static_cast<size_t>(id)]) {
        keep[static_cast<size_t>(id)] = true;
        stack.push_back(id);
      }
    };
    for (NodeId r : roots) visit(r);
    while (!stack.empty()) {
      const NodeId id = stack.back();
      stack.pop_back();
      if (id >= retval(0)) {
        visit(fetch_source(static_cast<size_t>(id - retval(0))).node);
        continue;
      }
      if (id >= arg(0)) continue;
      const Node& n = g_.node(id);
      for (const Endpoint& e : n.inputs) visit(source(e).node);
      for (NodeId c : n.control_inputs) visit(c);
      if (node_role(n) == ops::OpRole::recv && !sends.empty())
        if (auto it = sends.find(transfer_name(n)); it != sends.end())
          for (NodeId send : it->second) visit(send);
    }
    return keep;
  }

 private:
  const Graph& g_;
  const std::vector<Endpoint>& feeds_;
  const std::vector<Endpoint>& fetches_;
  std::vector<bool> fed_node_;
};

Node step_io_node(const std::string& name, const char* op, DType t, size_t index) {
  Node n;
  n.name = name;
  n.op = op;
  n.attrs["T"] = t;
  n.attrs["index"] = static_cast<int64_t>(index);
  n.attrs["_step_io"] = true;
  return n;
}

// The step graph of the kept nodes, in the order of StepNodes. When the
// graph's own nodes are all kept it is a copy of the graph, which shares
// every node it does not rewire (graph/graph.hpp); else the kept nodes are
// copied into a new graph.
Expected<Graph> build(const Graph& g, const StepNodes& step, const std::vector<bool>& keep,
                      const std::vector<DType>& feed_types, const std::vector<DType>& fetch_types) {
  const NodeId n = g.num_nodes();
  std::vector<NodeId> new_id(step.size(), kNoNode);
  NodeId next = 0;
  for (size_t id = 0; id < step.size(); ++id)
    if (keep[id]) new_id[id] = next++;
  // `s` is what an input reads (StepNodes::source): a node of the graph or
  // a feed's _Arg.
  auto remap_source = [&](Endpoint s) { return Endpoint{new_id[static_cast<size_t>(s.node)], s.port}; };
  auto remap = [&](Endpoint e) { return remap_source(step.source(e)); };
  const bool all_kept = std::all_of(keep.begin(), keep.begin() + n, [](bool k) { return k; });
  Graph out;
  if (all_kept) {
    out = g;
    // Only the consumers of fed endpoints change.
    for (NodeId id = 0; id < n; ++id) {
      const Node& node = g.node(id);
      for (size_t i = 0; i < node.inputs.size(); ++i)
        if (step.source(node.inputs[i]) != node.inputs[i])
          out.mutable_node(id).inputs[i] = remap(node.inputs[i]);
    }
  } else {
    out.reserve(next);
    out.set_versions(g.versions());
    out.mutable_library() = g.library();
    for (NodeId id = 0; id < n; ++id) {
      if (!keep[static_cast<size_t>(id)]) continue;
      Node copy = g.node(id);
      copy.inputs.clear();  // set below: an input may name a later node
      copy.control_inputs.clear();
      TF_RETURN_IF_ERROR(out.add_node(std::move(copy)).status());
    }
    for (NodeId id = 0; id < n; ++id) {
      if (!keep[static_cast<size_t>(id)]) continue;
      const Node& src = g.node(id);
      Node& dst = out.mutable_node(new_id[static_cast<size_t>(id)]);
      dst.inputs.reserve(src.inputs.size());
      for (const Endpoint& e : src.inputs) dst.inputs.push_back(remap(e));
      dst.control_inputs.reserve(src.control_inputs.size());
      for (NodeId c : src.control_inputs) dst.control_inputs.push_back(new_id[static_cast<size_t>(c)]);
    }
  }
  for (size_t f = 0; f < feed_types.size(); ++f)
    if (keep[static_cast<size_t>(step.arg(f))])
      TF_RETURN_IF_ERROR(out.add_node(step_io_node(fmt::format("_feed/{}", f), "_Arg", feed_types[f], f)).status());
  for (size_t k = 0; k < fetch_types.size(); ++k) {
    Node ret = step_io_node(fmt::format("_fetch/{}", k), "_Retval", fetch_types[k], k);
    ret.inputs.push_back(remap_source(step.fetch_source(k)));
    TF_RETURN_IF_ERROR(out.add_node(std::move(ret)).status());
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
  // The part of the graph those nodes read, analysed in place (a copy of
  // it would double a large graph's memory for a moment).
  const std::vector<bool> read = StepNodes(g, {}, {}).needed(roots);
  auto cf = analyze_control_flow(g, &read);
  if (!cf.ok()) return ok_status();
  auto check = [&](const std::string& what, const std::string& text, Endpoint e,
                   const char* instead) {
    const FrameId f = output_frame(g, *cf, e.node);
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

// Only what the step's `_Retval`s and `targets` need, after lowering: a
// call keeps its whole body, some of which its used outputs may not need.
Expected<Graph> prune_lowered(const Graph& g, const std::vector<std::string>& targets) {
  std::vector<NodeId> roots;
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    const Node& n = g.node(id);
    if (n.op == "_Retval" && !is_function_io(n, "_Retval")) roots.push_back(id);
  }
  for (const std::string& t : targets)
    if (NodeId id = g.find(t); id != kNoNode) roots.push_back(id);
  const std::vector<Endpoint> none;
  StepNodes nodes(g, none, none);
  std::vector<bool> keep = nodes.needed(roots);
  if (std::all_of(keep.begin(), keep.end(), [](bool k) { return k; })) return g;
  return build(g, nodes, keep, {}, {});
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
    if (const auto* value = n.attr<ops::Tensor>("value")) d.shape = ops::PartialShape{false, value->shape().dims()};
  return d;
}

Expected<DeclaredOutput> feed_declaration(const Graph& g, const std::string& feed, Endpoint e) {
  DeclaredOutput d = declared_output(g, e);
  if (d.dtype != DType::invalid) return d;
  for (const OutEdge& out : g.out_edges(e.node)) {
    if (out.src_port != e.port || out.dst_input < 0) continue;
    const Node& consumer = g.node(out.dst);
    if (consumer.input_types.size() != consumer.inputs.size()) continue;
    const DType t = ops::base_dtype(consumer.input_types[static_cast<size_t>(out.dst_input)]);
    if (t == DType::invalid) continue;
    d.dtype = t;
    d.declared_by = fmt::format("{} '{}', which reads it,", consumer.op, consumer.name);
    return d;
  }
  const Node& n = g.node(e.node);
  return Status(Error::invalid_argument,
                fmt::format("feed '{}': the dtype of '{}' cannot be inferred: node '{}' has op '{}', which "
                            "declares none here, and no consumer whose signature is known reads that output",
                            ops::abbreviate(feed), g.endpoint_name(e), n.name, n.op));
}

Status check_feed(const std::string& feed, const DeclaredOutput& declared, const ops::Tensor& value, bool shapes) {
  if (!value.valid())
    return Status(Error::invalid_argument, fmt::format("feed '{}' has no value", ops::abbreviate(feed)));
  bool fits = declared.dtype == DType::invalid || ops::base_dtype(value.dtype()) == declared.dtype;
  const ops::PartialShape& want = declared.shape;
  const bool dtype_fits = fits;
  if (shapes) fits = fits && want.is_compatible_with(value.shape());
  if (fits) return ok_status();
  // Only the shape disagrees: say how to feed it anyway.
  const char* how = dtype_fits ? " (--no-feed-shape-check, SessionOptions::check_feed_shapes = false: "
                                 "the dtype alone is checked)"
                               : "";
  return Status(Error::invalid_argument,
                fmt::format("feed '{}' is {} {} but {} declares {}{}{}", ops::abbreviate(feed),
                            ops::dtype_name(value.dtype()), value.shape().to_string(),
                            declared.declared_by, ops::dtype_name(declared.dtype),
                            shapes ? " " + want.to_string() : std::string(), how));
}

Expected<StepGraph> make_step_graph(const Graph& g, const std::vector<std::string>& feeds,
                                    const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets,
                                    FunctionInstantiator* functions) {
  StepGraph step;
  // The _Arg and _Retval nodes are named _feed/i and _fetch/i: a graph
  // that already has such a node cannot take them.
  auto taken = [&](const std::string& name) -> Status {
    if (g.find(name) == kNoNode) return ok_status();
    return Status(Error::invalid_graph, "node '" + name + "' is defined twice");
  };
  std::vector<Endpoint> feed_points;
  for (size_t i = 0; i < feeds.size(); ++i) {
    auto e = parse_endpoint(g, feeds[i]);
    if (!e.ok()) return e.status().with_prefix("feed '" + ops::abbreviate(feeds[i]) + "': ");
    for (const Endpoint& seen : feed_points)
      if (seen == *e)
        return Status(Error::invalid_argument, "feed '" + ops::abbreviate(feeds[i]) + "' is given twice");
    feed_points.push_back(*e);
    TF_ASSIGN_OR_RETURN(DeclaredOutput declared, feed_declaration(g, feeds[i], *e));
    step.feeds.push_back(std::move(declared));
    TF_RETURN_IF_ERROR(taken(fmt::format("_feed/{}", i)));
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
  std::vector<DType> fetch_types;
  for (size_t i = 0; i < fetches.size(); ++i) {
    // A fetch of a fed endpoint returns the fed value (StepNodes::source).
    fetch_types.push_back(output_type(g, fetch_points[i]));
    TF_RETURN_IF_ERROR(taken(fmt::format("_fetch/{}", i)));
    step.fetches.push_back(fetches[i]);
  }
  StepNodes nodes(g, feed_points, fetch_points);
  std::vector<NodeId> roots;
  for (size_t k = 0; k < fetches.size(); ++k) roots.push_back(nodes.retval(k));
  roots.insert(roots.end(), targets_run.begin(), targets_run.end());
  std::vector<DType> feed_types;
  for (const DeclaredOutput& d : step.feeds) feed_types.push_back(d.dtype);
  TF_ASSIGN_OR_RETURN(step.graph, build(g, nodes, nodes.needed(roots), feed_types, fetch_types));
  for (const Node& n : step.graph.nodes()) {
    if (n.op == "Placeholder")
      return Status(Error::not_found,
                    fmt::format("Placeholder '{}' must be fed: the fetches and targets need it", n.name));
    if (is_function_io(n, "_Arg"))
      return Status(Error::not_found,
                    fmt::format("_Arg '{}' must be fed: the fetches and targets need this argument "
                                "of the function the graph was converted from", n.name));
  }
  if (functions != nullptr) {
    TF_ASSIGN_OR_RETURN(bool lowered, functions->lower(&step.graph));
    if (lowered) {
      std::vector<std::string> target_names;
      for (NodeId id : targets_run) target_names.push_back(g.node(id).name);
      TF_ASSIGN_OR_RETURN(step.graph, prune_lowered(step.graph, target_names));
    }
  }
  // The graph's nodes were validated with it; the new ones and every edge
  // are checked here, and an op tagflow does not know is an error now.
  ValidateOptions options;
  options.keep_resolved = true;
  Status valid = validate(step.graph, options);
  if (functions != nullptr) valid = functions->with_call_chain(valid);
  TF_RETURN_IF_ERROR(valid);
  return step;
}

}  // namespace tagflow::graph
