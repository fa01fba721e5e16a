// Shape inference: the worklist that runs the shape functions to a fixed
// point, the calls into library functions, and the InferenceContext and
// shape helpers the shape functions share.
#include "graph/shape_inference.hpp"

#include <deque>
#include <set>

#include <fmt/format.h>

#include "graph/body_graph.hpp"
#include "graph/function_library.hpp"
#include "graph/lowering.hpp"
#include "graph/shape_functions.hpp"
#include "graph/validate.hpp"

namespace tagflow::graph {

// --- helpers -----------------------------------------------------------------
namespace shape {

ops::PartialShape of_rank(int64_t r) {
  // A rank that is not known (-1), or that no tensor has, is unknown.
  if (r < 0 || r > kMaxInferredRank) return unknown();
  return {false, std::vector<int64_t>(static_cast<size_t>(r), -1)};
}

bool fully_known(const ops::PartialShape& s) {
  if (s.unknown_rank) return false;
  for (int64_t d : s.dims)
    if (d < 0) return false;
  return true;
}

int64_t num_elements(const ops::PartialShape& s) {
  if (!fully_known(s)) return -1;
  int64_t n = 1;
  for (int64_t d : s.dims) {
    if (d != 0 && n > INT64_MAX / d) return -1;
    n *= d;
  }
  return n;
}

int64_t dim(const ops::PartialShape& s, int i) {
  if (s.unknown_rank) return -1;
  const int r = rank(s);
  if (i < 0) i += r;
  if (i < 0 || i >= r) return -1;
  return s.dims[static_cast<size_t>(i)];
}

bool dims_compatible(int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; }
int64_t merge_dim(int64_t a, int64_t b) { return a >= 0 ? a : b; }

std::optional<ops::PartialShape> merge(const ops::PartialShape& a, const ops::PartialShape& b) {
  if (a.unknown_rank) return b;
  if (b.unknown_rank) return a;
  if (a.dims.size() != b.dims.size()) return std::nullopt;
  ops::PartialShape out = a;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (!dims_compatible(a.dims[i], b.dims[i])) return std::nullopt;
    out.dims[i] = merge_dim(a.dims[i], b.dims[i]);
  }
  return out;
}

std::optional<ops::PartialShape> broadcast(const ops::PartialShape& a, const ops::PartialShape& b) {
  if (a.unknown_rank || b.unknown_rank) {
    // A scalar never changes the other shape.
    if (!a.unknown_rank && a.dims.empty()) return b;
    if (!b.unknown_rank && b.dims.empty()) return a;
    return unknown();
  }
  const size_t r = std::max(a.dims.size(), b.dims.size());
  ops::PartialShape out{false, std::vector<int64_t>(r, -1)};
  for (size_t i = 0; i < r; ++i) {
    const int64_t x = i < r - a.dims.size() ? 1 : a.dims[i - (r - a.dims.size())];
    const int64_t y = i < r - b.dims.size() ? 1 : b.dims[i - (r - b.dims.size())];
    int64_t d;
    if (x == 1) d = y;
    else if (y == 1) d = x;
    else if (x < 0 && y < 0) d = -1;
    else if (x < 0) d = y;  // x must be y or 1; then the output is y either way
    else if (y < 0) d = x;
    else if (x == y) d = x;
    else return std::nullopt;
    // An unknown dimension against a 1 could be anything.
    out.dims[i] = d;
  }
  return out;
}

int64_t add_dims(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a + b; }
int64_t mul_dims(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a * b; }

ops::PartialShape sub(const ops::PartialShape& s, int begin, int end) {
  if (s.unknown_rank) return unknown();
  begin = std::max(0, std::min(begin, rank(s)));
  end = std::max(begin, std::min(end, rank(s)));
  return known({s.dims.begin() + begin, s.dims.begin() + end});
}

ops::PartialShape concat(const ops::PartialShape& a, const ops::PartialShape& b) {
  if (a.unknown_rank || b.unknown_rank) return unknown();
  ops::PartialShape out = a;
  out.dims.insert(out.dims.end(), b.dims.begin(), b.dims.end());
  return out;
}

ops::Tensor int_tensor(DType dtype, const std::vector<int64_t>& values, const ops::Shape& s) {
  if (dtype == DType::int64) return ops::Tensor::from_vector<int64_t>(s, values);
  return ops::Tensor::from_vector<int32_t>(s, std::vector<int32_t>(values.begin(), values.end()));
}

}  // namespace shape

ops::PartialShape generalize(const ops::PartialShape& a, const ops::PartialShape& b) {
  if (a.unknown_rank || b.unknown_rank || a.dims.size() != b.dims.size()) return shape::unknown();
  ops::PartialShape out = a;
  for (size_t i = 0; i < a.dims.size(); ++i)
    if (a.dims[i] != b.dims[i]) out.dims[i] = -1;
  return out;
}

std::string to_string(const OutputInfo& info) {
  std::string s = ops::dtype_name(info.dtype) + " " + info.shape.to_string();
  if (info.value) s += " = " + info.value->values_string(8);
  return s;
}

// --- InferenceContext --------------------------------------------------------

std::optional<std::vector<int64_t>> InferenceContext::input_ints(int i) const {
  const ops::Tensor* t = input_value(i);
  if (t == nullptr) return std::nullopt;
  std::vector<int64_t> v(static_cast<size_t>(t->num_elements()));
  if (t->dtype() == DType::int32) {
    for (size_t k = 0; k < v.size(); ++k) v[k] = t->data<int32_t>()[k];
  } else if (t->dtype() == DType::int64) {
    for (size_t k = 0; k < v.size(); ++k) v[k] = t->data<int64_t>()[k];
  } else {
    return std::nullopt;
  }
  return v;
}

ops::PartialShape InferenceContext::input_as_shape(int i) const {
  if (auto v = input_ints(i); v && input_shape(i).dims.size() <= 1) {
    ops::PartialShape s = shape::known(*v);
    for (int64_t& d : s.dims)
      if (d < 0) d = -1;
    return s;
  }
  const ops::PartialShape& s = input_shape(i);
  if (!s.unknown_rank && s.dims.size() == 1 && s.dims[0] >= 0) return shape::of_rank(s.dims[0]);
  if (!s.unknown_rank && s.dims.empty()) return shape::scalar();  // a scalar shape argument: rank 0
  return shape::unknown();
}

void InferenceContext::set_output(int i, ops::PartialShape s) {
  if (i < 0 || i >= num_outputs()) return;
  (*outputs_)[static_cast<size_t>(i)].shape = std::move(s);
}

void InferenceContext::set_value(int i, ops::Tensor value) {
  if (i < 0 || i >= num_outputs()) return;
  OutputInfo& o = (*outputs_)[static_cast<size_t>(i)];
  o.shape = shape::known(value.shape().dims());
  if ((value.dtype() == DType::int32 || value.dtype() == DType::int64) && value.num_elements() <= 64)
    o.value = std::move(value);
}

void InferenceContext::pass_through(int input) {
  if (input >= num_inputs()) return;
  for (int i = 0; i < num_outputs(); ++i) {
    set_output(i, input_shape(input));
    if (input_value(input) != nullptr && output(i).dtype == this->input(input).dtype)
      set_value(i, *input_value(input));
  }
}

int64_t InferenceContext::int_attr(std::string_view key, int64_t otherwise) const {
  const int64_t* v = attr<int64_t>(key);
  return v == nullptr ? otherwise : *v;
}

bool InferenceContext::bool_attr(std::string_view key, bool otherwise) const {
  const bool* v = attr<bool>(key);
  return v == nullptr ? otherwise : *v;
}

std::string InferenceContext::string_attr(std::string_view key) const {
  const std::string* v = attr<std::string>(key);
  return v == nullptr ? std::string() : *v;
}

Status InferenceContext::error(const std::string& what) const {
  return Status(Error::invalid_argument, fmt::format("{} '{}': {}", node_.op, node_.name, what));
}

ShapeFn shape_of_input(int i) {
  return [i](InferenceContext& c) {
    if (i < c.num_inputs()) c.set_output(0, c.input_shape(i));
    return ok_status();
  };
}

Status InferenceContext::merged_inputs(ops::PartialShape* out) const {
  ops::PartialShape s = shape::unknown();
  for (int i = 0; i < num_inputs(); ++i) {
    auto m = shape::merge(s, input_shape(i));
    if (!m)
      return error("inputs must have one shape: " + s.to_string() + " and input " + std::to_string(i) + " " +
                   input_shape(i).to_string());
    s = *m;
  }
  *out = std::move(s);
  return ok_status();
}

const ShapeFunctionMap& shape_functions() {
  static const ShapeFunctionMap* functions = [] {
    auto* m = new ShapeFunctionMap;
    add_array_shape_functions(*m);
    add_math_shape_functions(*m);
    add_nn_shape_functions(*m);
    add_state_shape_functions(*m);
    return m;
  }();
  return *functions;
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
  CallFn call_;
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
    const auto& fns = shape_functions();
    auto it = fns.find(n.op);
    InferenceContext ctx(n, std::move(inputs), out, &call_);
    ctx.set_producer(g_.versions().producer);
    if (it != fns.end()) {
      *status = it->second(ctx);
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

}  // namespace tagflow::graph
