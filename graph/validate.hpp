// Validation: checks a Graph against the op registry and the structural
// rules, and completes it (op defaults added to attrs, input and output
// dtypes resolved). Every error names the node and what is wrong: unknown
// op, input naming a missing node or port, wrong arity, missing or ill-typed
// attr, dtype mismatch between producer and consumer, a cycle that does not
// pass through NextIteration -> Merge.
#pragma once

#include "graph/graph.hpp"

namespace tagflow::graph {

struct ValidateOptions {
  // Accept ops that are not registered (and function calls) and skip the
  // checks that need their signature: `tagflow inspect` reads any graph.
  bool allow_unknown_ops = false;
  const ops::OpRegistry* registry = nullptr;  // nullptr: OpRegistry::global()
};

Status validate(Graph& g, const ValidateOptions& options = {});

// Only the cycle rule: every cycle passes through a NextIteration -> Merge
// edge. The error lists the nodes of one offending cycle.
Status check_cycles(const Graph& g);

}  // namespace tagflow::graph
