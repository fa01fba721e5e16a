// What the functional gradients of calls, If and Case
// (graph/autodiff/functional_gradients.cpp) share with those of While
// (graph/autodiff/while_gradients.cpp): a called function instantiated as a graph
// and differentiated there, and the writing of its forward and gradient
// nodes back as library functions. Internal to graph/; plain values and
// pure functions over them.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graph/autodiff/gradients.hpp"
#include "graph/functions/function_def_writer.hpp"

namespace tensorflow {
class FunctionDef;
}

namespace tagflow::graph {
inline namespace autodiff {
namespace functional_detail {

std::string quoted(const std::string& s);
ops::NameAttrList func(const std::string& name);
ops::AttrList type_list(const std::vector<DType>& types);
// `base`, suffixed until no library function of `g` has that name.
std::string unique_function(const Graph& g, const std::string& base);
// The base dtype of output `e` (invalid if there is none).
DType out_type(const Graph& g, Endpoint e);
// Whether a functional gradient flows through tensors of dtype `t`.
bool gradient_flows(DType t);
Status validate_with(Graph& g, const GradientOptions& options, bool keep_resolved);

// One called function instantiated as a graph, and its gradient there.
// Node ids: [0, forward) the forward body; [forward, first_gradient()) the
// Placeholders of the results' gradients; from first_gradient() on the
// gradient, except the forward_extra nodes: those the gradient of a nested
// functional op added for its forward node to read (a While's initial
// accumulators), which belong to the forward body.
struct Body {
  Graph g;
  std::vector<NodeId> args;           // Placeholders, one per flat argument
  std::vector<Endpoint> rets;         // one per flat result
  std::vector<std::string> control_rets;
  bool stateful = false;
  NodeId forward = 0;
  std::vector<NodeId> dys;            // Placeholders of the results' gradients
  std::vector<Endpoint> dxs;          // per argument; node kNoNode: none
  std::vector<Endpoint> intermediates;  // forward values the gradient reads
  std::set<int> read_args;            // arguments the gradient reads
  std::map<NodeId, int> arg_index;
  std::set<NodeId> forward_extra;

  NodeId first_gradient() const { return forward + static_cast<NodeId>(dys.size()); }
  bool is_gradient(NodeId id) const { return id >= first_gradient() && forward_extra.count(id) == 0; }
  bool is_forward(NodeId id) const { return id < forward || forward_extra.count(id) != 0; }
};

Expected<Body> instantiate_body(const Graph& outer, const ops::NameAttrList& callee, const GradientOptions& options);

// Adds the gradient Placeholders of results `dy_ports` and the gradient of
// those results with respect to the arguments (those whose dtype
// gradient_flows, and the resource arguments in `resources`: the gradient
// of what the body reads of the variable), and records what the gradient
// reads of the forward body.
Status differentiate(Body& b, const std::vector<int>& dy_ports, const GradientOptions& options,
                     const std::set<int>& resources = {});

// The resource inputs of a functional node whose gradient is wanted
// (numbered from `first`, the first argument input).
std::set<int> wanted_resources(const GradContext& ctx, int first);

// A function graph being written from the nodes of a body graph: names
// are kept unless taken in either.
struct Writer {
  Graph out;
  const Graph& body;

  std::string fresh(const std::string& base) const;
  // Adds a node; nodes are resolved by validate() when the function is
  // finished.
  Expected<NodeId> add(const std::string& base, const std::string& op, ops::AttrMap attrs,
                       std::vector<Endpoint> inputs = {});
};

// A Writer whose graph has the library and versions of `outer`.
Writer writer_for(const Body& b, const Graph& outer);

// Copies the forward body of `b` (its forward_extra nodes included) into
// `w.out`, wired as in `b.g`; returns where each node went (ids below
// b.forward keep theirs when `w.out` is empty).
Expected<std::map<NodeId, NodeId>> copy_forward(const Body& b, Writer& w);

// The gradient nodes of `b` copied into a function graph. What they read
// of the forward body is looked up in `seen` (the caller fills it with the
// values it passes in: results' gradients, intermediates, arguments);
// constants are copied.
class GradientCopy {
 public:
  GradientCopy(const Body& b, Writer& w) : b_(b), w_(w) {}
  std::map<std::pair<NodeId, int>, Endpoint> seen;
  // Copies the gradient nodes and wires them; call once `seen` is filled.
  Status copy();
  // The value of body endpoint `e` in the function graph.
  Expected<Endpoint> resolve(Endpoint e);

 private:
  const Body& b_;
  Writer& w_;
  std::map<NodeId, NodeId> copied_;
};

// Validates `g` and writes it as function `spec`, its stateful nodes
// (Placeholders aside) as control results.
Expected<tensorflow::FunctionDef> finish_function(Graph& g, FunctionDefSpec spec, const GradientOptions& options);

}  // namespace functional_detail
}  // namespace autodiff
}  // namespace tagflow::graph

namespace tagflow::graph {
inline namespace autodiff {

// The gradient of a While / StatelessWhile node (graph/autodiff/while_gradients.cpp),
// as functional_gradient() for the other functional ops.
Status while_gradient(GradContext& ctx, const GradientOptions& options);

// The gradient of a For node: the node is rewritten as the While it is,
// loop variables (vars..., i, limit, delta), whose gradient while_gradient
// builds.
Status for_gradient(GradContext& ctx, const GradientOptions& options);

}  // namespace autodiff
}  // namespace tagflow::graph
