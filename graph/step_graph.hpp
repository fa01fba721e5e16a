// The graph one kind of step runs: the session's graph with each fed
// endpoint replaced by an `_Arg` node, each fetched endpoint read by a
// `_Retval` node, and everything the fetches and targets do not need pruned
// away (DESIGN.md §3). Made once per (feeds, fetches, targets) signature.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace tagflow::graph {

// "name" (port 0) or "name:k"; an error names the text.
Expected<Endpoint> parse_endpoint(const Graph& g, const std::string& text);

struct StepGraph {
  Graph graph;
  std::vector<DType> feed_types;    // by feed index (the _Arg index)
  std::vector<std::string> fetches; // by fetch index (the _Retval index)
};

// `g` must be validated. Feeds and fetches are "name[:port]"; targets are
// node names. Errors name the feed, fetch or target, and any Placeholder the
// fetches need that is not fed ("Placeholder 'x' must be fed").
Expected<StepGraph> make_step_graph(const Graph& g, const std::vector<std::string>& feeds,
                                    const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets);

}  // namespace tagflow::graph
