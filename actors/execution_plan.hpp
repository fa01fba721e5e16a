// How a prepared step runs: who drives each iteration of it. Decided once —
// for the step when it is prepared, for a partition when it is made (also
// in another process, from its own executable) — and read by the drivers;
// no driver decides anything itself. The whole decision table:
//
// | decision | taken when | otherwise |
// |---|---|---|
// | the step runs on the caller's thread: `Session::run` drives the one partition's root iteration, no actor is involved | shortcuts on; one partition, in this process; no frame but the root, no `_Recv`, no kernel that may block, at most one expensive node; the step records no events, runs neither deterministically nor with a timeout | the coordinator starts the step on every partition actor |
// | a partition drives its root iteration itself (`PartitionActor`, no frame actor) | shortcuts on; the partition has no frame but the root | a root `FrameActor` |
// | a frame drives its iterations itself (`FrameActor`, no iteration actors) | shortcuts on; `FrameLayout::runs_iterations`: no child frame, every expensive node on a cycle through a NextIteration back edge (its instances cannot overlap across iterations) | an `IterationActor` per live iteration |
//
// Function bodies run as written are driven by the kernel that calls them
// (`BodyRunner`, actors/function_runtime.hpp), on whichever driver runs
// that kernel. "Shortcuts off" (`SessionOptions::no_shortcuts`) turns every
// shortcut off: every step through the partition actors, every root frame
// in a frame actor, every iteration in an actor of its own — the executor
// as the protocol describes it, for tests and comparisons
// (docs/protocol.md). Plans are plain values, immutable once made.
#pragma once

#include <memory>
#include <vector>

#include "actors/executable.hpp"

namespace tagflow::actors {

// What a partition decides from its executable.
struct PartitionPlan {
  bool root_inline = false;                 // the partition drives its root iteration
  std::vector<bool> frame_runs_iterations;  // by frame id: the frame drives its iterations
};

PartitionPlan plan_partition(const Executable& exec, bool shortcuts);

// The session's side of the policy.
struct ExecutionPolicy {
  bool shortcuts = true;
  bool events = false;         // the step records events
  bool deterministic = false;  // CAF's testing scheduler
  bool timeout = false;        // the step has a deadline
};

struct ExecutionPlan {
  bool on_callers_thread = false;
  std::vector<PartitionPlan> partitions;  // by partition index
};

// `remote`: a partition runs in another process.
ExecutionPlan plan_execution(const std::vector<std::shared_ptr<const Executable>>& partitions, bool remote,
                             const ExecutionPolicy& policy);

}  // namespace tagflow::actors
