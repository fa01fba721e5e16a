// gradients(): the backward pass over a graph with conds and while loops
// (graph/autodiff/gradients.hpp, docs/gradients.md).
//
// The walk is TensorFlow's: the nodes between the xs and the ys are visited
// in reverse, each once all of its consumers on those paths have given it
// their gradient (pending counts), starting from the ys. The control-flow
// primitives are differentiated here; every other op by its registered
// gradient function (graph/autodiff/gradient_functions.cpp), through a GradContext.
//
// Frames. Every forward frame F that gradients flow through gets a gradient
// frame G(F) nested like F; nodes added while differentiating a node of F
// go into G(F) ("the context" below: the forward frame whose gradient frame
// is being built; 0 is the root, its own gradient frame). A forward value v
// of F is seen in G(F) through real(): outside F it is entered (is_constant)
// level by level; a loop invariant's Enter is entered the same way; a Const
// is copied; anything else is pushed on a stack by the forward loop and
// popped by the gradient loop.



#include "graph/autodiff/backprop.hpp"

#include <algorithm>
#include <deque>

#include "graph/analysis/loop_structure.hpp"
#include "graph/autodiff/functional_gradients.hpp"
#include "graph/validate.hpp"

namespace tagflow::graph {
inline namespace autodiff {

using ops::AttrMap;
using ops::OpRole;

bool is_differentiable(DType t) {
  const DType b = ops::base_dtype(t);
  return ops::dtype_is_floating(b) || b == DType::complex64 || b == DType::complex128;
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



Status Backprop::process(NodeId id) {
  processed[static_cast<size_t>(id)] = 1;
  const Node& n = g.node(id);
  const FrameId ctx = analysis::output_frame(g, cf, id);
  prefix = scope + "/" + n.name + "_grad/";
  // A node none of whose inputs carry a gradient (an x, a placeholder) ends
  // the walk.
  bool any_input = false;
  for (const Endpoint& e : n.inputs) any_input = any_input || (between[static_cast<size_t>(e.node)] && flows(e, id));
  if (!any_input) return ok_status();
  const int num_out = static_cast<int>(n.output_types.size());

  switch (role(id)) {
    case OpRole::switch_op: {
      if (analysis::is_loop_switch(g, cf, id)) {
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
      if (analysis::is_loop_merge(g, id)) {
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
    if (analysis::output_frame(bp.g, bp.cf, e.node) != kRootFrame)
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

}  // namespace autodiff
}  // namespace tagflow::graph
