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
#include <string>
#include <utility>
#include <vector>

#include "actors/events.hpp"
#include "graph/graph.hpp"
#include "graph/placement.hpp"
#include "ops/tensor.hpp"

namespace tagflow::actors {

struct SessionOptions {
  int threads = 0;             // CAF worker threads; 0: one per core
  // Run on CAF's `testing` scheduler: every message is delivered one at a
  // time on the caller's thread, in a reproducible order (message-trace
  // tests). `threads` is then ignored.
  bool deterministic = false;
  EventSink* events = nullptr;  // not owned; must outlive the session
  int64_t max_iterations = 0;   // per frame instance; 0: unbounded
  std::chrono::nanoseconds timeout{0};  // per step; 0: none
  // A second live input of a Merge in one tag is an error (the
  // configuration's `tagflow.strict-merge` sets it too); by default the
  // first live input wins and later ones are ignored, as in TensorFlow.
  bool strict_merge = false;
  // A CAF INI file (scheduler, work-stealing, ... sections, and `tagflow`
  // for tagflow's own keys) read into the session's actor system after the
  // embedded default (configs/local.ini); an unreadable file, an unknown key
  // or a value of the wrong type is an error.
  std::string config_file;
  // The devices graphs are placed on: these full names if given; else
  // `num_devices` CPUs of /job:localhost/replica:0/task:0; else the
  // configuration's `tagflow.devices` (the embedded default: CPU:0..3).
  // Each device that holds nodes of a step becomes one partition actor.
  std::vector<std::string> devices;
  int num_devices = 0;
  graph::PlacementOptions placement;
};

using Feeds = std::vector<std::pair<std::string, ops::Tensor>>;

// Reads a configuration text as Session::create reads
// SessionOptions::config_file — on top of the embedded default, unknown keys
// and ill-typed values are errors — without starting an actor system, and
// returns the configured devices (`tagflow.devices`: the text's if it sets
// them, else the embedded default's), each checked as a full device name.
// `source` names the text in errors ("configuration file 'x.ini'").
ops::Expected<std::vector<std::string>> read_session_config(const std::string& text,
                                                            const std::string& source);

class Session {
 public:
  // Validates the graph (unknown ops are an error only if a step needs them).
  static ops::Expected<std::unique_ptr<Session>> create(graph::Graph g, SessionOptions options = {});
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  ops::Expected<std::vector<ops::Tensor>> run(const Feeds& feeds,
                                              const std::vector<std::string>& fetches,
                                              const std::vector<std::string>& targets = {});

  const graph::Graph& graph() const;
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
