// A trace as a timeline in the Chrome trace event format (the JSON that
// Perfetto and chrome://tracing open): a process per partition, a track
// per recording thread with a slice per node run; each frame instance and
// each of its iterations as an async slice of the partition (iterations
// within their frame instance's span); a flow arrow from every transfer's
// send to its receipt. `tagflow trace timeline TRACE -o step.json`.
#pragma once

#include <string>

#include "trace/trace.hpp"

namespace tagflow::trace {

// The whole file: {"traceEvents": [...], "displayTimeUnit": "ns"}.
std::string timeline_json(const Trace& t);

}  // namespace tagflow::trace
