// A function body as a graph of its own — the one builder of every reader
// that takes a body apart from its caller: a body run as written
// (actors/function_runtime.hpp) and the pass that decides which bodies may
// (graph/functions/run_as_written.hpp) take `_Arg` i for argument i, `_Retval` i for
// result i, and the body pruned by the rule lowering follows too
// (nodes_run_for_effect: what the results and the nodes run for their
// effect need); shape inference (its arguments as Consts or Placeholders of
// what it knows of them) and functional gradients (Placeholders, every
// node kept, to be written back as a function) choose otherwise
// (BodyGraphOptions). Lowering alone inlines a body into its caller
// (graph/functions/lower_functional.hpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/functions/function_library.hpp"
#include "graph/graph.hpp"

namespace tagflow::graph {
inline namespace functions {

struct BodyGraph {
  // Versions and library are the caller's. By default its `_Arg`s are
  // named _arg/i and its `_Retval`s _ret/i, each with attrs T, index and
  // _step_io.
  Graph graph;
  int num_args = 0;
  int num_rets = 0;
  std::vector<NodeId> args;          // the node of each flat argument
  std::vector<Endpoint> rets;        // the value of each flat result
  std::vector<std::string> control_rets;
  bool stateful = false;             // the signature says so
};

struct BodyGraphOptions {
  // The node argument i of dtype `type` enters by (its name made unique
  // among the body's by appending '_'); empty: an `_Arg`.
  std::function<Node(size_t i, DType type)> make_arg;
  bool retvals = true;   // a `_Retval` per result
  bool prune = true;     // drop what neither the results nor the effects need
  bool validate = true;  // validated (unknown ops refused unless allowed)
  bool allow_unknown_ops = false;
};

// The body of `f` called with its attrs (completed with its signature's
// defaults). `whole` gives versions and library. A function not in `lib`
// is not_found; errors of instantiation or validation as they come.
Expected<BodyGraph> body_graph(const FunctionLibrary& lib, const ops::NameAttrList& f, const Graph& whole,
                               const BodyGraphOptions& options = {});

}  // namespace functions
}  // namespace tagflow::graph
