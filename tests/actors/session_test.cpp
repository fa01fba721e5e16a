#include <boost/test/unit_test.hpp>

#include "executor_graphs.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

BOOST_AUTO_TEST_SUITE(session)

BOOST_AUTO_TEST_CASE(corpus_while_loop_counts_to_ten) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_corpus("mlir_graph_while_loop.pbtxt"), m);
      auto out = must_run(*s, {}, {"while/Exit"});
      BOOST_TEST(out[0].debug_string() == "int32[] 10");
      // A second step in the same session gives the same answer.
      BOOST_TEST(must_run(*s, {}, {"while/Exit"})[0].debug_string() == "int32[] 10");
    }
  }
}

BOOST_AUTO_TEST_CASE(corpus_two_variable_loop_doubles_a_matrix) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_corpus("grappler_while_loop.pbtxt"), m);
      auto out = must_run(*s, {}, {"while/Exit", "while/Exit_1"});
      BOOST_TEST(out[0].scalar_value<int32_t>() == 10);
      BOOST_TEST(out[1].shape().to_string() == "[2048,2]");
      bool all_ones = true;
      for (int64_t i = 0; i < out[1].num_elements(); ++i) all_ones &= out[1].data<float>()[i] == 1.0f;
      BOOST_TEST(all_ones);
    }
  }
}

BOOST_AUTO_TEST_CASE(corpus_cond_takes_the_true_branch) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_corpus("tfnet_cond_test.pbtxt"), m);
      auto out = must_run(*s, {}, {"cond/Merge", "cond/Merge:1"});
      BOOST_TEST(ops::element_as_double(out[0], 0) == 34.0);
      BOOST_TEST(out[1].scalar_value<int32_t>() == 1);
    }
  }
}

BOOST_AUTO_TEST_CASE(feeds_replace_any_output_and_loops_take_fed_limits) {
  std::string text = int_const("start", 0) + node("n", "Placeholder", {}, type_attr("dtype", "DT_INT32")) +
                     counting_loop("w", "start", "n", 3);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(text), m);
      BOOST_TEST(must_run(*s, {{"n", Tensor::scalar<int32_t>(10)}}, {"w/Exit"})[0].scalar_value<int32_t>() == 12);
      BOOST_TEST(must_run(*s, {{"n", Tensor::scalar<int32_t>(1)}}, {"w/Exit"})[0].scalar_value<int32_t>() == 3);
      // Feeding a non-placeholder output: start the loop at 5 instead of 0.
      auto out = must_run(*s, {{"n", Tensor::scalar<int32_t>(10)}, {"start", Tensor::scalar<int32_t>(5)}}, {"w/Exit"});
      BOOST_TEST(out[0].scalar_value<int32_t>() == 11);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_loop_that_runs_zero_times_exits_with_its_start_value) {
  std::string text = int_const("start", 7) + int_const("n", 3) + counting_loop("w", "start", "n", 1);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(text), m);
      BOOST_TEST(must_run(*s, {}, {"w/Exit"})[0].scalar_value<int32_t>() == 7);
    }
  }
}

BOOST_AUTO_TEST_CASE(nested_loops_run_the_inner_loop_per_outer_iteration) {
  std::string text = nested_loops();
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(text), m);
      BOOST_TEST(must_run(*s, {}, {"o/Exit"})[0].scalar_value<int32_t>() == 24);
    }
  }
}

BOOST_AUTO_TEST_CASE(fetching_a_dead_value_is_an_error_naming_it) {
  std::string text = int_const("x", 1) + node("p", "Const", {}, type_attr("dtype", "DT_BOOL") +
                     " attr { key: \"value\" value { tensor { dtype: DT_BOOL tensor_shape {} bool_val: false } } }") +
                     binary("sw", "Switch", "x", "p");
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(text), m);
      auto r = s->run({}, {"sw:1"});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(r.status().code() == ops::Error::dead_value);
      BOOST_TEST(r.status().message().find("'sw:1' is dead at tag /") != std::string::npos);
      BOOST_TEST(must_run(*s, {}, {"sw:0"})[0].scalar_value<int32_t>() == 1);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_missing_feed_is_an_error_naming_the_placeholder) {
  std::string text = node("n", "Placeholder", {}, type_attr("dtype", "DT_INT32")) + unary("y", "Neg", "n");
  auto s = make_session(parse(text), modes()[0]);
  auto r = s->run({}, {"y"});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message().find("Placeholder 'n' must be fed") != std::string::npos);
  BOOST_TEST(must_run(*s, {{"n", Tensor::scalar<int32_t>(4)}}, {"y"})[0].scalar_value<int32_t>() == -4);
}

BOOST_AUTO_TEST_SUITE_END()
