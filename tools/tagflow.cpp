// tagflow: the command-line program. Thin: parses flags, calls the
// libraries, prints results and errors. Every failure exits non-zero with
// a message that names what is wrong.
#include <CLI/CLI.hpp>

#include <new>
#include <string>

#include "graph/io/saved_model.hpp"
#include "ops/cpu/isa.hpp"
#include "ops/cpu/kernel_info.hpp"
#include "tools/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"tagflow: a dataflow runtime with dynamic control flow"};
  app.require_subcommand(1);
  // The version, and what this machine's kernels run with (TAGFLOW_ISA
  // lowers the level; a bad value is reported here too).
  app.set_version_flag("--version", [] {
    std::string text = std::string("tagflow ") + TAGFLOW_VERSION + "\n" + tagflow::ops::cpu::kernel_info_text();
    if (tagflow::ops::Status s = tagflow::ops::cpu::isa_status(); !s.ok()) text += "\n" + s.message();
    return text;
  });

  std::string inspect_path;
  std::vector<std::string> inspect_fetches;
  bool inspect_shapes = false;
  CLI::App* inspect_cmd = app.add_subcommand(
      "inspect", "Print a graph's node count, op histogram, frames (nesting, pivots), "
                 "devices, ops with no kernel, and per library function its ops with no "
                 "kernel and whether a run reaches it; for a SavedModel directory its tags, signatures "
                 "and variables");
  inspect_cmd->add_option("GRAPH", inspect_path, "GraphDef file (.pbtxt or .pb) or SavedModel directory")->required();
  inspect_cmd->add_option("--fetch", inspect_fetches,
                          "Also say which functions these fetches (name[:port]) reach");
  inspect_cmd->add_flag("--shapes", inspect_shapes,
                        "Print instead each node's outputs as \"name:port dtype shape\" (static shape inference, "
                        "docs/shapes.md); an error if the graph's shapes cannot agree");

  CLI::App* ops_cmd = app.add_subcommand(
      "ops", "Print every op tagflow knows as a Markdown table: inputs, outputs, attrs, whether it has a kernel "
             "(docs/ops.md)");

  std::string convert_in, convert_out;
  CLI::App* convert_cmd = app.add_subcommand(
      "convert", "Convert a GraphDef between .pbtxt and .pb, or draw it as Graphviz .dot "
                 "(one cluster per frame); the output format follows OUT's extension");
  convert_cmd->add_option("IN", convert_in, "GraphDef file (.pbtxt or .pb)")->required();
  convert_cmd->add_option("OUT", convert_out, "output file: .pbtxt, .pb or .dot")->required();
  bool convert_lower = false;
  convert_cmd->add_flag("--lower", convert_lower,
                        "lower functional control flow (If, While, Case, function calls) to "
                        "Switch/Merge/Enter/Exit first");

  tagflow::tools::RunArgs run;
  tagflow::tools::GradArgs grad;
  tagflow::tools::OptimizeArgs optimize;
  CLI::App* optimize_cmd = app.add_subcommand(
      "optimize", "Run the graph optimiser's passes on a GraphDef and write the result (docs/optimizer.md)");
  optimize_cmd->add_option("IN", optimize.in, "GraphDef file (.pbtxt or .pb)")->required();
  optimize_cmd->add_option("OUT", optimize.out, "output file: .pbtxt, .pb or .dot")->required();
  optimize_cmd->add_option("--passes", optimize.passes,
                           "passes in order, separated by commas, or 'default' (all) or 'none'");
  optimize_cmd->add_option("--keep", optimize.keep,
                           "a node that must keep its name and value (a fetch, feed or target); without any, "
                           "every node that nothing reads is kept");
  optimize_cmd->add_flag("--lower", optimize.lower, "lower functional ops to Switch/Merge/Enter/Exit first");
  optimize_cmd->add_flag("--verbose,-v", optimize.verbose, "print every change");

  CLI::App* grad_cmd = app.add_subcommand(
      "grad", "Add the gradients of ys with respect to xs to a graph (through conds and while "
              "loops), write it, and print which output holds each x's gradient");
  grad_cmd->add_option("GRAPH", grad.graph, "GraphDef file (.pbtxt or .pb)")->required();
  grad_cmd->add_option("--y", grad.ys, "a tensor to differentiate, NAME[:PORT] (summed if several)")->required();
  grad_cmd->add_option("--x", grad.xs, "a tensor to differentiate with respect to: a Placeholder, Const or variable")->required();
  grad_cmd->add_option("--grad-y", grad.grad_ys, "the gradient flowing into each y (default: ones)");
  grad_cmd->add_option("--stop", grad.stops, "a tensor no gradient flows through");
  grad_cmd->add_option("--unconnected", grad.unconnected, "what an x no y depends on gets: none or zeros");
  grad_cmd->add_flag("--functional", grad.functional,
                     "differentiate If, Case, While, For and function calls as functional ops (TensorFlow 2's "
                     "gradients: an If's gradient is an If, a While's a While); the default");
  grad_cmd->add_flag("--lower", grad.lower,
                     "lower functional ops to Switch/Merge/Enter/Exit first and differentiate those (TensorFlow 1's "
                     "gradients: stacks)");
  grad_cmd->add_option("--out", grad.out, "the graph with its gradients: .pbtxt or .pb")->required();

  CLI::App* run_cmd = app.add_subcommand("run", "Run a graph once and print the fetched tensors");
  run_cmd->add_option("GRAPH", run.graph,
                      "GraphDef file (.pbtxt or .pb), or a SavedModel directory (restored, then a signature run)")
      ->required();
  run_cmd->add_option("--feed", run.feeds,
                      "NAME[:PORT]=VALUE, VALUE a literal typed by the graph: 3, 2.5, true, "
                      "[1,2], [[1.5,2],[3,4]], \"text\"; or NAME=@FILE: a NumPy array (FILE.npy, "
                      "FILE.npz:KEY), converted to the graph's dtype, or any other file's bytes as a string");
  run_cmd->add_option("--fetch", run.fetches,
                      "NAME[:PORT] to compute and print (a GraphDef needs --fetch or --target; a SavedModel "
                      "prints its signature's outputs, and these too)");
  run_cmd->add_option("--target", run.targets, "NAME of a node to run for its effect");
  run_cmd->add_option("--init", run.inits,
                      "NAME of a node to run first, in a step of its own (variable "
                      "initialisers); repeatable, run in order, in the same session as the fetch");
  run_cmd->add_flag("--init-variables", run.init_variables,
                    "run every variable's initialiser (TensorFlow's `V/Assign` nodes, optimiser slots included) "
                    "first, in a step of its own, before --init");
  run_cmd->add_option("--trace", run.trace,
                      "write the event stream to this file: JSON lines for .jsonl, else the compact binary "
                      "form (read back with `tagflow trace`)");
  run_cmd->add_option("--explain", run.explain,
                      "NAME[:PORT]: after the step, print why its value is dead (the chain back to the "
                      "Switch that did not take its branch); repeatable");
  bool progress = false, quiet = false;
  run_cmd->add_flag("--progress", progress,
                    "print a line a second on stderr: live frames, iterations, nodes/s, messages/s "
                    "(default: on when stderr is a terminal)");
  run_cmd->add_flag("--quiet", quiet, "no progress lines");
  run_cmd->add_option("--config", run.config, "CAF INI configuration file (scheduler settings)");
  run_cmd->add_option("--cluster", run.cluster,
                      "the cluster's workers, TensorFlow's ClusterSpec in one flag: "
                      "worker=127.0.0.1:7001,127.0.0.1:7002;ps=... (gives or replaces the "
                      "configuration's [cluster] jobs); devices of its tasks run there");
  run_cmd->add_option("--threads", run.threads, "worker threads, 1 to 256 (default: one per core)");
  run_cmd->add_option("--max-iterations", run.max_iterations,
                      "fail a loop that runs more iterations than this per frame instance "
                      "(default: [tagflow] max-iterations, else unbounded)");
  run_cmd->add_option("--timeout", run.timeout_ms,
                      "fail the step after this many milliseconds, at most 366 days (default: none)");
  run_cmd->add_option("--memory-limit", run.memory_limit,
                      "bytes a step's tensors may hold at once, also the most the graph's constants "
                      "may declare: 512M, 4G (default: [tagflow] memory-limit, else a quarter of "
                      "physical memory)");
  run_cmd->add_option("--max-nodes", run.max_nodes,
                      "nodes the graph may have, functional ops lowered (default: [tagflow] "
                      "max-nodes, else 10000000)");
  run_cmd->add_option("--max-frame-depth", run.max_frame_depth,
                      "how deep frames (loops) may nest (default: [tagflow] max-frame-depth, else 10000)");
  run_cmd->add_flag("--strict-merge", run.strict_merge,
                    "a second live input of a Merge in one tag is an error (default: ignored, "
                    "as in TensorFlow; also [tagflow] strict-merge)");
  run_cmd->add_flag("--no-feed-shape-check", run.no_feed_shape_check,
                    "check a --feed's dtype alone, not its shape against the Placeholder's declared one "
                    "(TensorFlow's C API and TF Serving; its Python client checks both, as by default here)");
  run_cmd->add_flag("--strict-shapes", run.strict_shapes,
                    "SavedModel: check each input's shape against the signature's and the Placeholder's "
                    "declared shape (default: dtypes only, shapes left to the kernels, as TF Serving)");
  auto* lower = run_cmd->add_flag_function(
      "--lower", [&run](int64_t) { run.lower_functional = true; },
      "lower functional ops (If, While, Case, For, calls) to Switch/Merge/Enter/Exit before running them "
      "(default: [graph] lower-functional, else as written)");
  run_cmd->add_flag_function(
             "--no-lower", [&run](int64_t) { run.lower_functional = false; },
             "run functional ops as written, without lowering (docs/tf2.md)")
      ->excludes(lower);
  run_cmd->add_option_function<std::string>(
      "--optimize", [&run](const std::string& v) { run.optimize = v; },
      "optimizer passes run on the step's graph: default, none, or names separated by commas "
      "(default: [graph] optimize, else none; docs/optimizer.md)");
  run_cmd->add_option("--output-dir", run.output_dir,
                      "write each fetched tensor (a SavedModel: each signature output) of the last step as "
                      "DIR/NAME.npy, NAME with '/' and ':' spelled '_' and a port of 0 dropped");
  run_cmd->add_option("--max-print", run.max_print, "print at most this many elements per tensor")
      ->check(CLI::PositiveNumber);

  run_cmd->add_option("--devices", run.devices,
                      "place the graph on CPU:0..N-1 of this process, N from 1 to 1024 (default: "
                      "the devices of the configuration, CPU:0-3); each device holding nodes runs "
                      "as a partition");
  run_cmd->add_option("--steps", run.steps,
                      "run the step (fetches and targets) this many times in the session, printing the fetches "
                      "after each (default: 1)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  run_cmd->add_option("--tag", run.tag,
                      "SavedModel: the meta graph's tag set, tags separated by commas, matched as a set as "
                      "TensorFlow's loader matches it: serve,gpu; \"\" for an empty one (default: serve)");
  run_cmd->add_option("--signature", run.signature, "SavedModel: the signature to run (default: serving_default)");
  run_cmd->add_option("--input", run.inputs,
                      "SavedModel: KEY=VALUE, an input of the signature by its key, VALUE a literal of its dtype; "
                      "KEY=@FILE: a NumPy array (FILE.npy, FILE.npz:KEY), or a string input holding the bytes "
                      "of any other FILE (a WAV, a JPEG)");
  run_cmd->add_option("--example", run.examples,
                      "SavedModel: KEY=FEATURES, a serialized tf.Example for a string input: "
                      "x=1.5;n=[1,2];s=\"text\" (a float_list, an int64_list, a bytes_list), or a text-format "
                      "Example (features { feature { key: \"x\" value { float_list { value: 1.5 } } } }); "
                      "repeat it for a batch of examples");
  run_cmd->add_option("--checkpoint", run.checkpoint,
                      "SavedModel: restore from this checkpoint prefix (default: DIR/variables/variables)");
  run_cmd->add_option("--save", run.save,
                      "after the steps, write the variables to this checkpoint prefix with the graph's own save "
                      "op (TensorFlow's tensor-bundle format: PREFIX.index, PREFIX.data-00000-of-00001)");
  run_cmd->add_option("--place", run.place,
                      "how nodes without a device constraint are spread: default (the first "
                      "device), round-robin or random:SEED");

  tagflow::tools::PartitionArgs part;
  CLI::App* part_cmd = app.add_subcommand(
      "partition", "Write what each device runs in a step (the step --feed/--fetch/--target name, else the "
                   "whole graph), as a session runs it: each device's partition (.pbtxt) and a .dot with a "
                   "cluster per device, Send/Recv pairs and control loops");
  part_cmd->add_option("GRAPH", part.graph, "GraphDef file (.pbtxt or .pb)")->required();
  part_cmd->add_option("--out", part.out_dir, "directory to write the partitions to")->required();
  part_cmd->add_option("--devices", part.devices,
                       "CPU:0..N-1, N from 1 to 1024 (default: the configuration's devices)");
  part_cmd->add_option("--place", part.place, "default, round-robin or random:SEED");
  part_cmd->add_option("--config", part.config, "CAF INI configuration file (tagflow.devices, [cluster])");
  part_cmd->add_option("--cluster", part.cluster, "the cluster, as for run");
  part_cmd->add_option("--feed", part.feeds, "NAME[:PORT] (or NAME=VALUE) the step feeds");
  part_cmd->add_option("--fetch", part.fetches, "NAME[:PORT] the step fetches");
  part_cmd->add_option("--target", part.targets, "NAME of a node the step runs for its effect");
  auto* part_lower = part_cmd->add_flag_function(
      "--lower", [&part](int64_t) { part.lower_functional = true; }, "lower functional ops, as run --lower");
  part_cmd->add_flag_function("--no-lower", [&part](int64_t) { part.lower_functional = false; },
                              "keep functional ops as written, as run --no-lower")
      ->excludes(part_lower);
  part_cmd->add_option_function<std::string>(
      "--optimize", [&part](const std::string& v) { part.optimize = v; }, "the optimiser's passes, as for run");

  CLI::App* trace_cmd = app.add_subcommand("trace", "Read back a trace that `tagflow run --trace` wrote");
  trace_cmd->require_subcommand(1);
  std::string trace_path, timeline_out, explain_node;
  std::optional<int64_t> explain_iteration;
  CLI::App* check_cmd = trace_cmd->add_subcommand(
      "check", "Check the invariants of the semantics on every step of the trace; print each violation "
               "with its event index (exit 1 if any)");
  check_cmd->add_option("TRACE", trace_path, "trace file (.jsonl or binary)")->required();
  CLI::App* stats_cmd = trace_cmd->add_subcommand(
      "stats", "Per step and frame: instances, iterations, nodes run, dead values, messages, bytes");
  stats_cmd->add_option("TRACE", trace_path, "trace file")->required();
  CLI::App* timeline_cmd = trace_cmd->add_subcommand(
      "timeline", "Write the trace in the Chrome trace event format (Perfetto, chrome://tracing)");
  timeline_cmd->add_option("TRACE", trace_path, "trace file")->required();
  timeline_cmd->add_option("-o,--out", timeline_out, "the .json file to write")->required();
  CLI::App* explain_cmd = trace_cmd->add_subcommand(
      "explain", "Why is a value dead: the chain back to the Switch whose branch was not taken");
  explain_cmd->add_option("TRACE", trace_path, "trace file")->required();
  explain_cmd->add_option("NODE", explain_node, "NAME[:PORT] of the dead node")->required();
  explain_cmd->add_option("--iteration", explain_iteration, "the iteration (default: the first dead one)");

  // explore and replay take run's step and placement flags
  const auto step_flags = [](CLI::App* cmd, tagflow::tools::RunArgs& r, bool recorded) {
    cmd->add_option("--feed", r.feeds, "NAME[:PORT]=VALUE, as for run");
    CLI::Option* fetch = cmd->add_option(
        "--fetch", r.fetches, recorded ? "NAME[:PORT] to compute (default: the step, feeds and initialisers the trace recorded)"
                                       : "NAME[:PORT] to compute");
    if (!recorded) fetch->required();
    cmd->add_option("--target", r.targets, "NAME of a node to run for its effect");
    cmd->add_option("--init", r.inits, "NAME of a node to run first, in a step of its own; repeatable");
    cmd->add_option("--config", r.config, "CAF INI configuration file");
    cmd->add_option("--devices", r.devices, "CPU:0..N-1 of this process (default: the configuration's)");
    cmd->add_option("--place", r.place, "default, round-robin or random:SEED");
    cmd->add_option("--max-iterations", r.max_iterations, "iterations per frame instance, at most");
  };
  tagflow::tools::RunArgs replay;
  std::string replay_trace_path;
  CLI::App* replay_cmd = trace_cmd->add_subcommand(
      "replay", "Re-run a recorded step under the deterministic scheduler, every actor taking its messages in the "
                "order the trace recorded; say where the replay first differs, if it does");
  replay_cmd->add_option("GRAPH", replay.graph, "the GraphDef the trace was recorded on")->required();
  replay_cmd->add_option("TRACE", replay_trace_path, "trace file")->required();
  step_flags(replay_cmd, replay, true);

  tagflow::tools::ExploreArgs explore;
  CLI::App* explore_cmd = app.add_subcommand(
      "explore", "Run a step in every order its messages can arrive in that can make a difference (or in seeded "
                 "random orders), checking each against one device and the invariants of the semantics");
  explore_cmd->add_option("GRAPH", explore.run.graph, "GraphDef file (.pbtxt or .pb)")->required();
  step_flags(explore_cmd, explore.run, false);
  explore_cmd->add_option("--max-deviations", explore.max_deviations,
                          "at most this many deliveries out of arrival order per schedule; -1: every order "
                          "(default: 1)");
  explore_cmd->add_option("--max-runs", explore.max_runs, "runs of the step, at most (default: 20000)");
  explore_cmd->add_option("--random", explore.random, "this many seeded random schedules instead");
  explore_cmd->add_option("--seed", explore.seed, "the random schedules' seed (default: 1)");
  explore_cmd->add_option("--out", explore.out,
                          "where a failing run's trace goes (default: explore-failure.jsonl)");

  tagflow::tools::WorkerArgs worker;
  CLI::App* worker_cmd = app.add_subcommand(
      "worker", "Join a cluster as one task: listen on the task's address and run the partitions "
                "clients ship, until SIGINT or SIGTERM");
  worker_cmd->add_option("--config", worker.config, "CAF INI configuration file with the [cluster] section");
  worker_cmd->add_option("--cluster", worker.cluster, "the cluster, as for run");
  worker_cmd->add_option("--job", worker.job, "the task's job (default: worker)");
  worker_cmd->add_option("--task", worker.task, "the task's index in its job")->required()->check(CLI::NonNegativeNumber);
  worker_cmd->add_option("--threads", worker.threads, "worker threads, 1 to 256 (default: one per core)");

  CLI11_PARSE(app, argc, argv);
  run.progress = quiet ? 0 : progress ? 1 : -1;
  // Kernels turn running out of memory into errors; this is for the rest.
  try {
    if (*part_cmd) return tagflow::tools::partition_graph(part);
    if (*ops_cmd) return tagflow::tools::list_ops();
    if (*inspect_cmd)
      return tagflow::graph::is_saved_model_dir(inspect_path)
                 ? tagflow::tools::inspect_saved_model(inspect_path)
                 : inspect_shapes ? tagflow::tools::inspect_shapes(inspect_path)
                                  : tagflow::tools::inspect_graph(inspect_path, inspect_fetches);
    if (*optimize_cmd) return tagflow::tools::optimize_graph(optimize);
    if (*convert_cmd) return tagflow::tools::convert_graph(convert_in, convert_out, convert_lower);
    if (*run_cmd) return tagflow::tools::run_graph(run);
    if (*grad_cmd) return tagflow::tools::gradient_graph(grad);
    if (*worker_cmd) return tagflow::tools::run_worker(worker);
    if (*check_cmd) return tagflow::tools::trace_check(trace_path);
    if (*stats_cmd) return tagflow::tools::trace_stats(trace_path);
    if (*timeline_cmd) return tagflow::tools::trace_timeline(trace_path, timeline_out);
    if (*explain_cmd) return tagflow::tools::trace_explain(trace_path, explain_node, explain_iteration);
    if (*replay_cmd) return tagflow::tools::replay_trace(replay, replay_trace_path);
    if (*explore_cmd) return tagflow::tools::explore_graph(explore);
  } catch (const std::bad_alloc&) {
    return tagflow::tools::fail(tagflow::ops::Status(tagflow::ops::Error::resource_exhausted, "out of memory"));
  }
  return 2;
}
