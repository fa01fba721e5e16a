// Conds inside loops, loops inside conds (taken and untaken), ControlTrigger,
// and a loop of 10^6 iterations.
#include <boost/test/unit_test.hpp>

#include "executor_graphs.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

BOOST_AUTO_TEST_SUITE(control_flow)

BOOST_AUTO_TEST_CASE(a_loop_inside_a_taken_and_an_untaken_branch) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(loop_in_cond()), m);
      auto taken = must_run(*s, {{"pred", Tensor::scalar(true)}}, {"c/Merge", "c/Merge:1"});
      BOOST_TEST(taken[0].scalar_value<int32_t>() == 12);
      BOOST_TEST(taken[1].scalar_value<int32_t>() == 1);
      auto untaken = must_run(*s, {{"pred", Tensor::scalar(false)}}, {"c/Merge", "c/Merge:1"});
      BOOST_TEST(untaken[0].scalar_value<int32_t>() == 100);
      BOOST_TEST(untaken[1].scalar_value<int32_t>() == 0);
      // the loop's Exit itself is dead when its branch is not taken
      auto dead = s->run({{"pred", Tensor::scalar(false)}}, {"c/w/Exit"});
      BOOST_TEST(!dead.ok());
    }
  }
}

BOOST_AUTO_TEST_CASE(a_cond_inside_a_loop_takes_a_branch_per_iteration) {
  // i: 0 +0, 1 -1, 2 +2, 3 -1, 4 +4, 5 -1  => 3
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(cond_in_loop()), m);
      auto out = must_run(*s, {}, {"w/acc_exit", "w/Exit"});
      BOOST_TEST(out[0].scalar_value<int32_t>() == 3);
      BOOST_TEST(out[1].scalar_value<int32_t>() == 6);
    }
  }
}

BOOST_AUTO_TEST_CASE(control_trigger_is_live_after_dead_inputs) {
  std::string text = bool_placeholder("p") + int_const("x", 5) + binary("sw", "Switch", "x", "p") +
                     unary("t", "Neg", "sw:1") + unary("f", "Neg", "sw") +
                     node("trigger", "ControlTrigger", {"^t", "^f"}) +
                     int_const("after", 9, {"^trigger"}) + int_const("plain_after", 9, {"^t"});
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(text), m);
      BOOST_TEST(must_run(*s, {{"p", Tensor::scalar(true)}}, {"after"})[0].scalar_value<int32_t>() == 9);
      BOOST_TEST(must_run(*s, {{"p", Tensor::scalar(false)}}, {"after"})[0].scalar_value<int32_t>() == 9);
      // a plain control edge from the dead `t` makes its consumer dead
      BOOST_TEST(!s->run({{"p", Tensor::scalar(false)}}, {"plain_after"}).ok());
    }
  }
}

BOOST_AUTO_TEST_CASE(a_million_iterations_complete_and_the_session_goes_on) {
  std::string text = int_const("start", 0) + node("n", "Placeholder", {}, type_attr("dtype", "DT_INT32")) +
                     counting_loop("w", "start", "n", 1);
  for (const Mode& m : modes()) {
    if (m.deterministic || m.threads == 4) continue;  // long: two modes suffice
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(text), m);
      auto out = must_run(*s, {{"n", Tensor::scalar<int32_t>(1000000)}}, {"w/Exit"});
      BOOST_TEST(out[0].scalar_value<int32_t>() == 1000000);
      BOOST_TEST(must_run(*s, {{"n", Tensor::scalar<int32_t>(5)}}, {"w/Exit"})[0].scalar_value<int32_t>() == 5);
      BOOST_TEST(no_step_actor_left(*s));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
