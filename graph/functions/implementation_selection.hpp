// Implementation selection: a call of a function that has equivalent
// implementations in the library is pointed at the one this runtime runs
// best, as TensorFlow's grappler implementation selector does.
//
// Keras layers (LSTM, GRU) carry a CPU and a cuDNN implementation of the
// same computation: two (or more) library functions with the same function
// attr `api_implements` (a per-layer interface name), each with an
// `api_preferred_device` ("CPU", "GPU"). Their signatures are the same,
// including the extra `runtime` output that tells which one ran. Functions
// group by interface and by kind — inference, forward (it has a
// `backward_function_name` attr) and backward (`forward_function_name`) —
// and only functions of one group replace each other.
//
// Every tagflow device is a CPU, so a call — a node whose op is a library
// function, or any `func` attr (PartitionedCall's `f`, If/While/Case
// branches and bodies), in the graph and in every function body — that
// targets an implementation preferring another device is pointed at the
// group's implementation preferring "CPU", else at one with no preferred
// device, provided its input and output arguments are declared alike (the
// call's Tin and Tout stay valid). Calls with no better target, and groups
// whose signatures differ, are left as they are.
// A pure function of its input graph; thread-compatible.
#pragma once

#include "graph/graph.hpp"

namespace tagflow::graph {
inline namespace functions {

// Rewrites the calls of *g and of its library's function bodies. Returns
// how many calls it pointed elsewhere.
int select_implementations(Graph* g);

}  // namespace functions
}  // namespace tagflow::graph
