// The loops the executor and network benchmarks share, as GraphDef text:
// a counting loop (`while i < n: i += 1`, n fed) and a loop whose body
// multiplies a size x size matrix by a constant one.
#pragma once

#include <string>
#include <vector>

#include "actors/executor_graphs.hpp"

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

}  // namespace tagflow::bench
