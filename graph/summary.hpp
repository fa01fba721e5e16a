// GraphSummary: what `tagflow inspect` reports about a graph — node count,
// op histogram, frames with their nesting and pivots, devices named, and
// ops with no kernel. Computed once from an imported graph; plain values.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/control_flow.hpp"
#include "graph/graph.hpp"

namespace tagflow::graph {

struct FrameSummary {
  std::string name;
  int depth = 0;  // 1 for a top-level loop
  std::string pivot;  // the LoopCond's name, "" if none
  int64_t parallel_iterations = 0;
  int enters = 0;
  int exits = 0;
  int nodes = 0;
  bool gradient = false;  // a frame built by TensorFlow's gradient code
  bool in_cond = false;   // its Enters lie on a branch of a cond
};

struct GraphSummary {
  int num_nodes = 0;
  std::map<std::string, int> op_histogram;
  std::vector<FrameSummary> frames;  // depth-first, parents before children
  std::map<std::string, int> devices;  // device string -> node count ("" for unplaced)
  std::vector<std::string> ops_without_kernel;  // sorted, with node counts
  std::vector<std::string> function_calls;      // ops that name library functions
  int num_functions = 0;
};

GraphSummary summarize(const Graph& g, const ControlFlowInfo& frames);
// The human-readable report printed by `tagflow inspect`.
std::string to_text(const GraphSummary& s);

}  // namespace tagflow::graph
