// Shape inference: the worklist that runs the shape functions to a fixed
// point and the calls into library functions.
#include "graph/shapes/shape_inference.hpp"

#include <deque>
#include <set>

#include <fmt/format.h>

#include "graph/functions/body_graph.hpp"
#include "graph/functions/function_library.hpp"
#include "graph/functions/lowering.hpp"
#include "graph/shapes/functional_shape_functions.hpp"
#include "graph/validate.hpp"

namespace tagflow::graph {
inline namespace shapes {

std::string to_string(const OutputInfo& info) {
  std::string s = ops::dtype_name(info.dtype) + " " + info.shape.to_string();
  if (info.value) s += " = " + info.value->values_string(8);
  return s;
}

// --- the fixed point ---------------------------------------------------------
namespace {

bool same(const OutputInfo& a, const OutputInfo& b) {
  if (!(a.shape == b.shape) || a.value.has_value() != b.value.has_value()) return false;
  return !a.value || a.value->equals(*b.value);
}

// What is known of an output that took both values over the iterations.
OutputInfo join(const OutputInfo& old, const OutputInfo& now) {
  OutputInfo out;
  out.dtype = old.dtype;
  out.shape = generalize(old.shape, now.shape);
  if (old.value && now.value && old.value->equals(*now.value)) out.value = old.value;
  return out;
}

// Nodes in dependency order, a Merge's NextIteration inputs left out (the
// back edges of loops); nodes of a cycle that validate() would refuse last.
std::vector<NodeId> dependency_order(const Graph& g) {
  const int n = g.num_nodes();
  std::vector<int> pending(static_cast<size_t>(n), 0);
  for (NodeId id = 0; id < n; ++id) {
    const Node& node = g.node(id);
    const bool merge = node_role(node) == ops::OpRole::merge;
    for (const Endpoint& e : node.inputs)
      if (!(merge && node_role(g.node(e.node)) == ops::OpRole::next_iteration)) ++pending[static_cast<size_t>(id)];
  }
  std::vector<NodeId> order;
  order.reserve(static_cast<size_t>(n));
  for (NodeId id = 0; id < n; ++id)
    if (pending[static_cast<size_t>(id)] == 0) order.push_back(id);
  for (size_t k = 0; k < order.size(); ++k) {
    const NodeId id = order[k];
    const bool back = node_role(g.node(id)) == ops::OpRole::next_iteration;
    for (const OutEdge& e : g.out_edges(id)) {
      if (e.dst_input < 0) continue;
      if (back && node_role(g.node(e.dst)) == ops::OpRole::merge) continue;
      if (--pending[static_cast<size_t>(e.dst)] == 0) order.push_back(e.dst);
    }
  }
  if (order.size() < static_cast<size_t>(n)) {
    std::vector<bool> in(static_cast<size_t>(n), false);
    for (NodeId id : order) in[static_cast<size_t>(id)] = true;
    for (NodeId id = 0; id < n; ++id)
      if (!in[static_cast<size_t>(id)]) order.push_back(id);
  }
  return order;
}

class Inference {
 public:
  Inference(const Graph& g, const ShapeInferenceOptions& options)
      : g_(g), options_(options), lib_(g.library()) {
    call_ = [this](const ops::NameAttrList& f, const std::vector<OutputInfo>& args) { return call(f, args); };
  }

  Expected<ShapeMap> run();

 private:
  // The node's outputs from its inputs now; false if an input is not known yet.
  bool compute(NodeId id, std::vector<OutputInfo>* out, Status* status);
  std::optional<std::vector<OutputInfo>> call(const ops::NameAttrList& f, const std::vector<OutputInfo>& args);
  Status resolve_feeds();

  const Graph& g_;
  const ShapeInferenceOptions& options_;
  FunctionLibrary lib_;
  ops::CallFn call_;
  ShapeMap map_;
  std::vector<bool> done_;
  std::map<NodeId, std::vector<std::pair<int, ops::PartialShape>>> feeds_;
};

Status Inference::resolve_feeds() {
  for (const auto& [name, s] : options_.feeds) {
    std::string node = name;
    int port = 0;
    if (auto colon = name.rfind(':'); colon != std::string::npos) {
      node = name.substr(0, colon);
      try {
        port = std::stoi(name.substr(colon + 1));
      } catch (...) {
        return Status(Error::invalid_argument, "feed '" + name + "' is not of the form node:port");
      }
    }
    const NodeId id = g_.find(node);
    if (id == kNoNode || port < 0 || port >= g_.num_outputs(id))
      return Status(Error::not_found, "feed '" + name + "' names no output of the graph");
    feeds_[id].emplace_back(port, s);
  }
  return ok_status();
}

bool Inference::compute(NodeId id, std::vector<OutputInfo>* out, Status* status) {
  const Node& n = g_.node(id);
  const int num_out = g_.num_outputs(id);
  out->assign(static_cast<size_t>(std::max(num_out, 0)), OutputInfo{});
  for (size_t p = 0; p < out->size(); ++p)
    (*out)[p].dtype = p < n.output_types.size() ? ops::base_dtype(n.output_types[p]) : DType::invalid;
  const bool merge = node_role(n) == ops::OpRole::merge;
  std::vector<const OutputInfo*> inputs;
  inputs.reserve(n.inputs.size());
  for (const Endpoint& e : n.inputs) {
    const bool ready = done_[static_cast<size_t>(e.node)] &&
                       static_cast<size_t>(e.port) < map_.nodes[static_cast<size_t>(e.node)].size();
    if (ready) inputs.push_back(&map_.at(e));
    else if (!merge) return false;
  }
  if (merge) {
    // The most specific shape every live input could give.
    if (inputs.empty()) return false;
    if (!out->empty()) {
      OutputInfo& o = (*out)[0];
      o.shape = inputs[0]->shape;
      o.value = inputs[0]->value;
      for (size_t i = 1; i < inputs.size(); ++i) o = join(o, *inputs[i]);
    }
    if (out->size() > 1) (*out)[1].shape = shape::scalar();
  } else {
    ops::InferenceContext ctx(n.name, n.op, n.attrs, std::move(inputs), out, &call_);
    ctx.set_producer(g_.versions().producer);
    if (std::optional<Status> s = run_shape_function(n, ctx)) {
      *status = std::move(*s);
    } else if (n.def == nullptr && lib_.find(n.op) != nullptr) {
      // A call of a library function by name.
      std::vector<OutputInfo> args;
      for (int i = 0; i < ctx.num_inputs(); ++i) args.push_back(ctx.input(i));
      if (auto r = call_(ops::NameAttrList{n.op, n.attrs}, args); r && r->size() == out->size())
        for (size_t p = 0; p < r->size(); ++p) (*out)[p].shape = (*r)[p].shape;
    }
    if (!status->ok())  // at this step's shapes; only the fixed point's error counts
      for (OutputInfo& o : *out) o = OutputInfo{o.dtype, shape::unknown(), std::nullopt};
  }
  if (auto f = feeds_.find(id); f != feeds_.end())
    for (const auto& [port, s] : f->second) (*out)[static_cast<size_t>(port)] = {(*out)[static_cast<size_t>(port)].dtype, s, std::nullopt};
  return true;
}

Expected<ShapeMap> Inference::run() {
  TF_RETURN_IF_ERROR(resolve_feeds());
  const size_t n = static_cast<size_t>(g_.num_nodes());
  map_.nodes.assign(n, {});
  done_.assign(n, false);
  std::vector<Status> status(n);
  const std::vector<NodeId> order = dependency_order(g_);
  // Seeded in dependency order, each node runs once unless a loop's back
  // edge changes what it reads; every change makes a shape less specific,
  // so the worklist empties.
  std::deque<NodeId> work(order.begin(), order.end());
  std::vector<bool> queued(n, true);
  std::vector<OutputInfo> now;
  while (!work.empty()) {
    const NodeId id = work.front();
    work.pop_front();
    const size_t i = static_cast<size_t>(id);
    queued[i] = false;
    Status s;
    if (!compute(id, &now, &s)) continue;
    status[i] = s;
    bool changed = false;
    if (!done_[i]) {
      map_.nodes[i] = now;
      done_[i] = true;
      changed = true;
    } else {
      for (size_t p = 0; p < now.size(); ++p) {
        OutputInfo j = join(map_.nodes[i][p], now[p]);
        if (!same(j, map_.nodes[i][p])) {
          map_.nodes[i][p] = std::move(j);
          changed = true;
        }
      }
    }
    if (!changed) continue;
    for (const OutEdge& e : g_.out_edges(id)) {
      if (e.dst_input < 0 || queued[static_cast<size_t>(e.dst)]) continue;
      queued[static_cast<size_t>(e.dst)] = true;
      work.push_back(e.dst);
    }
  }
  for (NodeId id : order) {
    const size_t i = static_cast<size_t>(id);
    if (!status[i].ok()) return status[i];
    if (!done_[i]) {  // never reached: inputs from nodes that never ran
      map_.nodes[i].clear();
      for (int p = 0; p < g_.num_outputs(id); ++p) {
        const Node& node = g_.node(id);
        const DType t = static_cast<size_t>(p) < node.output_types.size()
                            ? ops::base_dtype(node.output_types[static_cast<size_t>(p)]) : DType::invalid;
        map_.nodes[i].push_back({t, shape::unknown(), std::nullopt});
      }
    }
  }
  return std::move(map_);
}

std::optional<std::vector<OutputInfo>> Inference::call(const ops::NameAttrList& callee,
                                                       const std::vector<OutputInfo>& args) {
  if (options_.max_function_depth <= 0) return std::nullopt;
  const tensorflow::FunctionDef* f = lib_.find(callee.name);
  if (f == nullptr) return std::nullopt;
  auto in_types = lib_.input_types(*f, callee.attr);
  if (!in_types.ok() || in_types->size() != args.size()) return std::nullopt;
  ShapeInferenceOptions inner;
  inner.max_function_depth = options_.max_function_depth - 1;
  BodyGraphOptions bo;
  bo.make_arg = [&](size_t i, DType type) {
    Node n;
    n.name = "_shape_arg_" + std::to_string(i);
    const DType t = ops::base_dtype(type);
    if (args[i].value && args[i].value->dtype() == t) {
      n.op = "Const";
      n.attrs = {{"dtype", t}, {"value", *args[i].value}};
    } else {
      // Its shape as a feed: a Placeholder's scalar shape attr reads as
      // unknown in graphs of producer version 21 and older.
      n.op = "Placeholder";
      n.attrs = {{"dtype", t}, {"shape", args[i].shape}};
    }
    return n;
  };
  bo.retvals = false;
  bo.prune = false;
  bo.allow_unknown_ops = true;
  auto body = body_graph(lib_, callee, g_, bo);
  if (!body.ok() || body->args.size() != args.size()) return std::nullopt;
  for (size_t i = 0; i < args.size(); ++i) {
    const Node& a = body->graph.node(body->args[i]);
    if (a.op == "Placeholder") inner.feeds[a.name] = args[i].shape;
  }
  auto shapes = infer_shapes(body->graph, inner);
  if (!shapes.ok()) return std::nullopt;  // errors inside a body are the body's call to make at run time
  std::vector<OutputInfo> out;
  for (const Endpoint& r : body->rets) {
    if (r.node == kNoNode || static_cast<size_t>(r.port) >= shapes->nodes[static_cast<size_t>(r.node)].size())
      return std::nullopt;
    out.push_back(shapes->at(r));
  }
  return out;
}

}  // namespace

Expected<ShapeMap> infer_shapes(const Graph& g, const ShapeInferenceOptions& options) {
  Inference inference(g, options);
  return inference.run();
}

Status check_shapes(const Graph& g) {
  auto shapes = infer_shapes(g);
  return shapes.ok() ? ok_status() : shapes.status();
}

}  // namespace shapes
}  // namespace tagflow::graph
