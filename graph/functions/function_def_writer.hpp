// A graph written as a library function: the inverse of
// FunctionLibrary::instantiate. TensorFlow 2's constructions make their
// branch, body and gradient functions this way — build the body as a Graph
// (with the GraphBuilder, or by copying nodes), then name its arguments and
// results:
//   - each argument is a node of the graph (Placeholder or _Arg) whose one
//     output becomes an input_arg of the signature;
//   - each result is an endpoint of the graph, an output_arg;
//   - every other node becomes a node_def, its inputs written as TensorFlow
//     writes them in bodies ("arg", "node:out_arg:index", "^node").
// The function's library (for body nodes that call functions) is the
// graph's. Thread-compatible; a pure function of its arguments.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace tensorflow {
class FunctionDef;
}

namespace tagflow::graph {
inline namespace functions {

struct FunctionDefSpec {
  std::string name;                   // the signature's name
  std::vector<NodeId> args;           // in order; each a node with one output
  std::vector<std::string> arg_names; // empty: "arg0", "arg1", ...
  std::vector<Endpoint> rets;         // in order
  std::vector<std::string> ret_names; // empty: "output0", ...
  std::vector<NodeId> control_rets;   // nodes that must run when the function does
  bool stateful = false;              // the signature's is_stateful
};

// The FunctionDef of `spec` over the nodes of `g`. Errors name the node or
// endpoint that cannot be written: an argument node with other than one
// output, or one that has inputs; a result or control input naming an
// argument node as control; names that are not valid argument names.
Expected<tensorflow::FunctionDef> function_def_from_graph(const Graph& g, const FunctionDefSpec& spec);

}  // namespace functions
}  // namespace tagflow::graph
