// The randomized split-versus-one-device test, tested: its programs build
// and end in every form, its shrinking keeps programs valid, it finds the
// partitioner's defect it was made for (a mutant) and shrinks it to the
// report's shape, and every regression case it has saved
// (tests/data/difftest/) gives the one-device value on 1-3 devices at every
// thread mode.
#include <boost/test/unit_test.hpp>

#include <filesystem>

#include "difftest.hpp"
#include "emit.hpp"
#include "program.hpp"
#include "regression.hpp"
#include "shrink.hpp"

using namespace tagflow;
using namespace tagflow::difftest;

namespace {

const Form kForms[] = {Form::tf1, Form::any_level, Form::builder, Form::tf2};

GeneratorOptions options_for(Form f) {
  GeneratorOptions o;
  o.arrays = f != Form::tf2;
  return o;
}

// Every mode the suites run in (tests/actors/session_test_util.hpp).
std::vector<RunConfig> every_mode(int devices, uint64_t seed) {
  std::vector<RunConfig> out;
  for (int mode = 0; mode < 5; ++mode) {
    RunConfig c;
    c.devices = devices;
    c.seed = seed;
    c.deterministic = mode == 0;
    c.threads = mode == 3 ? 4 : mode == 2 || mode == 4 ? 2 : 1;
    c.no_shortcuts = mode == 4;
    out.push_back(c);
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(difftest)

BOOST_AUTO_TEST_CASE(programs_build_and_end_on_one_device_in_every_form) {
  for (Form form : kForms) {
    int ok = 0, dead = 0;
    for (uint64_t seed = 1; seed <= 60; ++seed) {
      const Program p = random_program(seed, options_for(form));
      BOOST_TEST_CONTEXT(form_name(form) << ", seed " << seed << "\n" << p.describe()) {
        // a pure function of the seed
        BOOST_TEST(random_program(seed, options_for(form)).describe() == p.describe());
        auto e = emit(p, form);
        BOOST_REQUIRE_MESSAGE(e.ok(), e.status().to_string());
        BOOST_TEST(!e->fetches.empty());
        const Outcome r = run_once(*e, reference_config());
        BOOST_TEST(usable_reference(r), r.message);
        ok += r.ok;
        dead += !r.ok && r.code == ops::Error::dead_value;
      }
    }
    // most programs give values (a dead fetch is the exception)
    BOOST_TEST(ok >= 50, form_name(form) << ": " << ok << " of 60 ran, " << dead << " fetched a dead value");
  }
}

BOOST_AUTO_TEST_CASE(the_graph_forms_are_a_function_of_the_program) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Program p = random_program(seed);
    BOOST_TEST(emit_text(p, Form::tf1) == emit_text(p, Form::tf1));
    // the pivot edges are what tells the two GraphDef forms apart
    if (p.total_loops() > 1) BOOST_TEST(emit_text(p, Form::tf1) != emit_text(p, Form::any_level));
  }
}

BOOST_AUTO_TEST_CASE(every_shrinking_edit_is_a_program_that_builds_and_ends) {
  int candidates = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const Program p = random_program(seed);
    for (const Program& q : shrink_candidates(p)) {
      ++candidates;
      BOOST_TEST_CONTEXT("seed " << seed << ", candidate\n" << q.describe()) {
        BOOST_TEST(q.size() <= p.size());
        auto e = emit(q, Form::tf1);
        BOOST_REQUIRE_MESSAGE(e.ok(), e.status().to_string());
        BOOST_TEST(usable_reference(run_once(*e, reference_config())));
      }
    }
  }
  BOOST_TEST(candidates > 100);
}

// With the partitioner's old defect put back (its indicators read a
// NextIteration's data input only), the test finds disagreements, shrinks
// one to the report's shape — a loop whose NextIteration takes a loop
// invariant and is dead only through its pivot edge — and the saved case
// disagrees with the defect and agrees without it.
BOOST_AUTO_TEST_CASE(the_test_finds_and_shrinks_a_broken_continue_signal) {
  int found = 0;
  for (uint64_t seed = 1; seed <= 40 && found == 0; ++seed) {
    const Program p = random_program(seed);
    const GraphCheck c = check_graph(p, Form::tf1, seed, 4, /*mutant=*/true);
    BOOST_REQUIRE(c.build_error.empty());
    if (!c.disagrees) continue;
    ++found;
    const ShrinkResult s = shrink(p, Form::tf1, c.runs.back());
    BOOST_TEST_CONTEXT("seed " << seed << ", shrunk to\n" << s.program.describe()) {
      BOOST_TEST(s.kept > 0);
      BOOST_TEST(s.program.size() <= 3);
      BOOST_TEST(s.program.size() < p.size());
      BOOST_TEST(s.config.mutant);
      BOOST_TEST(!agree(s.reference, s.got));
      const std::string path = (std::filesystem::temp_directory_path() /
                                ("tagflow-difftest-" + std::to_string(::getpid()) + ".pbtxt")).string();
      BOOST_REQUIRE(save_case(path, s.program, Form::tf1, "a test", s.config, s.reference).ok());
      auto loaded = load_case(path);
      std::filesystem::remove(path);
      BOOST_REQUIRE_MESSAGE(loaded.ok(), loaded.status().to_string());
      BOOST_TEST(loaded->config.mutant);
      BOOST_TEST(!agree(s.reference, run_once(loaded->emitted, loaded->config)));
      RunConfig fixed = loaded->config;
      fixed.mutant = false;
      BOOST_TEST(agree(s.reference, run_once(loaded->emitted, fixed)));
      BOOST_TEST(run_once(loaded->emitted, reference_config()).summary() == loaded->reference);
    }
  }
  BOOST_TEST(found == 1);
}

BOOST_AUTO_TEST_CASE(every_saved_regression_case_gives_the_one_device_value) {
  int cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TAGFLOW_TEST_DATA) + "/difftest")) {
    if (entry.path().extension() != ".pbtxt") continue;
    ++cases;
    auto c = load_case(entry.path().string());
    BOOST_REQUIRE_MESSAGE(c.ok(), c.status().to_string());
    const Outcome reference = run_once(c->emitted, reference_config());
    BOOST_TEST_CONTEXT(entry.path().filename().string() << " (found: " << c->found << ")") {
      BOOST_TEST(reference.summary() == c->reference);
      std::vector<RunConfig> configs{c->config};
      for (int devices = 1; devices <= 3; ++devices)
        for (uint64_t seed = 1; seed <= (devices == 1 ? 1u : 3u); ++seed)
          for (RunConfig r : every_mode(devices, seed)) configs.push_back(r);
      for (RunConfig r : configs) {
        r.lower = c->form == Form::tf2 && r.devices > 1;
        const Outcome got = run_once(c->emitted, r);
        BOOST_TEST(agree(reference, got), r.describe() << ": " << got.summary() << ", one device: "
                                                       << reference.summary());
      }
    }
  }
  BOOST_TEST(cases >= 4);
}

BOOST_AUTO_TEST_SUITE_END()
