// Why is a value dead? `tagflow trace explain TRACE NODE[:PORT]
// [--iteration N]`: the chain from a dead node instance back, input by
// input, to the Switch whose untaken output started it — with the
// Switch's predicate, and the frame instance and iteration where the branch
// was not taken — following values across iterations (NextIteration),
// frames (Enter, Exit) and partitions (_Send → _Recv). Pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace/trace.hpp"

namespace tagflow::trace {

struct ExplainQuery {
  std::string node;  // its name
  std::optional<uint64_t> step;       // default: the last step that has it dead
  std::optional<int64_t> iteration;   // default: the first dead instance
};

struct DeadLink {
  size_t index;      // its value_dead (or, at the end, the Switch's node_ran)
  std::string text;  // "Add 'w/c/plus' at tag w/1 on CPU:0: input 0 from 'w/c/sw_acc':1 is dead"
};

struct Explanation {
  bool found = false;   // the node has a dead instance in the trace
  std::string summary;  // one line: where it ends (the Switch and its predicate), or why it stops
  std::vector<DeadLink> chain;  // from the node back to the Switch
};

Explanation explain(const Trace& t, const ExplainQuery& q);
std::string format_explanation(const Explanation& e);

}  // namespace tagflow::trace
