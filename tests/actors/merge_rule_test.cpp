// A Merge with several live inputs in one tag follows TensorFlow: the first
// live input to arrive is forwarded with its index, later ones are ignored
// and recorded as an event; under strict-merge they are an error.
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <fstream>

#include "session_test_util.hpp"
#include "test_graphs.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using trace::Kind;
using ops::Tensor;

namespace {

// a, b and c all live: m merges them; m/value reads m's value.
std::string three_live_inputs() {
  return int_const("a", 10) + int_const("b", 11) + int_const("c", 12) + merge("m", {"a", "b", "c"}) +
         unary("m/value", "Identity", "m");
}

// A loop whose body merges two live values of each iteration (i and i+100).
std::string merge_in_a_loop() {
  std::string body = int_const("w/hundred", 100, {"^w/Identity"}) +
                     binary("w/big", "Add", "w/Identity", "w/hundred") +
                     merge("w/pick", {"w/Identity", "w/big"}) +
                     binary("w/sum", "Add", "w/acc_id", "w/pick") +
                     unary("w/acc_next", "NextIteration", "w/sum");
  std::string acc = enter("w/acc_enter", "zero", "w", false) +
                    merge("w/acc_merge", {"w/acc_enter", "w/acc_next"}) +
                    binary("w/acc_switch", "Switch", "w/acc_merge", "w/LoopCond") +
                    unary("w/acc_id", "Identity", "w/acc_switch:1") +
                    unary("w/acc_exit", "Exit", "w/acc_switch");
  return int_const("zero", 0) + int_const("n", 4) + acc + counting_loop("w", "zero", "n", 1, 1, body);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(merge_rule)

BOOST_AUTO_TEST_CASE(the_first_live_input_wins_and_the_rest_are_recorded) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      trace::MemorySink sink;
      actors::SessionOptions o;
      o.events = &sink;
      auto s = make_session(parse(three_live_inputs()), m, o);
      auto out = must_run(*s, {}, {"m/value", "m:1"});
      const int32_t index = out[1].scalar_value<int32_t>();
      BOOST_TEST((index >= 0 && index < 3));
      BOOST_TEST(out[0].scalar_value<int32_t>() == 10 + index);
      int ignored = 0;
      const trace::Trace t = sink.trace();
      for (const trace::Event& e : t.events()) {
        if (e.kind != Kind::merge_input_ignored) continue;
        ++ignored;
        BOOST_TEST(t.node_name(e) == "m");
        BOOST_TEST(t.tag_of(e) == "/");
        BOOST_TEST(e.src_port == index);  // the first live input
        BOOST_TEST(e.port != index);
      }
      BOOST_TEST(ignored == 2);
      BOOST_TEST(no_step_actor_left(*s));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_merge_in_a_loop_takes_one_live_input_per_iteration) {
  // sum over i = 0..3 of (i or i + 100): 6 + 100 * (number of iterations
  // where the second input won)
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      trace::MemorySink sink;
      actors::SessionOptions o;
      o.events = &sink;
      auto s = make_session(parse(merge_in_a_loop()), m, o);
      auto out = must_run(*s, {}, {"w/acc_exit", "w/Exit"});
      BOOST_TEST(out[1].scalar_value<int32_t>() == 4);
      const int32_t sum = out[0].scalar_value<int32_t>();
      BOOST_TEST(((sum - 6) % 100 == 0 && sum >= 6 && sum <= 406), sum);
      int ignored = 0;
      const trace::Trace t = sink.trace();
      for (const trace::Event& e : t.events())
        ignored += e.kind == Kind::merge_input_ignored && t.node_name(e) == "w/pick";
      BOOST_TEST(ignored == 4);  // one per iteration
    }
  }
}

BOOST_AUTO_TEST_CASE(strict_merge_makes_a_second_live_input_an_error) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      actors::SessionOptions o;
      o.strict_merge = true;
      auto s = make_session(parse(three_live_inputs()), m, o);
      auto r = s->run({}, {"m/value"});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(r.status().message().find("Merge 'm' got two live inputs") != std::string::npos,
                 r.status().message());
      BOOST_TEST(r.status().message().find("at tag /") != std::string::npos);
      BOOST_TEST(r.status().message().find("strict-merge") != std::string::npos);
      BOOST_TEST(no_step_actor_left(*s));
      // the session goes on: a graph part with one live input still runs
      auto fine = s->run({}, {"a"});
      BOOST_REQUIRE(fine.ok());
    }
  }
}

BOOST_AUTO_TEST_CASE(strict_merge_is_a_configuration_key) {
  const std::string path = "/tmp/tagflow_strict_merge_test.ini";
  {
    std::ofstream f(path);
    f << "[tagflow]\nstrict-merge=true\n";
  }
  actors::SessionOptions o;
  o.config_file = path;
  auto s = make_session(parse(merge_in_a_loop()), modes()[1], o);
  auto r = s->run({}, {"w/acc_exit"});
  std::remove(path.c_str());
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message().find("Merge 'w/pick' got two live inputs") != std::string::npos,
             r.status().message());
  BOOST_TEST(r.status().message().find("at tag w/0") != std::string::npos, r.status().message());
}

BOOST_AUTO_TEST_SUITE_END()
