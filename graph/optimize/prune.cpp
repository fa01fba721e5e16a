// Pass "prune": removes what carries nothing.
//
// - Identity nodes that only forward a value: each consumer reads the
//   Identity's input instead, and a control consumer waits on the input's
//   node (dead exactly when the Identity was). Kept: an Identity that is
//   fetched or fed, that has control inputs (it gates deadness), that reads
//   a ref (it takes a snapshot of a variable) or a Switch (a control edge
//   from a Switch does not carry the deadness of one of its outputs).
// - Control inputs on Consts that have no inputs: such a Const is never
//   dead and is in the root frame, so waiting for it changes nothing.
// - Nodes nothing needs: every node from which no kept node, no stateful
//   op and no op tagflow does not know can be reached, through data and
//   control edges (a loop whose results nobody reads goes with its frame).
#include <vector>

#include "graph/optimize/optimizer.hpp"
#include "graph/optimize/rewrite.hpp"
#include "ops/op_def.hpp"

namespace tagflow::graph::optimize {

namespace {

bool bypassable_identity(const Rewriter& r, NodeId id) {
  const Node& n = r.node(id);
  if (n.op != "Identity" || r.kept(id) || !n.control_inputs.empty() || n.inputs.size() != 1) return false;
  if (n.input_types.empty() || ops::is_ref(n.input_types[0])) return false;
  const Node& in = r.node(n.inputs[0].node);
  const ops::OpRole role = node_role(in);
  if (role == ops::OpRole::switch_op || role == ops::OpRole::switch_n) return false;
  // A producer with several outputs may have a dead one and a live one
  // (only Switch among tagflow's ops, but an unknown op could).
  if (in.def == nullptr) return false;
  return true;
}

// A node that must run even if nothing reads it.
bool is_root(const Rewriter& r, NodeId id) {
  const Node& n = r.node(id);
  if (r.kept(id) || n.def == nullptr || n.def->is_stateful()) return true;
  const ops::OpRole role = node_role(n);
  return role == ops::OpRole::send || role == ops::OpRole::recv || role == ops::OpRole::function_call;
}

Expected<Graph> prune_round(const Graph& g, const OptimizeOptions& options, int* changes) {
  TF_ASSIGN_OR_RETURN(Rewriter r, Rewriter::make(g, options, "prune"));
  for (NodeId id = 0; id < r.num_nodes(); ++id) {
    if (!bypassable_identity(r, id)) continue;
    const Endpoint in = r.node(id).inputs[0];
    r.replace_uses({id, 0}, in);
    r.replace_control_uses(id, in.node);
    r.remove(id);
    r.record(id, "removed", "Identity bypassed");
  }
  // A control input on a Const with no inputs waits for nothing: such a
  // Const is never dead and runs once per step, in the root frame.
  for (NodeId id = 0; id < r.num_nodes(); ++id) {
    if (r.removed(id)) continue;
    const auto& controls = r.node(id).control_inputs;
    std::vector<NodeId> kept_controls;
    for (NodeId c : controls) {
      const Node& src = r.node(c);
      if (!(src.op == "Const" && src.inputs.empty() && src.control_inputs.empty())) kept_controls.push_back(c);
    }
    if (kept_controls.size() == controls.size()) continue;
    r.set_control_inputs(id, std::move(kept_controls));
    r.record(id, "rewritten", "control input on an input-less Const dropped");
  }
  std::vector<bool> needed(static_cast<size_t>(r.num_nodes()), false);
  std::vector<NodeId> stack;
  for (NodeId id = 0; id < r.num_nodes(); ++id)
    if (!r.removed(id) && is_root(r, id)) {
      needed[static_cast<size_t>(id)] = true;
      stack.push_back(id);
    }
  while (!stack.empty()) {
    const NodeId id = stack.back();
    stack.pop_back();
    const Node& n = r.node(id);
    auto visit = [&](NodeId src) {
      if (!needed[static_cast<size_t>(src)]) {
        needed[static_cast<size_t>(src)] = true;
        stack.push_back(src);
      }
    };
    for (const Endpoint& e : n.inputs) visit(e.node);
    for (NodeId c : n.control_inputs) visit(c);
  }
  for (NodeId id = 0; id < r.num_nodes(); ++id) {
    if (r.removed(id) || needed[static_cast<size_t>(id)]) continue;
    r.remove(id);
    r.record(id, "removed", "nothing reads it");
  }
  *changes = r.num_changes();
  if (*changes == 0) return g;
  return r.finish();
}

}  // namespace

Expected<Graph> prune(const Graph& g, const OptimizeOptions& options) {
  return until_fixed_point(g, options, [&](const Graph& current, const OptimizeOptions& o, int* changes) {
    return prune_round(current, o, changes);
  }, 1);  // one round reaches the fixed point: bypasses compose, reachability is complete
}

}  // namespace tagflow::graph::optimize
