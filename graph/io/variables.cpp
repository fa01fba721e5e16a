// Variables and their initialisers by TensorFlow's naming convention
// (graph/io/variables.hpp).
#include "graph/io/variables.hpp"

namespace tagflow::graph {
inline namespace io {

namespace {

bool is_variable_op(const std::string& op) {
  return op == "VariableV2" || op == "Variable" || op == "VarHandleOp";
}

bool is_assign_op(const std::string& op) { return op == "Assign" || op == "AssignVariableOp"; }

}  // namespace

std::vector<std::string> variable_initializers(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes()) {
    if (!is_assign_op(n.op) || n.inputs.empty()) continue;
    const Node& var = g.node(n.inputs[0].node);
    if (is_variable_op(var.op) && n.name == var.name + "/Assign") out.push_back(n.name);
  }
  return out;
}

}  // namespace io
}  // namespace tagflow::graph
