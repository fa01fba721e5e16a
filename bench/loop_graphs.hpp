// The loops the executor and network benchmarks share, as GraphDef text:
// a counting loop (`while i < n: i += 1`, n fed) and a loop whose body
// multiplies a size x size matrix by a constant one.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "actors/executor_graphs.hpp"
#include "graph/graph.hpp"

namespace tagflow::bench {

using namespace tagflow::testing;

inline std::string fill(const std::string& name, int rows, int cols, float v,
                 const std::vector<std::string>& control = {}) {
  std::string dims = "attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: " +
                     std::to_string(rows) + " int_val: " + std::to_string(cols) + " } } }";
  return node(name + "/dims", "Const", control, type_attr("dtype", "DT_INT32") + " " + dims) +
         float_const(name + "/v", v, control) +
         node(name, "Fill", {name + "/dims", name + "/v"},
              type_attr("T", "DT_FLOAT") + " " + type_attr("index_type", "DT_INT32"));
}

inline std::string counting_text() {
  return int_const("start", 0) + node("n", "Placeholder", {}, type_attr("dtype", "DT_INT32")) +
         counting_loop("w", "start", "n", 1);
}

inline std::string matmul_loop_text(int size, int parallel_iterations) {
  std::string body =
      enter("w/m_enter", "m0", "w", false, parallel_iterations, "DT_FLOAT") +
      enter("w/k", "k", "w", true, parallel_iterations, "DT_FLOAT") +
      merge("w/m_merge", {"w/m_enter", "w/m_next"}, "DT_FLOAT") +
      binary("w/m_switch", "Switch", "w/m_merge", "w/LoopCond", "DT_FLOAT") +
      unary("w/m_identity", "Identity", "w/m_switch:1", "DT_FLOAT") +
      node("w/mm", "MatMul", {"w/m_identity", "w/k"}, type_attr("T", "DT_FLOAT")) +
      unary("w/m_next", "NextIteration", "w/mm", "DT_FLOAT") +
      unary("w/m_exit", "Exit", "w/m_switch", "DT_FLOAT");
  return int_const("start", 0) + node("n", "Placeholder", {}, type_attr("dtype", "DT_INT32")) +
         fill("m0", size, size, 1.0f) + fill("k", size, size, 1.0f / static_cast<float>(size)) +
         counting_loop("w", "start", "n", 1, parallel_iterations, body);
}

// A loop whose body the split benchmarks move to another device or
// process: its text, the body's nodes, what to fetch and how many
// iterations to run.
struct SplitLoop {
  const char* what;
  std::string text;
  std::vector<std::string> body;
  const char* fetch;
  int n;
};

// The counting loop (n iterations) and the 64x64 MatMul loop (n / 10).
inline std::vector<SplitLoop> split_loops(int n) {
  return {{"while i < n: i += 1", counting_text(), {"w/Identity", "w/step", "w/Add"}, "w/Exit", n},
          {"64x64 MatMul loop", matmul_loop_text(64, 10), {"w/m_identity", "w/mm", "w/k"}, "w/m_exit",
           std::max(n / 10, 1)}};
}

// The graph of `text` with every node on CPU:0 of this process but the
// `body` nodes, which go to `other`.
inline graph::Graph with_body_on(const std::string& text, const std::vector<std::string>& body,
                                 const std::string& other) {
  graph::Graph g = parse(text);
  for (graph::NodeId id = 0; id < g.num_nodes(); ++id)
    g.mutable_node(id).device = "/job:localhost/replica:0/task:0/device:CPU:0";
  for (const std::string& name : body) g.mutable_node(g.find(name)).device = other;
  return g;
}

}  // namespace tagflow::bench
