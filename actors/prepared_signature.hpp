// What a session makes once per signature (feeds, fetches, targets) and
// reuses for every step of it: the partitions' executables, their names,
// which feeds each reads, and either the partition actors that run its
// steps or — when the execution plan says so (actors/execution_plan.hpp) —
// what a step run on the caller's thread needs. Internal to actors/; the
// session owns these (actors/session.cpp).
#pragma once

#include <caf/all.hpp>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "actors/executable.hpp"
#include "actors/execution_plan.hpp"
#include "actors/iteration_state.hpp"
#include "actors/step_waiter.hpp"
#include "graph/step_graph.hpp"
#include "graph/step_plan.hpp"
#include "ops/resource.hpp"
#include "trace/sink.hpp"

namespace tagflow::actors {

using Feeds = std::vector<std::pair<std::string, ops::Tensor>>;

// One signature's partitions: a partition actor per device that holds
// nodes of the step, or none when its steps run on the caller's thread.
struct PreparedSignature {
  std::vector<std::shared_ptr<const Executable>> execs;
  std::vector<std::string> partition_names;
  std::vector<std::string> partition_devices;  // full names
  std::vector<std::string> partition_places;   // names with their task and address, for the coordinator
  std::vector<graph::DeclaredOutput> feeds;    // what the graph declares at each feed
  std::vector<caf::actor> partitions;
  // By partition: the feeds it reads (the others are not sent to it).
  std::vector<std::vector<bool>> reads_feed;
  bool remote = false;  // some partition runs on another task
  // A step run on the caller's thread (Session::run): one partition of this
  // process, no control flow, no transfers, at most one expensive node,
  // no events; set when the step may run so (and then `partitions` is
  // empty: no actor runs it). Its fetch names, and the
  // iteration states callers take turns with (one each while they run).
  std::shared_ptr<ops::ResourceManager> direct_resources;
  std::vector<std::string> fetch_names;
  // What the optimiser changed in the step graph, recorded as events at
  // the start of each step (trace::node_rewritten).
  std::vector<std::string> rewrites;
  mutable std::mutex direct_mu;
  mutable std::vector<std::unique_ptr<IterationState>> direct_states;
};

// A signature's partitions made from its plan (graph::plan_step): names
// ("CPU:0", or the full name of a device `hosts` has on another task),
// places, executables (bodies run as written by `runtime`, which may be
// nullptr), the feeds each reads and the rewrites as event text. No
// partition actor is spawned yet. Frames nested deeper than
// `max_frame_depth` are refused.
class PartitionHosts;
class FunctionRuntime;
struct RemotePartition;
struct StepLaunch;
struct SessionOptions;
ops::Expected<std::shared_ptr<PreparedSignature>> prepare_signature(graph::StepPlan& plan, size_t num_feeds,
                                                                    const PartitionHosts* hosts,
                                                                    const FunctionRuntime* runtime,
                                                                    int64_t max_frame_depth);

// The key a signature's PreparedSignature is found by.
std::string signature_key(const Feeds& feeds, const std::vector<std::string>& fetches,
                          const std::vector<std::string>& targets);

// The values of `feeds` partition `i` of `p` reads, at their positions;
// invalid tensors for the feeds it does not read.
std::vector<ops::Tensor> feeds_of(const PreparedSignature& p, size_t i, const Feeds& feeds);

// The feeds `exec` reads, by position among the step's `n` feeds.
std::vector<bool> feeds_read(const Executable& exec, size_t n);

// "CPU:0" for a device of the local task, else its full name.
std::string partition_label(const std::string& device);

// Frames within frames beyond the limit, on any partition of a step.
Status check_frame_depth(const Executable& exec, int64_t max_depth);

// The step a caller asked for, as step_request events (trace/event.hpp).
void record_request(trace::Sink& events, uint64_t step, const Feeds& feeds, const std::vector<std::string>& fetches,
                    const std::vector<std::string>& targets);

// What every step is held to, from the session's (resolved) options.
struct StepLimits {
  int64_t memory_limit = 0;    // bytes a partition's tensors may hold
  int64_t max_iterations = 0;  // per frame instance; 0: unbounded
  bool strict_merge = false;
  bool no_shortcuts = false;
  std::chrono::nanoseconds timeout{0};  // per step; 0: none
};
StepLimits step_limits(const SessionOptions& options);
// The session's side of the execution plan (actors/execution_plan.hpp).
ExecutionPolicy execution_policy_of(const SessionOptions& options);

// What the coordinator starts for one step of `p` run by its partition
// actors (its step id is set when the step is started): per partition the
// feeds it reads and the limits, and the step's deadline.
StepLaunch launch_of(const PreparedSignature& p, const Feeds& feeds, const StepLimits& limits,
                     std::shared_ptr<StepWaiter> waiter);

// What a worker process is asked to run for partition `i` of `p`.
RemotePartition remote_partition_of(const PreparedSignature& p, size_t i, const std::vector<std::string>& fetches,
                                    caf::actor client);

// A step of `p` (its direct_resources set) on the caller's thread: the
// partition's root iteration runs here as its partition actor would run
// it (PartitionActor::run_inline), with nothing to wait for — no kernel
// batches, transfers or child frames.
StepWaiter::Result run_on_callers_thread(const PreparedSignature& p, const Feeds& feeds, uint64_t step_id,
                                         const StepLimits& limits);

}  // namespace tagflow::actors
