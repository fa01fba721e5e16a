// Pass "dead_branches": control flow whose predicate is known.
//
// - A Switch whose predicate is a known constant (a Const, or an Enter
//   chain from one) sends its value one way only: the untaken branch — every
//   node its dead output reaches, up to the Merges that also get a live
//   input — is removed, each Merge left with one input becomes an Identity
//   (keeping its name), and the Switch is replaced by its value, gated by
//   the predicate's control inputs when it has any.
// - A loop whose predicate is false on entry (evaluated on the Enter values
//   of iteration 0, when they and everything the predicate reads are
//   known) runs no iteration: each Exit gives its variable's entering value,
//   and the loop is removed.
//
// Left alone: a branch that holds a fetched or fed node, a transfer, a
// function call or an op tagflow does not know; a branch whose dead value
// would reach a Merge through a control edge; a Merge whose value_index
// output is read; a loop whose predicate is true on entry (it may never
// end), or any of whose frames hold a stateful op (it would run in
// iteration 0 even with no iteration of the body).
#include <algorithm>
#include <map>
#include <optional>
#include <unordered_set>

#include <fmt/format.h>

#include "graph/analysis/topological.hpp"
#include "graph/optimize/optimizer.hpp"
#include "graph/optimize/rewrite.hpp"
#include "ops/kernel.hpp"
#include "ops/op_def.hpp"

namespace tagflow::graph::optimize {

namespace {

// The constant an endpoint holds and whether reading it needs control
// inputs: a Const (its control inputs) or a chain of Enters and Identities
// from one (the first of them).
struct Known {
  ops::Tensor value;
  bool always_live = false;  // a Const with no inputs, read directly
};

std::optional<Known> known_predicate(const Rewriter& r, Endpoint e) {
  bool direct = true;
  const NodeId c = const_through_enters(r, e, true, &direct);
  if (c == kNoNode) return std::nullopt;
  const ops::Tensor* v = const_value(r.node(c));
  if (v == nullptr || v->dtype() != DType::boolean || v->num_elements() != 1) return std::nullopt;
  return Known{*v, direct && r.node(c).control_inputs.empty()};
}

// The dead part of the graph when `s` sends nothing out of `dead_port`:
// whole nodes, and for each Merge the inputs that turn dead. False when the
// branch cannot be removed.
struct DeadSet {
  std::unordered_set<NodeId> node;
  std::map<NodeId, std::vector<int>> merge_inputs;  // live Merges: dead input indices
};

bool find_dead(const Rewriter& r, NodeId s, int dead_port, DeadSet* d) {
  std::vector<Endpoint> work;  // dead outputs (port -1: the whole node)
  work.push_back({s, dead_port});
  std::map<NodeId, int> dead_inputs_of_merge;
  while (!work.empty()) {
    const Endpoint e = work.back();
    work.pop_back();
    for (const OutEdge& out : r.consumers(e.node)) {
      // A dead output reaches the inputs that read it; a dead node also
      // reaches its control consumers.
      if (e.port == kControlPort ? out.dst_input != kControlPort
                                 : (out.src_port != e.port || out.dst_input == kControlPort))
        continue;
      const NodeId c = out.dst;
      if (d->node.count(c) != 0) continue;
      const Node& cn = r.node(c);
      if (node_role(cn) == ops::OpRole::merge) {
        if (out.dst_input == kControlPort) return false;
        auto& dead = d->merge_inputs[c];
        if (std::find(dead.begin(), dead.end(), out.dst_input) == dead.end()) dead.push_back(out.dst_input);
        // A Merge is dead when every input is, a loop's Merge when every
        // input from outside the loop is (its NextIteration then only
        // ever carries dead values).
        bool all = true;
        for (size_t i = 0; i < cn.inputs.size(); ++i) {
          if (std::find(dead.begin(), dead.end(), static_cast<int>(i)) != dead.end()) continue;
          if (node_role(r.node(cn.inputs[i].node)) == ops::OpRole::next_iteration) continue;
          all = false;
        }
        if (!all) continue;
        d->merge_inputs.erase(c);
      }
      if (r.kept(c) || cn.def == nullptr) return false;
      const ops::OpRole role = node_role(cn);
      if (role == ops::OpRole::send || role == ops::OpRole::recv || role == ops::OpRole::function_call ||
          role == ops::OpRole::switch_n || role == ops::OpRole::control_trigger)
        return false;
      d->node.insert(c);
      const int outputs = r.graph().num_outputs(c);
      for (int p = 0; p < outputs; ++p) work.push_back({c, p});
      work.push_back({c, kControlPort});
    }
  }
  for (const auto& [m, dead] : d->merge_inputs) {
    (void)dead;
    for (const OutEdge& out : r.consumers(m))
      if (out.src_port == 1 && out.dst_input != kControlPort) return false;  // value_index read
  }
  return true;
}

// `touched`: nodes an earlier Switch of this round removed or changed; a
// Switch whose branch reaches one waits for the next round.
Status remove_switch(Rewriter& r, NodeId s, bool pred, const Known& known, std::unordered_set<NodeId>* touched) {
  const int dead_port = pred ? 0 : 1;
  const int live_port = pred ? 1 : 0;
  DeadSet d;
  if (!find_dead(r, s, dead_port, &d)) return ok_status();
  for (NodeId id : d.node)
    if (touched->count(id) != 0) return ok_status();
  for (const auto& [m, dead] : d.merge_inputs) {
    (void)dead;
    if (touched->count(m) != 0) return ok_status();
  }
  if (touched->count(s) != 0) return ok_status();
  touched->insert(s);
  touched->insert(d.node.begin(), d.node.end());
  for (const auto& [m, dead] : d.merge_inputs) {
    (void)dead;
    touched->insert(m);
  }
  const Node& sw = r.node(s);
  const Endpoint data = sw.inputs[0];
  // What reads the live output reads the value, gated when the predicate
  // (or the Switch) could be dead.
  Endpoint live = data;
  std::vector<NodeId> gate = known.always_live ? sw.control_inputs : deadness_controls(r, s, {sw.inputs[1]});
  NodeId gate_node = data.node;
  if (!gate.empty()) {
    Node id;
    id.name = sw.name + "/taken";
    id.op = "Identity";
    id.device = sw.device;
    id.attrs["T"] = ops::base_dtype(sw.input_types[0]);
    id.inputs.push_back(data);
    id.control_inputs = gate;
    gate_node = r.add(std::move(id), r.frame_of(s));
    live = {gate_node, 0};
  }
  r.replace_uses({s, live_port}, live);
  r.replace_control_uses(s, gate_node);
  std::vector<NodeId> dead_nodes(d.node.begin(), d.node.end());
  std::sort(dead_nodes.begin(), dead_nodes.end());
  for (NodeId id : dead_nodes) {
    r.remove(id);
    r.record(id, "removed", fmt::format("dead: Switch '{}' has a constant predicate", sw.name));
  }
  for (const auto& [m, dead] : d.merge_inputs) {
    const Node& mn = r.node(m);
    std::vector<Endpoint> inputs;
    for (size_t i = 0; i < mn.inputs.size(); ++i)
      if (std::find(dead.begin(), dead.end(), static_cast<int>(i)) == dead.end()) inputs.push_back(mn.inputs[i]);
    const DType t = ops::base_dtype(mn.output_types[0]);
    std::vector<NodeId> controls = mn.control_inputs;
    if (inputs.size() == 1) {
      r.rewrite(m, "Identity", inputs, std::move(controls), {{"T", t}});
      r.record(m, "rewritten", "Merge with one live input");
    } else {
      ops::AttrMap attrs = mn.attrs;
      attrs["N"] = static_cast<int64_t>(inputs.size());
      r.rewrite(m, mn.op, inputs, std::move(controls), std::move(attrs));
      r.record(m, "rewritten", "Merge without its dead inputs");
    }
  }
  r.remove(s);
  r.record(s, "removed", pred ? "predicate always true" : "predicate always false");
  return ok_status();
}

// The predicate of frame `f` on entry (iteration 0), when everything it
// reads is known then; `sources` collects the entering values it reads.
struct EntryEval {
  const Rewriter& r;
  FrameId frame;
  std::vector<Endpoint> sources;
  std::map<std::pair<NodeId, int>, ops::Tensor> memo;
  int budget = 256;

  bool enters_frame(NodeId id) const {
    const auto& enters = r.frames().frames[static_cast<size_t>(frame)].enters;
    return std::find(enters.begin(), enters.end(), id) != enters.end();
  }

  std::optional<ops::Tensor> value(Endpoint e) {
    auto it = memo.find({e.node, e.port});
    if (it != memo.end()) return it->second;
    if (--budget < 0) return std::nullopt;
    const Node& n = r.node(e.node);
    std::optional<ops::Tensor> v;
    if (n.op == "Const") {
      // A Const of the loop runs after its control inputs: in iteration 0
      // it is dead when they are (their entering values are sources too).
      bool known = true;
      for (NodeId c : n.control_inputs) {
        if (r.frame_of(c) != frame && !n.control_inputs.empty()) return std::nullopt;
        const int ports = r.graph().num_outputs(c);
        if (ports < 1 || !value({c, 0})) known = false;
      }
      if (const ops::Tensor* t = const_value(n); t != nullptr && known) v = *t;
    } else if (node_role(n) == ops::OpRole::enter && enters_frame(e.node)) {
      const ops::Tensor* t = nullptr;
      const NodeId c = const_through_enters(r, n.inputs[0]);  // an Enter chain from a Const
      if (c != kNoNode && r.node(c).control_inputs.empty()) t = const_value(r.node(c));
      if (t != nullptr) {
        v = *t;
        sources.push_back(n.inputs[0]);
      }
    } else if (node_role(n) == ops::OpRole::merge && r.frame_of(e.node) == frame && e.port == 0) {
      // Iteration 0 takes the input from outside the loop.
      std::optional<Endpoint> entry;
      int entries = 0;
      for (const Endpoint& in : n.inputs)
        if (node_role(r.node(in.node)) != ops::OpRole::next_iteration) {
          entry = in;
          ++entries;
        }
      if (entries == 1 && n.control_inputs.empty()) v = value(*entry);
    } else if (node_role(n) == ops::OpRole::ordinary && !is_pinned(n) && n.control_inputs.empty() &&
               r.frame_of(e.node) == frame) {
      std::vector<ops::Tensor> inputs;
      for (const Endpoint& in : n.inputs) {
        auto x = value(in);
        if (!x) return std::nullopt;
        inputs.push_back(*x);
      }
      auto outputs = evaluate_kernel(n, std::move(inputs));
      if (outputs && static_cast<size_t>(e.port) < outputs->size()) v = (*outputs)[static_cast<size_t>(e.port)];
    }
    if (v) memo[{e.node, e.port}] = *v;
    return v;
  }
};

bool frame_has_state(const Rewriter& r, FrameId f) {
  for (NodeId id : r.frames().frames[static_cast<size_t>(f)].nodes) {
    const Node& n = r.node(id);
    if (n.def == nullptr || n.def->is_stateful() || r.kept(id)) return true;
    const ops::OpRole role = node_role(n);
    if (role == ops::OpRole::send || role == ops::OpRole::recv || role == ops::OpRole::function_call) return true;
  }
  for (FrameId c : r.frames().frames[static_cast<size_t>(f)].children)
    if (frame_has_state(r, c)) return true;
  return false;
}

void collect_frame_nodes(const Rewriter& r, FrameId f, std::vector<NodeId>* out) {
  const FrameInfo& info = r.frames().frames[static_cast<size_t>(f)];
  out->insert(out->end(), info.nodes.begin(), info.nodes.end());
  out->insert(out->end(), info.enters.begin(), info.enters.end());  // nodes of the parent frame
  for (FrameId c : info.children) collect_frame_nodes(r, c, out);
}

// Removes loop `f` if its predicate is false on entry; true if it did.
bool remove_loop_never_entered(Rewriter& r, FrameId f) {
  const FrameInfo& info = r.frames().frames[static_cast<size_t>(f)];
  if (info.pivot == kNoNode || frame_has_state(r, f)) return false;
  const Node& pivot = r.node(info.pivot);
  if (pivot.inputs.empty() || !pivot.control_inputs.empty()) return false;
  EntryEval eval{r, f, {}, {}};
  auto pred = eval.value(pivot.inputs[0]);
  if (!pred || pred->dtype() != DType::boolean || pred->num_elements() != 1 || pred->data<bool>()[0]) return false;
  // Each Exit: Exit <- Switch(Merge(Enter(x), NextIteration), pivot):0.
  std::vector<std::pair<NodeId, Endpoint>> exits;
  for (NodeId x : info.exits) {
    const Node& exit = r.node(x);
    if (exit.inputs.empty() || !exit.control_inputs.empty()) return false;
    const Node& sw = r.node(exit.inputs[0].node);
    if (node_role(sw) != ops::OpRole::switch_op || exit.inputs[0].port != 0 || sw.inputs[1].node != info.pivot ||
        !sw.control_inputs.empty())
      return false;
    const Node& m = r.node(sw.inputs[0].node);
    if (node_role(m) != ops::OpRole::merge || !m.control_inputs.empty()) return false;
    std::optional<Endpoint> entering;
    for (const Endpoint& in : m.inputs) {
      const Node& src = r.node(in.node);
      if (node_role(src) == ops::OpRole::next_iteration) continue;
      if (node_role(src) != ops::OpRole::enter || entering || !src.control_inputs.empty()) return false;
      entering = src.inputs[0];
    }
    if (!entering) return false;
    exits.push_back({x, *entering});
  }
  // The predicate read `eval.sources` on entry: each Exit is dead when one
  // of them is.
  std::vector<NodeId> controls;
  for (const Endpoint& s : eval.sources) controls.push_back(s.node);
  for (const auto& [x, value] : exits) {
    Node gate;
    gate.name = r.node(x).name + "/never_entered";
    gate.op = "Identity";
    gate.device = r.node(x).device;
    gate.attrs["T"] = ops::base_dtype(r.node(x).output_types[0]);
    gate.inputs.push_back(value);
    for (NodeId c : controls)
      if (c != value.node) gate.control_inputs.push_back(c);
    std::sort(gate.control_inputs.begin(), gate.control_inputs.end());
    gate.control_inputs.erase(std::unique(gate.control_inputs.begin(), gate.control_inputs.end()),
                              gate.control_inputs.end());
    const NodeId g = r.add(std::move(gate), info.parent);
    r.replace_uses({x, 0}, {g, 0});
    r.replace_control_uses(x, g);
  }
  std::vector<NodeId> nodes;
  collect_frame_nodes(r, f, &nodes);
  for (NodeId id : nodes) {
    r.remove(id);
    r.record(id, "removed", fmt::format("loop '{}' is never entered: its predicate is false on entry", info.name));
  }
  return true;
}

Expected<Graph> dead_branch_round(const Graph& g, const OptimizeOptions& options, int* changes) {
  TF_ASSIGN_OR_RETURN(Rewriter r, Rewriter::make(g, options, "dead_branches"));
  // Loops first, innermost last: a removed loop's Switches are gone.
  bool removed_loop = false;
  for (FrameId f = 1; f < static_cast<FrameId>(r.frames().frames.size()); ++f) {
    if (remove_loop_never_entered(r, f)) {
      removed_loop = true;
      break;  // frames changed: the next round sees the rest
    }
  }
  if (!removed_loop) {
    std::unordered_set<NodeId> touched;
    for (NodeId id : analysis::topological_order(g)) {
      if (r.removed(id)) continue;
      const Node& n = r.node(id);
      if (node_role(n) != ops::OpRole::switch_op || n.inputs.size() != 2 || r.kept(id)) continue;
      auto known = known_predicate(r, n.inputs[1]);
      if (!known) continue;
      TF_RETURN_IF_ERROR(remove_switch(r, id, known->value.data<bool>()[0], *known, &touched));
    }
  }
  *changes = r.num_changes();
  if (*changes == 0) return g;
  return r.finish();
}

}  // namespace

Expected<Graph> remove_dead_branches(const Graph& g, const OptimizeOptions& options) {
  return until_fixed_point(
      g, options, [&](const Graph& current, const OptimizeOptions& o, int* changes) { return dead_branch_round(current, o, changes); },
      4096);
}

}  // namespace tagflow::graph::optimize
