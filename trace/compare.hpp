// Two traces of one step compared: does a replay reproduce a recording?
// Every actor must have taken the same messages in the same order, and
// every iteration of every partition must have the same node events (node
// ran, value dead, merge input ignored: node, port, dead, source) in the
// same order. Times and threads are not compared. Pure function.
#pragma once

#include <string>

#include "trace/trace.hpp"

namespace tagflow::trace {

// "" if they agree; else the first difference, named.
std::string first_difference(const Trace& recorded, const Trace& replayed);

}  // namespace tagflow::trace
