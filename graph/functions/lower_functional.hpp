// Lowering of TensorFlow 2's functional control flow to the primitives the
// executor runs (docs/semantics.md, "Functional control flow"):
//   - a function call (op = a library function), PartitionedCall and
//     StatefulPartitionedCall: the body is inlined under the call's name;
//   - If / StatelessIf / _If: Switch on the predicate's truthiness, both
//     branches inlined behind pivot Identities, a Merge per output;
//   - While / StatelessWhile / _While: Enter -> Merge -> cond -> LoopCond ->
//     Switch -> body -> NextIteration, an Exit per loop variable, the frame
//     named after the While;
//   - Case / StatelessCase: _SwitchN on the branch index (out of range ->
//     the last branch), a Merge per output;
//   - For: a loop over (index, vars) while index < limit (delta > 0) or
//     index > limit (delta < 0), the body called with the index first; a
//     zero delta fails the step at an Assert naming the For.
// The functional node's name stays: it becomes an Identity / IdentityN of
// the results (a NoOp when there are none), so `If:0` or `^While` still
// mean what they meant. Nested functions are lowered until none remain;
// recursion in the library is an error naming the cycle. Errors about a
// node of a function body name its call chain:
// "node 'while' → body 'while_body_12' → node 'mul': ...".
// Calls are first pointed at the implementation this runtime prefers
// (graph/functions/implementation_selection.hpp).
// A pure function of its input graph; thread-compatible. A session lowers
// per step instead (graph/functions/function_instantiator.hpp).
#pragma once

#include "graph/graph.hpp"

namespace tagflow::graph {
inline namespace functions {

// True if any node is a functional op or calls a library function.
bool has_functional_ops(const Graph& g);

// Replaces *g by its lowered form (unchanged when it has no functional
// ops). Errors name the node and the function. A lowered graph of more than
// `max_nodes` nodes (0: no limit) is resource_exhausted, found as soon as
// inlining passes it: nested calls can multiply a small graph's size.
Status lower_functional_ops(Graph* g, int64_t max_nodes = 0);

}  // namespace functions
}  // namespace tagflow::graph
