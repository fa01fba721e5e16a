// Conds inside loops, loops inside conds (taken and untaken), ControlTrigger,
// and a loop of 10^6 iterations.
#include <boost/test/unit_test.hpp>

#include "session_test_util.hpp"
#include "test_graphs.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

namespace {

std::string bool_placeholder(const std::string& name) {
  return node(name, "Placeholder", {}, type_attr("dtype", "DT_BOOL"));
}

// r = pred ? loop(start=0, while j < n: j += 3) : 100 — the loop in a branch.
std::string loop_in_cond() {
  std::string text = bool_placeholder("pred") + int_const("n", 10) + int_const("zero", 0) +
                     binary("c/Switch", "Switch", "pred", "pred", "DT_BOOL") +
                     unary("c/switch_t", "Identity", "c/Switch:1", "DT_BOOL") +
                     unary("c/switch_f", "Identity", "c/Switch", "DT_BOOL") +
                     unary("c/pred_id", "Identity", "pred", "DT_BOOL") +
                     binary("c/start", "Switch", "zero", "c/pred_id") +
                     counting_loop("c/w", "c/start:1", "n", 3) +
                     int_const("c/hundred", 100, {"^c/switch_f"}) +
                     merge("c/Merge", {"c/hundred", "c/w/Exit"});
  return text;
}

// acc = 0; i = 0; while i < 6: acc = (i % 2 == 0) ? acc + i : acc - 1; i += 1
std::string cond_in_loop() {
  std::string body =
      enter("w/acc_enter", "acc0", "w") + merge("w/acc_merge", {"w/acc_enter", "w/acc_next"}) +
      binary("w/acc_switch", "Switch", "w/acc_merge", "w/LoopCond") +
      unary("w/acc_identity", "Identity", "w/acc_switch:1") +
      int_const("w/two", 2, {"^w/Identity"}) + int_const("w/zero", 0, {"^w/Identity"}) +
      binary("w/mod", "FloorMod", "w/Identity", "w/two") +
      node("w/even", "Equal", {"w/mod", "w/zero"}, type_attr("T", "DT_INT32")) +
      binary("w/c/sw_acc", "Switch", "w/acc_identity", "w/even") +
      binary("w/c/sw_i", "Switch", "w/Identity", "w/even") +
      binary("w/c/plus", "Add", "w/c/sw_acc:1", "w/c/sw_i:1") +
      int_const("w/c/one", 1, {"^w/c/sw_acc"}) +
      binary("w/c/minus", "Sub", "w/c/sw_acc", "w/c/one") +
      merge("w/c/Merge", {"w/c/minus", "w/c/plus"}) +
      unary("w/acc_next", "NextIteration", "w/c/Merge") +
      unary("w/acc_exit", "Exit", "w/acc_switch");
  return int_const("start", 0) + int_const("n", 6) + int_const("acc0", 0) +
         counting_loop("w", "start", "n", 1, 10, body);
}

}  // namespace

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
