#include "graph/analysis/cond_contexts.hpp"

#include <optional>

#include "graph/analysis/loop_structure.hpp"
#include "graph/analysis/topological.hpp"

namespace tagflow::graph {
inline namespace analysis {

using ops::OpRole;

// Nodes are visited in a topological order without the NextIteration ->
// Merge back edges, so a node's inputs are known before it.
CondContexts::CondContexts(const Graph& g, const ControlFlowInfo& cf) : g_(&g), cf_(&cf) {
  state_.assign(static_cast<size_t>(g.num_nodes()), {});
  entry_.assign(cf.frames.size(), {});
  for (NodeId id : topological_order(g)) {
    state_[static_cast<size_t>(id)] = state_of_node(id);
    if (node_role(g.node(id)) == OpRole::enter) {
      const FrameId f = output_frame(g, cf, id);
      const CondState in = of_output(g.node(id).inputs[0]);
      if (f >= 0 && in.size() >= entry_[static_cast<size_t>(f)].size()) entry_[static_cast<size_t>(f)] = in;
    }
  }
}

void CondContexts::added(NodeId id, CondState s) {
  if (static_cast<size_t>(id) >= state_.size()) state_.resize(static_cast<size_t>(id) + 1);
  state_[static_cast<size_t>(id)] = std::move(s);
}

NodeId CondContexts::cond_of(NodeId sw) const {
  const Endpoint p = g_->node(sw).inputs[1];
  const int64_t key = (int64_t{p.node} << 20) + p.port;
  return cond_switch_.emplace(key, sw).first->second;
}

CondState CondContexts::of_output(Endpoint e) const {
  CondState s = state_[static_cast<size_t>(e.node)];
  if (node_role(g_->node(e.node)) == OpRole::switch_op && !is_loop_switch(*g_, *cf_, e.node))
    s.emplace_back(cond_of(e.node), e.port);
  return s;
}

CondState CondContexts::state_of_node(NodeId id) const {
  const Node& n = g_->node(id);
  switch (node_role(n)) {
    case OpRole::enter: return {};
    case OpRole::exit: {
      const FrameId f = cf_->frame_of[static_cast<size_t>(id)];
      return f >= 0 ? entry_[static_cast<size_t>(f)] : CondState{};
    }
    case OpRole::merge: {
      if (is_loop_merge(*g_, id)) return {};
      // The common prefix of the inputs' states: the cond it closes ends.
      std::optional<CondState> common;
      for (const Endpoint& e : n.inputs) {
        CondState s = of_output(e);
        if (!common) {
          common = std::move(s);
          continue;
        }
        size_t k = 0;
        while (k < common->size() && k < s.size() && (*common)[k] == s[k]) ++k;
        common->resize(k);
      }
      return common.value_or(CondState{});
    }
    default: {
      CondState longest;
      for (const Endpoint& e : n.inputs) {
        CondState s = of_output(e);
        if (s.size() > longest.size()) longest = std::move(s);
      }
      for (NodeId c : n.control_inputs) {
        const CondState& s = state_[static_cast<size_t>(c)];
        if (s.size() > longest.size()) longest = s;
      }
      return longest;
    }
  }
}

}  // namespace analysis
}  // namespace tagflow::graph
