// The split-versus-one-device test (docs/testing.md): a program, written in
// one form, runs on one device and then under other configurations —
// 1 to 5 devices, random and round-robin placements, CAF's deterministic
// scheduler or 1, 2 and 4 threads, with and without the executor's
// shortcuts (SessionOptions::no_shortcuts), TF 2 graphs as written and
// lowered — and every run must give the one-device values bit for bit, or
// fail with the same error code. A disagreement is shrunk (shrink.hpp) and
// saved as a regression case (regression.hpp). Thread-compatible: every run
// makes its own session.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "emit.hpp"
#include "graph/placement.hpp"
#include "ops/status.hpp"

namespace tagflow::difftest {

struct RunConfig {
  int devices = 1;
  bool round_robin = false;  // else random:seed
  uint64_t seed = 1;
  bool deterministic = true;
  int threads = 1;
  bool no_shortcuts = false;  // SessionOptions::no_shortcuts
  bool lower = false;  // functional ops lowered (tf2 graphs; the others have none)
  // Tests of the test: the partitioner's defect it must find
  // (SessionOptions::ProtocolMutant::indicators_ignore_control_inputs).
  bool mutant = false;
  // A step timeout (Limits::timeout). Without one a step of one partition
  // without frames may run on the caller's thread (the executor's first
  // shortcut, which a timeout turns off); a watchdog then bounds the run.
  bool timed = true;

  // "3 devices, random:7, 2 threads, no shortcuts"
  std::string describe() const;
  // The same as `tagflow run` flags (where the CLI has them).
  std::string flags() const;
};

struct Outcome {
  bool ok = false;
  ops::Error code = ops::Error::ok;
  std::string message;
  std::vector<std::string> values;  // per fetch: dtype, shape and the bytes in hex
  std::string summary() const;
};

struct Limits {
  std::chrono::milliseconds timeout{10000};
  int64_t max_iterations = 500;
};

Outcome run_once(const Emitted& e, const RunConfig& c, const Limits& limits = {});

// Whether `got` is what the reference gave: the same values bit for bit,
// or an error of the same code.
bool agree(const Outcome& reference, const Outcome& got);

// The reference run of a form: one device, deterministic, as written.
RunConfig reference_config();

// `count` configurations drawn for one graph of `form`.
std::vector<RunConfig> draw_configs(std::mt19937_64& rng, Form form, int count);

// The outcome of the reference is usable: the program ran, or failed with
// an error the graph itself makes (not a limit, a timeout or an internal
// error, which would mean the generator made a graph that does not end).
bool usable_reference(const Outcome& o);

// One program in one form, checked: built, run on one device, then under
// `configs` configurations drawn from `config_seed` (`mutant` set in each),
// until one disagrees.
struct GraphCheck {
  std::string build_error;  // the form could not be built ("" if it was)
  Outcome reference;
  bool usable = false;      // usable_reference(reference)
  std::vector<RunConfig> runs;  // the configurations run besides the reference
  bool disagrees = false;   // the last of `runs` disagreed
  Outcome got;              // its outcome
  int nodes = 0;
};
GraphCheck check_graph(const Program& p, Form form, uint64_t config_seed, int configs, bool mutant = false);

}  // namespace tagflow::difftest
