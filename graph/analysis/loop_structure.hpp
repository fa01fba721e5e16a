// What a node is to the loops of a graph whose frames are known
// (graph/analysis/control_flow.hpp): the frame its outputs are in, whether a Switch
// is a loop's (switched on its frame's LoopCond) or a cond's, whether a
// Merge closes a loop (takes a NextIteration) or a cond. Plain functions.
#pragma once

#include "graph/analysis/control_flow.hpp"
#include "graph/graph.hpp"

namespace tagflow::graph {
inline namespace analysis {

// The frame a node's outputs are in: an Enter's frame, an Exit's parent,
// else its own (-1 for a node in no frame).
FrameId output_frame(const Graph& g, const ControlFlowInfo& cf, NodeId id);

// A Switch whose predicate is its frame's pivot (the loop's LoopCond).
bool is_loop_switch(const Graph& g, const ControlFlowInfo& cf, NodeId id);

// A Merge with a NextIteration among its inputs.
bool is_loop_merge(const Graph& g, NodeId id);

}  // namespace analysis
}  // namespace tagflow::graph
