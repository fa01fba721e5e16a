// The graphs of the executor's tests, shared by the suites that run them on
// one partition and the property test that runs them on several
// (partition_run_test.cpp).
#pragma once

#include <string>
#include <vector>

#include "test_graphs.hpp"

namespace tagflow::testing {

inline std::string bool_placeholder(const std::string& name) {
  return node(name, "Placeholder", {}, type_attr("dtype", "DT_BOOL"));
}

// r = pred ? loop(start=0, while j < n: j += 3) : 100 — the loop in a branch.
inline std::string loop_in_cond() {
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
inline std::string cond_in_loop() {
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

inline std::string float_const(const std::string& name, float v, const std::vector<std::string>& control = {}) {
  return node(name, "Const", control,
              type_attr("dtype", "DT_FLOAT") +
                  " attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: " +
                  std::to_string(v) + " } } }");
}

// acc = ramp; 4 times: acc = acc * 0.5 + ramp, with ramp = [0, 1, ...,
// 200000] (float32, 800,004 bytes: a transfer of it crosses in parts, the
// last one short). Fetch `w/acc_exit`, and `total` (its sum).
inline std::string large_tensor_loop() {
  std::string body =
      enter("w/acc_enter", "ramp", "w", false, 10, "DT_FLOAT") +
      merge("w/acc_merge", {"w/acc_enter", "w/acc_next"}, "DT_FLOAT") +
      binary("w/acc_switch", "Switch", "w/acc_merge", "w/LoopCond", "DT_FLOAT") +
      unary("w/acc_identity", "Identity", "w/acc_switch:1", "DT_FLOAT") +
      enter("w/ramp", "ramp", "w", true, 10, "DT_FLOAT") + float_const("w/half", 0.5f, {"^w/Identity"}) +
      binary("w/scaled", "Mul", "w/acc_identity", "w/half", "DT_FLOAT") +
      binary("w/sum", "AddV2", "w/scaled", "w/ramp", "DT_FLOAT") +
      unary("w/acc_next", "NextIteration", "w/sum", "DT_FLOAT") +
      unary("w/acc_exit", "Exit", "w/acc_switch", "DT_FLOAT");
  return float_const("r0", 0.0f) + float_const("r1", 200001.0f) + float_const("r2", 1.0f) +
         node("ramp", "Range", {"r0", "r1", "r2"}, type_attr("Tidx", "DT_FLOAT")) + int_const("start", 0) +
         int_const("n", 4) + counting_loop("w", "start", "n", 1, 10, body) + int_const("axis", 0) +
         node("total", "Sum", {"w/acc_exit", "axis"}, type_attr("T", "DT_FLOAT") + type_attr("Tidx", "DT_INT32"));
}

// A ref variable v (float scalar): `init` sets it to 1, `bump` adds 2; the
// loop w sums v over 4 iterations, reading it through RefEnter + Identity.
inline std::string ref_variable_graph() {
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
inline std::string tensor_array_graph() {
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
inline std::string stack_graph() {
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

// outer: i = 0; while i < 20: i = i + inner(), where inner() counts
// j = 0; while j < 5: j += 2 (so 6): i goes 0, 6, 12, 18, 24.
inline std::string nested_loops() {
  std::string body = int_const("o/zero", 0, {"^o/Identity"}) + int_const("o/five", 5, {"^o/Identity"}) +
                     counting_loop("o/in", "o/zero", "o/five", 2) +
                     binary("o/next", "Add", "o/Identity", "o/in/Exit");
  return int_const("start", 0) + int_const("n", 20) + counting_loop("o", "start", "n", 1, 10, body, "o/next");
}

// Three loops nested: a: i < 3; b: j < 2; c: k < 4 (step 1 each); the
// innermost adds k + 1 to its sum, b sums c's sums, a sums b's: each c
// gives 1+2+3+4 = 10, each b 20, a 60.
inline std::string three_nested_loops() {
  auto level = [](const std::string& p, const std::string& inner_sum, const std::string& inner) {
    // a sum variable beside the counter: sum += inner_sum each iteration
    return enter(p + "/s_enter", p + "_zero", p, false) +
           merge(p + "/s_merge", {p + "/s_enter", p + "/s_next"}) +
           binary(p + "/s_switch", "Switch", p + "/s_merge", p + "/LoopCond") +
           unary(p + "/s_identity", "Identity", p + "/s_switch:1") + inner +
           binary(p + "/s_add", "Add", p + "/s_identity", inner_sum) +
           unary(p + "/s_next", "NextIteration", p + "/s_add") + unary(p + "/s_exit", "Exit", p + "/s_switch");
  };
  std::string c_body = level("a/b/c", "a/b/c/Add", "");
  std::string c = int_const("a/b/c_zero", 0, {"^a/b/Identity"}) + int_const("a/b/c_start", 0, {"^a/b/Identity"}) +
                  int_const("a/b/c_n", 4, {"^a/b/Identity"}) +
                  counting_loop("a/b/c", "a/b/c_start", "a/b/c_n", 1, 10, c_body);
  std::string b_body = level("a/b", "a/b/c/s_exit", c);
  std::string b = int_const("a/b_zero", 0, {"^a/Identity"}) + int_const("a/b_start", 0, {"^a/Identity"}) +
                  int_const("a/b_n", 2, {"^a/Identity"}) +
                  counting_loop("a/b", "a/b_start", "a/b_n", 1, 10, b_body);
  std::string a_body = level("a", "a/b/s_exit", b);
  return int_const("a_zero", 0) + int_const("start", 0) + int_const("n", 3) +
         counting_loop("a", "start", "n", 1, 10, a_body);
}

// `depth` loops, each nested in the one before and running one iteration:
// loop k counts from the value of loop k-1 (0 for the outermost) while it
// is below 1; its next value is the inner loop's result plus 1, so the
// outermost loop exits with `depth`. With `live_invariant`, each loop also
// carries a variable that starts from the root constant `one` through an
// invariant Enter per level — live even in dead iterations, so the inner
// loops of a dead iteration run (dead and live values mixed) and cannot be
// skipped.
inline std::string nested_chain(int depth, bool live_invariant = false) {
  std::string g = int_const("zero", 0) + int_const("one", 1);
  for (int k = 0; k < depth; ++k) {
    const std::string l = "L" + std::to_string(k);
    g += enter(l + "/enter", k == 0 ? "zero" : "L" + std::to_string(k - 1) + "/id", l) +
         merge(l + "/merge", {l + "/enter", l + "/next"}) +
         int_const(l + "/limit", 1, {"^" + l + "/merge"}) +
         binary(l + "/less", "Less", l + "/merge", l + "/limit") + node(l + "/cond", "LoopCond", {l + "/less"}) +
         binary(l + "/switch", "Switch", l + "/merge", l + "/cond") +
         unary(l + "/id", "Identity", l + "/switch:1") + int_const(l + "/step", 1, {"^" + l + "/id"}) +
         unary(l + "/exit", "Exit", l + "/switch");
    if (live_invariant) {
      const std::string from = k == 0 ? "one" : "L" + std::to_string(k - 1) + "/one_in";
      g += enter(l + "/one_in", from, l, true) + enter(l + "/v_enter", from, l) +
           merge(l + "/v_merge", {l + "/v_enter", l + "/v_next"}) +
           binary(l + "/v_switch", "Switch", l + "/v_merge", l + "/cond") +
           unary(l + "/v_id", "Identity", l + "/v_switch:1") + unary(l + "/v_next", "NextIteration", l + "/v_id") +
           unary(l + "/v_exit", "Exit", l + "/v_switch");
    }
  }
  for (int k = 0; k < depth; ++k) {
    const std::string l = "L" + std::to_string(k);
    std::string add = binary(l + "/add", "Add", k == depth - 1 ? l + "/id" : "L" + std::to_string(k + 1) + "/exit",
                             l + "/step");
    // the inner loop's live-invariant variable is needed too (not pruned)
    if (live_invariant && k + 1 < depth)
      add = node(l + "/add", "Add", {"L" + std::to_string(k + 1) + "/exit", l + "/step",
                                     "^L" + std::to_string(k + 1) + "/v_exit"}, type_attr("T", "DT_INT32"));
    g += add + unary(l + "/next", "NextIteration", l + "/add");
  }
  return g;
}


// `while i < n: i += inner()`, where inner() is a loop of one iteration that
// returns 1: n iterations of the outer loop make n frame instances of the
// inner one (frame-instance cost against counting_loop's iteration cost).
inline std::string loop_of_inner_loops() {
  std::string body = int_const("w/one", 1, {"^w/Identity"}) + enter("w/in/Enter", "w/one", "w/in") +
                     merge("w/in/Merge", {"w/in/Enter", "w/in/NextIteration"}) +
                     int_const("w/in/limit", 2, {"^w/in/Merge"}) +
                     binary("w/in/Less", "Less", "w/in/Merge", "w/in/limit") +
                     node("w/in/LoopCond", "LoopCond", {"w/in/Less"}) +
                     binary("w/in/Switch", "Switch", "w/in/Merge", "w/in/LoopCond") +
                     unary("w/in/Identity", "Identity", "w/in/Switch:1") +
                     int_const("w/in/step", 1, {"^w/in/Identity"}) +
                     binary("w/in/Add", "Add", "w/in/Identity", "w/in/step") +
                     unary("w/in/NextIteration", "NextIteration", "w/in/Add") +
                     unary("w/in/Exit", "Exit", "w/in/Switch") +
                     binary("w/next", "Sub", "w/in/Exit", "w/one") +
                     binary("w/sum", "Add", "w/Identity", "w/next");
  return int_const("start", 0) + node("n", "Placeholder", {}, type_attr("dtype", "DT_INT32")) +
         counting_loop("w", "start", "n", 1, 10, body, "w/sum");
}

}  // namespace tagflow::testing
