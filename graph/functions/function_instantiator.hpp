// FunctionInstantiator: library functions instantiated on demand, as
// TensorFlow instantiates them — a session's step graphs have only the
// functional nodes they need lowered (graph/functions/lower_functional.hpp says how),
// so a function no step calls is never checked, and an op tagflow does not
// know stops only the steps that reach it. Owned by one session and used
// under its lock (thread-compatible).
#pragma once

#include <functional>
#include <memory>

#include "graph/graph.hpp"

namespace tagflow::graph {
inline namespace functions {

// Lowers only the functional nodes of the graphs it is given — the step
// graphs made from one graph, `whole` — so a function no step calls is never
// checked. Each functional node is expanded
// once, the first time a step needs it, and later steps reuse the
// expansion: a lowered node has the same name in every step (variables and
// other resources are found by node name across steps), and no new name
// collides with a node of `whole`.
class FunctionInstantiator {
 public:
  explicit FunctionInstantiator(const Graph& whole, int64_t max_nodes = 0);
  ~FunctionInstantiator();
  FunctionInstantiator(const FunctionInstantiator&) = delete;
  FunctionInstantiator& operator=(const FunctionInstantiator&) = delete;

  // Lowers the functional nodes of *g but those marked to run as written
  // (graph/functions/run_as_written.hpp); false (and *g unchanged) when it has none. *g's nodes are nodes of `whole` (same names; their data inputs
  // may differ, as a step's feeds make them) or new nodes that are not
  // functional. Errors name the call chain. Over `max_nodes` nodes is
  // resource_exhausted.
  Expected<bool> lower(Graph* g);

  // `s` with the first node it names that was lowered from a function body
  // named by its call chain instead ("node 'while/body/mul'" becomes
  // "node 'while' → body 'b' → node 'mul'"); other statuses unchanged.
  Status with_call_chain(const Status& s) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace functions
}  // namespace tagflow::graph
