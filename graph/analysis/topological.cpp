#include "graph/analysis/topological.hpp"

#include <deque>

namespace tagflow::graph {
inline namespace analysis {

namespace {

bool back_edge(const Graph& g, NodeId src, NodeId dst) {
  return node_role(g.node(src)) == ops::OpRole::next_iteration && node_role(g.node(dst)) == ops::OpRole::merge;
}

}  // namespace

std::vector<NodeId> topological_order(const Graph& g) {
  const size_t n = static_cast<size_t>(g.num_nodes());
  std::vector<int> pending(n, 0);
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    const Node& node = g.node(id);
    for (const Endpoint& e : node.inputs)
      if (!back_edge(g, e.node, id)) ++pending[static_cast<size_t>(id)];
    pending[static_cast<size_t>(id)] += static_cast<int>(node.control_inputs.size());
  }
  std::deque<NodeId> ready;
  for (NodeId id = 0; id < g.num_nodes(); ++id)
    if (pending[static_cast<size_t>(id)] == 0) ready.push_back(id);
  std::vector<NodeId> order;
  order.reserve(n);
  std::vector<bool> done(n, false);
  while (!ready.empty()) {
    const NodeId id = ready.front();
    ready.pop_front();
    order.push_back(id);
    done[static_cast<size_t>(id)] = true;
    for (const OutEdge& e : g.out_edges(id)) {
      if (e.dst_input != kControlPort && back_edge(g, id, e.dst)) continue;
      if (--pending[static_cast<size_t>(e.dst)] == 0) ready.push_back(e.dst);
    }
  }
  for (NodeId id = 0; id < g.num_nodes(); ++id)
    if (!done[static_cast<size_t>(id)]) order.push_back(id);
  return order;
}

}  // namespace analysis
}  // namespace tagflow::graph
