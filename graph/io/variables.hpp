// The variables of a TensorFlow 1.x graph and their initialisers, found by
// TensorFlow's naming convention: a variable V (VariableV2, Variable or
// VarHandleOp) is initialised by the node `V/Assign` (an Assign or
// AssignVariableOp whose input 0 is V). tf.global_variables_initializer()
// is a NoOp over exactly these; a GraphDef written without it (the
// MetaGraph's collections dropped) still has them. Stateless; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace tagflow::graph {
inline namespace io {

// The initialiser nodes of every variable of `g`, in node order. Optimiser
// slots (`V/Adam/Assign`) and accumulators (`beta1_power/Assign`) are
// variables too and are included.
std::vector<std::string> variable_initializers(const Graph& g);

}  // namespace io
}  // namespace tagflow::graph
