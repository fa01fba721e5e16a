// The graph one kind of step runs: the session's graph with each fed
// endpoint replaced by an `_Arg` node, each fetched endpoint read by a
// `_Retval` node, and everything the fetches and targets do not need pruned
// away (DESIGN.md §3). Made once per (feeds, fetches, targets) signature.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "ops/tensor.hpp"

namespace tagflow::graph {

inline namespace functions {
class FunctionInstantiator;
}  // namespace functions

// "name" (port 0) or "name:k"; an error names the text.
Expected<Endpoint> parse_endpoint(const Graph& g, const std::string& text);

// What the graph declares an endpoint holds: the output's dtype, and its
// shape where the graph states one — a Placeholder's `shape` attr (an empty
// one in graphs older than producer 22 means unknown, as in TensorFlow) or
// a Const's value; unknown rank otherwise. `_output_shapes` and the other
// attrs TensorFlow documents as informational never constrain a feed
// (TensorFlow writes them as its Python front end last saw the graph).
// Dimensions of -1 are unknown.
struct DeclaredOutput {
  DType dtype = DType::invalid;
  ops::PartialShape shape{true, {}};
  std::string declared_by;  // "Placeholder 'x'": who says so, for messages
};
DeclaredOutput declared_output(const Graph& g, Endpoint e);

// What a feed of `e` must be: declared_output, and where the producer
// declares no dtype (an op tagflow does not know) the dtype the first
// consumer with a known signature expects there (its OpDef input type with
// its attrs); an error naming the node when no consumer tells. `g` must be
// validated (consumers known).
Expected<DeclaredOutput> feed_declaration(const Graph& g, const std::string& feed, Endpoint e);

// A fed value against what the graph declares where it is fed: another
// dtype is an error naming both, and with `shapes` so are another rank or
// another known dimension ("feed 'x' is int32 [2] but Placeholder 'x'
// declares int32 [3]"), as TensorFlow's Python client checks a feed;
// without, only the dtype, as its C API and TensorFlow Serving do
// (docs/models.md, "Feeds and shapes").
Status check_feed(const std::string& feed, const DeclaredOutput& declared, const ops::Tensor& value, bool shapes);

struct StepGraph {
  Graph graph;
  std::vector<DeclaredOutput> feeds;  // by feed index (the _Arg index)
  std::vector<std::string> fetches;   // by fetch index (the _Retval index)
};

// `g` must be validated. Feeds and fetches are "name[:port]"; targets are
// node names. Errors name the feed, fetch or target, and any Placeholder or
// `_Arg` the fetches need that is not fed ("Placeholder 'x' must be fed").
// A feed or fetch whose value lives inside a loop is an error saying why:
// it has one value per iteration of each frame instance, not one per step.
// The `_Retval` nodes of a function converted to a graph are fetched by
// name (the value of their input); as a target they run their input.
// A feed's dtype is feed_declaration's.
// With `functions`, `g` may hold functional ops: those the step keeps are
// lowered by it (functions instantiated on demand), the result pruned
// again, and errors inside functions name the call chain.
Expected<StepGraph> make_step_graph(const Graph& g, const std::vector<std::string>& feeds,
                                    const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets,
                                    FunctionInstantiator* functions = nullptr);

}  // namespace tagflow::graph
