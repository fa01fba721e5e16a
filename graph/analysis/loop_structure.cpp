#include "graph/analysis/loop_structure.hpp"

namespace tagflow::graph {
inline namespace analysis {

using ops::OpRole;

FrameId output_frame(const Graph& g, const ControlFlowInfo& cf, NodeId id) {
  const FrameId f = cf.frame_of[static_cast<size_t>(id)];
  if (f < 0) return f;
  switch (node_role(g.node(id))) {
    case OpRole::enter: {
      const std::string* name = g.node(id).attr<std::string>("frame_name");
      return name ? cf.find_frame(*name) : f;
    }
    case OpRole::exit: return cf.frames[static_cast<size_t>(f)].parent;
    default: return f;
  }
}

bool is_loop_switch(const Graph& g, const ControlFlowInfo& cf, NodeId id) {
  if (node_role(g.node(id)) != OpRole::switch_op) return false;
  const FrameId f = cf.frame_of[static_cast<size_t>(id)];
  const Node& n = g.node(id);
  return f != kRootFrame && f >= 0 && n.inputs.size() == 2 && n.inputs[1].node == cf.frames[static_cast<size_t>(f)].pivot;
}

bool is_loop_merge(const Graph& g, NodeId id) {
  if (node_role(g.node(id)) != OpRole::merge) return false;
  for (const Endpoint& e : g.node(id).inputs)
    if (node_role(g.node(e.node)) == OpRole::next_iteration) return true;
  return false;
}

}  // namespace analysis
}  // namespace tagflow::graph
