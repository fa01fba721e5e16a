// Large generated graphs for the tests that bound tagflow's memory and work
// per node (docs/performance.md, "A graph of 10⁶ nodes"; bench/scale_bench.cpp
// measures the same graphs at 10^6 nodes).
#pragma once

#include <string>

#include "graph/proto/graph_def.pb.h"

namespace tagflow::graph::testing {

inline void add_float_const(tensorflow::GraphDef& def, const std::string& name, float v) {
  tensorflow::NodeDef* n = def.add_node();
  n->set_name(name);
  n->set_op("Const");
  (*n->mutable_attr())["dtype"].set_type(tensorflow::DT_FLOAT);
  tensorflow::TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(tensorflow::DT_FLOAT);
  t->mutable_tensor_shape();
  t->add_float_val(v);
}

// c = 1, x0 = 0, x_i = Add(x_{i-1}, c) for i = 1 .. n - 2: n nodes, and
// x_{n-2} = n - 2.
inline tensorflow::GraphDef chain_graph_def(int n) {
  tensorflow::GraphDef def;
  def.mutable_node()->Reserve(n);
  add_float_const(def, "c", 1);
  add_float_const(def, "x0", 0);
  for (int i = 1; i <= n - 2; ++i) {
    tensorflow::NodeDef* node = def.add_node();
    node->set_name("x" + std::to_string(i));
    node->set_op("Add");
    node->add_input("x" + std::to_string(i - 1));
    node->add_input("c");
    (*node->mutable_attr())["T"].set_type(tensorflow::DT_FLOAT);
  }
  def.mutable_versions()->set_producer(27);
  return def;
}

inline std::string chain_end(int n) { return "x" + std::to_string(n - 2); }

}  // namespace tagflow::graph::testing
