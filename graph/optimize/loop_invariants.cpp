// Pass "loop_invariants": loop-invariant code motion. A node of a loop's
// frame whose data inputs are all loop invariants — the frame's constant
// Enters (`is_constant`), Consts of the frame, or other such nodes — is
// computed once, in the enclosing frame, and enters the loop as a new
// invariant (an `is_constant` Enter). What the loop's nodes read in its
// place is an Identity of that Enter with the node's name and the control
// inputs that made the node dead when it was (its own, and those of the
// Consts it read): so a node that ran in every iteration now runs once per
// frame instance, and every iteration still sees the same value and
// deadness. Nested loops move out one level per round, to a fixed point.
//
// Never moved: stateful, random and blocking ops, control-flow and
// transfer primitives, function calls, ops on refs or resources
// (is_pinned), nodes with several outputs, Identity (what the motion
// leaves behind), and, out of a nested loop, anything that reads a Const of
// the loop (a copy of it in the enclosing loop would need a node of that
// loop to run after, whose deadness could differ; constant folding computes
// what reads Consts alone).
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "graph/analysis/topological.hpp"
#include "graph/optimize/optimizer.hpp"
#include "graph/optimize/rewrite.hpp"
#include "ops/op_def.hpp"

namespace tagflow::graph::optimize {

namespace {

bool constant_enter(const Node& n) {
  if (node_role(n) != ops::OpRole::enter || n.inputs.empty()) return false;
  const bool* c = n.attr<bool>("is_constant");
  return c != nullptr && *c && !n.output_types.empty() && !ops::is_ref(n.output_types[0]);
}

bool hoistable_op(const Rewriter& r, NodeId id) {
  const Node& n = r.node(id);
  if (n.op == "Identity" || n.op == "Snapshot" || n.inputs.empty() || r.kept(id) || is_pinned(n)) return false;
  return r.graph().num_outputs(id) == 1 && n.output_types.size() == 1;
}

// Moves the invariants of frame `f` into its parent; true if any moved.
bool hoist_frame(Rewriter& r, FrameId f, const std::vector<NodeId>& order) {
  const FrameInfo& info = r.frames().frames[static_cast<size_t>(f)];
  if (info.enters.empty()) return false;
  const FrameId parent = info.parent;
  // Which nodes move, in topological order; what each read from outside.
  std::vector<char> invariant(static_cast<size_t>(r.num_nodes()), 0);  // 1 source, 2 moves
  std::vector<NodeId> moving;
  // The frame's Enters are nodes of the parent frame.
  for (NodeId id : info.enters)
    if (!r.removed(id) && constant_enter(r.node(id))) invariant[static_cast<size_t>(id)] = 1;
  for (NodeId id : order) {
    if (r.removed(id) || r.frame_of(id) != f) continue;
    const Node& n = r.node(id);
    // Out of a nested loop, Consts stay (a Const moved into a frame that
    // is not the root needs a node of that frame to run after).
    if (n.op == "Const" && parent == kRootFrame) {
      invariant[static_cast<size_t>(id)] = 1;
      continue;
    }
    if (!hoistable_op(r, id)) continue;
    bool all = true;
    for (const Endpoint& e : n.inputs) {
      if (invariant[static_cast<size_t>(e.node)] == 0) {
        all = false;
        break;
      }
    }
    if (!all) continue;
    invariant[static_cast<size_t>(id)] = 2;
    moving.push_back(id);
  }
  if (moving.empty()) return false;
  const Node& some_enter = r.node(info.enters[0]);
  const int64_t* pi = some_enter.attr<int64_t>("parallel_iterations");
  const int64_t parallel = pi != nullptr ? *pi : info.parallel_iterations;
  std::map<NodeId, NodeId> moved;        // node of f -> its copy in the parent
  std::map<NodeId, NodeId> const_copy;   // Const of f -> its copy
  std::map<NodeId, std::vector<NodeId>> gate;  // the control inputs a node's stand-in needs
  std::vector<bool> is_moving(static_cast<size_t>(r.num_nodes()), false);
  for (NodeId id : moving) is_moving[static_cast<size_t>(id)] = true;
  for (NodeId id : moving) {
    const Node n = r.node(id);
    Node copy;
    copy.name = n.name + "/hoisted";
    copy.op = n.op;
    copy.device = n.device;
    copy.attrs = n.attrs;
    std::vector<NodeId> controls = n.control_inputs;
    for (const Endpoint& e : n.inputs) {
      const Node& src = r.node(e.node);
      if (invariant[static_cast<size_t>(e.node)] == 2) {
        copy.inputs.push_back({moved.at(e.node), e.port});
        const auto& g = gate[e.node];
        controls.insert(controls.end(), g.begin(), g.end());
      } else if (src.op == "Const") {
        auto it = const_copy.find(e.node);
        if (it == const_copy.end()) {
          const NodeId c = r.add(make_const(src.name + "/hoisted", *const_value(src), src.device, {}), parent);
          it = const_copy.emplace(e.node, c).first;
        }
        copy.inputs.push_back({it->second, 0});
        controls.insert(controls.end(), src.control_inputs.begin(), src.control_inputs.end());
      } else {  // a constant Enter of f
        copy.inputs.push_back(src.inputs[0]);
      }
    }
    // Control inputs that are moving nodes stand for their gates.
    std::vector<NodeId> g;
    for (NodeId c : controls) {
      if (is_moving[static_cast<size_t>(c)]) {
        const auto& cg = gate[c];
        g.insert(g.end(), cg.begin(), cg.end());
      } else {
        g.push_back(c);
      }
    }
    std::sort(g.begin(), g.end());
    g.erase(std::unique(g.begin(), g.end()), g.end());
    gate[id] = std::move(g);
    moved[id] = r.add(std::move(copy), parent);
  }
  for (NodeId id : moving) {
    bool used_inside = r.kept(id);
    for (const OutEdge& e : r.consumers(id))
      if (!r.removed(e.dst) && !is_moving[static_cast<size_t>(e.dst)]) used_inside = true;
    const DType t = ops::base_dtype(r.node(id).output_types[0]);
    if (!used_inside) {
      r.remove(id);
      r.record(id, "hoisted", fmt::format("out of loop '{}'", info.name));
      continue;
    }
    Node enter;
    enter.name = r.node(id).name + "/invariant";
    enter.op = "Enter";
    enter.device = r.node(id).device;
    enter.attrs["T"] = t;
    enter.attrs["frame_name"] = info.name;
    enter.attrs["is_constant"] = true;
    enter.attrs["parallel_iterations"] = parallel;
    enter.inputs.push_back({moved.at(id), 0});
    const NodeId e = r.add(std::move(enter), f);
    r.rewrite(id, "Identity", {{e, 0}}, gate[id], {{"T", t}});
    r.record(id, "hoisted", fmt::format("out of loop '{}'", info.name));
  }
  return true;
}

Expected<Graph> hoist_round(const Graph& g, const OptimizeOptions& options, int* changes) {
  TF_ASSIGN_OR_RETURN(Rewriter r, Rewriter::make(g, options, "loop_invariants"));
  const std::vector<NodeId> order = analysis::topological_order(g);
  // Deepest frames first; one frame per round (the frames change).
  std::vector<FrameId> frames;
  for (FrameId f = 1; f < static_cast<FrameId>(r.frames().frames.size()); ++f) frames.push_back(f);
  std::stable_sort(frames.begin(), frames.end(), [&](FrameId a, FrameId b) {
    return r.frames().frames[static_cast<size_t>(a)].depth > r.frames().frames[static_cast<size_t>(b)].depth;
  });
  for (FrameId f : frames)
    if (hoist_frame(r, f, order)) break;
  *changes = r.num_changes();
  if (*changes == 0) return g;
  return r.finish();
}

}  // namespace

Expected<Graph> hoist_loop_invariants(const Graph& g, const OptimizeOptions& options) {
  return until_fixed_point(
      g, options, [&](const Graph& current, const OptimizeOptions& o, int* changes) { return hoist_round(current, o, changes); }, 1024);
}

}  // namespace tagflow::graph::optimize
