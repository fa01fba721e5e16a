// TensorFlow-1.x-style graphs written as GraphDef text, for executor tests:
// the exact node pattern tf.while_loop and tf.cond produce (Enter, Merge,
// LoopCond, Switch, Identity, NextIteration, Exit; switch_t/switch_f pivots).
#pragma once

#include <string>
#include <vector>

#include "graph/io/import.hpp"

namespace tagflow::testing {

inline std::string node(const std::string& name, const std::string& op,
                        const std::vector<std::string>& inputs, const std::string& attrs = "") {
  std::string s = "node { name: \"" + name + "\" op: \"" + op + "\"";
  for (const auto& i : inputs) s += " input: \"" + i + "\"";
  return s + " " + attrs + " }\n";
}

inline std::string type_attr(const std::string& key, const std::string& dtype) {
  return "attr { key: \"" + key + "\" value { type: " + dtype + " } }";
}

inline std::string int_const(const std::string& name, int value,
                             const std::vector<std::string>& control = {}) {
  return node(name, "Const", control,
              type_attr("dtype", "DT_INT32") +
                  " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: " +
                  std::to_string(value) + " } } }");
}

inline std::string enter(const std::string& name, const std::string& input, const std::string& frame,
                         bool is_constant = false, int parallel_iterations = 10,
                         const std::string& dtype = "DT_INT32") {
  return node(name, "Enter", {input},
              type_attr("T", dtype) + " attr { key: \"frame_name\" value { s: \"" + frame +
                  "\" } } attr { key: \"is_constant\" value { b: " + (is_constant ? "true" : "false") +
                  " } } attr { key: \"parallel_iterations\" value { i: " +
                  std::to_string(parallel_iterations) + " } }");
}

inline std::string unary(const std::string& name, const std::string& op, const std::string& input,
                         const std::string& dtype = "DT_INT32") {
  return node(name, op, {input}, type_attr("T", dtype));
}

inline std::string binary(const std::string& name, const std::string& op, const std::string& a,
                          const std::string& b, const std::string& dtype = "DT_INT32") {
  return node(name, op, {a, b}, type_attr("T", dtype));
}

inline std::string merge(const std::string& name, const std::vector<std::string>& inputs,
                         const std::string& dtype = "DT_INT32") {
  return node(name, "Merge", inputs,
              type_attr("T", dtype) + " attr { key: \"N\" value { i: " +
                  std::to_string(inputs.size()) + " } }");
}

// `p/i = start; while p/i < limit: p/i = p/i + step` in frame `p`, where
// `start` and `limit` are endpoints of the enclosing frame (`limit` enters as
// a loop invariant). Result: `p/Exit` (the final i). `body_extra` is spliced
// into the body and may use "p/Identity" (i in the body) and "p/limit".
inline std::string counting_loop(const std::string& p, const std::string& start,
                                 const std::string& limit, int step, int parallel_iterations = 10,
                                 const std::string& body_extra = "",
                                 const std::string& next_value = "") {
  std::string next = next_value.empty() ? p + "/Add" : next_value;
  return enter(p + "/Enter", start, p, false, parallel_iterations) +
         enter(p + "/limit", limit, p, true, parallel_iterations) +
         merge(p + "/Merge", {p + "/Enter", p + "/NextIteration"}) +
         binary(p + "/Less", "Less", p + "/Merge", p + "/limit") +
         node(p + "/LoopCond", "LoopCond", {p + "/Less"}) +
         binary(p + "/Switch", "Switch", p + "/Merge", p + "/LoopCond") +
         unary(p + "/Identity", "Identity", p + "/Switch:1") +
         int_const(p + "/step", step, {"^" + p + "/Identity"}) +
         binary(p + "/Add", "Add", p + "/Identity", p + "/step") + body_extra +
         unary(p + "/NextIteration", "NextIteration", next) +
         unary(p + "/Exit", "Exit", p + "/Switch");
}

inline graph::Graph parse(const std::string& text) {
  auto g = graph::import_graph_text(text, "<test graph>");
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

}  // namespace tagflow::testing
