// A functional node read once: what kind of functional op it is, the
// functions it calls and the role each plays, and which of its inputs the
// op reads itself before the bodies' arguments. Lowering, the function
// runtime, functional gradients and shape inference all read a node
// through this view, so that they agree on what a node calls and say a
// malformed one in the same words. Plain values and pure functions.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace tagflow::graph {
inline namespace functions {

class FunctionLibrary;

// What functional op a node is: If / StatelessIf / _If, Case /
// StatelessCase, While / StatelessWhile / _While, For, PartitionedCall /
// StatefulPartitionedCall, or a call of a library function (its op is not
// a registered op and `is_function(op)` says it names a function).
enum class FunctionalKind { none, call, partitioned_call, if_op, case_op, while_op, for_op };
FunctionalKind functional_kind(const Node& n, const std::function<bool(const std::string&)>& is_function);
FunctionalKind functional_kind(const Node& n, const FunctionLibrary& lib);

// True if the node is a functional op or calls a library function.
bool is_functional(const Node& n, const FunctionLibrary& lib);

// One function a functional node calls.
struct FunctionalCallee {
  // What it is to the node, as errors and call chains say it: "function",
  // "then_branch", "else_branch", "branch 0", "branch 1", ..., "cond",
  // "body".
  std::string role;
  ops::NameAttrList func;  // the function and the attrs it is called with
};

struct FunctionalOp {
  FunctionalKind kind = FunctionalKind::none;
  // In the order the node declares them: a call's function; If's then and
  // else branches; Case's branches; While's cond and body; For's body.
  std::vector<FunctionalCallee> callees;
  // The inputs the op reads itself, before the bodies' arguments: If's
  // predicate, Case's branch index, For's start, limit and delta.
  int leading_inputs = 0;

  bool is_branch() const { return kind == FunctionalKind::if_op || kind == FunctionalKind::case_op; }
  bool is_loop() const { return kind == FunctionalKind::while_op || kind == FunctionalKind::for_op; }
  // The callee in `role`; nullptr if the node has none in that role.
  const FunctionalCallee* callee(const std::string& role) const;
  // If: branch 0 is the else branch (the predicate false), branch 1 the
  // then branch; Case: branch i. The callee a taken branch `b` runs.
  const FunctionalCallee& branch(size_t b) const;
};

// The node as a functional op of `kind` (functional_kind's answer). A
// missing function attr is an invalid_graph error that names the node, its
// op and the attr; a node of kind none reads as a FunctionalOp of kind
// none with no callees.
Expected<FunctionalOp> read_functional_op(const Node& n, FunctionalKind kind);
Expected<FunctionalOp> read_functional_op(const Node& n, const FunctionLibrary& lib);

// The key instances of a function are shared by: calls whose function and
// attrs agree share a body; attrs whose names start with '_' (shapes,
// placement hints, marks) do not change a body.
std::string function_instance_key(const ops::NameAttrList& f);

// The error of a For node `name` given a zero delta, the same run as
// written, lowered, or rewritten as a While for its gradient.
std::string for_zero_delta_message(const std::string& name);

}  // namespace functions
}  // namespace tagflow::graph
