// The interleaving explorer: every graph of the multi-device suite, split
// over 2 devices, explored in every order its messages can arrive in that
// can make a difference — same values, every invariant held; a broken
// protocol (a frame that retires an iteration with messages still on
// their way to it) is caught, its failing schedule made short and replayed
// from its trace; a threaded run's trace replays under the deterministic
// scheduler to the same events.
#include <boost/test/unit_test.hpp>

#include <chrono>

#include "actors/explorer.hpp"
#include "partition_cases.hpp"
#include "trace_harness.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using namespace tagflow::testing::partition_cases;

namespace {

actors::SessionOptions split_over(int devices, uint64_t seed) {
  actors::SessionOptions o;
  o.num_devices = devices;
  o.placement.strategy = graph::PlacementOptions::Strategy::random;
  o.placement.seed = seed;
  return o;
}

// The case's last step, after the targets of the steps before it that
// fetch nothing (variable initialisers).
actors::StepRequest request(const Case& c) {
  const Step& last = c.steps.back();
  actors::StepRequest r{last.feeds, last.fetches, last.targets, {}};
  for (size_t i = 0; i + 1 < c.steps.size(); ++i)
    if (c.steps[i].fetches.empty())
      for (const std::string& t : c.steps[i].targets) r.inits.push_back(t);
  return r;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(explorer)

BOOST_AUTO_TEST_CASE(every_graph_of_the_multi_device_suite_in_every_order) {
  for (const Case& c : cases()) {
    if (c.name == "three nested loops") continue;  // seeded random schedules below
    BOOST_TEST_CONTEXT(c.name) {
      const auto start = std::chrono::steady_clock::now();
      actors::ExploreOptions o;
      o.max_deviations = 1;
      actors::ExploreReport r = actors::explore(c.graph(), split_over(2, 3), request(c), o);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      BOOST_TEST_MESSAGE(c.name << ": " << r.runs << " runs, " << r.states << " states, " << r.interleavings
                                << " interleavings, " << r.decisions << " decision points, "
                                << (r.complete ? "complete" : "NOT complete") << ", " << seconds << " s");
      BOOST_TEST(!r.failure.has_value(), r.failure_why);
      BOOST_TEST(r.complete);
    }
  }
}

BOOST_AUTO_TEST_CASE(larger_graphs_under_seeded_random_schedules) {
  for (const Case& c : cases()) {
    if (c.name != "three nested loops" && c.name != "nested loops") continue;
    BOOST_TEST_CONTEXT(c.name) {
      actors::ExploreOptions o;
      o.random_runs = 100;
      o.seed = 7;
      actors::ExploreReport r = actors::explore(c.graph(), split_over(3, 5), request(c), o);
      BOOST_TEST_MESSAGE(c.name << ": " << r.runs << " random schedules, " << r.interleavings << " interleavings");
      BOOST_TEST(!r.failure.has_value(), r.failure_why);
      BOOST_TEST(r.runs == 100);
      BOOST_TEST(r.interleavings > 10);  // the schedules differ
    }
  }
}

BOOST_AUTO_TEST_CASE(a_broken_protocol_is_caught_its_schedule_made_short_and_replayed) {
  // A partition that drops a transfer reaching it before its step started
  // there: wrong only where a peer's transfer overtakes the start.
  // x on CPU:1 crosses to y on CPU:0: in the orders where CPU:1 starts
  // first and its transfer reaches CPU:0 before CPU:0's start, it is lost.
  const std::string text =
      int_const("x", 7) + unary("double_x", "Identity", "x") + binary("y", "Add", "double_x", "double_x");
  const auto placed = [&] {
    graph::Graph g = parse(text);
    g.mutable_node(g.find("x")).device = "/job:localhost/replica:0/task:0/device:CPU:1";
    g.mutable_node(g.find("double_x")).device = "/job:localhost/replica:0/task:0/device:CPU:1";
    g.mutable_node(g.find("y")).device = "/job:localhost/replica:0/task:0/device:CPU:0";
    return g;
  };
  actors::SessionOptions broken = split_over(2, 1);
  broken.protocol_mutant = actors::SessionOptions::ProtocolMutant::partition_drops_early_transfers;
  actors::ExploreOptions o;
  o.max_deviations = 2;
  const actors::StepRequest step{{}, {"y"}, {}, {}};
  actors::ExploreReport r = actors::explore(placed(), broken, step, o);
  BOOST_REQUIRE_MESSAGE(r.failure.has_value(), "not caught in " << r.runs << " runs");
  BOOST_TEST_MESSAGE("caught after " << r.runs << " runs: " << r.failure_why);
  BOOST_TEST(!r.failure_why.empty());
  // The first order is fine: the failure needs messages out of order.
  BOOST_TEST(r.reference.find("error") == std::string::npos, r.reference);
  int deviations = 0;
  for (int c : r.failure->choices) deviations += c != 0;
  BOOST_TEST(deviations == 2);  // CPU:1's start first, then its transfer before CPU:0's start
  BOOST_TEST(r.failure_why.find("one device gives int32[] 14") != std::string::npos, r.failure_why);
  // Its schedule alone, and its trace (the order every actor took its
  // messages), give the same failure again.
  actors::ScheduleRun again = actors::run_schedule(placed(), broken, step, r.failure->choices);
  BOOST_TEST(again.outcome == r.failure->outcome);
  BOOST_TEST(again.violations.size() == r.failure->violations.size());
  std::string diverged;
  actors::ScheduleRun replayed = actors::replay(placed(), broken, step, r.failure->trace, &diverged);
  BOOST_TEST(diverged == "");
  BOOST_TEST(replayed.outcome == r.failure->outcome);
  BOOST_TEST(replayed.end_state == r.failure->end_state);
  // The correct protocol passes the same schedule.
  actors::ScheduleRun fixed = actors::run_schedule(placed(), split_over(2, 1), step, r.failure->choices);
  BOOST_TEST(fixed.outcome == r.reference);
  BOOST_TEST(fixed.violations.empty());
}

BOOST_AUTO_TEST_CASE(a_threaded_run_replays_under_the_deterministic_scheduler) {
  const graph::Graph g = parse(cond_in_loop());
  for (int threads : {1, 2, 4}) {
    BOOST_TEST_CONTEXT(threads << " threads") {
      trace::MemorySink sink;
      actors::SessionOptions o = split_over(2, 4);
      o.threads = threads;
      o.events = &sink;
      std::vector<ops::Tensor> out;
      {
        auto s = make_session(g, {"threaded", false, threads}, o);
        out = must_run(*s, {}, {"w/acc_exit"});
      }
      const trace::Trace recorded = sink.trace();
      std::string diverged;
      actors::SessionOptions base = split_over(2, 4);
      actors::ScheduleRun r = actors::replay(g, base, {{}, {"w/acc_exit"}, {}, {}}, recorded, &diverged);
      BOOST_TEST(diverged == "");
      BOOST_TEST(r.outcome.find(out[0].debug_string(8)) == 0u, r.outcome);
      BOOST_TEST(r.violations.empty());
      // every actor took the same messages in the same order
      std::map<trace::ActorRef, std::vector<std::pair<trace::ActorRef, uint64_t>>> want, got;
      for (const trace::Event& e : recorded.events())
        if (e.kind == trace::Kind::message_taken) want[e.to].emplace_back(e.from, e.seq);
      for (const trace::Event& e : r.trace.events())
        if (e.kind == trace::Kind::message_taken) got[e.to].emplace_back(e.from, e.seq);
      for (const auto& [actor, taken] : want) {
        const auto& replayed = got[actor];
        const size_t n = std::min(taken.size(), replayed.size());
        BOOST_TEST(std::equal(taken.begin(), taken.begin() + static_cast<long>(n), replayed.begin()),
                   trace::describe(actor));
      }
    }
  }
}

// A trace records the step it was asked for (feeds with their values,
// fetches, targets; trace::Kind::step_request): replay takes it from there,
// the steps before as initialisers, and replays a threaded recording with
// an initialiser step and a feed to the same end.
BOOST_AUTO_TEST_CASE(a_trace_gives_back_the_step_it_recorded) {
  const graph::Graph g = parse(int_const("start", 0) +
                               node("n", "Placeholder", {}, type_attr("dtype", "DT_INT32")) +
                               counting_loop("w", "start", "n", 1));
  trace::MemorySink sink;
  actors::SessionOptions o = split_over(2, 2);
  o.threads = 2;
  o.events = &sink;
  const actors::Feeds feeds{{"n", ops::Tensor::scalar<int32_t>(3)}};
  {
    auto s = make_session(g, {"threaded", false, 2}, o);
    must_run(*s, feeds, {}, {"start"});
    BOOST_TEST(must_run(*s, feeds, {"w/Exit"})[0].scalar_value<int32_t>() == 3);
  }
  const trace::Trace recorded = sink.trace();
  auto asked = actors::recorded_request(recorded);
  BOOST_REQUIRE_MESSAGE(asked.ok(), asked.status().to_string());
  BOOST_TEST(asked->fetches == std::vector<std::string>{"w/Exit"});
  BOOST_TEST(asked->targets.empty());
  BOOST_TEST(asked->inits == std::vector<std::string>{"start"});
  BOOST_REQUIRE_EQUAL(asked->feeds.size(), 1u);
  BOOST_TEST(asked->feeds[0].first == "n");
  BOOST_TEST(asked->feeds[0].second.equals(feeds[0].second));
  std::string diverged;
  actors::ScheduleRun r = actors::replay(g, split_over(2, 2), *asked, recorded, &diverged);
  BOOST_TEST(diverged == "");
  BOOST_TEST(r.outcome.find("int32[] 3") == 0u, r.outcome);
  BOOST_TEST(r.violations.empty());
  // a trace without requests says so
  auto none = actors::recorded_request(trace::Trace());
  BOOST_TEST(!none.ok());
  BOOST_TEST(none.status().message().find("records no step") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(explorer_small)

BOOST_AUTO_TEST_CASE(small_loops_in_every_order_without_a_bound) {
  const std::vector<std::pair<const char*, std::string>> graphs = {
      {"counting loop, 2 iterations", int_const("start", 0) + int_const("n", 2) + counting_loop("w", "start", "n", 1)},
      {"counting loop, 3 iterations", int_const("start", 0) + int_const("n", 3) + counting_loop("w", "start", "n", 1)},
      {"zero iterations", int_const("start", 5) + int_const("n", 3) + counting_loop("w", "start", "n", 1)},
  };
  for (const auto& [name, text] : graphs) {
    for (uint64_t seed : {1, 2, 3}) {
      BOOST_TEST_CONTEXT(name << ", placement " << seed) {
        const auto start = std::chrono::steady_clock::now();
        actors::ExploreOptions o;
        o.max_deviations = 2;
        actors::ExploreReport r = actors::explore(parse(text), split_over(2, seed), {{}, {"w/Exit"}, {}, {}}, o);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        BOOST_TEST_MESSAGE(name << ", placement " << seed << ": " << r.runs << " runs, " << r.states << " states, "
                                << r.interleavings << " interleavings, " << (r.complete ? "complete" : "NOT complete")
                                << ", " << seconds << " s");
        BOOST_TEST(!r.failure.has_value(), r.failure_why);
        BOOST_TEST(r.complete);
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
