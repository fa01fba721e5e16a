// State kept per session across steps — resource and ref variables (read
// through Ref* control-flow ops), stacks and TensorArrays in loops.
#include <boost/test/unit_test.hpp>

#include "executor_graphs.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

BOOST_AUTO_TEST_SUITE(state)

BOOST_AUTO_TEST_CASE(corpus_nested_loops_with_a_resource_variable) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_corpus("grappler_loops_and_resource_vars.pbtxt"), m);
      auto before = s->run({}, {"while/Exit"});
      BOOST_REQUIRE(!before.ok());
      BOOST_TEST(before.status().message().find("not initialized") != std::string::npos,
                 before.status().message());
      must_run(*s, {}, {}, {"loop_var/Assign"});
      auto out = must_run(*s, {}, {"while/Exit", "while/Exit_1"});
      BOOST_TEST(out[0].scalar_value<int32_t>() == 3);
      BOOST_TEST(out[1].scalar_value<int32_t>() == 8);
    }
  }
}

BOOST_AUTO_TEST_CASE(ref_variables_keep_their_value_across_steps) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(ref_variable_graph()), m);
      BOOST_TEST(!must_run(*s, {}, {"initialized"})[0].scalar_value<bool>());
      BOOST_TEST(!s->run({}, {"read"}).ok());
      must_run(*s, {}, {}, {"init"});
      BOOST_TEST(must_run(*s, {}, {"initialized"})[0].scalar_value<bool>());
      BOOST_TEST(must_run(*s, {}, {"read"})[0].scalar_value<float>() == 1.0f);
      must_run(*s, {}, {}, {"bump"});
      BOOST_TEST(must_run(*s, {}, {"read"})[0].scalar_value<float>() == 3.0f);
      // every iteration reads the variable through RefEnter
      BOOST_TEST(must_run(*s, {}, {"w/acc_exit"})[0].scalar_value<float>() == 12.0f);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_tensor_array_collects_one_value_per_iteration) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(tensor_array_graph()), m);
      auto out = must_run(*s, {}, {"gather"});
      BOOST_TEST(out[0].debug_string() == "float32[5] [0,1,4,9,16]");
      // the TensorArray belongs to its step: the next step makes a new one
      BOOST_TEST(must_run(*s, {}, {"gather"})[0].debug_string() == "float32[5] [0,1,4,9,16]");
    }
  }
}

BOOST_AUTO_TEST_CASE(a_stack_pops_in_reverse_and_an_empty_pop_is_an_error) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(stack_graph()), m);
      auto out = must_run(*s, {}, {"pop_1", "pop_2", "pop_3"});
      BOOST_TEST(out[0].scalar_value<int32_t>() == 3);
      BOOST_TEST(out[1].scalar_value<int32_t>() == 2);
      BOOST_TEST(out[2].scalar_value<int32_t>() == 1);
      auto r = s->run({}, {"pop_4"});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(r.status().code() == ops::Error::out_of_range);
      BOOST_TEST(r.status().message().find("StackPopV2 'pop_4'") != std::string::npos, r.status().message());
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
