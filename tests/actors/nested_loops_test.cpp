// Nested loops whose inner loops start from values of every enclosing level
// (issue: a split nested loop hung when an inner loop's counter started
// from an enclosing loop's invariant without a control edge from its
// pivot). Random programs of loops 2-4 deep, with and without TensorFlow's
// pivot edges, built as GraphDefs and with GraphBuilder, run on 1-3
// devices under random placements at every thread mode; each gives what a
// plain recursive evaluation of the same loops gives.
#include <boost/test/unit_test.hpp>

#include "graph/builder/builder.hpp"
#include "nested_loop_programs.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using graph::Output;
using ops::Tensor;
using Vars = std::vector<Output>;

namespace {

// Runs `g` and compares with the recursive evaluation; "" if equal.
std::string check(const graph::Graph& g, const NestedLoopProgram& p, bool built, const Mode& m,
                  int devices, uint64_t seed) {
  actors::SessionOptions o;
  o.num_devices = devices;
  o.placement.strategy = graph::PlacementOptions::Strategy::random;
  o.placement.seed = seed;
  o.timeout = std::chrono::seconds(20);  // a hang fails the test instead of stopping it
  auto s = make_session(g, m, o);
  auto r = s->run({}, p.fetches(built));
  const std::string where = std::string(m.name) + ", " + std::to_string(devices) + " device(s), random:" +
                            std::to_string(seed) + (built ? ", built" : "") + "\n" + p.describe();
  if (!r.ok()) return where + "error: " + r.status().to_string();
  auto want = p.evaluate();
  for (size_t k = 0; k < want.size(); ++k) {
    int i = r->at(2 * k).scalar_value<int32_t>(), acc = r->at(2 * k + 1).scalar_value<int32_t>();
    if (i != want[k].first || acc != want[k].second)
      return where + "loop " + std::to_string(k) + ": got (" + std::to_string(i) + ", " +
             std::to_string(acc) + "), want (" + std::to_string(want[k].first) + ", " +
             std::to_string(want[k].second) + ")";
  }
  if (!no_step_actor_left(*s)) return where + "actors left after the step";
  return "";
}

// Programs small enough to run many times each.
std::vector<std::pair<uint64_t, NestedLoopProgram>> programs(int count) {
  std::vector<std::pair<uint64_t, NestedLoopProgram>> out;
  for (uint64_t seed = 1; static_cast<int>(out.size()) < count; ++seed) {
    NestedLoopProgram p = random_nested_loop_program(seed);
    const int64_t n = p.total_iterations();
    if (n >= 6 && n <= 80) out.emplace_back(seed, std::move(p));
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(nested_loops)

// The 41-node case of the report: an outer loop of one iteration, an inner
// loop whose counter starts from the outer loop's invariant `zero`.
BOOST_AUTO_TEST_CASE(split_nested_loop_with_an_inner_counter_from_an_outer_invariant) {
  auto make = [] {
    graph::GraphBuilder b;
    Output zero = b.scalar<int32_t>(0), seven = b.scalar<int32_t>(7);
    auto outer = b.while_loop([&](const Vars& s) { return b.less(s[0], b.scalar<int32_t>(2)); },
                              [&](const Vars& s) {
                                auto inner = b.while_loop(
                                    [&](const Vars& t) { return b.less(t[0], b.scalar<int32_t>(2)); },
                                    [&](const Vars& t) {
                                      return Vars{b.add(t[0], b.scalar<int32_t>(1)),
                                                  b.add(t[1], b.scalar<int32_t>(1))};
                                    },
                                    {zero, s[1]});
                                return Vars{b.add(s[0], b.scalar<int32_t>(1)), b.add(inner[1], seven)};
                              },
                              {zero, zero});
    b.identity(outer[1], "result");
    return std::move(b.finish()).value();
  };
  graph::Graph built = make();
  // the builder gives the inner loop's counter Enter TensorFlow's control
  // edge from the outer pivot ...
  const graph::Node& counter = built.node(built.find("while/while/Enter"));
  BOOST_REQUIRE(counter.control_inputs.size() == 1u);
  BOOST_TEST(built.node(counter.control_inputs[0]).name == "while/Identity");
  // ... and without it (as a hand-made GraphDef may be) the graph runs too
  graph::Graph bare = built;
  bare.mutable_node(bare.find("while/while/Enter")).control_inputs.clear();
  for (const graph::Graph* g : {&built, &bare})
    for (const Mode& m : modes())
      for (int devices = 1; devices <= 3; ++devices)
        for (uint64_t seed = 1; seed <= (devices == 1 ? 1u : 6u); ++seed) {
          BOOST_TEST_CONTEXT(m.name << ", " << devices << " devices, random:" << seed
                                    << (g == &bare ? ", no pivot edge" : "")) {
            actors::SessionOptions o;
            o.num_devices = devices;
            o.placement.strategy = graph::PlacementOptions::Strategy::random;
            o.placement.seed = seed;
            o.timeout = std::chrono::seconds(20);
            auto s = make_session(*g, m, o);
            auto out = must_run(*s, {}, {"result"});
            BOOST_TEST(out[0].scalar_value<int32_t>() == 18);
            BOOST_TEST(no_step_actor_left(*s));
          }
        }
}

BOOST_AUTO_TEST_CASE(random_nested_loops_match_a_recursive_evaluation) {
  int split = 0;
  for (const auto& [seed, p] : programs(24)) {
    for (bool edges : {false, true}) {
      graph::Graph g = parse(p.graph_text(edges));
      for (const Mode& m : modes())
        for (int devices = 1; devices <= 3; ++devices)
          for (uint64_t place = 1; place <= (devices == 1 ? 1u : 3u); ++place) {
            const uint64_t placement_seed = seed * 100 + place * 7 + static_cast<uint64_t>(devices);
            std::string e = check(g, p, false, m, devices, placement_seed);
            BOOST_TEST(e.empty(), "program " << seed << (edges ? " with" : " without")
                                             << " pivot edges, " << e);
            split += devices > 1;
          }
    }
  }
  BOOST_TEST(split > 0);
}

BOOST_AUTO_TEST_CASE(random_nested_loops_built_with_the_builder_match_too) {
  for (const auto& [seed, p] : programs(12)) {
    graph::Graph g = p.build();
    for (const Mode& m : modes())
      for (int devices = 1; devices <= 3; ++devices)
        for (uint64_t place = 1; place <= (devices == 1 ? 1u : 2u); ++place) {
          std::string e = check(g, p, true, m, devices, seed * 31 + place);
          BOOST_TEST(e.empty(), "program " << seed << ", " << e);
        }
  }
}

BOOST_AUTO_TEST_SUITE_END()
