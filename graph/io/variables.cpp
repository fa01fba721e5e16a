// Variables and their initialisers by TensorFlow's naming convention
// (graph/io/variables.hpp).
#include "graph/io/variables.hpp"

#include <map>
#include <utility>

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

std::string checkpoint_name(const Node& n) {
  if (!is_variable_op(n.op)) return {};
  if (n.op == "VarHandleOp")
    if (const std::string* shared = n.attr<std::string>("shared_name"); shared != nullptr && !shared->empty())
      return *shared;
  return n.name;
}

Expected<RestoreByName> add_restore_by_name(Graph* g, const std::vector<std::pair<std::string, DType>>& checkpoint,
                                            const std::string& scope) {
  std::map<std::string, DType> saved(checkpoint.begin(), checkpoint.end());
  struct Restored {
    NodeId var;
    std::string name;
    DType dtype;
  };
  std::vector<Restored> vars;
  for (NodeId id = 0; id < g->num_nodes(); ++id) {
    const Node& n = g->node(id);
    const std::string name = checkpoint_name(n);
    if (name.empty()) continue;
    auto it = saved.find(name);
    if (it == saved.end()) continue;
    const auto* dtype = n.attr<DType>("dtype");
    if (dtype != nullptr && *dtype != it->second)
      return Status(Error::invalid_argument,
                    "variable '" + n.name + "' is " + ops::dtype_name(*dtype) + " but the checkpoint holds " +
                        ops::dtype_name(it->second) + " under '" + name + "'");
    vars.push_back({id, name, it->second});
  }
  RestoreByName r;
  r.variables = static_cast<int>(vars.size());
  if (vars.empty()) return r;
  auto add = [g](Node n) { return g->add_node(std::move(n)); };
  auto vector_of = [](const std::vector<std::string>& v) {
    return ops::Tensor::from_vector<std::string>(ops::Shape({static_cast<int64_t>(v.size())}), v);
  };
  Node prefix;
  prefix.name = scope + "/restore_prefix";
  prefix.op = "Placeholder";
  prefix.attrs = {{"dtype", DType::string}, {"shape", ops::PartialShape{false, {}}}};
  TF_ASSIGN_OR_RETURN(NodeId prefix_id, add(std::move(prefix)));
  std::vector<std::string> names, slices;
  ops::AttrList dtypes;
  for (const Restored& v : vars) {
    names.push_back(v.name);
    slices.emplace_back();
    dtypes.type.push_back(v.dtype);
  }
  Node names_node;
  names_node.name = scope + "/tensor_names";
  names_node.op = "Const";
  names_node.attrs = {{"dtype", DType::string}, {"value", vector_of(names)}};
  TF_ASSIGN_OR_RETURN(NodeId names_id, add(std::move(names_node)));
  Node slices_node;
  slices_node.name = scope + "/shape_and_slices";
  slices_node.op = "Const";
  slices_node.attrs = {{"dtype", DType::string}, {"value", vector_of(slices)}};
  TF_ASSIGN_OR_RETURN(NodeId slices_id, add(std::move(slices_node)));
  Node restore;
  restore.name = scope + "/RestoreV2";
  restore.op = "RestoreV2";
  restore.inputs = {{prefix_id, 0}, {names_id, 0}, {slices_id, 0}};
  restore.attrs = {{"dtypes", dtypes}};
  TF_ASSIGN_OR_RETURN(NodeId restore_id, add(std::move(restore)));
  Node all;
  all.name = scope + "/restore_all";
  all.op = "NoOp";
  for (size_t i = 0; i < vars.size(); ++i) {
    const Node& var = g->node(vars[i].var);
    Node assign;
    assign.name = scope + "/assign_" + std::to_string(i);
    assign.inputs = {{vars[i].var, 0}, {restore_id, static_cast<int32_t>(i)}};
    if (var.op == "VarHandleOp") {
      assign.op = "AssignVariableOp";
      assign.attrs = {{"dtype", vars[i].dtype}};
    } else {
      assign.op = "Assign";
      assign.attrs = {{"T", vars[i].dtype}};
    }
    TF_ASSIGN_OR_RETURN(NodeId assign_id, add(std::move(assign)));
    all.control_inputs.push_back(assign_id);
  }
  TF_RETURN_IF_ERROR(add(std::move(all)).status());
  r.prefix_tensor = scope + "/restore_prefix:0";
  r.restore_op = scope + "/restore_all";
  return r;
}

}  // namespace io
}  // namespace tagflow::graph
