// Control-flow analysis: the static frame of every node, derived from the
// Enter/Exit structure as TensorFlow's executor does it (an Enter's outputs
// are in the frame it names, child of the Enter's own frame; an Exit's
// outputs are in the parent of the Exit's frame; every other node is in its
// inputs' frame), each frame's parent and pivot (its LoopCond), Enters and
// Exits. Immutable after analysis; shared by every step.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace tagflow::graph {
inline namespace analysis {

using FrameId = int32_t;
constexpr FrameId kRootFrame = 0;

struct FrameInfo {
  std::string name;           // frame_name of its Enters; "" for the root
  FrameId parent = -1;        // -1 for the root
  int depth = 0;              // root 0
  int64_t parallel_iterations = 1;
  NodeId pivot = kNoNode;     // the frame's LoopCond, if any
  std::vector<NodeId> enters;  // the Enters opening it (nodes of the parent frame)
  std::vector<NodeId> exits;   // its Exits (nodes of this frame)
  std::vector<FrameId> children;
  std::vector<NodeId> nodes;  // every node whose frame this is
};

struct ControlFlowInfo {
  std::vector<FrameInfo> frames;   // frames[0] is the root frame
  std::vector<FrameId> frame_of;   // indexed by NodeId

  FrameId find_frame(const std::string& name) const;  // -1 if none
};

// Errors (invalid_graph) name the node: a node reachable in two frames, an
// Exit in the root frame (no Enter), Enters of one frame name under two
// parents, an Enter without frame_name, two LoopConds in one frame, a frame
// with a NextIteration but no LoopCond (unless it holds a _Recv or a
// control loop — nodes marked `_tagflow_control_loop`: a device partition
// whose loop learns its iterations from other devices, graph/partition.hpp;
// its pivot is then kNoNode), a NextIteration or LoopCond in the
// root frame, and a node that no walk from the nodes without inputs reaches
// (a cycle with no way in, such as a loop without an Enter). Frames are
// numbered in the order the walk finds them; each frame's node lists are in
// NodeId order; parallel_iterations is its lowest-numbered Enter's (default
// 10).
Expected<ControlFlowInfo> analyze_control_flow(const Graph& g);
// The same analysis of the subgraph of the nodes with only[id] set, which
// must hold every input of each of its nodes (what prune would copy): the
// other nodes are in no frame (frame_of -1) and in no frame's lists.
Expected<ControlFlowInfo> analyze_control_flow(const Graph& g, const std::vector<bool>* only);

}  // namespace analysis
}  // namespace tagflow::graph
