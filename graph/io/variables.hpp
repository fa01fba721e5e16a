// The variables of a TensorFlow 1.x graph and their initialisers, found by
// TensorFlow's naming convention: a variable V (VariableV2, Variable or
// VarHandleOp) is initialised by the node `V/Assign` (an Assign or
// AssignVariableOp whose input 0 is V). tf.global_variables_initializer()
// is a NoOp over exactly these; a GraphDef written without it (the
// MetaGraph's collections dropped) still has them. Stateless; thread-safe.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "graph/graph.hpp"

namespace tagflow::graph {
inline namespace io {

// The initialiser nodes of every variable of `g`, in node order. Optimiser
// slots (`V/Adam/Assign`) and accumulators (`beta1_power/Assign`) are
// variables too and are included.
std::vector<std::string> variable_initializers(const Graph& g);

// The name a checkpoint keeps variable node `n` under, as TensorFlow 1's
// Saver names it: a VarHandleOp's shared_name if it has one, else the
// node's name; empty for a node that is no variable.
std::string checkpoint_name(const Node& n);

// A restore op of the graph's own for a meta graph without a saver_def
// whose directory holds a checkpoint (TF 1 Hub modules), as TensorFlow Hub
// restores one by building a Saver over the graph's variables: one
// RestoreV2 of every variable whose checkpoint name `checkpoint` holds
// (name, dtype), each assigned (Assign, AssignVariableOp) its value, under
// one NoOp. Adds a string Placeholder `restore_prefix` for the checkpoint
// prefix and the NoOp `restore_all` (both under `scope`/); returns how
// many variables it restores (0: nothing added).
struct RestoreByName {
  std::string prefix_tensor;  // "scope/restore_prefix:0"
  std::string restore_op;     // "scope/restore_all"
  int variables = 0;
};
Expected<RestoreByName> add_restore_by_name(Graph* g, const std::vector<std::pair<std::string, DType>>& checkpoint,
                                            const std::string& scope);

}  // namespace io
}  // namespace tagflow::graph
