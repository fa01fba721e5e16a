// The graphs of the executor's multi-device suite, each with the steps to
// run on it: the partitioned runs in one process (partition_run_test.cpp)
// and across worker processes (tests/net/cluster_run_test.cpp) must give
// what one device gives.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "executor_graphs.hpp"
#include "session_test_util.hpp"

namespace tagflow::testing::partition_cases {

using ops::Tensor;

struct Step {
  actors::Feeds feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
};

struct Case {
  std::string name;
  std::function<graph::Graph()> graph;
  std::vector<Step> steps;
};

inline std::string control_trigger_graph() {
  return node("p", "Placeholder", {}, type_attr("dtype", "DT_BOOL")) + int_const("x", 5) +
         binary("sw", "Switch", "x", "p") + unary("t", "Neg", "sw:1") + unary("f", "Neg", "sw") +
         node("trigger", "ControlTrigger", {"^t", "^f"}) + int_const("after", 9, {"^trigger"}) +
         int_const("plain_after", 9, {"^t"});
}

inline std::function<graph::Graph()> text(std::string (*make)()) {
  return [make] { return parse(make()); };
}
inline std::function<graph::Graph()> corpus(const char* file) {
  return [file] { return load_corpus(file); };
}

inline std::vector<Case> cases() {
  const Tensor yes = Tensor::scalar(true), no = Tensor::scalar(false);
  return {
      {"corpus while loop", corpus("mlir_graph_while_loop.pbtxt"), {{{}, {"while/Exit"}, {}}}},
      {"corpus two-variable loop", corpus("grappler_while_loop.pbtxt"),
       {{{}, {"while/Exit", "while/Exit_1"}, {}}}},
      {"corpus cond", corpus("tfnet_cond_test.pbtxt"), {{{}, {"cond/Merge", "cond/Merge:1"}, {}}}},
      {"corpus user Send/Recv", corpus("grappler_vsched_send_recv.pbtxt"), {{{}, {"Recv"}, {}}}},
      {"corpus cond flows with control edges", corpus("ov_switch_merge_several_cond_flows.pbtxt"),
       {{{{"x", Tensor::vector<float>({10.0f, -2.5f})}}, {"AddV2_1", "Merge:1"}, {}},
        {{{"x", Tensor::vector<float>({-1.0f, 3.0f})}}, {"AddV2_1", "Merge:1"}, {}}}},
      {"corpus _SwitchN", corpus("mlir_switch_n_case_lowered.pbtxt"),
       {{{}, {"Case/merge/_9", "Case/merge/_9:1"}, {}},
        {{{"Case/branch_index", Tensor::scalar<int32_t>(1)}}, {"Case/merge/_9:1"}, {}}}},
      {"corpus nested loops with a resource variable", corpus("grappler_loops_and_resource_vars.pbtxt"),
       {{{}, {"while/Exit"}, {}}, {{}, {}, {"loop_var/Assign"}}, {{}, {"while/Exit", "while/Exit_1"}, {}}}},
      {"loop inside a cond", text(loop_in_cond),
       {{{{"pred", yes}}, {"c/Merge", "c/Merge:1"}, {}},
        {{{"pred", no}}, {"c/Merge", "c/Merge:1"}, {}},
        {{{"pred", no}}, {"c/w/Exit"}, {}}}},
      {"cond inside a loop", text(cond_in_loop), {{{}, {"w/acc_exit", "w/Exit"}, {}}}},
      {"control trigger", text(control_trigger_graph),
       {{{{"p", yes}}, {"after"}, {}}, {{{"p", no}}, {"after"}, {}}, {{{"p", no}}, {"plain_after"}, {}}}},
      {"nested loops", text(nested_loops), {{{}, {"o/Exit"}, {}}}},
      {"three nested loops", text(three_nested_loops), {{{}, {"a/s_exit", "a/Exit"}, {}}}},
      {"a loop-variable Enter read outside a Merge",
       [] {
         // w/x enters from the root without a Merge: its value lives in
         // iteration 0; later iterations give w/neg a dead input.
         std::string body = enter("w/x", "five", "w") + unary("w/neg", "Neg", "w/x") +
                            unary("w/neg2", "Identity", "w/neg") + unary("w/side_exit", "Exit", "w/neg2");
         return parse(int_const("start", 0) + int_const("n", 3) + int_const("five", 5) +
                      counting_loop("w", "start", "n", 1, 10, body));
       },
       {{{}, {"w/Exit", "w/side_exit"}, {}}}},
      {"zero-iteration loop",
       [] { return parse(int_const("start", 7) + int_const("n", 3) + counting_loop("w", "start", "n", 1)); },
       {{{}, {"w/Exit"}, {}}}},
      {"ref variable read in a loop", text(ref_variable_graph),
       {{{}, {"initialized"}, {}}, {{}, {}, {"init"}}, {{}, {"read"}, {}}, {{}, {}, {"bump"}},
        {{}, {"w/acc_exit"}, {}}}},
      {"tensor array", text(tensor_array_graph), {{{}, {"gather"}, {}}}},
      {"stack", text(stack_graph), {{{}, {"pop_1", "pop_2", "pop_3"}, {}}, {{}, {"pop_4"}, {}}}},
      {"a large tensor in a loop", text(large_tensor_loop), {{{}, {"w/acc_exit", "total"}, {}}}},
  };
}

// What a step gave, comparable across runs: values (a tensor of fixed-size
// elements with every byte, through a hash), or the error's code.
inline std::string outcome(const ops::Expected<std::vector<Tensor>>& r) {
  if (!r.ok()) return "error " + std::to_string(static_cast<int>(r.status().code()));
  std::string s;
  for (const Tensor& t : *r) {
    s += t.debug_string();
    if (t.valid() && t.raw_data() != nullptr) {
      uint64_t h = 1469598103934665603ull;  // FNV-1a
      const auto* p = static_cast<const unsigned char*>(t.raw_data());
      for (size_t i = 0; i < t.byte_size(); ++i) h = (h ^ p[i]) * 1099511628211ull;
      s += " #" + std::to_string(h);
    }
    s += "; ";
  }
  return s;
}

}  // namespace tagflow::testing::partition_cases
