// State kept per session across steps — resource and ref variables (read
// through Ref* control-flow ops), stacks and TensorArrays in loops.
#include <boost/test/unit_test.hpp>

#include "session_test_util.hpp"
#include "test_graphs.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

namespace {

std::string float_const(const std::string& name, float v, const std::vector<std::string>& control = {}) {
  return node(name, "Const", control,
              type_attr("dtype", "DT_FLOAT") +
                  " attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: " +
                  std::to_string(v) + " } } }");
}

// A ref variable v (float scalar): `init` sets it to 1, `bump` adds 2; the
// loop w sums v over 4 iterations, reading it through RefEnter + Identity.
std::string ref_variable_graph() {
  std::string text =
      node("v", "VariableV2", {}, type_attr("dtype", "DT_FLOAT") + " attr { key: \"shape\" value { shape {} } }") +
      float_const("one", 1) + float_const("two", 2) + float_const("zero", 0) +
      node("init", "Assign", {"v", "one"}, type_attr("T", "DT_FLOAT")) +
      node("bump", "AssignAdd", {"v", "two"}, type_attr("T", "DT_FLOAT")) +
      unary("read", "Identity", "v", "DT_FLOAT") +
      node("initialized", "IsVariableInitialized", {"v"}, type_attr("dtype", "DT_FLOAT"));
  std::string body =
      node("w/v", "RefEnter", {"v"}, type_attr("T", "DT_FLOAT") +
           " attr { key: \"frame_name\" value { s: \"w\" } } attr { key: \"is_constant\" value { b: true } }") +
      enter("w/acc_enter", "zero", "w", false, 10, "DT_FLOAT") +
      merge("w/acc_merge", {"w/acc_enter", "w/acc_next"}, "DT_FLOAT") +
      binary("w/acc_switch", "Switch", "w/acc_merge", "w/LoopCond", "DT_FLOAT") +
      unary("w/acc_identity", "Identity", "w/acc_switch:1", "DT_FLOAT") +
      node("w/value", "Identity", {"w/v", "^w/Identity"}, type_attr("T", "DT_FLOAT")) +
      binary("w/acc_add", "Add", "w/acc_identity", "w/value", "DT_FLOAT") +
      unary("w/acc_next", "NextIteration", "w/acc_add", "DT_FLOAT") +
      unary("w/acc_exit", "Exit", "w/acc_switch", "DT_FLOAT");
  return text + int_const("start", 0) + int_const("n", 4) + counting_loop("w", "start", "n", 1, 10, body);
}

// squares = TensorArray(5); for i in 0..4: squares[i] = float(i * i);
// gather all — the TensorArray's flow is a loop variable.
std::string tensor_array_graph() {
  std::string text =
      int_const("size", 5) +
      node("ta", "TensorArrayV3", {"size"}, type_attr("dtype", "DT_FLOAT")) +
      int_const("start", 0);
  std::string body =
      enter("w/handle", "ta", "w", true, 10, "DT_RESOURCE") +
      enter("w/flow_enter", "ta:1", "w", false, 10, "DT_FLOAT") +
      merge("w/flow_merge", {"w/flow_enter", "w/flow_next"}, "DT_FLOAT") +
      binary("w/flow_switch", "Switch", "w/flow_merge", "w/LoopCond", "DT_FLOAT") +
      unary("w/flow_identity", "Identity", "w/flow_switch:1", "DT_FLOAT") +
      binary("w/sq", "Mul", "w/Identity", "w/Identity") +
      node("w/sqf", "Cast", {"w/sq"}, type_attr("SrcT", "DT_INT32") + " " + type_attr("DstT", "DT_FLOAT")) +
      node("w/write", "TensorArrayWriteV3", {"w/handle", "w/Identity", "w/sqf", "w/flow_identity"},
           type_attr("T", "DT_FLOAT")) +
      unary("w/flow_next", "NextIteration", "w/write", "DT_FLOAT") +
      unary("w/flow_exit", "Exit", "w/flow_switch", "DT_FLOAT");
  text += counting_loop("w", "start", "size", 1, 10, body);
  text += node("indices", "Const", {}, type_attr("dtype", "DT_INT32") +
               " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 5 } } "
               "int_val: 0 int_val: 1 int_val: 2 int_val: 3 int_val: 4 } } }");
  text += node("gather", "TensorArrayGatherV3", {"ta", "indices", "w/flow_exit"}, type_attr("dtype", "DT_FLOAT"));
  return text;
}

// A stack: push 1, 2, 3 in order (control edges), then pop twice.
std::string stack_graph() {
  return int_const("max", -1) +
         node("s", "StackV2", {"max"}, type_attr("elem_type", "DT_INT32")) +
         int_const("a", 1) + int_const("b", 2) + int_const("c", 3) +
         node("push_a", "StackPushV2", {"s", "a"}, type_attr("T", "DT_INT32")) +
         node("push_b", "StackPushV2", {"s", "b", "^push_a"}, type_attr("T", "DT_INT32")) +
         node("push_c", "StackPushV2", {"s", "c", "^push_b"}, type_attr("T", "DT_INT32")) +
         node("pop_1", "StackPopV2", {"s", "^push_c"}, type_attr("elem_type", "DT_INT32")) +
         node("pop_2", "StackPopV2", {"s", "^pop_1"}, type_attr("elem_type", "DT_INT32")) +
         node("pop_3", "StackPopV2", {"s", "^pop_2"}, type_attr("elem_type", "DT_INT32")) +
         node("pop_4", "StackPopV2", {"s", "^pop_3"}, type_attr("elem_type", "DT_INT32"));
}

}  // namespace

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
