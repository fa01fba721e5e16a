// FunctionLibrary: the functions of a GraphDef's FunctionDefLibrary, found
// by name, and their instantiation — a FunctionDef's body as nodes renamed
// into the caller's graph, with every body reference ("arg", "arg:i",
// "node:out_arg:idx", "node:out_arg", "^node") resolved to a flat output
// port through the producing node's OpDef (or, for a body node that calls a
// function, that function's signature), attr placeholders resolved from the
// call's attrs, `ret` and `control_ret` resolved the same way.
// Holds a pointer to the library it indexes, which must outlive it;
// immutable after construction, so thread-safe to read.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graph/graph.hpp"

namespace tensorflow {
class FunctionDef;
}

namespace tagflow::graph {
inline namespace functions {

// A data output named by node name, before the node has an id.
struct NamedEndpoint {
  std::string node;
  int port = 0;
};

// A node whose inputs are named; lowering builds these and makes a Graph
// of them at the end. node.inputs and node.control_inputs are unused.
struct NodeSpec {
  Node node;
  std::vector<NamedEndpoint> inputs;
  std::vector<std::string> control_inputs;
};

// One instantiation of a function: its body nodes under their new names.
struct FunctionBody {
  std::vector<NodeSpec> nodes;
  std::vector<NamedEndpoint> rets;        // one per flat output
  std::vector<DType> ret_types;
  std::vector<std::string> control_rets;  // node names
};

class FunctionLibrary {
 public:
  explicit FunctionLibrary(const tensorflow::FunctionDefLibrary& library);

  // nullptr if there is no function of that name.
  const tensorflow::FunctionDef* find(std::string_view name) const;
  bool empty() const { return by_name_.empty(); }

  // The dtypes of a function's inputs / outputs, one per tensor (a `N * T`
  // or type-list argument expands), with type and number attrs taken from
  // `attrs` (the call's) or the signature's defaults.
  Expected<std::vector<DType>> input_types(const tensorflow::FunctionDef& f,
                                           const ops::AttrMap& attrs) const;
  Expected<std::vector<DType>> output_types(const tensorflow::FunctionDef& f,
                                            const ops::AttrMap& attrs) const;

  // The body of `f` called with `attrs`, its flat inputs read from `args`.
  // `name_of` gives each body node's name in the caller's graph; it is
  // called once per body node, in body order.
  Expected<FunctionBody> instantiate(
      const tensorflow::FunctionDef& f, const ops::AttrMap& attrs,
      const std::vector<NamedEndpoint>& args,
      const std::function<std::string(const std::string&)>& name_of) const;

 private:
  std::unordered_map<std::string, const tensorflow::FunctionDef*> by_name_;
};

// A node's outputs as TensorFlow names them in function bodies: one
// (output arg name, tensor count) per output arg of its OpDef, or of the
// signature of the library function it calls; nullopt for an op that is
// neither. `where` prefixes errors (a missing number or type-list attr).
using OutputLayout = std::vector<std::pair<std::string, int>>;
Expected<std::optional<OutputLayout>> output_layout(const Node& n, const FunctionLibrary& lib,
                                                    const std::string& where);

// The nodes of a function body that run whenever the body runs, whether or
// not a result needs them: its control results, its stateful nodes and its
// calls of library functions (which may be stateful), as TensorFlow's
// PruneFunctionBody keeps them. The one rule of both ways a body runs: the
// function runtime runs what these and the results need, lowering makes a
// call's results wait for these. In body order, each once.
std::vector<std::string> nodes_run_for_effect(const FunctionBody& body, const FunctionLibrary& lib);

// The call's attrs completed with the defaults of the function's signature.
ops::AttrMap with_signature_defaults(const tensorflow::FunctionDef& f, ops::AttrMap attrs);

}  // namespace functions
}  // namespace tagflow::graph
