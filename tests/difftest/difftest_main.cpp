// difftest: the randomized split-versus-one-device test (docs/testing.md).
//
//   difftest --graphs N [--seed S] [--forms tf1,any-level,builder,tf2]
//            [--configs K] [--explore M] [--jobs J] [--save DIR] [--print SEED]
//
// For each of N seeds and each form, a random program is written in that
// form, run on one device, then under K other configurations; every run
// must agree bit for bit. A disagreement is printed, shrunk and saved to
// DIR (a regression case for tests/data/difftest/). --explore M runs the
// interleaving explorer on M small programs of each GraphDef form, split
// over 2 or 3 devices. Exit status 1 if anything disagreed.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <mutex>
#include <thread>

#include "actors/explorer.hpp"
#include "difftest.hpp"
#include "emit.hpp"
#include "graph/io/export.hpp"
#include "program.hpp"
#include "regression.hpp"
#include "shrink.hpp"

using namespace tagflow;
using namespace tagflow::difftest;

namespace {

GeneratorOptions options_for(Form form) {
  GeneratorOptions o;
  // TF 2 has TensorLists, not TensorArrays and stacks; its programs keep
  // the resource variables.
  if (form == Form::tf2) o.arrays = false;
  return o;
}

uint64_t program_seed(uint64_t seed, Form form) { return seed * 4 + static_cast<uint64_t>(form); }

struct Tally {
  int64_t graphs = 0, runs = 0, skipped = 0, disagreements = 0, nodes = 0;
  std::map<int, int64_t> by_devices;
  std::map<std::string, int64_t> by_mode;
  std::map<std::string, int64_t> references;  // "ok" or the error code
  int64_t explored = 0, explore_runs = 0, explore_incomplete = 0, explore_skipped = 0;
  std::vector<std::string> skipped_examples;
};

struct Driver {
  std::vector<Form> forms;
  int configs = 4;
  std::string save_dir;
  bool mutant = false;
  std::mutex mu;
  std::map<Form, Tally> tally;

  void report_failure(uint64_t seed, Form form, const Program& p, const RunConfig& c, const Outcome& reference,
                      const Outcome& got) {
    ShrinkResult s = shrink(p, form, c);
    std::lock_guard<std::mutex> lock(mu);
    ++tally[form].disagreements;
    std::printf("DISAGREEMENT: seed %llu, form %s, %s\n  one device: %s\n  this run:   %s\n",
                static_cast<unsigned long long>(seed), form_name(form), c.describe().c_str(),
                reference.summary().c_str(), got.summary().c_str());
    std::printf("shrunk (%d candidates tried, %d kept) to %d statements, %s:\n%s  one device: %s\n  this run:   %s\n",
                s.tried, s.kept, s.program.size(), s.config.describe().c_str(), s.program.describe().c_str(),
                s.reference.summary().c_str(), s.got.summary().c_str());
    if (!save_dir.empty()) {
      const std::string path = fmt::format("{}/{}-seed{}.pbtxt", save_dir, form_name(form), seed);
      const std::string found = fmt::format("seed {}, {}", seed, c.describe());
      ops::Status st = save_case(path, s.program, form, found, s.config, s.reference);
      std::printf("%s\n", st.ok() ? ("saved " + path).c_str() : st.to_string().c_str());
    }
    std::fflush(stdout);
  }

  void one(uint64_t seed, Form form) {
    const Program p = random_program(program_seed(seed, form), options_for(form));
    const GraphCheck c = check_graph(p, form, program_seed(seed, form) * 7919 + 1, configs, mutant);
    if (!c.build_error.empty()) {
      std::lock_guard<std::mutex> lock(mu);
      ++tally[form].disagreements;
      std::printf("GENERATOR: seed %llu, form %s does not build: %s\n%s", static_cast<unsigned long long>(seed),
                  form_name(form), c.build_error.c_str(), p.describe().c_str());
      return;
    }
    if (!c.usable) {
      std::lock_guard<std::mutex> lock(mu);
      Tally& t = tally[form];
      ++t.skipped;
      if (t.skipped_examples.size() < 3)
        t.skipped_examples.push_back(fmt::format("seed {}: {}", seed, c.reference.message));
      return;
    }
    if (c.disagrees) report_failure(seed, form, p, c.runs.back(), c.reference, c.got);
    std::lock_guard<std::mutex> lock(mu);
    Tally& t = tally[form];
    ++t.graphs;
    ++t.references[c.reference.ok ? "ok" : ops::to_string(c.reference.code)];
    t.runs += 1 + static_cast<int64_t>(c.runs.size());
    t.nodes += c.nodes;
    ++t.by_devices[1];
    ++t.by_mode["deterministic"];
    for (const RunConfig& r : c.runs) {
      ++t.by_devices[r.devices];
      ++t.by_mode[r.deterministic ? std::string("deterministic") : fmt::format("{} threads", r.threads)];
      if (r.no_shortcuts) ++t.by_mode["no shortcuts"];
      if (r.lower) ++t.by_mode["lowered"];
      if (!r.timed) ++t.by_mode["no timeout"];
    }
  }

  // The explorer on a small program of `form`: at most three iterations in
  // any frame instance, split over 2 or 3 devices.
  void explore(uint64_t seed, Form form) {
    GeneratorOptions o = options_for(form);
    o.max_depth = 2;
    o.max_stmts = 4;
    o.max_trip = 2;
    const Program p = random_program(program_seed(seed, form) + 1000003, o);
    auto e = emit(p, form);
    Limits small;
    small.max_iterations = 3;
    if (!e.ok() || !usable_reference(run_once(*e, reference_config(), small))) {
      std::lock_guard<std::mutex> lock(mu);
      ++tally[form].explore_skipped;
      return;
    }
    actors::SessionOptions base;
    base.num_devices = 2 + static_cast<int>(seed % 2);
    base.placement.strategy = graph::PlacementOptions::Strategy::random;
    base.placement.seed = seed;
    base.max_iterations = 3;
    base.lower_functional = form == Form::tf2;
    actors::StepRequest step{e->feeds, e->fetches, {}, e->inits};
    actors::ExploreOptions x;
    x.max_deviations = 1;
    x.max_runs = 1500;
    const actors::ExploreReport r = actors::explore(e->graph, base, step, x);
    std::lock_guard<std::mutex> lock(mu);
    Tally& t = tally[form];
    ++t.explored;
    t.explore_runs += r.runs;
    t.explore_incomplete += !r.complete;
    if (r.failure) {
      ++t.disagreements;
      std::printf("EXPLORER: seed %llu, form %s, %d devices, random:%llu: %s\n%s", static_cast<unsigned long long>(seed),
                  form_name(form), base.num_devices, static_cast<unsigned long long>(seed), r.failure_why.c_str(),
                  p.describe().c_str());
      std::fflush(stdout);
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("tagflow's randomized split-versus-one-device test");
  int64_t graphs = 100, explore = 0;
  uint64_t seed = 1;
  int jobs = 1;
  std::string forms_text = "tf1,any-level,builder,tf2";
  std::optional<uint64_t> print;
  std::string print_form = "tf1";
  Driver d;
  app.add_option("--graphs", graphs, "programs per form (default 100)");
  app.add_option("--seed", seed, "the first program's seed (default 1)");
  app.add_option("--forms", forms_text, "forms to run, comma-separated (default all four)");
  app.add_option("--configs", d.configs, "configurations besides one device per graph (default 4)");
  app.add_option("--explore", explore, "small programs per GraphDef form to explore (default 0)");
  app.add_option("--jobs", jobs, "programs run at once (default 1)");
  app.add_option("--save", d.save_dir, "directory for shrunk disagreements (regression cases)");
  app.add_flag("--mutant", d.mutant, "break the partitioner the way the test must catch (a test of the test)");
  app.add_option("--print", print, "print the program of this seed and its graph, and exit");
  app.add_option("--print-form", print_form, "the form --print writes (default tf1)");
  CLI11_PARSE(app, argc, argv);

  std::stringstream list(forms_text);
  for (std::string f; std::getline(list, f, ',');) {
    Form form;
    if (!parse_form(f, &form)) {
      std::fprintf(stderr, "difftest: unknown form '%s' (tf1, any-level, builder, tf2)\n", f.c_str());
      return 2;
    }
    d.forms.push_back(form);
  }
  if (print) {
    Form form;
    if (!parse_form(print_form, &form)) return 2;
    const Program p = random_program(program_seed(*print, form), options_for(form));
    std::printf("%s", p.describe().c_str());
    auto e = emit(p, form);
    if (!e.ok()) {
      std::printf("%s\n", e.status().to_string().c_str());
      return 1;
    }
    std::printf("%s", form == Form::tf1 || form == Form::any_level ? emit_text(p, form).c_str()
                                                                   : graph::graph_to_text(e->graph).c_str());
    for (const std::string& f : e->fetches) std::printf("# fetch %s\n", f.c_str());
    const Outcome r = run_once(*e, reference_config());
    std::printf("# one device: %s\n", r.summary().c_str());
    return 0;
  }

  const auto start = std::chrono::steady_clock::now();
  std::atomic<int64_t> next{0};
  const int64_t total = graphs * static_cast<int64_t>(d.forms.size());
  const int64_t explore_total = explore * 2;  // the two GraphDef forms
  auto worker = [&] {
    for (int64_t i; (i = next++) < total + explore_total;) {
      if (i < total) {
        d.one(seed + static_cast<uint64_t>(i / static_cast<int64_t>(d.forms.size())),
              d.forms[static_cast<size_t>(i % static_cast<int64_t>(d.forms.size()))]);
      } else {
        const int64_t k = i - total;
        d.explore(seed + static_cast<uint64_t>(k / 2), k % 2 == 0 ? Form::tf1 : Form::any_level);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int j = 0; j < std::max(1, jobs); ++j) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  int64_t disagreements = 0;
  std::printf("difftest: seeds %llu..%llu, %.1f s\n", static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(seed + static_cast<uint64_t>(graphs) - 1), seconds);
  for (const auto& [form, t] : d.tally) {
    std::string devices, modes;
    for (const auto& [n, c] : t.by_devices) devices += fmt::format(" {}:{}", n, c);
    for (const auto& [m, c] : t.by_mode) modes += fmt::format(" {}: {};", m, c);
    std::string outcomes;
    for (const auto& [o, c] : t.references) outcomes += fmt::format(" {}: {}", o, c);
    std::printf("  %-9s %lld graphs (%.0f nodes on average), %lld runs; devices%s;%s %lld skipped, %lld "
                "disagreements\n",
                form_name(form), static_cast<long long>(t.graphs),
                t.graphs ? static_cast<double>(t.nodes) / static_cast<double>(t.graphs) : 0.0,
                static_cast<long long>(t.runs), devices.c_str(), modes.c_str(), static_cast<long long>(t.skipped),
                static_cast<long long>(t.disagreements));
    if (t.explored + t.explore_skipped > 0)
      std::printf("  %-9s explored %lld small graphs (%lld runs, %lld not complete within the bound, %lld "
                  "skipped: over 3 iterations)\n",
                  "", static_cast<long long>(t.explored), static_cast<long long>(t.explore_runs),
                  static_cast<long long>(t.explore_incomplete), static_cast<long long>(t.explore_skipped));
    std::printf("  %-9s one device:%s\n", "", outcomes.c_str());
    for (const std::string& s : t.skipped_examples) std::printf("      skipped %s\n", s.c_str());
    disagreements += t.disagreements;
  }
  return disagreements == 0 ? 0 : 1;
}
