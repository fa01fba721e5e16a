// What `tagflow trace stats` prints: per step, and per frame (by its static
// name, over all its instances and partitions) the instances, iterations,
// nodes run, dead values, messages and bytes. Pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "trace/trace.hpp"

namespace tagflow::trace {

struct FrameStats {
  int64_t instances = 0;   // frame instances (per partition: a split frame counts once)
  int64_t iterations = 0;  // iterations started, on every partition
  int64_t nodes_run = 0;
  int64_t dead_values = 0;
  int64_t messages = 0;    // messages sent with a tag of the frame
  int64_t bytes = 0;
};

struct StepStats {
  int64_t partitions = 0;
  int64_t duration_ns = 0;  // first to last event of the step
  std::string error;        // the first step_done error, if any
  std::map<std::string, FrameStats> frames;  // "" is the root frame
};

std::map<uint64_t, StepStats> stats(const Trace& t);
// A table, one block per step.
std::string format_stats(const std::map<uint64_t, StepStats>& s);

}  // namespace tagflow::trace
