#include <boost/test/unit_test.hpp>
#include <map>

#include "test_graphs.hpp"
#include "trace_harness.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

namespace {

// acc = 0, i = 0; while i < n: acc += sum(M @ M); i += 1 — the counter does
// not wait for the MatMul, so iteration i + 1 can start while i multiplies.
std::string heavy_loop(int parallel_iterations, int size) {
  std::string dims = "attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: " +
                     std::to_string(size) + " } } }";
  std::string text =
      int_const("start", 0) + int_const("n", 8) +
      node("dims", "Const", {}, type_attr("dtype", "DT_INT32") + " " + dims) +
      node("one", "Const", {}, type_attr("dtype", "DT_FLOAT") +
           " attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0.01 } } }") +
      node("m", "Fill", {"dims", "one"}, type_attr("T", "DT_FLOAT") + " " + type_attr("index_type", "DT_INT32")) +
      node("acc0", "Const", {}, type_attr("dtype", "DT_FLOAT") +
           " attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0 } } }");
  std::string body =
      enter("w/acc_enter", "acc0", "w", false, parallel_iterations, "DT_FLOAT") +
      enter("w/m", "m", "w", true, parallel_iterations, "DT_FLOAT") +
      merge("w/acc_merge", {"w/acc_enter", "w/acc_next"}, "DT_FLOAT") +
      binary("w/acc_switch", "Switch", "w/acc_merge", "w/LoopCond", "DT_FLOAT") +
      unary("w/acc_identity", "Identity", "w/acc_switch:1", "DT_FLOAT") +
      node("w/mm", "MatMul", {"w/m", "w/m"}, type_attr("T", "DT_FLOAT")) +
      int_const("w/axes0", 0, {"^w/Identity"}) +
      node("w/sum", "Sum", {"w/mm", "w/axes0"}, type_attr("T", "DT_FLOAT") + " " + type_attr("Tidx", "DT_INT32")) +
      int_const("w/axes1", 0, {"^w/Identity"}) +
      node("w/total", "Sum", {"w/sum", "w/axes1"}, type_attr("T", "DT_FLOAT") + " " + type_attr("Tidx", "DT_INT32")) +
      binary("w/acc_add", "Add", "w/acc_identity", "w/total", "DT_FLOAT") +
      unary("w/acc_next", "NextIteration", "w/acc_add", "DT_FLOAT") +
      unary("w/acc_exit", "Exit", "w/acc_switch", "DT_FLOAT");
  return text + counting_loop("w", "start", "n", 1, parallel_iterations, body);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(trace_runs)

BOOST_AUTO_TEST_CASE(a_counting_loop_runs_each_iteration_once_and_in_order) {
  std::string text = int_const("start", 0) + int_const("n", 3) + counting_loop("w", "start", "n", 1);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      Trace t = trace_step(parse(text), m, {}, {"w/Exit"});
      BOOST_TEST(violations(t) == "");
      // three live iterations and the one whose predicate is false
      BOOST_TEST(iterations_per_frame_instance(t)["w"] == 4);
      BOOST_TEST(events_of(t, Kind::frame_created).size() == 2u);  // root and w
      BOOST_TEST(events_of(t, Kind::frame_done).size() == 2u);
      BOOST_TEST(max_outstanding_iterations(t, "w") <= 10);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_deterministic_trace_is_an_exact_message_sequence) {
  std::string text = int_const("start", 0) + int_const("n", 1) + counting_loop("w", "start", "n", 1);
  Mode actors = modes()[0];
  actors.no_shortcuts = true;
  Trace t = trace_step(parse(text), actors, {}, {"w/Exit"});
  std::vector<std::string> seen;
  for (const Event& e : t.events())
    if (e.kind == Kind::message_received && e.instance != 0) seen.push_back(received_line(t, e));
  // Iteration 0 starts with both Enter values, runs the body once and hands
  // i = 1 on as soon as NextIteration has run, before its dead Exit; the
  // predicate of iteration 1 is false: its dead NextIteration value is
  // reported (and dropped, no iteration 2 runs) and its live Exit leaves
  // the frame.
  std::vector<std::string> want = {
      "frame w <- enter w/limit",
      "frame w <- enter w/Enter",
      "iteration w/0 <- start w/Enter",
      "iteration w/0 <- start w/limit",
      "frame w <- report w/NextIteration",
      "frame w <- report",
      "frame w <- report w/Exit (dead)",
      "frame w <- report",
      "iteration w/1 <- start w/NextIteration",
      "iteration w/1 <- start w/limit",
      "frame w <- report w/NextIteration (dead)",
      "frame w <- report w/Exit",
      "frame w <- report",
  };
  BOOST_TEST(seen == want, boost::test_tools::per_element());
  BOOST_TEST(violations(t) == "");
}

// The same loop in a frame that runs its iterations: its only messages are
// the Enter values; both iterations start and end in order, every node of
// the frame runs in each of them.
BOOST_AUTO_TEST_CASE(a_frame_that_runs_its_iterations_takes_only_the_enter_messages) {
  std::string text = int_const("start", 0) + int_const("n", 1) + counting_loop("w", "start", "n", 1);
  Trace t = trace_step(parse(text), modes()[0], {}, {"w/Exit"});
  std::vector<std::string> seen;
  for (const Event& e : t.events())
    if (e.kind == Kind::message_received && e.instance != 0) seen.push_back(received_line(t, e));
  const std::vector<std::string> want = {"frame w <- enter w/limit", "frame w <- enter w/Enter"};
  BOOST_TEST(seen == want, boost::test_tools::per_element());
  BOOST_TEST(iterations_per_frame_instance(t)["w"] == 2);
  std::map<int64_t, int> ran;  // node runs of the loop frame, by iteration
  for (const Event& e : t.events())
    if (e.kind == Kind::node_ran && e.instance != 0) ++ran[e.iteration];
  BOOST_TEST(ran.size() == 2u);
  BOOST_TEST(ran[0] == ran[1]);
  BOOST_TEST(violations(t) == "");
}

BOOST_AUTO_TEST_CASE(parallel_iterations_overlap_but_never_exceed_the_window) {
  for (const Mode& m : modes()) {
    for (int p : {1, 2, 4}) {
      BOOST_TEST_CONTEXT(m.name << ", parallel_iterations " << p) {
        std::vector<Tensor> values;
        Trace t = trace_step(parse(heavy_loop(p, 64)), m, {}, {"w/Exit", "w/acc_exit"}, &values);
        BOOST_TEST(values[0].scalar_value<int32_t>() == 8);
        // each iteration: sum over 64x64 entries of 64 * 0.01 * 0.01
        BOOST_TEST(values[1].scalar_value<float>() == 8 * 64 * 64 * 64 * 0.0001f,
                   boost::test_tools::tolerance(1e-3f));
        BOOST_TEST(violations(t) == "");
        BOOST_TEST(max_outstanding_iterations(t, "w") <= p);
        if (p == 1) BOOST_TEST(!iterations_overlap(t, "w"));
        if (p > 1) BOOST_TEST(iterations_overlap(t, "w"));
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
