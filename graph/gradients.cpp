// gradients(): the backward pass over a graph with conds and while loops
// (graph/gradients.hpp, docs/gradients.md).
//
// The walk is TensorFlow's: the nodes between the xs and the ys are visited
// in reverse, each once all of its consumers on those paths have given it
// their gradient (pending counts), starting from the ys. The control-flow
// primitives are differentiated here; every other op by its registered
// gradient function (graph/gradient_functions.cpp), through a GradContext.
//
// Frames. Every forward frame F that gradients flow through gets a gradient
// frame G(F) nested like F; nodes added while differentiating a node of F
// go into G(F) ("the context" below: the forward frame whose gradient frame
// is being built; 0 is the root, its own gradient frame). A forward value v
// of F is seen in G(F) through real(): outside F it is entered (is_constant)
// level by level; a loop invariant's Enter is entered the same way; a Const
// is copied; anything else is pushed on a stack by the forward loop and
// popped by the gradient loop.
#include "graph/gradients.hpp"

#include <algorithm>
#include <deque>
#include <set>
#include <unordered_map>

#include "graph/analysis/cond_contexts.hpp"
#include "graph/analysis/loop_structure.hpp"
#include "graph/control_flow.hpp"
#include "graph/functional_gradients.hpp"
#include "graph/infer_attrs.hpp"
#include "graph/validate.hpp"

namespace tagflow::graph {

using ops::AttrMap;
using ops::OpRole;

namespace {

struct EndpointHash {
  size_t operator()(const Endpoint& e) const {
    return std::hash<int64_t>()((int64_t{e.node} << 20) ^ e.port);
  }
};

std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

bool is_differentiable(DType t) {
  const DType b = ops::base_dtype(t);
  return ops::dtype_is_floating(b) || b == DType::complex64 || b == DType::complex128;
}

// One forward loop's gradient machinery (docs/gradients.md, "While loops").
struct LoopGrad {
  bool built = false;
  // Forward: the iteration counter and the node every push waits for.
  NodeId fbody = kNoNode;  // Identity of the counter's Switch:1 — live in body iterations
  NodeId f_sync = kNoNode;  // ControlTrigger after this iteration's pushes
  Endpoint count;           // Exit of the counter: the iteration count
  // Gradient loop.
  std::string frame;
  int64_t parallel_iterations = 10;
  Endpoint gpivot;
  NodeId gbody = kNoNode;  // Identity of the gradient counter's Switch:1
  NodeId b_sync = kNoNode;  // ControlTrigger after this iteration's pops
  NodeId g_exit = kNoNode;
  // Exits: how many on paths to the ys are still to come; those that came.
  int pending_exits = 0;
  std::vector<NodeId> ready_exits;
  bool exits_done = false;
  std::unordered_map<NodeId, NodeId> switch_merge;  // forward loop Switch -> gradient Merge
  std::unordered_map<NodeId, bool> back_edge_set;   // by gradient Merge
  std::unordered_map<NodeId, Endpoint> merge_true;  // gradient Merge -> Switch(it, pivot):1
};

struct Backprop {
  using CondState = analysis::CondState;

  Graph& g;
  const ops::OpRegistry& ops;
  const GradientRegistry& registry;
  const GradientOptions& options;
  ControlFlowInfo cf;
  std::string scope;
  std::string prefix;  // of the names of the nodes being added
  bool allow_resource = false;

  std::vector<Endpoint> xs, ys;
  std::vector<char> from_x, between, processed;
  std::vector<int> pending;
  analysis::CondContexts conds;  // the conds each node and frame runs under
  std::unordered_map<NodeId, std::vector<std::vector<Endpoint>>> grads;
  std::unordered_map<Endpoint, Endpoint, EndpointHash> summed;
  std::set<Endpoint, bool (*)(const Endpoint&, const Endpoint&)> stops{
      [](const Endpoint& a, const Endpoint& b) {
        return a.node != b.node ? a.node < b.node : a.port < b.port;
      }};
  std::map<FrameId, LoopGrad> loops;
  std::map<std::pair<FrameId, Endpoint>, Endpoint, bool (*)(const std::pair<FrameId, Endpoint>&,
                                                            const std::pair<FrameId, Endpoint>&)>
      reals{[](const std::pair<FrameId, Endpoint>& a, const std::pair<FrameId, Endpoint>& b) {
        if (a.first != b.first) return a.first < b.first;
        return a.second.node != b.second.node ? a.second.node < b.second.node
                                              : a.second.port < b.second.port;
      }};
  std::map<std::pair<FrameId, Endpoint>, Endpoint, decltype(reals.key_comp())> forward_enters{
      reals.key_comp()};
  std::map<std::pair<FrameId, CondState>, NodeId> guards;
  std::map<std::string, int> name_counts;
  GradientResult result;

  Backprop(Graph& graph, const GradientOptions& o)
      : g(graph),
        ops(o.ops ? *o.ops : ops::OpRegistry::global()),
        registry(o.registry ? *o.registry : GradientRegistry::global()),
        options(o) {}

  // --- the graph --------------------------------------------------------------

  const Node& node(NodeId id) const { return g.node(id); }
  std::string name(NodeId id) const { return quoted(g.node(id).name); }
  DType type_of(Endpoint e) const {
    const Node& n = g.node(e.node);
    return e.port >= 0 && static_cast<size_t>(e.port) < n.output_types.size()
               ? n.output_types[static_cast<size_t>(e.port)]
               : DType::invalid;
  }
  OpRole role(NodeId id) const { return node_role(g.node(id)); }
  FrameId parent(FrameId f) const { return f < 0 ? -1 : cf.frames[static_cast<size_t>(f)].parent; }
  OpRole role_of(const std::string& op) const {
    const ops::OpDef* def = ops.find(op);
    return def ? def->role() : OpRole::ordinary;
  }
  // The frame a node's outputs are in: an Enter's frame, an Exit's parent.
  FrameId out_frame(NodeId id) const { return analysis::output_frame(g, cf, id); }
  bool is_constant_enter(NodeId id) const {
    const bool* c = g.node(id).attr<bool>("is_constant");
    return role(id) == OpRole::enter && c != nullptr && *c;
  }
  bool is_loop_switch(NodeId id) const { return analysis::is_loop_switch(g, cf, id); }
  bool is_loop_merge(NodeId id) const { return analysis::is_loop_merge(g, id); }
  // Functional gradients flow through the Optionals that pass an If's
  // intermediates to its gradient, and on through the ops around them:
  // the list ops, and AddN, which sums a list's gradients.
  bool carries_variant_gradient(NodeId dst) const {
    const Node& n = g.node(dst);
    return n.op == "OptionalFromValue" || n.op == "OptionalGetValue" || n.op == "Identity" || n.op == "AddN" ||
           is_list_gradient_op(n.op) || is_functional_gradient_op(n, g);
  }
  // Whether gradients flow along an edge from output `src` into node `dst`.
  bool flows(Endpoint src, NodeId dst) const {
    if (stops.count(src)) return false;
    const DType t = type_of(src);
    if (is_differentiable(t)) return true;
    if (options.functional && ops::base_dtype(t) == DType::variant && carries_variant_gradient(dst)) return true;
    if (!allow_resource || ops::base_dtype(t) != DType::resource) return false;
    switch (role(dst)) {
      case OpRole::enter:
      case OpRole::exit:
      case OpRole::merge:
      case OpRole::switch_op:
      case OpRole::next_iteration: return true;
      default: {
        // A function reading the variable inside gives the resource
        // argument the gradient of what it read.
        const std::string& op = g.node(dst).op;
        return op == "ReadVariableOp" || op == "Identity" ||
               (options.functional && is_functional_gradient_op(g.node(dst), g));
      }
    }
  }

  // --- adding nodes -------------------------------------------------------------

  std::string unique_name(const std::string& base) {
    std::string want = prefix + base;
    int& count = name_counts[want];
    std::string name = want;
    while (g.find(name) != kNoNode) name = want + "_" + std::to_string(++count);
    return name;
  }

  Expected<NodeId> add(const std::string& op, const std::vector<Endpoint>& inputs, AttrMap attrs,
                       std::vector<NodeId> control = {}, const std::string& base = "") {
    const ops::OpDef* def = ops.find(op);
    const std::string name = unique_name(base.empty() ? op : base);
    const std::string where = "gradient node " + quoted(name) + " (" + op + ")";
    if (def == nullptr) return Status(Error::internal, where + ": op is not registered");
    std::vector<DType> types;
    for (const Endpoint& e : inputs) {
      if (e.node == kNoNode) return Status(Error::internal, where + ": an input is missing");
      types.push_back(type_of(e));
    }
    TF_RETURN_IF_ERROR(infer_type_attrs(*def, types, attrs, where));
    TF_RETURN_IF_ERROR(def->check_and_complete_attrs(attrs).with_prefix(where + ": "));
    TF_ASSIGN_OR_RETURN(std::vector<DType> in_types, def->input_types(attrs));
    TF_ASSIGN_OR_RETURN(std::vector<DType> out_types, def->output_types(attrs));
    if (in_types.size() != inputs.size())
      return Status(Error::internal, where + " takes " + std::to_string(in_types.size()) +
                                         " inputs, given " + std::to_string(inputs.size()));
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!dtypes_match(types[i], in_types[i]))
        return Status(Error::internal, where + ": input " + std::to_string(i) + " is " +
                                           ops::dtype_name(types[i]) + ", expected " +
                                           ops::dtype_name(in_types[i]));
    Node n;
    n.name = name;
    n.op = op;
    n.attrs = std::move(attrs);
    n.inputs.assign(inputs.begin(), inputs.end());
    std::sort(control.begin(), control.end());
    control.erase(std::unique(control.begin(), control.end()), control.end());
    n.control_inputs = std::move(control);
    n.def = def;
    n.input_types.assign(in_types.begin(), in_types.end());
    n.output_types.assign(out_types.begin(), out_types.end());
    // The new node's frame, for the forward nodes added (the counters,
    // the stacks) that real() is asked about; -1 inside gradient frames,
    // which the analysis does not know.
    FrameId frame = kRootFrame;
    if (!inputs.empty()) {
      frame = role_of(op) == OpRole::enter ? cf.frame_of[static_cast<size_t>(inputs[0].node)] : out_frame(inputs[0].node);
    } else if (!n.control_inputs.empty()) {
      frame = out_frame(n.control_inputs[0]);
    }
    TF_ASSIGN_OR_RETURN(NodeId id, g.add_node(std::move(n)));
    cf.frame_of.push_back(frame);
    conds.added(id);
    return id;
  }
  Expected<Endpoint> add1(const std::string& op, const std::vector<Endpoint>& inputs,
                          AttrMap attrs = {}, std::vector<NodeId> control = {},
                          const std::string& base = "") {
    TF_ASSIGN_OR_RETURN(NodeId id, add(op, inputs, std::move(attrs), std::move(control), base));
    return Endpoint{id, 0};
  }
  // Zeros shaped like `e`; of a resource, zeros of the `held` value the
  // variable holds (a variable's gradient is its value's).
  Expected<Endpoint> zeros_like(Endpoint e, DType held, const std::string& base) {
    if (ops::base_dtype(type_of(e)) == DType::resource) {
      TF_ASSIGN_OR_RETURN(e, add1("ReadVariableOp", {e}, {{"dtype", held}}, {}, "read"));
    }
    return add1("ZerosLike", {e}, {}, {}, base);
  }
  void add_control(NodeId to, NodeId from) {
    auto& c = g.mutable_node(to).control_inputs;
    if (std::find(c.begin(), c.end(), from) == c.end()) c.push_back(from);
  }
  // A constant in context `ctx`: inside a gradient loop it runs in every
  // iteration of the loop's body.
  Expected<Endpoint> constant(FrameId ctx, const ops::Tensor& value, const std::string& base) {
    std::vector<NodeId> control;
    if (ctx != kRootFrame) control.push_back(loops.at(ctx).gbody);
    return add1("Const", {}, {{"dtype", value.dtype()}, {"value", value}}, std::move(control), base);
  }
  AttrMap enter_attrs(const std::string& frame, bool is_constant, int64_t parallel_iterations) {
    return {{"frame_name", frame},
            {"is_constant", is_constant},
            {"parallel_iterations", parallel_iterations}};
  }

  // --- forward values seen from a gradient frame ------------------------------------

  Status build_loop(FrameId f);

  // `v` (a value of the gradient frame of parent(f), or of the root) entered
  // into the gradient frame of f as a loop invariant.
  Expected<Endpoint> enter_gradient(FrameId f, Endpoint v) {
    const LoopGrad& L = loops.at(f);
    const std::string saved = prefix;
    prefix = L.frame + "/";
    auto r = add1("Enter", {v}, enter_attrs(L.frame, true, L.parallel_iterations), {}, "Enter");
    prefix = saved;
    return r;
  }
  // `v`, a root value, entered into forward frame f (level by level).
  Expected<Endpoint> enter_forward(FrameId f, Endpoint v) {
    if (f == kRootFrame) return v;
    auto key = std::make_pair(f, v);
    if (auto it = forward_enters.find(key); it != forward_enters.end()) return it->second;
    TF_ASSIGN_OR_RETURN(Endpoint outer, enter_forward(parent(f), v));
    const FrameInfo& F = cf.frames[static_cast<size_t>(f)];
    const std::string saved = prefix;
    prefix = loops.at(f).frame + "/";
    auto r = add1("Enter", {outer}, enter_attrs(F.name, true, F.parallel_iterations), {}, "f_acc_enter");
    prefix = saved;
    if (r.ok()) forward_enters.emplace(key, *r);
    return r;
  }

  // The forward value `e` as seen from the gradient frame of `ctx`.
  Expected<Endpoint> real(Endpoint e, FrameId ctx) {
    if (ctx == kRootFrame) return e;
    auto key = std::make_pair(ctx, e);
    if (auto it = reals.find(key); it != reals.end()) return it->second;
    const FrameId fe = out_frame(e.node);
    Expected<Endpoint> r = Status(Error::internal, "unset");
    if (fe != ctx) {
      TF_ASSIGN_OR_RETURN(Endpoint outer, real(e, parent(ctx)));
      r = enter_gradient(ctx, outer);
    } else if (is_constant_enter(e.node)) {
      TF_ASSIGN_OR_RETURN(Endpoint outer, real(g.node(e.node).inputs[0], parent(ctx)));
      r = enter_gradient(ctx, outer);
    } else if (g.node(e.node).op == "Const" && g.node(e.node).inputs.empty()) {
      const Node& c = g.node(e.node);
      r = add1("Const", {}, c.attrs, {loops.at(ctx).gbody}, "Const");
    } else {
      r = pop(e, ctx);
    }
    if (r.ok()) reals.emplace(key, *r);
    return r;
  }

  // Push `e` (a value of loop frame f) in every body iteration of the
  // forward loop and pop it in the gradient loop's matching iteration.
  Expected<Endpoint> pop(Endpoint e, FrameId f) {
    LoopGrad& L = loops.at(f);
    const DType t = ops::base_dtype(type_of(e));
    const std::string saved = prefix;
    prefix = L.frame + "/" + g.node(e.node).name + "/";
    auto done = [&](Expected<Endpoint> r) {
      prefix = saved;
      return r;
    };
    auto max_size = add1("Const", {}, {{"dtype", DType::int32}, {"value", ops::Tensor::scalar<int32_t>(-1)}}, {}, "max_size");
    if (!max_size.ok()) return done(max_size.status());
    auto stack = add1("StackV2", {*max_size},
                      {{"elem_type", t}, {"stack_name", prefix + "f_acc"}}, {}, "f_acc");
    if (!stack.ok()) return done(stack.status());
    auto forward_handle = enter_forward(f, *stack);
    if (!forward_handle.ok()) return done(forward_handle.status());
    auto push = add("StackPushV2", {*forward_handle, e}, {{"swap_memory", false}}, {L.fbody}, "push");
    if (!push.ok()) return done(push.status());
    add_control(L.f_sync, *push);
    auto gradient_handle = real(*stack, f);
    if (!gradient_handle.ok()) return done(gradient_handle.status());
    auto guard = guard_of(f, conds.of_output(e));
    if (!guard.ok()) return done(guard.status());
    auto popped = add1("StackPopV2", {*gradient_handle}, {{"elem_type", t}}, {*guard}, "pop");
    if (!popped.ok()) return done(popped.status());
    add_control(L.b_sync, popped->node);
    return done(*popped);
  }

  // A node of the gradient frame of f that is live exactly in the gradient
  // iterations whose forward iteration ran under the conds `s`.
  Expected<NodeId> guard_of(FrameId f, const CondState& s) {
    if (s.empty()) return loops.at(f).gbody;
    auto key = std::make_pair(f, s);
    if (auto it = guards.find(key); it != guards.end()) return it->second;
    CondState outer(s.begin(), s.end() - 1);
    TF_ASSIGN_OR_RETURN(NodeId outer_guard, guard_of(f, outer));
    const auto [sw, branch] = s.back();
    TF_ASSIGN_OR_RETURN(Endpoint pred, real(g.node(sw).inputs[1], f));
    const std::string saved = prefix;
    prefix = loops.at(f).frame + "/" + g.node(sw).name + "/";
    auto gated = add1("Identity", {pred}, {}, {outer_guard}, "pred");
    Expected<NodeId> r = Status(Error::internal, "unset");
    if (!gated.ok()) r = gated.status();
    if (gated.ok()) {
      auto guard_switch = add("Switch", {*gated, pred}, {}, {}, "Switch");
      if (guard_switch.ok()) {
        auto branch_node = add1("Identity", {Endpoint{*guard_switch, branch}}, {}, {},
                                branch ? "branch_true" : "branch_false");
        r = branch_node.ok() ? Expected<NodeId>(branch_node->node) : branch_node.status();
      } else {
        r = guard_switch.status();
      }
    }
    prefix = saved;
    if (r.ok()) guards.emplace(key, *r);
    return r;
  }

  // --- gradients of outputs ------------------------------------------------------

  void add_grad(Endpoint e, Endpoint grad) {
    auto& ports = grads[e.node];
    if (ports.size() <= static_cast<size_t>(e.port)) ports.resize(static_cast<size_t>(e.port) + 1);
    ports[static_cast<size_t>(e.port)].push_back(grad);
  }
  // The summed gradient of output `e` (AddN of several), or nullopt.
  Expected<std::optional<Endpoint>> sum(Endpoint e) {
    if (auto it = summed.find(e); it != summed.end()) return std::optional<Endpoint>(it->second);
    auto found = grads.find(e.node);
    if (found == grads.end() || found->second.size() <= static_cast<size_t>(e.port) ||
        found->second[static_cast<size_t>(e.port)].empty())
      return std::optional<Endpoint>();
    const std::vector<Endpoint>& list = found->second[static_cast<size_t>(e.port)];
    Endpoint total = list[0];
    if (list.size() > 1) {
      const std::string saved = prefix;
      prefix = scope + "/" + g.node(e.node).name + "_grad/";
      auto n = add1("AddN", list, {}, {}, "AddN");
      prefix = saved;
      if (!n.ok()) return n.status();
      total = *n;
    }
    summed.emplace(e, total);
    return std::optional<Endpoint>(total);
  }

  // --- the walk --------------------------------------------------------------------

  Status prepare();
  Status run();
  Status process(NodeId id);
  Status propagate(NodeId id, const std::vector<std::optional<Endpoint>>& dx);
  Status exit_ready(NodeId exit);
  Status process_exit(NodeId exit, LoopGrad& L);
  Status finish_loops();
  std::string path_through(NodeId id) const;
};

// ---- GradContext ------------------------------------------------------------------

const Node& GradContext::node() const { return bp_.g.node(node_); }
int GradContext::num_inputs() const { return static_cast<int>(node().inputs.size()); }
int GradContext::num_outputs() const { return static_cast<int>(node().output_types.size()); }
DType GradContext::input_type(int i) const {
  return ops::base_dtype(bp_.type_of(node().inputs[static_cast<size_t>(i)]));
}
DType GradContext::output_type(int i) const { return ops::base_dtype(bp_.type_of({node_, i})); }
bool GradContext::wants(int i) const {
  const Endpoint e = node().inputs[static_cast<size_t>(i)];
  // Inputs a gradient gave the node (a While's accumulators) are off every path.
  if (static_cast<size_t>(e.node) >= bp_.between.size()) return false;
  return bp_.between[static_cast<size_t>(e.node)] && bp_.flows(e, node_);
}
const std::string& GradContext::scope() const { return bp_.scope; }
Graph& GradContext::graph() { return bp_.g; }
Node& GradContext::mutable_node() { return bp_.g.mutable_node(node_); }
DType GradContext::type_of(Endpoint e) const { return ops::base_dtype(bp_.type_of(e)); }

std::optional<Endpoint> GradContext::dy(int i) {
  auto s = bp_.sum({node_, i});
  return s.ok() ? *s : std::nullopt;
}
Expected<Endpoint> GradContext::dy_or_zeros(int i) {
  TF_ASSIGN_OR_RETURN(std::optional<Endpoint> d, bp_.sum({node_, i}));
  if (d) return *d;
  TF_ASSIGN_OR_RETURN(Endpoint y, output(i));
  return op1("ZerosLike", {y});
}
Expected<Endpoint> GradContext::input(int i) {
  return bp_.real(node().inputs[static_cast<size_t>(i)], bp_.out_frame(node_));
}
Expected<Endpoint> GradContext::output(int i) { return bp_.real({node_, i}, bp_.out_frame(node_)); }

Expected<std::vector<Endpoint>> GradContext::op(const std::string& op_name,
                                                const std::vector<Endpoint>& inputs,
                                                ops::AttrMap attrs, const std::string& base) {
  std::vector<NodeId> control;
  // An op with no inputs inside a gradient loop lives in its body.
  const FrameId ctx = bp_.out_frame(node_);
  if (inputs.empty() && ctx != kRootFrame) control.push_back(bp_.loops.at(ctx).gbody);
  TF_ASSIGN_OR_RETURN(NodeId id, bp_.add(op_name, inputs, std::move(attrs), std::move(control), base));
  std::vector<Endpoint> outs;
  for (int p = 0; p < static_cast<int>(bp_.g.node(id).output_types.size()); ++p) outs.push_back({id, p});
  return outs;
}
Expected<Endpoint> GradContext::op1(const std::string& op_name, const std::vector<Endpoint>& inputs,
                                    ops::AttrMap attrs, const std::string& base) {
  TF_ASSIGN_OR_RETURN(std::vector<Endpoint> outs, op(op_name, inputs, std::move(attrs), base));
  if (outs.empty()) return Status(Error::internal, "gradient op " + op_name + " has no output");
  return outs[0];
}
Expected<Endpoint> GradContext::constant(const ops::Tensor& value, const std::string& base) {
  return bp_.constant(bp_.out_frame(node_), value, base);
}
Expected<Endpoint> GradContext::scalar(DType dtype, double value) {
  switch (dtype) {
    case DType::float32: return constant(ops::Tensor::scalar<float>(static_cast<float>(value)));
    case DType::float64: return constant(ops::Tensor::scalar<double>(value));
    case DType::int32: return constant(ops::Tensor::scalar<int32_t>(static_cast<int32_t>(value)));
    case DType::int64: return constant(ops::Tensor::scalar<int64_t>(static_cast<int64_t>(value)));
    default: {
      TF_ASSIGN_OR_RETURN(Endpoint d, constant(ops::Tensor::scalar<double>(value)));
      return op1("Cast", {d}, {{"DstT", dtype}});
    }
  }
}
Expected<Endpoint> GradContext::int_vector(const std::vector<int32_t>& values) {
  return constant(ops::Tensor::vector<int32_t>(values));
}
void GradContext::set(int i, Endpoint grad) {
  if (dx_.size() < node().inputs.size()) dx_.resize(node().inputs.size());
  if (i < 0 || static_cast<size_t>(i) >= dx_.size()) return;
  auto& slot = dx_[static_cast<size_t>(i)];
  if (!slot) {
    slot = grad;
    return;
  }
  auto sum = op1("AddN", {*slot, grad});
  if (sum.ok()) slot = *sum;
}

// ---- GradientRegistry -------------------------------------------------------------

Status GradientRegistry::add(const std::string& op, GradientFunction fn) {
  if (fns_.count(op) || none_.count(op))
    return Status(Error::invalid_argument, "a gradient for op " + op + " is registered twice");
  fns_.emplace(op, std::move(fn));
  return ok_status();
}
void GradientRegistry::add_not_differentiable(const std::string& op) { none_.emplace(op, true); }
const GradientFunction* GradientRegistry::find(std::string_view op) const {
  auto it = fns_.find(op);
  return it == fns_.end() ? nullptr : &it->second;
}
bool GradientRegistry::is_not_differentiable(std::string_view op) const {
  return none_.find(op) != none_.end();
}

// ---- the walk ----------------------------------------------------------------------

Status Backprop::prepare() {
  const int n = g.num_nodes();
  // Which nodes a gradient flows from (reached from an x along
  // differentiable edges) and to (reaching a y).
  from_x.assign(static_cast<size_t>(n), 0);
  std::deque<NodeId> work;
  for (const Endpoint& x : xs) {
    if (stops.count(x)) continue;
    for (const OutEdge& e : g.out_edges(x.node)) {
      if (e.dst_input == kControlPort || e.src_port != x.port || !flows(x, e.dst)) continue;
      if (!from_x[static_cast<size_t>(e.dst)]) {
        from_x[static_cast<size_t>(e.dst)] = 1;
        work.push_back(e.dst);
      }
    }
  }
  while (!work.empty()) {
    const NodeId id = work.front();
    work.pop_front();
    for (const OutEdge& e : g.out_edges(id)) {
      if (e.dst_input == kControlPort || !flows({id, e.src_port}, e.dst)) continue;
      if (!from_x[static_cast<size_t>(e.dst)]) {
        from_x[static_cast<size_t>(e.dst)] = 1;
        work.push_back(e.dst);
      }
    }
  }
  for (const Endpoint& x : xs) from_x[static_cast<size_t>(x.node)] = 1;
  between.assign(static_cast<size_t>(n), 0);
  for (const Endpoint& y : ys) {
    if (from_x[static_cast<size_t>(y.node)] && !between[static_cast<size_t>(y.node)]) {
      between[static_cast<size_t>(y.node)] = 1;
      work.push_back(y.node);
    }
  }
  while (!work.empty()) {
    const NodeId id = work.front();
    work.pop_front();
    for (const Endpoint& e : g.node(id).inputs) {
      if (!from_x[static_cast<size_t>(e.node)] || !flows(e, id)) continue;
      if (!between[static_cast<size_t>(e.node)]) {
        between[static_cast<size_t>(e.node)] = 1;
        work.push_back(e.node);
      }
    }
  }
  pending.assign(static_cast<size_t>(n), 0);
  for (NodeId id = 0; id < n; ++id) {
    if (!between[static_cast<size_t>(id)]) continue;
    for (const Endpoint& e : g.node(id).inputs)
      if (between[static_cast<size_t>(e.node)] && flows(e, id)) ++pending[static_cast<size_t>(e.node)];
  }
  // Each loop waits for all of its Exits on paths to the ys.
  for (NodeId id = 0; id < n; ++id) {
    if (!between[static_cast<size_t>(id)] || role(id) != OpRole::exit) continue;
    loops[cf.frame_of[static_cast<size_t>(id)]].pending_exits++;
  }
  processed.assign(static_cast<size_t>(n), 0);
  conds = analysis::CondContexts(g, cf);

  return ok_status();
}

std::string Backprop::path_through(NodeId id) const {
  // Back from the node to an x, then on from it to a y, through nodes
  // between them.
  auto walk = [&](bool down) {
    std::unordered_map<NodeId, NodeId> came_from{{id, kNoNode}};
    std::deque<NodeId> work{id};
    NodeId end = kNoNode;
    while (!work.empty() && end == kNoNode) {
      const NodeId cur = work.front();
      work.pop_front();
      const bool at_end = down ? std::any_of(xs.begin(), xs.end(), [&](const Endpoint& x) { return x.node == cur; })
                               : std::any_of(ys.begin(), ys.end(), [&](const Endpoint& y) { return y.node == cur; });
      if (at_end) {
        end = cur;
        break;
      }
      std::vector<NodeId> next;
      if (down) {
        for (const Endpoint& e : g.node(cur).inputs) next.push_back(e.node);
      } else {
        for (NodeId c = 0; c < static_cast<NodeId>(between.size()); ++c)
          for (const Endpoint& e : g.node(c).inputs)
            if (e.node == cur) next.push_back(c);
      }
      for (NodeId nx : next) {
        if (static_cast<size_t>(nx) >= between.size() || !between[static_cast<size_t>(nx)] ||
            came_from.count(nx))
          continue;
        came_from[nx] = cur;
        work.push_back(nx);
      }
    }
    std::vector<NodeId> path;
    for (NodeId cur = end; cur != kNoNode; cur = came_from[cur]) path.push_back(cur);
    return path;  // from the end back to id
  };
  std::vector<NodeId> to_x = walk(true);
  std::vector<NodeId> to_y = walk(false);
  std::string s;
  for (NodeId n : to_y) s += (s.empty() ? "" : " <- ") + g.node(n).name;
  for (auto it = to_x.rbegin(); it != to_x.rend(); ++it)
    if (*it != id) s += " <- " + g.node(*it).name;
  return s;
}

Status Backprop::propagate(NodeId id, const std::vector<std::optional<Endpoint>>& dx) {
  const Node& n = g.node(id);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Endpoint e = n.inputs[i];
    // Inputs a functional gradient gave the node (a While's accumulators)
    // are new nodes, off every path.
    if (static_cast<size_t>(e.node) >= between.size()) continue;
    if (!between[static_cast<size_t>(e.node)] || !flows(e, id)) continue;
    if (i < dx.size() && dx[i]) add_grad(e, *dx[i]);
    if (--pending[static_cast<size_t>(e.node)] == 0) {
      if (role(e.node) == OpRole::exit) {
        TF_RETURN_IF_ERROR(exit_ready(e.node));
      } else if (!processed[static_cast<size_t>(e.node)]) {
        TF_RETURN_IF_ERROR(process(e.node));
      }
    }
  }
  return ok_status();
}

Status Backprop::exit_ready(NodeId exit) {
  const FrameId f = cf.frame_of[static_cast<size_t>(exit)];
  LoopGrad& L = loops[f];
  L.ready_exits.push_back(exit);
  if (--L.pending_exits > 0) return ok_status();
  // Every Exit on a path to the ys has its gradient: the gradient loop
  // starts from all of them, and from zeros for the loop's other Exits that
  // an x reaches (their loop variables may still carry gradient to it).
  bool any = false;
  for (NodeId x : L.ready_exits) {
    TF_ASSIGN_OR_RETURN(std::optional<Endpoint> d, sum({x, 0}));
    any = any || d.has_value();
  }
  L.exits_done = true;
  for (NodeId x : L.ready_exits) processed[static_cast<size_t>(x)] = 1;
  if (!any) {
    for (NodeId x : L.ready_exits) TF_RETURN_IF_ERROR(propagate(x, {}));
    return ok_status();
  }
  TF_RETURN_IF_ERROR(build_loop(f));
  std::vector<NodeId> exits = L.ready_exits;
  for (NodeId x : cf.frames[static_cast<size_t>(f)].exits)
    if (!between[static_cast<size_t>(x)] && from_x[static_cast<size_t>(x)]) exits.push_back(x);
  for (NodeId x : exits) {
    TF_ASSIGN_OR_RETURN(std::optional<Endpoint> has, sum({x, 0}));
    if (has || !flows({x, 0}, x) || !is_differentiable(type_of({x, 0}))) continue;
    TF_ASSIGN_OR_RETURN(Endpoint value, real({x, 0}, parent(f)));
    prefix = scope + "/" + g.node(x).name + "_grad/";
    TF_ASSIGN_OR_RETURN(Endpoint zeros, add1("ZerosLike", {value}, {}, {}, "ZerosLike"));
    add_grad({x, 0}, zeros);
    summed.erase({x, 0});
  }
  for (NodeId x : exits) TF_RETURN_IF_ERROR(process_exit(x, L));
  return ok_status();
}

// Exit's gradient: an Enter into the gradient loop; its Switch's first
// visit makes the Merge of the gradient loop variable.
Status Backprop::process_exit(NodeId exit, LoopGrad& L) {
  processed[static_cast<size_t>(exit)] = 1;
  TF_ASSIGN_OR_RETURN(std::optional<Endpoint> d, sum({exit, 0}));
  const Endpoint input = g.node(exit).inputs[0];
  const NodeId sw = input.node;
  const bool counted = between[static_cast<size_t>(exit)] && between[static_cast<size_t>(sw)];
  if (d && (between[static_cast<size_t>(sw)] || from_x[static_cast<size_t>(sw)]) && is_loop_switch(sw) &&
      !L.switch_merge.count(sw)) {
    prefix = scope + "/" + g.node(exit).name + "_grad/";
    TF_ASSIGN_OR_RETURN(Endpoint entered, add1("Enter", {*d}, enter_attrs(L.frame, false, L.parallel_iterations), {}, "b_exit"));
    prefix = scope + "/" + g.node(sw).name + "_grad/";
    TF_ASSIGN_OR_RETURN(NodeId merge, add("Merge", {entered, entered}, {}, {}, "b_switch"));
    L.switch_merge[sw] = merge;
    L.back_edge_set[merge] = false;
    // The forward Merge feeding the Switch gets the gradient Merge.
    const Endpoint fm = g.node(sw).inputs[0];
    if (between[static_cast<size_t>(fm.node)] && flows(fm, sw)) {
      add_grad(fm, {merge, 0});
      if (--pending[static_cast<size_t>(fm.node)] == 0 && !processed[static_cast<size_t>(fm.node)])
        TF_RETURN_IF_ERROR(process(fm.node));
    }
  }
  if (counted && flows(input, exit)) {
    if (--pending[static_cast<size_t>(sw)] == 0 && !processed[static_cast<size_t>(sw)])
      TF_RETURN_IF_ERROR(process(sw));
  }
  return ok_status();
}

Status Backprop::process(NodeId id) {
  processed[static_cast<size_t>(id)] = 1;
  const Node& n = g.node(id);
  const FrameId ctx = out_frame(id);
  prefix = scope + "/" + n.name + "_grad/";
  // A node none of whose inputs carry a gradient (an x, a placeholder) ends
  // the walk.
  bool any_input = false;
  for (const Endpoint& e : n.inputs) any_input = any_input || (between[static_cast<size_t>(e.node)] && flows(e, id));
  if (!any_input) return ok_status();
  const int num_out = static_cast<int>(n.output_types.size());

  switch (role(id)) {
    case OpRole::switch_op: {
      if (is_loop_switch(id)) {
        // The second visit: the gradient from the body closes the back edge.
        LoopGrad& L = loops[cf.frame_of[static_cast<size_t>(id)]];
        auto it = L.switch_merge.find(id);
        if (it == L.switch_merge.end()) return ok_status();
        TF_ASSIGN_OR_RETURN(std::optional<Endpoint> body, sum({id, 1}));
        if (body) {
          TF_ASSIGN_OR_RETURN(Endpoint next, add1("NextIteration", {*body}, {}, {}, "b_next"));
          g.mutable_node(it->second).inputs[1] = next;
          L.back_edge_set[it->second] = true;
        }
        return ok_status();
      }
      // A cond's Switch: a Merge of the branches' gradients; a branch with
      // none gets zeros, live exactly when it ran.
      std::optional<Endpoint> d[2];
      for (int k = 0; k < 2; ++k) {
        TF_ASSIGN_OR_RETURN(d[k], sum({id, k}));
      }
      if (!d[0] && !d[1]) return propagate(id, {});
      for (int k = 0; k < 2; ++k) {
        if (d[k]) continue;
        TF_ASSIGN_OR_RETURN(Endpoint value, real({id, k}, ctx));
        const DType held = ops::base_dtype(type_of(*d[1 - k]));
        TF_ASSIGN_OR_RETURN(d[k], zeros_like(value, held, k ? "zeros_true" : "zeros_false"));
      }
      TF_ASSIGN_OR_RETURN(Endpoint merged, add1("Merge", {*d[0], *d[1]}, {}, {}, "cond_grad"));
      return propagate(id, {merged, std::nullopt});
    }
    case OpRole::merge: {
      TF_ASSIGN_OR_RETURN(std::optional<Endpoint> d, sum({id, 0}));
      if (!d) return propagate(id, {});
      if (is_loop_merge(id)) {
        LoopGrad& L = loops[cf.frame_of[static_cast<size_t>(id)]];
        TF_ASSIGN_OR_RETURN(NodeId sw, add("Switch", {*d, L.gpivot}, {}, {}, "b_merge"));
        L.merge_true[d->node] = {sw, 1};
        std::vector<std::optional<Endpoint>> dx(n.inputs.size());
        for (size_t i = 0; i < n.inputs.size(); ++i)
          dx[i] = Endpoint{sw, role(n.inputs[i].node) == OpRole::next_iteration ? 1 : 0};
        return propagate(id, dx);
      }
      // A cond's Merge: its gradient goes to the input it forwarded.
      TF_ASSIGN_OR_RETURN(Endpoint index, real({id, 1}, ctx));
      std::vector<std::optional<Endpoint>> dx(n.inputs.size());
      if (n.inputs.size() == 2) {
        TF_ASSIGN_OR_RETURN(Endpoint one, constant(ctx, ops::Tensor::scalar<int32_t>(1), "one"));
        TF_ASSIGN_OR_RETURN(Endpoint second, add1("Equal", {index, one}, {}, {}, "taken"));
        TF_ASSIGN_OR_RETURN(NodeId sw, add("Switch", {*d, second}, {}, {}, "Switch"));
        dx[0] = Endpoint{sw, 0};
        dx[1] = Endpoint{sw, 1};
      } else {
        for (size_t i = 0; i < n.inputs.size(); ++i) {
          TF_ASSIGN_OR_RETURN(Endpoint k, constant(ctx, ops::Tensor::scalar<int32_t>(static_cast<int32_t>(i)), "index"));
          TF_ASSIGN_OR_RETURN(Endpoint taken, add1("Equal", {index, k}, {}, {}, "taken"));
          TF_ASSIGN_OR_RETURN(NodeId sw, add("Switch", {*d, taken}, {}, {}, "Switch"));
          dx[i] = Endpoint{sw, 1};
        }
      }
      return propagate(id, dx);
    }
    case OpRole::next_iteration: {
      TF_ASSIGN_OR_RETURN(std::optional<Endpoint> d, sum({id, 0}));
      return propagate(id, {d});
    }
    case OpRole::enter: {
      TF_ASSIGN_OR_RETURN(std::optional<Endpoint> d, sum({id, 0}));
      if (!d) return propagate(id, {});
      LoopGrad& L = loops[ctx];
      if (!is_constant_enter(id)) {
        TF_ASSIGN_OR_RETURN(Endpoint out, add1("Exit", {*d}, {}, {}, "b_exit"));
        return propagate(id, {out});
      }
      // A loop invariant: its gradient summed over the iterations by an
      // accumulator loop variable of the gradient loop.
      TF_ASSIGN_OR_RETURN(Endpoint value, real(n.inputs[0], parent(ctx)));
      TF_ASSIGN_OR_RETURN(Endpoint zeros, zeros_like(value, ops::base_dtype(type_of(*d)), "b_acc_zeros"));
      TF_ASSIGN_OR_RETURN(Endpoint entered, add1("Enter", {zeros}, enter_attrs(L.frame, false, L.parallel_iterations), {}, "b_acc"));
      TF_ASSIGN_OR_RETURN(NodeId merge, add("Merge", {entered, entered}, {}, {}, "b_acc_merge"));
      TF_ASSIGN_OR_RETURN(NodeId sw, add("Switch", {{merge, 0}, L.gpivot}, {}, {}, "b_acc_switch"));
      TF_ASSIGN_OR_RETURN(Endpoint added, add1("AddV2", {{sw, 1}, *d}, {}, {}, "b_acc_add"));
      TF_ASSIGN_OR_RETURN(Endpoint next, add1("NextIteration", {added}, {}, {}, "b_acc_next"));
      g.mutable_node(merge).inputs[1] = next;
      TF_ASSIGN_OR_RETURN(Endpoint out, add1("Exit", {{sw, 0}}, {}, {}, "b_acc_exit"));
      return propagate(id, {out});
    }
    case OpRole::loop_cond: return propagate(id, {});
    default: break;
  }

  std::vector<std::optional<Endpoint>> dys(static_cast<size_t>(num_out));
  bool any = false;
  for (int p = 0; p < num_out; ++p) {
    TF_ASSIGN_OR_RETURN(dys[static_cast<size_t>(p)], sum({id, p}));
    any = any || dys[static_cast<size_t>(p)].has_value();
  }
  if (!any || registry.is_not_differentiable(n.op)) return propagate(id, {});
  if (options.functional && is_functional_gradient_op(n, g)) {
    const std::string label = "gradient of node " + name(id) + " (" + n.op + "): ";
    GradContext ctx_(*this, id);
    TF_RETURN_IF_ERROR(functional_gradient(ctx_, options).with_prefix(label));
    return propagate(id, ctx_.results());
  }
  const GradientFunction* fn = registry.find(n.op);
  if (fn == nullptr)
    return Status(Error::unimplemented,
                  "no gradient is defined for op " + n.op + " (node " + name(id) +
                      "), on the path " + path_through(id));
  GradContext ctx_(*this, id);
  TF_RETURN_IF_ERROR((*fn)(ctx_).with_prefix("gradient of node " + name(id) + " (" + n.op + "): "));
  return propagate(id, ctx_.results());
}

// The forward loop's iteration counter and the gradient loop that runs its
// count backwards (docs/gradients.md, "While loops").
Status Backprop::build_loop(FrameId f) {
  LoopGrad& L = loops[f];
  if (L.built) return ok_status();
  const FrameInfo& F = cf.frames[static_cast<size_t>(f)];
  const FrameId p = F.parent;
  if (F.pivot == kNoNode)
    return Status(Error::invalid_graph, "loop frame " + quoted(F.name) + " has no LoopCond: its gradient cannot count its iterations");
  if (F.enters.empty())
    return Status(Error::invalid_graph, "loop frame " + quoted(F.name) + " has no Enter");
  if (p != kRootFrame) TF_RETURN_IF_ERROR(build_loop(p));
  L.frame = scope + "/" + F.name;
  L.parallel_iterations = F.parallel_iterations;
  const std::string saved = prefix;
  prefix = L.frame + "/";

  // Forward: a counter loop variable. Its first value is live exactly when
  // the loop is entered, and (nested loops) waits for the enclosing loop's
  // pushes of this iteration, so the stacks fill in iteration order.
  TF_ASSIGN_OR_RETURN(Endpoint entered_by, add1("Identity", {g.node(F.enters[0]).inputs[0]}, {}, {}, "f_count_gate"));
  std::vector<NodeId> control{entered_by.node};
  if (p != kRootFrame) control.push_back(loops.at(p).fbody);
  TF_ASSIGN_OR_RETURN(Endpoint zero, add1("Const", {}, {{"dtype", DType::int32}, {"value", ops::Tensor::scalar<int32_t>(0)}}, control, "f_count_zero"));
  TF_ASSIGN_OR_RETURN(Endpoint c_enter, add1("Enter", {zero}, enter_attrs(F.name, false, F.parallel_iterations), {}, "f_count"));
  TF_ASSIGN_OR_RETURN(NodeId c_merge, add("Merge", {c_enter, c_enter}, {}, {}, "f_count_merge"));
  TF_ASSIGN_OR_RETURN(NodeId c_switch, add("Switch", {{c_merge, 0}, {F.pivot, 0}}, {}, {}, "f_count_switch"));
  TF_ASSIGN_OR_RETURN(Endpoint fbody, add1("Identity", {{c_switch, 1}}, {}, {}, "f_count_body"));
  L.fbody = fbody.node;
  TF_ASSIGN_OR_RETURN(NodeId f_sync, add("ControlTrigger", {}, {}, {fbody.node}, "f_sync"));
  L.f_sync = f_sync;
  TF_ASSIGN_OR_RETURN(Endpoint one, add1("Const", {}, {{"dtype", DType::int32}, {"value", ops::Tensor::scalar<int32_t>(1)}}, {fbody.node}, "f_count_one"));
  TF_ASSIGN_OR_RETURN(Endpoint c_add, add1("AddV2", {fbody, one}, {}, {f_sync}, "f_count_add"));
  TF_ASSIGN_OR_RETURN(Endpoint c_next, add1("NextIteration", {c_add}, {}, {}, "f_count_next"));
  g.mutable_node(c_merge).inputs[1] = c_next;
  TF_ASSIGN_OR_RETURN(L.count, add1("Exit", {{c_switch, 0}}, {}, {}, "f_count_exit"));
  conds.added(L.count.node, conds.entering(f));

  // Gradient: a counter from the forward count down to 1.
  prefix = saved;
  TF_ASSIGN_OR_RETURN(Endpoint count, real(L.count, p));
  prefix = L.frame + "/";
  TF_ASSIGN_OR_RETURN(Endpoint g_enter, add1("Enter", {count}, enter_attrs(L.frame, false, F.parallel_iterations), {}, "b_count"));
  TF_ASSIGN_OR_RETURN(NodeId g_merge, add("Merge", {g_enter, g_enter}, {}, {}, "b_count_merge"));
  TF_ASSIGN_OR_RETURN(Endpoint g_one, add1("Const", {}, {{"dtype", DType::int32}, {"value", ops::Tensor::scalar<int32_t>(1)}}, {g_merge}, "b_count_one"));
  TF_ASSIGN_OR_RETURN(Endpoint g_cond, add1("GreaterEqual", {{g_merge, 0}, g_one}, {}, {}, "b_count_cond"));
  TF_ASSIGN_OR_RETURN(L.gpivot, add1("LoopCond", {g_cond}, {}, {}, "b_pivot"));
  TF_ASSIGN_OR_RETURN(NodeId g_switch, add("Switch", {{g_merge, 0}, L.gpivot}, {}, {}, "b_count_switch"));
  TF_ASSIGN_OR_RETURN(Endpoint gbody, add1("Identity", {{g_switch, 1}}, {}, {}, "b_count_body"));
  L.gbody = gbody.node;
  TF_ASSIGN_OR_RETURN(NodeId b_sync, add("ControlTrigger", {}, {}, {gbody.node}, "b_sync"));
  L.b_sync = b_sync;
  TF_ASSIGN_OR_RETURN(Endpoint b_one, add1("Const", {}, {{"dtype", DType::int32}, {"value", ops::Tensor::scalar<int32_t>(1)}}, {gbody.node}, "b_count_one"));
  TF_ASSIGN_OR_RETURN(Endpoint g_sub, add1("Sub", {gbody, b_one}, {}, {b_sync}, "b_count_sub"));
  TF_ASSIGN_OR_RETURN(Endpoint g_next, add1("NextIteration", {g_sub}, {}, {}, "b_count_next"));
  g.mutable_node(g_merge).inputs[1] = g_next;
  TF_ASSIGN_OR_RETURN(Endpoint g_exit, add1("Exit", {{g_switch, 0}}, {}, {}, "b_count_exit"));
  L.g_exit = g_exit.node;
  // The enclosing gradient loop's next iteration waits for this one's
  // gradient loop to finish popping.
  if (p != kRootFrame) add_control(loops.at(p).b_sync, g_exit.node);
  prefix = saved;
  L.built = true;
  result.loops.push_back({F.name, L.frame, L.count});
  return ok_status();
}

// A loop variable whose body never gave its gradient back gets zeros for
// it: the gradient of an earlier iteration's value through it is zero.
Status Backprop::finish_loops() {
  for (auto& [f, L] : loops) {
    if (!L.built) continue;
    prefix = L.frame + "/";
    for (auto& [merge, set] : L.back_edge_set) {
      if (set) continue;
      Endpoint body;
      if (auto it = L.merge_true.find(merge); it != L.merge_true.end()) {
        body = it->second;
      } else {
        TF_ASSIGN_OR_RETURN(NodeId sw, add("Switch", {{merge, 0}, L.gpivot}, {}, {}, "b_unused"));
        body = {sw, 1};
      }
      TF_ASSIGN_OR_RETURN(Endpoint zeros, add1("ZerosLike", {body}, {}, {}, "b_zeros"));
      TF_ASSIGN_OR_RETURN(Endpoint next, add1("NextIteration", {zeros}, {}, {}, "b_next"));
      g.mutable_node(merge).inputs[1] = next;
      set = true;
    }
  }
  return ok_status();
}

Status Backprop::run() {
  std::set<NodeId> starts;
  for (const Endpoint& y : ys) starts.insert(y.node);
  for (const NodeId y_node : starts) {
    const Endpoint y{y_node, 0};
    if (between[static_cast<size_t>(y.node)] && pending[static_cast<size_t>(y.node)] == 0 &&
        !processed[static_cast<size_t>(y.node)]) {
      if (role(y.node) == OpRole::exit) {
        TF_RETURN_IF_ERROR(exit_ready(y.node));
      } else {
        TF_RETURN_IF_ERROR(process(y.node));
      }
    }
  }
  TF_RETURN_IF_ERROR(finish_loops());
  for (NodeId id = 0; id < static_cast<NodeId>(between.size()); ++id) {
    if (!between[static_cast<size_t>(id)] || processed[static_cast<size_t>(id)]) continue;
    if (grads.count(id) && pending[static_cast<size_t>(id)] > 0 &&
        !std::any_of(xs.begin(), xs.end(), [&](const Endpoint& x) { return x.node == id; }))
      return Status(Error::unimplemented,
                    "the gradient of node " + name(id) + " (" + g.node(id).op + ", " + std::to_string(pending[static_cast<size_t>(id)]) + " pending" +
                        ") waits for consumers that never give theirs: a loop's Merge "
                        "read by nodes other than its Switch is not supported");
  }
  return ok_status();
}

Expected<GradientResult> gradients(Graph& g, const std::vector<Endpoint>& ys,
                                   const std::vector<Endpoint>& xs,
                                   const std::vector<Endpoint>& grad_ys,
                                   const GradientOptions& options) {
  // Built on a copy (sharing g's nodes until they change): a failure leaves
  // g as it was.
  Graph work = g;
  Backprop bp(work, options);
  if (ys.empty()) return Status(Error::invalid_argument, "gradients: no ys");
  if (!grad_ys.empty() && grad_ys.size() != ys.size())
    return Status(Error::invalid_argument, "gradients: " + std::to_string(grad_ys.size()) +
                                               " grad_ys for " + std::to_string(ys.size()) + " ys");
  // Nodes of ops tagflow does not know (a graph validated with
  // allow_unknown_ops) are fine off the paths from the xs to the ys: their
  // outputs have no dtype a gradient flows through.
  bool unknown_ops = false;
  for (const Node& n : work.nodes()) {
    if (n.def != nullptr) continue;
    if (bp.ops.find(n.op) != nullptr)
      return Status(Error::failed_precondition, "gradients: the graph is not validated (node " +
                                                    quoted(n.name) + ")");
    unknown_ops = true;
  }
  TF_ASSIGN_OR_RETURN(bp.cf, analyze_control_flow(work));
  auto check = [&](const Endpoint& e, const char* what, bool resource_ok) -> Status {
    if (e.node < 0 || e.node >= work.num_nodes() || e.port < 0 ||
        static_cast<size_t>(e.port) >= work.node(e.node).output_types.size())
      return Status(Error::invalid_argument, std::string("gradients: ") + what + " is not an output of the graph");
    const std::string label = std::string(what) + " " + quoted(work.endpoint_name(e));
    if (bp.out_frame(e.node) != kRootFrame)
      return Status(Error::invalid_argument, "gradients: " + label + " is inside a loop; ys and xs must be outside every loop");
    const DType t = bp.type_of(e);
    // Functional gradients of gradients have Optionals among their ys and xs.
    const bool variant_ok = options.functional && ops::base_dtype(t) == DType::variant;
    if (!is_differentiable(t) && !variant_ok && !(resource_ok && ops::base_dtype(t) == DType::resource))
      return Status(Error::invalid_argument, "gradients: " + label + " is " + ops::dtype_name(t) +
                                                 ", not a float tensor: no gradient flows through it");
    return ok_status();
  };
  for (const Endpoint& y : ys) TF_RETURN_IF_ERROR(check(y, "y", false));
  for (const Endpoint& x : xs) {
    TF_RETURN_IF_ERROR(check(x, "x", true));
    if (ops::base_dtype(bp.type_of(x)) == DType::resource) bp.allow_resource = true;
  }
  for (const Endpoint& s : options.stop_gradients) bp.stops.insert(s);
  bp.xs = xs;
  bp.ys = ys;
  // A fresh name scope.
  std::string scope = options.name_scope.empty() ? "gradients" : options.name_scope;
  auto taken = [&](const std::string& s) {
    for (const Node& n : work.nodes())
      if (n.name == s || n.name.compare(0, s.size() + 1, s + "/") == 0) return true;
    return false;
  };
  for (int k = 1; taken(scope); ++k)
    scope = (options.name_scope.empty() ? "gradients" : options.name_scope) + "_" + std::to_string(k);
  bp.scope = scope;
  bp.result.scope = scope;
  TF_RETURN_IF_ERROR(bp.prepare());

  // The gradients of the ys: grad_ys, or ones.
  bp.prefix = scope + "/";
  for (size_t i = 0; i < ys.size(); ++i) {
    Endpoint dy;
    if (!grad_ys.empty() && grad_ys[i].node != kNoNode) {
      if (ops::base_dtype(bp.type_of(grad_ys[i])) != ops::base_dtype(bp.type_of(ys[i])))
        return Status(Error::invalid_argument,
                      "gradients: grad_y " + quoted(work.endpoint_name(grad_ys[i])) + " is " +
                          ops::dtype_name(bp.type_of(grad_ys[i])) + " but y " +
                          quoted(work.endpoint_name(ys[i])) + " is " + ops::dtype_name(bp.type_of(ys[i])));
      dy = grad_ys[i];
    } else {
      TF_ASSIGN_OR_RETURN(dy, bp.add1("OnesLike", {ys[i]}, {}, {}, "grad_ys_" + std::to_string(i)));
    }
    bp.add_grad(ys[i], dy);
  }
  TF_RETURN_IF_ERROR(bp.run());

  bp.prefix = scope + "/";
  for (const Endpoint& x : xs) {
    TF_ASSIGN_OR_RETURN(std::optional<Endpoint> d, bp.sum(x));
    if (!d && options.unconnected == GradientOptions::Unconnected::zeros) {
      const DType* held = work.node(x.node).attr<DType>("dtype");
      TF_ASSIGN_OR_RETURN(d, bp.zeros_like(x, held ? *held : DType::float32, "zeros"));
    }
    bp.result.dxs.push_back(d.value_or(Endpoint{kNoNode, 0}));
  }
  // The result must be a graph the runtime takes: every new node in one
  // frame, every edge well typed.
  auto frames = analyze_control_flow(work);
  if (!frames.ok())
    return Status(Error::internal, "gradients built an ill-formed graph: " + frames.status().message());
  ValidateOptions vo;
  vo.keep_resolved = true;
  vo.allow_unknown_ops = unknown_ops;
  vo.registry = &bp.ops;
  TF_RETURN_IF_ERROR(validate(work, vo));
  g = std::move(work);
  return std::move(bp.result);
}

}  // namespace tagflow::graph
