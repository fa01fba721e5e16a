// The shape function of a node, as static shape inference
// (graph/shapes/shape_inference.hpp) runs it: its op's rule, registered with the
// op (OpDef::shape_fn, ops/shape_fns.hpp), except for the functional ops
// (If, Case, While, For, the partitioned calls), whose rules are graph/'s:
// what a node declares in `_output_shapes` / `output_shapes`, else what
// its functions give for its inputs, followed through the library by the
// context's CallFn (a While's loop variables generalised with its body's
// results until that changes nothing). A malformed functional node gets
// no shapes here: validation and lowering say what is wrong with it.
#pragma once

#include <optional>

#include "graph/graph.hpp"
#include "ops/shape_fn.hpp"

namespace tagflow::graph {
inline namespace shapes {

// Runs the node's rule on `c`; nullopt for an op with no rule (an unknown
// op; a call of a library function by name, which shape inference
// follows itself).
std::optional<Status> run_shape_function(const Node& node, ops::InferenceContext& c);

}  // namespace shapes
}  // namespace tagflow::graph
