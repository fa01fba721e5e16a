// The invariants of tagflow's semantics (docs/semantics.md) checked on a
// recorded trace: what `tagflow trace check` prints and what the tests and
// the interleaving explorer assert. Each violation names the event (its
// index in the trace), the node, tag and partition. Pure functions.
#pragma once

#include <string>
#include <vector>

#include "trace/trace.hpp"

namespace tagflow::trace {

struct Violation {
  size_t index;  // the event that shows it
  std::string rule;  // which invariant: "once per tag", "dead in, dead out", ...
  std::string what;
};

// Every rule below over every step of `t`:
//  - once per tag: a node instance (node, tag, partition) runs at most once
//    — a Merge fires once per tag;
//  - dead in, dead out: a node other than a Merge whose input is dead has
//    dead outputs, and a value is dead only if an input was dead (or it is
//    the untaken output of a Switch);
//  - iterations close: each iteration of a frame instance on a partition
//    starts once, before any of its events, and ends once, after all of
//    them; a frame instance likewise (frame_created .. frame_done);
//  - transfers: every transfer sent (key, frame instance, iteration, dead)
//    is received exactly once, by the partition it was sent to, with the
//    same tag and dead bit; nothing is received that was not sent (in the
//    steps that did not fail: a failed step's transfers are dropped);
//  - control loops: every partition that runs a frame instance runs as
//    many of its iterations as the others;
//  - step end: no event of a partition's step after its step_done, for a
//    step that ended there without an error (the actors of a failed step
//    are stopped asynchronously, docs/trace.md).
// Rules whose events a trace does not hold (a step traced only in part)
// are checked on what it holds.
std::vector<Violation> check(const Trace& t);

// "event 12 (node_ran): once per tag: ..." — one line per violation.
std::string to_string(const Violation& v);

}  // namespace tagflow::trace
