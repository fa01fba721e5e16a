// Session: registers a graph once and runs any number of steps on it
// (DESIGN.md §4). run(feeds, fetches, targets) prunes the graph to what the
// fetches and targets need (once per signature), hands the step to the
// partition actor and waits for the fetched tensors or an error that names
// node, tag and partition. After an error the session still works and no
// actor of the failed step is left. A feed may replace any node output.
// Thread-safe: run() may be called from many threads at once, as with
// TensorFlow's sessions; the steps run concurrently (a deterministic
// session runs them one after the other) and stateful ops on shared
// variables follow docs/semantics.md, "Concurrent steps".
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.hpp"
#include "graph/io/import.hpp"
#include "graph/placement.hpp"
#include "graph/step_plan.hpp"
#include "ops/tensor.hpp"
#include "trace/sink.hpp"

namespace tagflow::actors {

class PartitionHosts;

// The ranges options and configuration keys must lie in, and the defaults
// of the limits (docs/errors.md, "Limits"). Values outside are errors that
// name the option or the configuration file and key, and the range.
namespace limits {
constexpr int64_t kMaxThreads = 256;      // --threads, [scheduler] max-threads
constexpr int64_t kMaxDevices = 1024;     // --devices, [tagflow] devices
constexpr std::chrono::hours kMaxTimeout{24 * 366};  // --timeout: within any clock's range
constexpr int64_t kDefaultMaxNodes = graph::kDefaultMaxNodes;  // --max-nodes, [tagflow] max-nodes
constexpr int64_t kMaxNodes = int64_t{1} << 30;      // NodeId is 32 bits
// Frames within frames: tags cost O(1) at any depth and 30,000 nested loops
// run (in 20 s); the default keeps an untrusted graph's actor chains short.
constexpr int64_t kDefaultMaxFrameDepth = 10'000;  // --max-frame-depth, [tagflow] max-frame-depth
constexpr int64_t kMaxFrameDepth = 1'000'000;
constexpr int64_t kMinMemoryLimit = int64_t{1} << 20;  // --memory-limit, [tagflow] memory-limit
constexpr int64_t kMaxMemoryLimit = int64_t{1} << 50;  // (default: ops::default_memory_limit())
// [graph] lower-functional, --lower / --no-lower: whichever is faster on
// the benchmarks (docs/performance.md, "Functional ops run as written").
constexpr bool kDefaultLowerFunctional = false;
// [graph] optimize, --optimize: the passes every step graph goes through
// (docs/optimizer.md).
constexpr const char* kDefaultOptimize = "none";
}  // namespace limits

struct SessionOptions {
  int threads = 0;             // CAF worker threads; 0: one per core
  // Run on CAF's `testing` scheduler: every message is delivered one at a
  // time on the caller's thread, in a reproducible order (message-trace
  // tests). `threads` is then ignored.
  bool deterministic = false;
  // Fault injection for tests of the protocol checkers (the explorer must
  // catch these); never set outside tests. partition_drops_early_transfers:
  // a partition drops a transfer that reaches it before the step has
  // started there, instead of holding it — wrong only in the orders where
  // a peer's transfer overtakes the coordinator's start.
  // indicators_ignore_control_inputs: graph::PartitionMutant's — a split
  // loop whose NextIteration is dead only through a control input runs on.
  enum class ProtocolMutant { none, partition_drops_early_transfers, indicators_ignore_control_inputs };
  ProtocolMutant protocol_mutant = ProtocolMutant::none;
  trace::Sink* events = nullptr;  // not owned; must outlive the session
  std::chrono::nanoseconds timeout{0};  // per step; 0: none
  // Limits for untrusted graphs and steps; unset: the configuration's
  // [tagflow] key of that name, else the default (docs/errors.md, "Limits").
  // Iterations per frame instance (max-iterations; 0, the default: none —
  // a loop's live iterations are bounded by parallel_iterations, their
  // tensors by the memory limit and their time by `timeout`).
  std::optional<int64_t> max_iterations;
  // Bytes a step's tensors may hold at once (memory-limit; default: a
  // quarter of physical memory); also the most the graph's constants may
  // declare together.
  std::optional<int64_t> memory_limit;
  // Nodes of the graph, functional ops lowered (max-nodes).
  std::optional<int64_t> max_nodes;
  // Frames within frames: a loop in a loop is depth 2 (max-frame-depth).
  std::optional<int64_t> max_frame_depth;
  // A second live input of a Merge in one tag is an error (the
  // configuration's `tagflow.strict-merge` sets it too); by default the
  // first live input wins and later ones are ignored, as in TensorFlow.
  bool strict_merge = false;
  // How Session::run checks a fed value against what the graph declares
  // where it is fed (docs/models.md, "Feeds and shapes"): its dtype always,
  // and with this (the default) its shape against a Placeholder's declared
  // `shape` or a Const's value, as TensorFlow's Python client does; false:
  // the dtype alone, as TensorFlow's C API and TF Serving (the kernels see
  // the shape). `_output_shapes` never constrains a feed.
  bool check_feed_shapes = true;
  // A SavedModel's signatures (actors/saved_model.hpp): by default they
  // check dtypes and leave shapes to the kernels, as TF Serving does; with
  // this, each input's shape against the signature's declared one and the
  // Placeholder's (--strict-shapes). A plain Session ignores it.
  bool strict_shapes = false;
  // No shortcut past the actors (actors/execution_plan.hpp): every step
  // goes through its partition actors, every root frame runs in a frame
  // actor and every loop iteration in an iteration actor of its own. By
  // default a step of one local partition without control flow, transfers
  // or more than one expensive node runs on the caller's thread, a
  // partition without loops runs its root iteration itself, and a frame
  // with no child frame whose expensive nodes cannot overlap across
  // iterations runs its iterations itself (docs/protocol.md, "Steps on the
  // caller's thread", "Graphs without control flow", "Frames that run their
  // iterations"); the configuration's `tagflow.no-shortcuts` sets it too.
  bool no_shortcuts = false;
  // Whether functional ops (If, While, Case, For, calls) are lowered to
  // Switch/Merge/Enter/Exit before they run, or run as written
  // (actors/function_runtime.hpp, docs/tf2.md); unset: the configuration's
  // `[graph] lower-functional`, else the default (kDefaultLowerFunctional).
  // Functional ops whose bodies cannot run as written are lowered anyway.
  std::optional<bool> lower_functional;
  // The optimiser's passes run on every step graph (graph/optimize/,
  // docs/optimizer.md): "default" (every pass), "none", or pass names
  // separated by commas, in order; unset: the environment's
  // TAGFLOW_OPTIMIZE, else the configuration's `[graph] optimize`, else
  // kDefaultOptimize. An unknown name is an error
  // of Session::create.
  std::optional<std::string> optimize;
  // A CAF INI file (scheduler, work-stealing, ... sections, and `tagflow`
  // for tagflow's own keys) read into the session's actor system after the
  // embedded default (configs/local.ini); an unreadable file, an unknown key
  // or a value of the wrong type is an error.
  std::string config_file;
  // A configuration's text, read like the file's (after it when both are
  // given); errors call it "the configuration text".
  std::string config_text;
  // The devices graphs are placed on: these full names if given; else
  // `num_devices` CPUs of /job:localhost/replica:0/task:0; else the
  // configuration's `tagflow.devices` (the embedded default: CPU:0..3).
  // Each device that holds nodes of a step becomes one partition actor.
  std::vector<std::string> devices;
  int num_devices = 0;
  graph::PlacementOptions placement;
  // Partitions on other processes: the devices of the tasks of a cluster
  // (the configuration's [cluster] section, replaced job by job by
  // `cluster`, TensorFlow's ClusterSpec in one string:
  // "worker=127.0.0.1:7001,127.0.0.1:7002;ps=...") run there, reached
  // through `hosts` (a net::ClusterHosts). Without hosts a cluster
  // is an error.
  std::shared_ptr<PartitionHosts> hosts;
  std::string cluster;
};

using Feeds = std::vector<std::pair<std::string, ops::Tensor>>;

// `--timeout MS` as SessionOptions::timeout; outside 0 to limits::kMaxTimeout
// it is an error naming the range (milliseconds beyond it would overflow).
ops::Expected<std::chrono::nanoseconds> timeout_from_ms(int64_t milliseconds);

class Session {
 public:
  // Validates the graph (unknown ops are an error only if a step needs
  // them). Functional ops are lowered per step, only those the step needs
  // (library functions are instantiated on demand, once per session:
  // graph::FunctionInstantiator), after calls were pointed at the
  // implementation a CPU runs (graph/functions/implementation_selection.hpp).
  static ops::Expected<std::unique_ptr<Session>> create(graph::Graph g, SessionOptions options = {});
  // The options with the devices and every limit resolved — from the
  // options, else the configuration (the embedded default, then
  // config_file), else the defaults — and each value checked against its
  // range; errors name the configuration file and key, or the option.
  // create() resolves its options itself; a caller that reads a graph calls
  // this first, so that configuration errors come first and the graph is
  // read within the limits (graph::ImportOptions).
  static ops::Expected<SessionOptions> resolve_options(SessionOptions options);
  // Whether the options' configuration (file, text) or `cluster` names a
  // cluster: a caller that can reach other processes sets `hosts` only
  // then (the networking costs a thread and a startup).
  static ops::Expected<bool> names_cluster(const SessionOptions& options);
  // Steps still running — a dequeue may wait for an enqueue that never
  // comes — end with `cancelled`; returns once every run() has returned.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  ops::Expected<std::vector<ops::Tensor>> run(const Feeds& feeds,
                                              const std::vector<std::string>& fetches,
                                              const std::vector<std::string>& targets = {});

  // What each device runs in a step of this signature: the step
  // compiler's plan (graph::plan_step) with this session's devices,
  // placement, optimiser passes, functions and pinned resources — the
  // partitions `run` builds its step from (`tagflow partition` writes
  // them). Nothing runs.
  ops::Expected<graph::StepPlan> plan(const graph::StepSignature& step) const;

  const graph::Graph& graph() const;
  // The variables, stacks and TensorArrays of one of this process's
  // devices (nullptr if no step has run there): for tests and benchmarks.
  std::shared_ptr<const ops::ResourceManager> resources(const std::string& device) const;
  // The session's devices (full names).
  const std::vector<std::string>& devices() const;
  // The partitions (device names) of the last step run or attempted.
  std::vector<std::string> last_partitions() const;
  // Actors alive in this session's actor system, and how many of them live
  // as long as the session (partitions and kernel workers): when no step
  // runs the two are equal — nothing of a finished or failed step is left.
  size_t running_actors() const;
  size_t resident_actors() const;

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tagflow::actors
