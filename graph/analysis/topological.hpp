// A topological order of a graph: producers before their
// consumers, with the NextIteration -> Merge back edges of loops left out
// (validate() checks that every cycle goes through one).
#pragma once

#include <vector>

#include "graph/graph.hpp"

namespace tagflow::graph {
inline namespace analysis {

// Every node once; nodes on a cycle that does not pass a NextIteration ->
// Merge edge (an invalid graph) come last, in id order.
std::vector<NodeId> topological_order(const Graph& g);

}  // namespace analysis
}  // namespace tagflow::graph
