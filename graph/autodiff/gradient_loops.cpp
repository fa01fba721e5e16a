// Gradient loops (graph/autodiff/backprop.hpp): per forward loop a counter of its
// iterations and a gradient loop counting down; a forward value seen
// from a gradient frame (entered, copied, or pushed on a stack by the
// forward loop and popped by the gradient loop under the conds it ran
// under); a loop's Exits gathered before its gradient loop is built.
#include "graph/autodiff/backprop.hpp"

#include <algorithm>
#include <deque>

#include "graph/analysis/loop_structure.hpp"
#include "graph/autodiff/functional_gradients.hpp"
#include "graph/builder/infer_attrs.hpp"
#include "graph/validate.hpp"

namespace tagflow::graph {
inline namespace autodiff {

using ops::AttrMap;
using ops::OpRole;

// `v` (a value of the gradient frame of parent(f), or of the root) entered
// into the gradient frame of f as a loop invariant.
Expected<Endpoint> Backprop::enter_gradient(FrameId f, Endpoint v) {
  const LoopGrad& L = loops.at(f);
  const std::string saved = prefix;
  prefix = L.frame + "/";
  auto r = add1("Enter", {v}, enter_attrs(L.frame, true, L.parallel_iterations), {}, "Enter");
  prefix = saved;
  return r;
}

// `v`, a root value, entered into forward frame f (level by level).
Expected<Endpoint> Backprop::enter_forward(FrameId f, Endpoint v) {
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
Expected<Endpoint> Backprop::real(Endpoint e, FrameId ctx) {
  if (ctx == kRootFrame) return e;
  auto key = std::make_pair(ctx, e);
  if (auto it = reals.find(key); it != reals.end()) return it->second;
  const FrameId fe = analysis::output_frame(g, cf, e.node);
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
Expected<Endpoint> Backprop::pop(Endpoint e, FrameId f) {
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
Expected<NodeId> Backprop::guard_of(FrameId f, const CondState& s) {
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
  if (d && (between[static_cast<size_t>(sw)] || from_x[static_cast<size_t>(sw)]) &&
      analysis::is_loop_switch(g, cf, sw) && !L.switch_merge.count(sw)) {
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

}  // namespace autodiff
}  // namespace tagflow::graph
