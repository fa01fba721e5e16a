// The step compiler (graph::plan_step) as a session uses it: what
// Session::plan says a step's partitions are — what `tagflow partition`
// writes — is what the session runs (the node tables its partitions record
// in the trace), on 1-3 devices, for loops, resource variables and
// functional ops as written and lowered; resource makers are pinned where
// the whole graph puts them; the optimiser's changes are in the plan.
#include <boost/test/unit_test.hpp>

#include "graph/device.hpp"
#include <algorithm>

#include "session_test_util.hpp"
#include "test_graphs.hpp"
#include "trace/sink.hpp"

using namespace tagflow;
using namespace tagflow::testing;

namespace {

graph::Graph load(const std::string& path) {
  auto g = graph::import_graph_file(std::string(TAGFLOW_SOURCE_DIR) + "/" + path);
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

struct Case {
  std::string file;
  actors::Feeds feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> inits;
};

// "CPU:1", as a partition names itself in the trace.
std::string label(const std::string& full) {
  auto d = graph::parse_device_name(full);
  std::string s = d.ok() ? graph::short_name(*d) : full;
  std::replace(s.begin(), s.end(), '_', ':');
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(step_plan)

BOOST_AUTO_TEST_CASE(what_a_session_plans_for_a_step_is_what_it_runs) {
  const std::vector<Case> cases = {
      {"examples/while_loop.pbtxt", {}, {"while/Exit"}, {}},
      {"tests/data/graphs/next_iteration_dead_by_control.pbtxt", {{"n", ops::Tensor::scalar<int32_t>(3)}},
       {"while/Exit"}, {}},
      {"tests/data/functional/while_sum.pbtxt",
       {{"start", ops::Tensor::scalar<int32_t>(2)}, {"limit", ops::Tensor::scalar<int32_t>(9)}}, {"While:2"}, {}},
      {"tests/data/functional/stateful_outside_control_ret.pbtxt", {{"x", ops::Tensor::scalar<int32_t>(3)}},
       {"call", "read"}, {"init"}},
  };
  int compared = 0;
  for (const Case& c : cases)
    for (bool lower : {false, true})
      for (int devices = 1; devices <= 3; ++devices)
        for (uint64_t seed = 1; seed <= (devices == 1 ? 1u : 3u); ++seed) {
          BOOST_TEST_CONTEXT(c.file << (lower ? ", lowered, " : ", ") << devices << " devices, random:" << seed) {
            trace::MemorySink sink;
            actors::SessionOptions o;
            o.num_devices = devices;
            o.placement.strategy = graph::PlacementOptions::Strategy::random;
            o.placement.seed = seed;
            o.lower_functional = lower;
            o.events = &sink;
            auto s = make_session(load(c.file), modes()[0], o);
            for (const std::string& init : c.inits) must_run(*s, c.feeds, {}, {init});
            graph::StepSignature step;
            for (const auto& f : c.feeds) step.feeds.push_back(f.first);
            step.fetches = c.fetches;
            auto plan = s->plan(step);
            BOOST_REQUIRE_MESSAGE(plan.ok(), plan.status().to_string());
            must_run(*s, c.feeds, c.fetches);
            // the last step's partitions, as their name tables recorded them
            const trace::Trace t = sink.trace();
            const uint64_t last = t.steps().back();
            std::vector<const trace::PartitionNames*> ran;
            for (size_t i : t.of_step(last))
              if (t[i].kind == trace::Kind::step_started) ran.push_back(t.names(last, t[i].partition));
            BOOST_REQUIRE_EQUAL(ran.size(), plan->partitions.size());
            for (size_t p = 0; p < ran.size(); ++p) {
              BOOST_REQUIRE(ran[p] != nullptr);
              const graph::Graph& planned = plan->partitions[p].graph;
              BOOST_TEST(ran[p]->partition == label(plan->partitions[p].device));
              BOOST_REQUIRE_EQUAL(ran[p]->nodes.size(), static_cast<size_t>(planned.num_nodes()));
              for (graph::NodeId id = 0; id < planned.num_nodes(); ++id) {
                BOOST_TEST(ran[p]->nodes[static_cast<size_t>(id)] == planned.node(id).name);
                BOOST_TEST(ran[p]->ops[static_cast<size_t>(id)] == planned.node(id).op);
              }
              ++compared;
            }
          }
        }
  BOOST_TEST(compared > 60);
}

BOOST_AUTO_TEST_CASE(a_resource_maker_is_planned_where_the_whole_graph_puts_it) {
  graph::Graph g = load("tests/data/functional/stateful_outside_control_ret.pbtxt");
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    BOOST_TEST_CONTEXT("random:" << seed) {
      actors::SessionOptions o;
      o.num_devices = 3;
      o.placement.strategy = graph::PlacementOptions::Strategy::random;
      o.placement.seed = seed;
      auto s = make_session(g, modes()[0], o);
      auto pinned = graph::resource_devices(s->graph(), s->devices(), o.placement);
      BOOST_REQUIRE(pinned.ok());
      BOOST_REQUIRE_EQUAL(pinned->count("v"), 1u);
      // a step of the variable makes it where the whole graph does
      auto plan = s->plan({{"x"}, {"read"}, {}});
      BOOST_REQUIRE_MESSAGE(plan.ok(), plan.status().to_string());
      int found = 0;
      for (const graph::Partition& p : plan->partitions)
        if (p.graph.find("v") != graph::kNoNode) {
          ++found;
          BOOST_TEST(p.device == pinned->at("v"));
        }
      BOOST_TEST(found == 1);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_optimiser_s_changes_are_in_the_plan) {
  const std::string text = int_const("a", 2) + int_const("b", 3) + binary("s", "Add", "a", "b");
  actors::SessionOptions o;
  o.optimize = "default";
  auto plan = make_session(parse(text), modes()[0], o)->plan({{}, {"s"}, {}});
  BOOST_REQUIRE_MESSAGE(plan.ok(), plan.status().to_string());
  BOOST_TEST(!plan->changes.empty());
  BOOST_TEST(plan->partitions.at(0).graph.node(plan->partitions.at(0).graph.find("s")).op == "Const");
  actors::SessionOptions none;
  none.optimize = "none";
  auto plain = make_session(parse(text), modes()[0], none)->plan({{}, {"s"}, {}});
  BOOST_REQUIRE(plain.ok());
  BOOST_TEST(plain->changes.empty());
}

BOOST_AUTO_TEST_CASE(a_bad_step_is_an_error_naming_it_and_nothing_is_planned) {
  auto s = make_session(load("examples/while_loop.pbtxt"), modes()[0]);
  auto plan = s->plan({{}, {"nope"}, {}});
  BOOST_REQUIRE(!plan.ok());
  BOOST_TEST(plan.status().message().find("'nope'") != std::string::npos);
  // the session still runs
  BOOST_TEST(must_run(*s, {}, {"while/Exit"})[0].scalar_value<int32_t>() == 10);
}

BOOST_AUTO_TEST_SUITE_END()
