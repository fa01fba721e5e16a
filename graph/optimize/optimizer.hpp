// The graph optimiser (DESIGN.md §5c): passes that rewrite a validated
// graph into one that computes the same fetched values with less work —
// constants folded, branches whose predicate is known removed, loop
// invariants moved out of their loops, arithmetic simplified, common
// subexpressions shared, nodes that carry nothing removed. Each pass is a
// graph-to-graph function with a name (docs/optimizer.md); a pipeline runs
// them in a configured order. Sessions run the pipeline on every step graph
// (after functional ops are lowered, before placement); `tagflow optimize`
// runs it on a file.
//
// What every pass promises:
//   - no fetched value changes, bitwise for integers and booleans, and no
//     value where a float could round differently (a rewrite that reorders
//     float arithmetic is made only for integer types);
//   - deadness is preserved: a node removed or replaced keeps, through
//     control edges, every input whose deadness it depended on;
//   - kept nodes (KeepNames: fetched, fed and targeted nodes, `_Arg`,
//     `_Retval`) keep their names and values; stateful ops are never
//     removed, duplicated, merged or moved;
//   - it is idempotent: running it on its own output changes nothing.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace tagflow::graph::optimize {

// What one pass changed, for reports and the step's trace.
struct Change {
  std::string pass;
  std::string node;    // the node folded, removed, moved or rewritten
  std::string action;  // "folded", "removed", "hoisted", "rewritten", "merged"
  std::string detail;  // e.g. "into 'a'" for a merged duplicate
};

struct OptimizeOptions {
  // Nodes whose names and values must survive (fetches, feeds, targets).
  // `_Arg` and `_Retval` nodes are always kept.
  std::set<std::string> keep;
  // When `keep` is empty, every node without consumers is kept too (a graph
  // written to a file may be fetched anywhere); step graphs set this false.
  bool keep_sinks = true;
  // A folded constant larger than this stays computed.
  int64_t max_constant_bytes = int64_t{10} << 20;
  // Where passes record what they did (nullptr: nowhere).
  std::vector<Change>* changes = nullptr;
};

// A pass: a name (as written in `--passes` and `[graph] optimize`), one
// line on what it does, and the rewrite. `run` returns the graph unchanged
// (a copy) when it finds nothing to do; its result is validated.
struct Pass {
  std::string name;
  std::string summary;
  std::function<Expected<Graph>(const Graph&, const OptimizeOptions&)> run;
};

// Every pass, in the default pipeline order.
const std::vector<Pass>& all_passes();
const Pass* find_pass(const std::string& name);

// "default" (every pass, in order), "none", or a comma-separated list of
// pass names run in the order given; an unknown name is an error that
// lists the known ones.
Expected<std::vector<const Pass*>> parse_pass_list(const std::string& list);

// What running one pass did.
struct PassReport {
  std::string pass;
  int nodes_before = 0;
  int nodes_after = 0;
  double milliseconds = 0;
  int changes = 0;
};

// Runs `passes` in order on a validated graph. Errors name the pass.
Expected<Graph> run_passes(const Graph& g, const std::vector<const Pass*>& passes,
                           const OptimizeOptions& options, std::vector<PassReport>* reports = nullptr);

// The passes (each in its own file of graph/optimize/).
Expected<Graph> fold_constants(const Graph& g, const OptimizeOptions& options);
Expected<Graph> remove_dead_branches(const Graph& g, const OptimizeOptions& options);
Expected<Graph> hoist_loop_invariants(const Graph& g, const OptimizeOptions& options);
Expected<Graph> simplify_arithmetic(const Graph& g, const OptimizeOptions& options);
Expected<Graph> eliminate_common_subexpressions(const Graph& g, const OptimizeOptions& options);
Expected<Graph> prune(const Graph& g, const OptimizeOptions& options);
Expected<Graph> fuse_ops(const Graph& g, const OptimizeOptions& options);
Expected<Graph> select_implementations_pass(const Graph& g, const OptimizeOptions& options);

}  // namespace tagflow::graph::optimize
