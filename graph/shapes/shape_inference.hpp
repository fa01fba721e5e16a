// Static shape inference: the partial shape (and, for small integer
// tensors known before a step, the value) of every output of a validated
// graph, from Const values, Placeholder shapes and one shape function per
// op, registered with the op (ops/shape_fns.hpp; the functional ops'
// rules are graph/shapes/functional_shape_functions.hpp), through Switch/Merge/Enter/Exit loops to
// a fixed point and into the functions of functional ops. A contradiction
// that no run could resolve — inner dimensions of a MatMul that differ,
// shapes that cannot broadcast — is an error naming the node and both
// shapes (docs/shapes.md). Pure functions over a const Graph; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "ops/shape.hpp"
#include "ops/shape_fn.hpp"
#include "ops/tensor.hpp"

namespace tagflow::graph {
inline namespace shapes {

// What is known of one output before a step runs (ops/shape_fn.hpp).
using ops::OutputInfo;
// The shape helpers (ops::shape::merge, broadcast, ...), as graph/ calls them.
namespace shape = ops::shape;

// Every output of every node, by NodeId and port.
struct ShapeMap {
  std::vector<std::vector<OutputInfo>> nodes;  // nodes[id][port]

  const OutputInfo& at(Endpoint e) const {
    return nodes[static_cast<size_t>(e.node)][static_cast<size_t>(e.port)];
  }
};

struct ShapeInferenceOptions {
  // Endpoints ("x", "x:1") that a step feeds, with the shape fed: they
  // replace what the producer would give.
  std::map<std::string, ops::PartialShape> feeds;
  // How deep calls into library functions (If branches, While bodies,
  // function calls) are followed; deeper calls have unknown outputs.
  int max_function_depth = 4;
};

// Infers the shapes of `g`, which must be validated (dtypes resolved).
// Ops without a shape function (unknown ops, calls of a function that
// cannot be instantiated) give unknown shapes. Loops are iterated until no
// shape changes: a shape only ever becomes less specific (a dimension that
// differs between iterations becomes -1, a rank that differs unknown), so
// this ends. Errors (invalid_argument) are contradictions that hold at the
// fixed point: "MatMul 'mm': inner dimensions differ: [2,3] x [4,5]".
Expected<ShapeMap> infer_shapes(const Graph& g, const ShapeInferenceOptions& options = {});

// infer_shapes for its error alone: what Session::create runs after
// validate() so that a graph whose shapes cannot agree is refused.
Status check_shapes(const Graph& g);

// The most specific shape that every tensor of shape `a` or `b` has:
// dimensions that differ become -1, ranks that differ unknown.
using ops::shape::generalize;

// What `info` would print for `tagflow inspect --shapes`: "float32 [2,?]".
std::string to_string(const OutputInfo& info);

}  // namespace shapes
}  // namespace tagflow::graph
