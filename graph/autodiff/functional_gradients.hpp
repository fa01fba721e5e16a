// Gradients of TensorFlow 2's functional ops taken as functional ops
// (docs/gradients.md, "Functional ops"), used by gradients() when
// GradientOptions::functional is set:
//   - a function call (a node whose op is a library function,
//     PartitionedCall, StatefulPartitionedCall) has for gradient a
//     PartitionedCall of a gradient function;
//   - If / StatelessIf has an If on the same predicate over one gradient
//     function per branch; Case / StatelessCase a Case on the same index;
//   - While / StatelessWhile has a While that runs the forward iteration
//     count down (graph/autodiff/while_gradients.cpp): the forward While gains an
//     iteration counter and TensorList accumulators of the values the
//     gradient of one iteration reads, its gradient pops them.
// Each called function is instantiated as a graph, differentiated there by
// gradients() (its op gradients, nested functional ops the same way), and
// the nodes of its gradient are written back as a library function. The
// forward values the gradient reads become extra outputs of the forward
// node, whose functions are rewritten to return them: a call returns them
// as they are; each branch of an If or Case returns, per intermediate of
// any branch, an Optional (OptionalFromValue of its own, OptionalNone for
// the other branches'), which the gradient branch unwraps with
// OptionalGetValue. Forward arguments and constants are not returned: the
// gradient reads the forward node's inputs, and copies constants.
// The forward node keeps its name and its outputs; outputs are added only
// when the gradient needs some. Internal to graph/ (gradients.cpp).
#pragma once

#include "graph/autodiff/gradients.hpp"

namespace tagflow::graph {
inline namespace autodiff {

// Whether gradients() differentiates this node as a functional op.
bool is_functional_gradient_op(const Node& n, const Graph& g);

// The gradient of the functional node of `ctx`: sets the gradients of its
// inputs, rewrites the node if its gradient needs forward values, and adds
// the functions it makes to the graph's library. `options` are those of
// the gradients() call (its registries are used for the function bodies).
Status functional_gradient(GradContext& ctx, const GradientOptions& options);

}  // namespace autodiff
}  // namespace tagflow::graph
