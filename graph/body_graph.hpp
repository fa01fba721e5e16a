// A function body as a graph of its own, the one way a body becomes a
// graph that runs by itself (a body run as written, actors/
// function_runtime.hpp, and the pass that decides which bodies may,
// graph/run_as_written.hpp): `_Arg` i gives argument i, `_Retval` i takes
// result i, and the body is pruned by the rule lowering follows too
// (nodes_run_for_effect: what the results and the nodes run for their
// effect need).
#pragma once

#include "graph/function_library.hpp"
#include "graph/graph.hpp"

namespace tagflow::graph {

struct BodyGraph {
  // Its `_Arg`s are named _arg/i and its `_Retval`s _ret/i, each with attrs
  // T, index and _step_io; versions and library are the caller's.
  Graph graph;
  int num_args = 0;
  int num_rets = 0;
};

// The body of `f` called with its attrs (completed with its signature's
// defaults), validated. `whole` gives versions and library. A function
// not in `lib` is not_found; errors of instantiation or validation as they
// come.
Expected<BodyGraph> body_graph(const FunctionLibrary& lib, const ops::NameAttrList& f, const Graph& whole);

}  // namespace tagflow::graph
