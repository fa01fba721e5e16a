// `tagflow explore` (the interleaving explorer on a graph's step) and
// `tagflow trace replay` (a recorded step re-run in its recorded order).
#include "tools/commands.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "actors/explorer.hpp"
#include "trace/compare.hpp"
#include "trace/sink.hpp"

namespace tagflow::tools {

namespace {

struct Loaded {
  actors::SessionOptions options;
  graph::Graph graph;
  actors::StepRequest step;
};

ops::Expected<Loaded> load(const RunArgs& run) {
  Loaded l;
  TF_ASSIGN_OR_RETURN(l.options, session_options(run));
  if (l.options.hosts) return Status(ops::Error::invalid_argument, "explore and replay run in one process: no --cluster");
  // The step as `run` would make it (the explorer makes its own sessions).
  TF_ASSIGN_OR_RETURN(OpenedGraph opened, open_graph(run, l.options));
  l.graph = std::move(opened.graph);
  l.step.feeds = std::move(opened.feeds);
  l.step.fetches = run.fetches;
  l.step.targets = run.targets;
  l.step.inits = run.inits;
  return l;
}

}  // namespace

int explore_graph(const ExploreArgs& args) {
  auto loaded = load(args.run);
  if (!loaded.ok()) return fail(loaded.status());
  actors::ExploreOptions o;
  o.max_deviations = args.max_deviations;
  o.max_runs = args.max_runs;
  o.random_runs = args.random;
  o.seed = args.seed;
  const actors::ExploreReport r = actors::explore(loaded->graph, loaded->options, loaded->step, o);
  const std::string bound = args.random > 0 ? fmt::format("{} seeded random schedules (seed {})", args.random, args.seed)
                            : args.max_deviations < 0
                                ? std::string("every order")
                                : fmt::format("every order with at most {} deliver{} out of arrival order",
                                              args.max_deviations, args.max_deviations == 1 ? "y" : "ies");
  std::printf("explored %s: %s\n", args.run.graph.c_str(), bound.c_str());
  std::printf("  %lld runs, %lld states, %lld distinct interleavings, %lld decision points%s\n",
              static_cast<long long>(r.runs), static_cast<long long>(r.states),
              static_cast<long long>(r.interleavings), static_cast<long long>(r.decisions),
              args.random > 0 ? "" : r.complete ? ", complete" : ", NOT complete (--max-runs reached)");
  if (!r.failure) {
    std::printf("  every run gave the values one device gives and held every invariant\n");
    return r.complete || args.random > 0 ? 0 : 1;
  }
  std::printf("FAILED: %s\n", r.failure_why.c_str());
  std::printf("the shortest failing schedule found: %zu deliveries, out of arrival order at:\n",
              r.failure->delivered.size());
  for (size_t i = 0; i < r.failure->choices.size(); ++i)
    if (r.failure->choices[i] != 0)
      std::printf("  delivery %zu: %s\n", i + 1, actors::describe(r.failure->delivered[i]).c_str());
  for (const trace::Violation& v : r.failure->violations) std::printf("  %s\n", trace::to_string(v).c_str());
  const std::string out = args.out.empty() ? "explore-failure.jsonl" : args.out;
  std::string error;
  if (!trace::write_trace(r.failure->trace, out, &error)) return fail(Status(ops::Error::not_found, error));
  std::printf("wrote its trace to %s; `tagflow trace replay %s %s` with the same flags re-runs it\n", out.c_str(),
              args.run.graph.c_str(), out.c_str());
  return 1;
}

int replay_trace(const RunArgs& run, const std::string& trace_path) {
  trace::Trace recorded;
  std::string error;
  if (!trace::read_trace(trace_path, &recorded, &error)) return fail(Status(ops::Error::parse_error, error));
  auto loaded = load(run);
  if (!loaded.ok()) return fail(loaded.status());
  // No step given: the one the trace recorded.
  if (run.fetches.empty() && run.targets.empty() && run.feeds.empty() && run.inits.empty()) {
    auto asked = actors::recorded_request(recorded);
    if (!asked.ok()) return fail(asked.status().with_prefix(trace_path + ": "));
    loaded->step = std::move(asked).value();
  }
  std::string diverged;
  const actors::ScheduleRun r = actors::replay(loaded->graph, loaded->options, loaded->step, recorded, &diverged);
  if (!diverged.empty()) {
    std::printf("the replay of %s differs: %s\n", trace_path.c_str(), diverged.c_str());
    return 1;
  }
  const std::string difference = trace::first_difference(recorded, r.trace);
  if (!difference.empty()) {
    std::printf("the replay of %s differs: %s\n", trace_path.c_str(), difference.c_str());
    return 1;
  }
  std::printf("replayed %s: every actor took the same messages in the same order and every node instance did the "
              "same (%zu events); the step gave %s\n",
              trace_path.c_str(), r.trace.size(), r.error.empty() ? r.outcome.c_str() : r.error.c_str());
  for (const trace::Violation& v : r.violations) std::printf("  %s\n", trace::to_string(v).c_str());
  return r.violations.empty() ? 0 : 1;
}

}  // namespace tagflow::tools
