// The subcommands of the `tagflow` program, one file each; tagflow.cpp only
// parses flags and dispatches.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/session.hpp"
#include "ops/status.hpp"

namespace tagflow::tools {

using ops::Status;

// Prints "tagflow: <error>" to stderr; returns the exit code 1.
int fail(const Status& s);

// Prints a fetched or returned tensor: "NAME = VALUES  (DTYPE, shape SHAPE)",
// at most `max_print` elements.
void print_tensor(const std::string& name, const ops::Tensor& t, int64_t max_print);

// With `fetches`, also which library functions those fetches reach.
int inspect_graph(const std::string& path, const std::vector<std::string>& fetches = {});
// `tagflow inspect --shapes`: "name:port dtype shape" per output of every
// node (graph/shapes/shape_inference.hpp).
int inspect_shapes(const std::string& path);
// Prints docs/ops.md: every registered op, its signature, attrs and kernel.
int list_ops();
// With `lower`, functional ops become Switch/Merge/Enter/Exit first.
int convert_graph(const std::string& in, const std::string& out, bool lower);

struct OptimizeArgs {
  std::string in, out;
  std::string passes = "default";  // graph::optimize::parse_pass_list
  std::vector<std::string> keep;   // node names that must survive
  bool lower = false;              // lower functional ops first
  bool verbose = false;            // every change, one line each
};
// Runs the optimiser's passes on a GraphDef file and writes the result,
// printing nodes before and after and the time of each pass.
int optimize_graph(const OptimizeArgs& args);

struct GradArgs {
  std::string graph;
  std::vector<std::string> ys, xs, grad_ys, stops;  // NAME[:PORT]
  std::string out;
  std::string unconnected = "none";  // none | zeros
  // How functional ops are differentiated: as written (GradientOptions::
  // functional, TensorFlow 2's gradients; the default for a graph that
  // has any) or, with `lower`, lowered first and differentiated as
  // TensorFlow 1 loops and conds. `functional` says it explicitly.
  bool functional = false;
  bool lower = false;
};
// Adds d(sum ys)/d(xs) to the graph, writes it to `out` and prints
// "X -> NODE[:PORT]" per x.
int gradient_graph(const GradArgs& args);

struct RunArgs {
  std::string graph;
  std::vector<std::string> feeds;    // NAME=VALUE or NAME=@FILE
  std::vector<std::string> fetches;  // NAME[:PORT]
  std::vector<std::string> targets;
  std::vector<std::string> inits;    // targets run first, one step each, in order
  bool init_variables = false;       // every variable's `V/Assign` first, in one step
  std::string trace;                 // event file: .jsonl, else binary
  std::vector<std::string> explain;  // NAME: why its value is dead, after the step
  int progress = -1;                 // a line a second on stderr: 1, 0, -1: when stderr is a terminal
  std::string config;                // CAF INI file
  std::string cluster;               // --cluster job=host:port,...;job=...
  int threads = 0;
  int64_t timeout_ms = 0;
  int64_t max_print = 64;
  std::optional<int> devices;        // unset: the configuration's devices
  std::string place = "default";     // default | round-robin | random:SEED
  std::optional<std::string> optimize;  // --optimize LIST|none; unset: [graph] optimize
  // Limits; unset: the configuration's, else the defaults.
  std::optional<int64_t> max_iterations;
  std::optional<int64_t> max_nodes;
  std::optional<int64_t> max_frame_depth;
  bool strict_merge = false;
  bool no_feed_shape_check = false;  // a --feed's dtype alone is checked
  bool strict_shapes = false;        // SavedModel: inputs' shapes against the signature's
  std::optional<bool> lower_functional;  // --lower / --no-lower
  std::string memory_limit;          // "4G"; empty: unset
  int64_t steps = 1;                 // the step (fetches, targets) runs this many times
  // A SavedModel directory as GRAPH: the meta graph's tag, the signature to
  // run, its inputs (KEY=VALUE, KEY=@FILE, tf.Examples), and where to save the variables after.
  std::string tag = "serve";
  std::string signature = "serving_default";
  std::vector<std::string> inputs;   // KEY=LITERAL or KEY=@FILE (.npy, .npz:KEY, or a string's bytes)
  std::vector<std::string> examples; // KEY=FEATURES: one serialized tf.Example each, stacked per KEY
  std::string checkpoint;            // restore from here instead of DIR/variables/variables
  std::string save;                  // checkpoint prefix written after the steps; empty: none
  std::string output_dir;            // each fetched tensor written as DIR/NAME.npy; empty: none
};
int run_graph(const RunArgs& args);
// The tensor of an @FILE argument (tools/array_files.cpp): FILE.npy,
// FILE.npz:KEY (FILE.npz when it holds one array), converted to `dtype` as
// TensorFlow's Python client converts a fed array; any other file is its
// bytes as one string (a vector of one where `shape` is a vector).
ops::Expected<ops::Tensor> tensor_from_file(const std::string& path, ops::DType dtype,
                                            const ops::PartialShape& shape);
// Writes tensors[i] as DIR/NAME.npy, NAME names[i] with a port of 0 dropped
// and '/' and ':' spelled '_'; makes DIR if need be.
ops::Status write_fetches(const std::string& dir, const std::vector<std::string>& names,
                          const std::vector<ops::Tensor>& tensors);
// `tagflow run DIR`: load the SavedModel (restore, init op), run a signature.
int run_saved_model(const RunArgs& args);
// `tagflow inspect DIR`: tags, signatures, variables.
int inspect_saved_model(const std::string& dir);
// Lists the tensors of checkpoint `prefix` (none if it has no index).
int print_checkpoint_variables(const std::string& prefix);
// What run's flags make of a session and of its feeds (shared by explore
// and replay).
ops::Expected<actors::SessionOptions> session_options(const RunArgs& args);
ops::Expected<actors::Feeds> parse_feeds(const graph::Graph& g, const std::vector<std::string>& texts);
// The graph file, read within the session's limits (nodes, constants).
ops::Expected<graph::Graph> import_graph(const std::string& path, const actors::SessionOptions& o);
// The graph file as `run` makes a step of it (run, explore, replay): read
// within the options' limits, registered by a session (attrs inferred,
// validated, shapes checked), the feeds read against the registered graph
// (a Placeholder's dtype may be known only after inference).
struct OpenedGraph {
  graph::Graph graph;  // as read
  std::unique_ptr<actors::Session> session;
  actors::Feeds feeds;
};
ops::Expected<OpenedGraph> open_graph(const RunArgs& args, const actors::SessionOptions& options);

struct ExploreArgs {
  RunArgs run;              // the graph, the step (fetches, feeds, targets, inits), devices, placement
  int max_deviations = 1;   // -1: no bound
  int64_t max_runs = 20000;
  int64_t random = 0;       // > 0: this many seeded random schedules instead
  uint64_t seed = 1;
  std::string out;          // where a failing run's trace goes (default: explore-failure.jsonl)
};
// Explores the step's message orders; exit 1 on a failing schedule.
int explore_graph(const ExploreArgs& args);
// Re-runs a recorded trace of `run`'s step in the recorded order.
int replay_trace(const RunArgs& run, const std::string& trace_path);

struct PartitionArgs {
  std::string graph;
  std::string out_dir;
  std::string config;
  std::string cluster;
  std::optional<int> devices;  // unset: the configuration's devices
  std::string place = "default";
  // The step whose partitions are written. None: the whole graph (every
  // node without consumers a target, every Placeholder fed).
  std::vector<std::string> feeds;  // names ("x" or "x=VALUE", the value unused)
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
  std::optional<bool> lower_functional;  // --lower / --no-lower, as for run
  std::optional<std::string> optimize;   // --optimize, as for run
};

// --devices N as SessionOptions::num_devices: given, N must be 1 to
// actors::limits::kMaxDevices (0 would mean "the configuration's").
ops::Expected<int> num_devices(const std::optional<int>& devices);
// Writes each device's partition as DIR/<device>.pbtxt and all of them as
// DIR/partitions.dot (a cluster per device, Send/Recv pairs joined).
int partition_graph(const PartitionArgs& args);

// `tagflow trace ...` on a recorded trace file (.jsonl or binary).
int trace_check(const std::string& path);
int trace_stats(const std::string& path);
int trace_timeline(const std::string& path, const std::string& out);
int trace_explain(const std::string& path, const std::string& node, std::optional<int64_t> iteration);

struct WorkerArgs {
  std::string config;
  std::string cluster;
  std::string job = "worker";
  int task = 0;
  int threads = 0;
};
// Joins the cluster as the task: publishes on its address and serves
// clients until SIGINT or SIGTERM.
int run_worker(const WorkerArgs& args);

}  // namespace tagflow::tools
