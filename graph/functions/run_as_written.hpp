// Which functional nodes run as written — a kernel that runs their bodies
// inline (actors/function_runtime.hpp) — and which are lowered to
// Switch/Merge/Enter/Exit (graph/functions/lower_functional.hpp): decided once, by
// this pass, and recorded on each node as `_run_as_written: true`, which
// the step compiler's lowering reads (graph::FunctionInstantiator). As
// TensorFlow marks `_lower_using_switch_merge`, but the other way round:
// tagflow runs a functional node as written unless what it reaches must be
// lowered.
//
// A node may run as written when every body it calls — built as
// graph::body_graph builds it, pruned by the one rule — holds only nodes an
// iteration runs by itself: ordinary ops, Switch and Merge, functional
// nodes that may run as written in turn; no TF 1 loop (Enter, Exit,
// NextIteration, LoopCond), no ControlTrigger or _SwitchN, no _Send or
// _Recv, no kernel that may block (OpDef::blocking), no unknown op, no
// function that calls itself, and, in a session of several devices, no
// body node with a device of its own. A body that does not build is
// lowered too, which says what is wrong with it.
#pragma once

#include "graph/graph.hpp"

namespace tagflow::graph {
inline namespace functions {

class FunctionLibrary;

inline constexpr const char* kRunAsWrittenAttr = "_run_as_written";

struct RunAsWrittenOptions {
  bool several_devices = false;  // the session places nodes on more than one device
};

// Whether functional node `n` may run as written (false for a node that is
// not functional).
bool may_run_as_written(const Node& n, const Graph& whole, const RunAsWrittenOptions& options);

// Marks every functional node of *g that may run as written with
// kRunAsWrittenAttr true and clears the mark from the others; how many it
// marked.
int mark_run_as_written(Graph* g, const RunAsWrittenOptions& options);

// Whether the node carries the mark.
bool marked_run_as_written(const Node& n);

}  // namespace functions
}  // namespace tagflow::graph
