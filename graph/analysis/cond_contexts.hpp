// TensorFlow's cond contexts recovered from a graph: for every node, the
// conds of its own frame it runs under, outermost first, each as (a Switch
// that stands for the cond, the branch taken); for every frame, the conds
// of its parent it was entered under. A cond is its predicate: the
// Switches of one cond (a cond switches each tensor it captures on its
// own) stand for it through the first of them. Gradients of loops use it
// to pop a forward value only in the iterations that pushed it
// (graph/autodiff/gradients.cpp).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graph/analysis/control_flow.hpp"
#include "graph/graph.hpp"

namespace tagflow::graph {
inline namespace analysis {

using CondState = std::vector<std::pair<NodeId, int>>;

class CondContexts {
 public:
  CondContexts() = default;
  // Analyses `g` with its frames `cf`; both must outlive this (nodes may
  // be added to them later: see added()).
  CondContexts(const Graph& g, const ControlFlowInfo& cf);

  // The conds node `id` runs under.
  const CondState& of(NodeId id) const { return state_[static_cast<size_t>(id)]; }
  // The conds output `e` is under: its node's, and for a cond's Switch the
  // branch it leaves by.
  CondState of_output(Endpoint e) const;
  // The conds of its parent frame `f` runs under.
  const CondState& entering(FrameId f) const { return entry_[static_cast<size_t>(f)]; }

  // Node `id`, added to the graph after the analysis, runs under `s`.
  void added(NodeId id, CondState s = {});

 private:
  NodeId cond_of(NodeId sw) const;
  CondState state_of_node(NodeId id) const;

  const Graph* g_ = nullptr;
  const ControlFlowInfo* cf_ = nullptr;
  std::vector<CondState> state_;  // by node
  std::vector<CondState> entry_;  // by frame
  mutable std::unordered_map<int64_t, NodeId> cond_switch_;  // predicate -> its first Switch
};

}  // namespace analysis
}  // namespace tagflow::graph
