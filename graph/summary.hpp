// GraphSummary: what `tagflow inspect` reports about a graph — node count,
// op histogram, frames with their nesting and pivots, devices named, ops
// with no kernel, and the library's functions: the ops with no kernel in
// each body and whether a run can reach the function (from any node of the
// graph, or from given fetches), as a session instantiates functions only
// when a step calls them. Computed once from an imported graph; plain values.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/analysis/control_flow.hpp"
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

// A library function whose body uses ops with no kernel.
struct FunctionSummary {
  std::string name;
  std::vector<std::string> ops_without_kernel;  // sorted, with node counts
  // Called by a node of the graph, directly or through other functions
  // (func attrs: call targets, branches, bodies), after implementation
  // selection (graph/functions/implementation_selection.hpp).
  bool reachable = false;
  bool reachable_from_fetches = false;  // the same from the fetches' nodes only
};

struct GraphSummary {
  int num_nodes = 0;
  std::map<std::string, int> op_histogram;
  std::vector<FrameSummary> frames;  // depth-first, parents before children
  std::map<std::string, int> devices;  // device string -> node count ("" for unplaced)
  std::vector<std::string> ops_without_kernel;  // sorted, with node counts
  std::vector<std::string> function_calls;      // ops that name library functions
  int num_functions = 0;
  int num_reachable_functions = 0;
  std::vector<std::string> fetches;  // node names; empty: no fetch was given
  int num_reachable_from_fetches = 0;
  std::vector<FunctionSummary> functions_without_kernels;  // in library order
};

// `fetches` ("name" or "name:port") restrict a second reachability to what
// they need; a fetch naming no node is an error.
Expected<GraphSummary> summarize(const Graph& g, const ControlFlowInfo& frames,
                                 const std::vector<std::string>& fetches = {});
// The human-readable report printed by `tagflow inspect`.
std::string to_text(const GraphSummary& s);

}  // namespace tagflow::graph
