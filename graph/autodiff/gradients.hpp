// Automatic differentiation as a graph-to-graph transformation, built the
// way TensorFlow 1.x builds it (docs/gradients.md): gradients() adds to a
// graph the nodes that compute d(sum of ys · grad_ys)/d(xs) and returns
// their outputs.
//
// Ops are differentiated by the gradient functions of a GradientRegistry
// keyed by op type (TensorFlow's RegisterGradient); the control-flow
// primitives are differentiated by gradients() itself:
//   - a cond's Switch has a Merge of its branches' gradients for gradient
//     (zeros, live exactly when the branch ran, for a branch that has
//     none), a cond's Merge a Switch of its gradient on which input it
//     forwarded (its value_index output);
//   - a while loop has a gradient loop that runs its iteration count
//     backwards: an iteration counter is added to the forward loop, every
//     forward value a gradient needs is pushed on a stack (StackV2 /
//     StackPushV2) in the forward loop and popped (StackPopV2) in the
//     gradient loop, pushes and pops ordered iteration by iteration through
//     ControlTriggers; Exit's gradient is an Enter, a loop Switch's a
//     Merge with a NextIteration back edge, a loop Merge's a Switch on the
//     gradient loop's pivot, NextIteration's the identity, Enter's an Exit
//     — or, for a loop invariant (is_constant Enter), an accumulator loop
//     variable that sums its gradient over the iterations.
// Pops are guarded by the gradient loop's image of the forward value's
// conds (popped predicates), so a value pushed only when a branch ran is
// popped only in the gradient iteration of that forward iteration.
//
// With GradientOptions::functional, If/StatelessIf, Case/StatelessCase,
// While/StatelessWhile and function calls are differentiated as functional ops
// (graph/autodiff/functional_gradients.hpp) instead.
//
// The graph must be valid (graph::validate) and stays valid; ys and xs
// must be outside every loop. The new nodes are named under one fresh name
// scope ("gradients", "gradients_1", ...).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "ops/tensor.hpp"

namespace tagflow::graph {
inline namespace autodiff {

struct Backprop;

// What a gradient function sees of one forward node and how it adds the
// nodes of its gradient. Values are graph endpoints; everything it adds goes
// into the gradient's current frame (the gradient loop of the node's loop),
// and input()/output() give the forward values as seen there (popped from
// their stacks inside loops).
class GradContext {
 public:
  GradContext(Backprop& bp, NodeId node) : bp_(bp), node_(node) {}

  const Node& node() const;
  NodeId id() const { return node_; }
  int num_inputs() const;
  int num_outputs() const;
  DType input_type(int i) const;   // base dtypes
  DType output_type(int i) const;
  // Whether a gradient is wanted for input i: its value lies on a path
  // from an x to a y. (Resource inputs get one only when wanted.)
  bool wants(int i) const;

  // The summed gradient of output i, or nullopt if none flows into it.
  std::optional<Endpoint> dy(int i);
  // dy(i), else zeros shaped like output i.
  Expected<Endpoint> dy_or_zeros(int i);
  // The forward input / output i (as seen by the gradient).
  Expected<Endpoint> input(int i);
  Expected<Endpoint> output(int i);

  // Adds a node; type attrs are inferred from the inputs. `base` names it
  // under the node's gradient scope (the op name if empty).
  Expected<std::vector<Endpoint>> op(const std::string& op_name, const std::vector<Endpoint>& inputs,
                                     ops::AttrMap attrs = {}, const std::string& base = "");
  Expected<Endpoint> op1(const std::string& op_name, const std::vector<Endpoint>& inputs,
                         ops::AttrMap attrs = {}, const std::string& base = "");
  Expected<Endpoint> constant(const ops::Tensor& value, const std::string& base = "Const");
  // A scalar of `dtype` (numeric) converted from `value`.
  Expected<Endpoint> scalar(DType dtype, double value);
  Expected<Endpoint> int_vector(const std::vector<int32_t>& values);
  DType type_of(Endpoint e) const;
  // The name scope of this gradients() call.
  const std::string& scope() const;

  // The gradient for input i (several calls add up). Inputs left unset get
  // none.
  void set(int i, Endpoint grad);
  const std::vector<std::optional<Endpoint>>& results() const { return dx_; }

  // For gradients that rewrite the forward node (functional ops given
  // extra outputs, graph/autodiff/functional_gradients.hpp): the graph, whose
  // library may grow, and the node, whose output_types must stay in step
  // with its attrs.
  Graph& graph();
  Node& mutable_node();

 private:
  Backprop& bp_;
  NodeId node_;
  std::vector<std::optional<Endpoint>> dx_;
};

using GradientFunction = std::function<Status(GradContext&)>;

class GradientRegistry {
 public:
  // Every gradient tagflow defines (graph/autodiff/gradient_functions.cpp).
  static const GradientRegistry& global();

  // A taken op name is an error.
  Status add(const std::string& op, GradientFunction fn);
  // No gradient flows through the op's inputs (TensorFlow's
  // NotDifferentiable): shapes, sizes, comparisons, random numbers.
  void add_not_differentiable(const std::string& op);

  const GradientFunction* find(std::string_view op) const;
  bool is_not_differentiable(std::string_view op) const;

 private:
  std::map<std::string, GradientFunction, std::less<>> fns_;
  std::map<std::string, bool, std::less<>> none_;
};

struct GradientOptions {
  // What an x that no y depends on gets: no gradient (an endpoint with
  // node == kNoNode) or zeros shaped like x.
  enum class Unconnected { none, zeros };
  Unconnected unconnected = Unconnected::none;
  // Tensors treated as constants: no gradient flows through them.
  std::vector<Endpoint> stop_gradients;
  // The name scope of the new nodes (made unique: "gradients_1", ...).
  std::string name_scope = "gradients";
  const GradientRegistry* registry = nullptr;  // nullptr: global()
  const ops::OpRegistry* ops = nullptr;        // nullptr: OpRegistry::global()
  // TensorFlow 2's gradients of functional ops (docs/gradients.md,
  // "Functional ops"): a function call (PartitionedCall,
  // StatefulPartitionedCall, a node calling a library function) has a call
  // of a gradient function for gradient, an If / Case an If / Case on the
  // same predicate / index over gradient branch functions, a While a While
  // over TensorList accumulators of the forward loop; what the
  // gradient needs of the forward op becomes extra outputs of it (Optionals
  // for a branch's intermediates). The forward node is rewritten at most
  // once per call. Gradients then also flow through variant tensors
  // between Optional ops and functional ops, so the gradient can be
  // differentiated again. Without it, the graph must be lowered first
  // (graph/functions/lower_functional.hpp): functional ops have no gradient.
  bool functional = false;
};

// What gradients() added for one call.
struct GradientResult {
  std::vector<Endpoint> dxs;  // one per x; node kNoNode: none
  std::string scope;          // the name scope every new node is under
  // Per forward loop differentiated: its frame name, the gradient loop's
  // frame name and the forward iteration count (an int32 output outside
  // the loop).
  struct Loop {
    std::string forward_frame;
    std::string gradient_frame;
    Endpoint count;
  };
  std::vector<Loop> loops;
};

// grad_ys: empty, or one per y (node kNoNode: ones like y). A y or x that
// is not a float tensor (or, for x, a resource variable) is an error; an
// op on a path from a y to an x with no gradient is an error naming it
// and the path.
Expected<GradientResult> gradients(Graph& g, const std::vector<Endpoint>& ys,
                                   const std::vector<Endpoint>& xs,
                                   const std::vector<Endpoint>& grad_ys = {},
                                   const GradientOptions& options = {});

// Whether gradients flow through tensors of this dtype (floating and
// complex types and their refs).
bool is_differentiable(DType t);

// Whether `op` is a TensorList op whose list inputs take gradients
// (graph/autodiff/list_gradient_functions.cpp; with GradientOptions::functional).
bool is_list_gradient_op(const std::string& op);

}  // namespace autodiff
}  // namespace tagflow::graph
