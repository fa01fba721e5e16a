// A saved disagreement: the shrunk graph as GraphDef text, with a header of
// `# key: value` comment lines (the text format's comments) saying how to
// run it and what one device gives:
//
//   # tagflow difftest regression case
//   # form: tf1
//   # found: seed 1234, 3 devices, random:77, 2 threads
//   # config: 2 devices, random:3, deterministic     (RunConfig, as fields below)
//   # devices: 2
//   # place: random:3
//   # mode: deterministic | threads N [no-shortcuts] [lower] [untimed]
//   # feed: f0=2
//   # fetch: L0/x1
//   # init: var0/init
//   # reference: <Outcome::summary() of the one-device run>
//   # program: (the shrunk program, one line each)
//
// tests/data/difftest/ holds the cases found so far; the actors suite runs
// each on 1-3 devices at every thread mode (difftest_regressions_test.cpp).
#pragma once

#include <string>
#include <vector>

#include "difftest.hpp"
#include "emit.hpp"
#include "ops/status.hpp"

namespace tagflow::difftest {

struct RegressionCase {
  Form form = Form::tf1;
  std::string found;
  RunConfig config;
  Emitted emitted;
  std::string reference;  // Outcome::summary() of the one-device run when saved
};

// Writes the case of program `p` in `form` to `path`.
ops::Status save_case(const std::string& path, const Program& p, Form form, const std::string& found,
                      const RunConfig& config, const Outcome& reference);

ops::Expected<RegressionCase> load_case(const std::string& path);

}  // namespace tagflow::difftest
