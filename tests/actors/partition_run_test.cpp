// Partitioned runs: every graph of the executor's tests gives, on 2, 3 and
// 4 devices under 20 random placements each, exactly what it gives on one
// device (values, dead fetches and errors alike), and nothing of a step is
// left afterwards.
#include <boost/test/unit_test.hpp>

#include <functional>

#include "partition_cases.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

namespace {

using namespace tagflow::testing::partition_cases;

std::vector<std::string> run_case(const Case& c, actors::SessionOptions o, size_t* max_partitions) {
  auto s = actors::Session::create(c.graph(), o);
  if (!s.ok()) throw std::runtime_error(s.status().to_string());
  std::vector<std::string> out;
  for (const Step& step : c.steps) {
    out.push_back(outcome((*s)->run(step.feeds, step.fetches, step.targets)));
    *max_partitions = std::max(*max_partitions, (*s)->last_partitions().size());
  }
  BOOST_TEST(no_step_actor_left(**s));
  return out;
}

// Nodes spread over `devices` CPUs, one after the other.
actors::SessionOptions round_robin(int devices) {
  actors::SessionOptions o;
  o.num_devices = devices;
  o.placement.strategy = graph::PlacementOptions::Strategy::round_robin;
  return o;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(partitioned)

BOOST_AUTO_TEST_CASE(every_graph_gives_the_same_results_under_random_placements) {
  for (const Case& c : cases()) {
    BOOST_TEST_CONTEXT(c.name) {
      actors::SessionOptions one;
      one.num_devices = 1;
      one.threads = 2;
      size_t partitions = 0;
      const std::vector<std::string> want = run_case(c, one, &partitions);
      BOOST_TEST(partitions == 1u);
      size_t most = 0;
      for (int devices : {2, 3, 4}) {
        for (uint64_t seed = 1; seed <= 20; ++seed) {
          BOOST_TEST_CONTEXT(devices << " devices, random:" << seed) {
            actors::SessionOptions o;
            o.num_devices = devices;
            o.placement.strategy = graph::PlacementOptions::Strategy::random;
            o.placement.seed = seed;
            // the deterministic scheduler for some, real threads for the rest
            o.deterministic = seed % 4 == 0;
            o.threads = 1 + static_cast<int>(seed % 3);
            BOOST_TEST(run_case(c, o, &most) == want, boost::test_tools::per_element());
          }
        }
      }
      BOOST_TEST(most > 1u, "no placement split the graph");
    }
  }
}

BOOST_AUTO_TEST_CASE(round_robin_spreads_a_loop_over_every_device) {
  const actors::SessionOptions o = round_robin(3);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(nested_loops()), m, o);
      BOOST_TEST(must_run(*s, {}, {"o/Exit"})[0].scalar_value<int32_t>() == 24);
      BOOST_TEST(s->last_partitions().size() == 3u);
      BOOST_TEST(no_step_actor_left(*s));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_long_loop_split_across_devices_runs_many_iterations) {
  std::string g = int_const("start", 0) + node("n", "Placeholder", {}, type_attr("dtype", "DT_INT32")) +
                  counting_loop("w", "start", "n", 1);
  const actors::SessionOptions o = round_robin(2);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(g), m, o);
      BOOST_TEST(must_run(*s, {{"n", Tensor::scalar<int32_t>(5000)}}, {"w/Exit"})[0].scalar_value<int32_t>() == 5000);
      BOOST_TEST(s->last_partitions().size() == 2u);
      BOOST_TEST(must_run(*s, {{"n", Tensor::scalar<int32_t>(0)}}, {"w/Exit"})[0].scalar_value<int32_t>() == 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(an_error_on_one_partition_ends_the_step_everywhere) {
  // 10 / (3 - i) fails at i = 3, with the loop spread over 3 devices
  std::string body = int_const("w/three", 3, {"^w/Identity"}) + int_const("w/ten", 10, {"^w/Identity"}) +
                     binary("w/d", "Sub", "w/three", "w/Identity") +
                     binary("w/q", "FloorDiv", "w/ten", "w/d") + binary("w/qq", "Sub", "w/q", "w/q") +
                     binary("w/next", "Add", "w/Add", "w/qq");
  std::string g = int_const("start", 0) + int_const("n", 10) + counting_loop("w", "start", "n", 1, 10, body, "w/next");
  const actors::SessionOptions o = round_robin(3);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(g), m, o);
      auto r = s->run({}, {"w/Exit"});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(r.status().message().find("FloorDiv 'w/q' at tag w/") != std::string::npos, r.status().message());
      BOOST_TEST(r.status().code() != ops::Error::aborted);
      BOOST_TEST(no_step_actor_left(*s));
      // the session goes on
      auto again = s->run({}, {"start"});
      BOOST_TEST(again.ok());
    }
  }
}

BOOST_AUTO_TEST_CASE(a_send_without_its_recv_is_an_error_naming_the_key) {
  const std::string attrs =
      type_attr("T", "DT_INT32") + " attr { key: \"tensor_name\" value { s: \"lonely\" } }" +
      " attr { key: \"send_device\" value { s: \"/job:localhost/replica:0/task:0/device:CPU:0\" } }" +
      " attr { key: \"recv_device\" value { s: \"/job:localhost/replica:0/task:0/device:CPU:1\" } }" +
      " attr { key: \"send_device_incarnation\" value { i: 1 } }";
  auto s = make_session(parse(int_const("x", 1) + node("send", "_Send", {"x"}, attrs)), modes()[1]);
  auto r = s->run({}, {"x"}, {"send"});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message().find("_Send 'send'") != std::string::npos, r.status().message());
  BOOST_TEST(r.status().message().find("'lonely'") != std::string::npos, r.status().message());
  // the session goes on
  BOOST_TEST(must_run(*s, {}, {"x"})[0].scalar_value<int32_t>() == 1);
}

BOOST_AUTO_TEST_SUITE_END()
