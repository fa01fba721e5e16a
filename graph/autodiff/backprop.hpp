// Backprop: the state of one gradients() call and the walk over it
// (graph/autodiff/gradients.hpp, docs/gradients.md), as one struct over its files:
// gradients.cpp (the walk: which nodes, in which order, the control-flow
// primitives), gradient_loops.cpp (gradient loops: counters, forward values
// seen from a gradient frame, stacks, cond guards), grad_context.cpp
// (adding nodes, summing gradients, what a gradient function sees). Cond
// contexts come from graph/analysis/. Internal to graph/.
#pragma once

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/analysis/cond_contexts.hpp"
#include "graph/analysis/control_flow.hpp"
#include "graph/autodiff/gradients.hpp"

namespace tagflow::graph {
inline namespace autodiff {

namespace backprop_detail {


struct EndpointHash {
  size_t operator()(const Endpoint& e) const {
    return std::hash<int64_t>()((int64_t{e.node} << 20) ^ e.port);
  }
};

inline std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace backprop_detail

using backprop_detail::quoted;

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
  using AttrMap = ops::AttrMap;
  using OpRole = ops::OpRole;
  using EndpointHash = backprop_detail::EndpointHash;
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
  bool is_constant_enter(NodeId id) const {
    const bool* c = g.node(id).attr<bool>("is_constant");
    return role(id) == OpRole::enter && c != nullptr && *c;
  }
  // Functional gradients flow through the Optionals that pass an If's
  // intermediates to its gradient, and on through the ops around them:
  // the list ops, and AddN, which sums a list's gradients.
  bool carries_variant_gradient(NodeId dst) const;
  // Whether gradients flow along an edge from output `src` into node `dst`.
  bool flows(Endpoint src, NodeId dst) const;

  // --- adding nodes -------------------------------------------------------------

  std::string unique_name(const std::string& base);

  Expected<NodeId> add(const std::string& op, const std::vector<Endpoint>& inputs, AttrMap attrs,
                       std::vector<NodeId> control = {}, const std::string& base = "");
  Expected<Endpoint> add1(const std::string& op, const std::vector<Endpoint>& inputs,
                          AttrMap attrs = {}, std::vector<NodeId> control = {},
                          const std::string& base = "");
  // Zeros shaped like `e`; of a resource, zeros of the `held` value the
  // variable holds (a variable's gradient is its value's).
  Expected<Endpoint> zeros_like(Endpoint e, DType held, const std::string& base);
  void add_control(NodeId to, NodeId from);
  // A constant in context `ctx`: inside a gradient loop it runs in every
  // iteration of the loop's body.
  Expected<Endpoint> constant(FrameId ctx, const ops::Tensor& value, const std::string& base);
  AttrMap enter_attrs(const std::string& frame, bool is_constant, int64_t parallel_iterations);

  // --- forward values seen from a gradient frame ------------------------------------

  Status build_loop(FrameId f);

  // `v` (a value of the gradient frame of parent(f), or of the root) entered
  // into the gradient frame of f as a loop invariant.
  Expected<Endpoint> enter_gradient(FrameId f, Endpoint v);
  // `v`, a root value, entered into forward frame f (level by level).
  Expected<Endpoint> enter_forward(FrameId f, Endpoint v);

  // The forward value `e` as seen from the gradient frame of `ctx`.
  Expected<Endpoint> real(Endpoint e, FrameId ctx);

  // Push `e` (a value of loop frame f) in every body iteration of the
  // forward loop and pop it in the gradient loop's matching iteration.
  Expected<Endpoint> pop(Endpoint e, FrameId f);

  // A node of the gradient frame of f that is live exactly in the gradient
  // iterations whose forward iteration ran under the conds `s`.
  Expected<NodeId> guard_of(FrameId f, const CondState& s);

  // --- gradients of outputs ------------------------------------------------------

  void add_grad(Endpoint e, Endpoint grad);
  // The summed gradient of output `e` (AddN of several), or nullopt.
  Expected<std::optional<Endpoint>> sum(Endpoint e);

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

}  // namespace autodiff
}  // namespace tagflow::graph
