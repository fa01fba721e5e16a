// Validation: checks a Graph against the op registry and the structural
// rules, and completes it (op defaults added to attrs, input and output
// dtypes resolved). Every error names the node and what is wrong: unknown
// op, input naming a missing port, wrong arity, missing or ill-typed attr,
// dtype mismatch between producer and consumer (a ref output may feed a
// plain input of its base type), a cycle that does not pass through
// NextIteration -> Merge. A node whose op names a function of the graph's
// library is a call: its arity, ports and fixed dtypes are checked against
// the FunctionDef signature; its def stays nullptr. The graph changes only
// if every check passes; validate() then builds the consumer lists, so the
// graph may be shared across threads afterwards.
#pragma once

#include "graph/graph.hpp"

namespace tagflow::graph {

struct ValidateOptions {
  // Accept ops that are not registered (and function calls) and skip the
  // checks that need their signature: `tagflow inspect` reads any graph.
  bool allow_unknown_ops = false;
  const ops::OpRegistry* registry = nullptr;  // nullptr: OpRegistry::global()
  // Nodes that an earlier validate() resolved (def set) are taken as they
  // are — attrs, dtypes — and only their edges are checked again; for a
  // graph made from a validated one that did not change those nodes (a
  // step graph). Nodes without def are resolved as usual.
  bool keep_resolved = false;
};

Status validate(Graph& g, const ValidateOptions& options = {});

// Whether an output of dtype `produced` may feed an input expecting
// `expected`: equal types, or a ref output feeding a plain input of its base
// type (a ref input needs a ref output). invalid matches anything.
bool dtypes_match(DType produced, DType expected);

// Only the cycle rule: every cycle passes through a NextIteration -> Merge
// edge. The error lists the nodes of one offending cycle.
Status check_cycles(const Graph& g);

}  // namespace tagflow::graph
