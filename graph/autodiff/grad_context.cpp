// Adding gradient nodes and summing gradients (graph/autodiff/backprop.hpp), and
// GradContext, what an op's gradient function sees of the walk.
#include "graph/autodiff/backprop.hpp"

#include <algorithm>
#include <deque>

#include "graph/analysis/loop_structure.hpp"
#include "graph/autodiff/functional_gradients.hpp"
#include "graph/builder/infer_attrs.hpp"
#include "graph/validate.hpp"

namespace tagflow::graph {
inline namespace autodiff {

using ops::AttrMap;
using ops::OpRole;

// Functional gradients flow through the Optionals that pass an If's
// intermediates to its gradient, and on through the ops around them:
// the list ops, and AddN, which sums a list's gradients.
bool Backprop::carries_variant_gradient(NodeId dst) const {
  const Node& n = g.node(dst);
  return n.op == "OptionalFromValue" || n.op == "OptionalGetValue" || n.op == "Identity" || n.op == "AddN" ||
         is_list_gradient_op(n.op) || is_functional_gradient_op(n, g);
}

// Whether gradients flow along an edge from output `src` into node `dst`.
bool Backprop::flows(Endpoint src, NodeId dst) const {
  if (stops.count(src)) return false;
  const DType t = type_of(src);
  if (is_differentiable(t)) return true;
  if (options.functional && ops::base_dtype(t) == DType::variant && carries_variant_gradient(dst)) return true;
  if (!allow_resource || ops::base_dtype(t) != DType::resource) return false;
  switch (role(dst)) {
    case OpRole::enter:
    case OpRole::exit:
    case OpRole::merge:
    case OpRole::switch_op:
    case OpRole::next_iteration: return true;
    default: {
      // A function reading the variable inside gives the resource
      // argument the gradient of what it read.
      const std::string& op = g.node(dst).op;
      return op == "ReadVariableOp" || op == "Identity" ||
             (options.functional && is_functional_gradient_op(g.node(dst), g));
    }
  }
}

std::string Backprop::unique_name(const std::string& base) {
  std::string want = prefix + base;
  int& count = name_counts[want];
  std::string name = want;
  while (g.find(name) != kNoNode) name = want + "_" + std::to_string(++count);
  return name;
}

Expected<NodeId> Backprop::add(const std::string& op, const std::vector<Endpoint>& inputs, AttrMap attrs,
                               std::vector<NodeId> control, const std::string& base) {
  const ops::OpDef* def = ops.find(op);
  const std::string name = unique_name(base.empty() ? op : base);
  const std::string where = "gradient node " + quoted(name) + " (" + op + ")";
  if (def == nullptr) return Status(Error::internal, where + ": op is not registered");
  std::vector<DType> types;
  for (const Endpoint& e : inputs) {
    if (e.node == kNoNode) return Status(Error::internal, where + ": an input is missing");
    types.push_back(type_of(e));
  }
  TF_RETURN_IF_ERROR(infer_type_attrs(*def, types, attrs, where));
  TF_RETURN_IF_ERROR(def->check_and_complete_attrs(attrs).with_prefix(where + ": "));
  TF_ASSIGN_OR_RETURN(std::vector<DType> in_types, def->input_types(attrs));
  TF_ASSIGN_OR_RETURN(std::vector<DType> out_types, def->output_types(attrs));
  if (in_types.size() != inputs.size())
    return Status(Error::internal, where + " takes " + std::to_string(in_types.size()) +
                                       " inputs, given " + std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!dtypes_match(types[i], in_types[i]))
      return Status(Error::internal, where + ": input " + std::to_string(i) + " is " +
                                         ops::dtype_name(types[i]) + ", expected " +
                                         ops::dtype_name(in_types[i]));
  Node n;
  n.name = name;
  n.op = op;
  n.attrs = std::move(attrs);
  n.inputs.assign(inputs.begin(), inputs.end());
  std::sort(control.begin(), control.end());
  control.erase(std::unique(control.begin(), control.end()), control.end());
  n.control_inputs = std::move(control);
  n.def = def;
  n.input_types.assign(in_types.begin(), in_types.end());
  n.output_types.assign(out_types.begin(), out_types.end());
  // The new node's frame, for the forward nodes added (the counters,
  // the stacks) that real() is asked about; -1 inside gradient frames,
  // which the analysis does not know.
  FrameId frame = kRootFrame;
  if (!inputs.empty()) {
    frame = role_of(op) == OpRole::enter ? cf.frame_of[static_cast<size_t>(inputs[0].node)]
                                         : analysis::output_frame(g, cf, inputs[0].node);
  } else if (!n.control_inputs.empty()) {
    frame = analysis::output_frame(g, cf, n.control_inputs[0]);
  }
  TF_ASSIGN_OR_RETURN(NodeId id, g.add_node(std::move(n)));
  cf.frame_of.push_back(frame);
  conds.added(id);
  return id;
}

Expected<Endpoint> Backprop::add1(const std::string& op, const std::vector<Endpoint>& inputs,
                                  AttrMap attrs, std::vector<NodeId> control,
                                  const std::string& base) {
  TF_ASSIGN_OR_RETURN(NodeId id, add(op, inputs, std::move(attrs), std::move(control), base));
  return Endpoint{id, 0};
}

// Zeros shaped like `e`; of a resource, zeros of the `held` value the
// variable holds (a variable's gradient is its value's).
Expected<Endpoint> Backprop::zeros_like(Endpoint e, DType held, const std::string& base) {
  if (ops::base_dtype(type_of(e)) == DType::resource) {
    TF_ASSIGN_OR_RETURN(e, add1("ReadVariableOp", {e}, {{"dtype", held}}, {}, "read"));
  }
  return add1("ZerosLike", {e}, {}, {}, base);
}

void Backprop::add_control(NodeId to, NodeId from) {
  auto& c = g.mutable_node(to).control_inputs;
  if (std::find(c.begin(), c.end(), from) == c.end()) c.push_back(from);
}

// A constant in context `ctx`: inside a gradient loop it runs in every
// iteration of the loop's body.
Expected<Endpoint> Backprop::constant(FrameId ctx, const ops::Tensor& value, const std::string& base) {
  std::vector<NodeId> control;
  if (ctx != kRootFrame) control.push_back(loops.at(ctx).gbody);
  return add1("Const", {}, {{"dtype", value.dtype()}, {"value", value}}, std::move(control), base);
}

AttrMap Backprop::enter_attrs(const std::string& frame, bool is_constant, int64_t parallel_iterations) {
  return {{"frame_name", frame},
          {"is_constant", is_constant},
          {"parallel_iterations", parallel_iterations}};
}

void Backprop::add_grad(Endpoint e, Endpoint grad) {
  auto& ports = grads[e.node];
  if (ports.size() <= static_cast<size_t>(e.port)) ports.resize(static_cast<size_t>(e.port) + 1);
  ports[static_cast<size_t>(e.port)].push_back(grad);
}

// The summed gradient of output `e` (AddN of several), or nullopt.
Expected<std::optional<Endpoint>> Backprop::sum(Endpoint e) {
  if (auto it = summed.find(e); it != summed.end()) return std::optional<Endpoint>(it->second);
  auto found = grads.find(e.node);
  if (found == grads.end() || found->second.size() <= static_cast<size_t>(e.port) ||
      found->second[static_cast<size_t>(e.port)].empty())
    return std::optional<Endpoint>();
  const std::vector<Endpoint>& list = found->second[static_cast<size_t>(e.port)];
  Endpoint total = list[0];
  if (list.size() > 1) {
    const std::string saved = prefix;
    prefix = scope + "/" + g.node(e.node).name + "_grad/";
    auto n = add1("AddN", list, {}, {}, "AddN");
    prefix = saved;
    if (!n.ok()) return n.status();
    total = *n;
  }
  summed.emplace(e, total);
  return std::optional<Endpoint>(total);
}

// ---- GradContext ------------------------------------------------------------------

const Node& GradContext::node() const { return bp_.g.node(node_); }
int GradContext::num_inputs() const { return static_cast<int>(node().inputs.size()); }
int GradContext::num_outputs() const { return static_cast<int>(node().output_types.size()); }
DType GradContext::input_type(int i) const {
  return ops::base_dtype(bp_.type_of(node().inputs[static_cast<size_t>(i)]));
}
DType GradContext::output_type(int i) const { return ops::base_dtype(bp_.type_of({node_, i})); }
bool GradContext::wants(int i) const {
  const Endpoint e = node().inputs[static_cast<size_t>(i)];
  // Inputs a gradient gave the node (a While's accumulators) are off every path.
  if (static_cast<size_t>(e.node) >= bp_.between.size()) return false;
  return bp_.between[static_cast<size_t>(e.node)] && bp_.flows(e, node_);
}
const std::string& GradContext::scope() const { return bp_.scope; }
Graph& GradContext::graph() { return bp_.g; }
Node& GradContext::mutable_node() { return bp_.g.mutable_node(node_); }
DType GradContext::type_of(Endpoint e) const { return ops::base_dtype(bp_.type_of(e)); }

std::optional<Endpoint> GradContext::dy(int i) {
  auto s = bp_.sum({node_, i});
  return s.ok() ? *s : std::nullopt;
}
Expected<Endpoint> GradContext::dy_or_zeros(int i) {
  TF_ASSIGN_OR_RETURN(std::optional<Endpoint> d, bp_.sum({node_, i}));
  if (d) return *d;
  TF_ASSIGN_OR_RETURN(Endpoint y, output(i));
  return op1("ZerosLike", {y});
}
Expected<Endpoint> GradContext::input(int i) {
  return bp_.real(node().inputs[static_cast<size_t>(i)], analysis::output_frame(bp_.g, bp_.cf, node_));
}
Expected<Endpoint> GradContext::output(int i) {
  return bp_.real({node_, i}, analysis::output_frame(bp_.g, bp_.cf, node_));
}

Expected<std::vector<Endpoint>> GradContext::op(const std::string& op_name,
                                                const std::vector<Endpoint>& inputs,
                                                ops::AttrMap attrs, const std::string& base) {
  std::vector<NodeId> control;
  // An op with no inputs inside a gradient loop lives in its body.
  const FrameId ctx = analysis::output_frame(bp_.g, bp_.cf, node_);
  if (inputs.empty() && ctx != kRootFrame) control.push_back(bp_.loops.at(ctx).gbody);
  TF_ASSIGN_OR_RETURN(NodeId id, bp_.add(op_name, inputs, std::move(attrs), std::move(control), base));
  std::vector<Endpoint> outs;
  for (int p = 0; p < static_cast<int>(bp_.g.node(id).output_types.size()); ++p) outs.push_back({id, p});
  return outs;
}
Expected<Endpoint> GradContext::op1(const std::string& op_name, const std::vector<Endpoint>& inputs,
                                    ops::AttrMap attrs, const std::string& base) {
  TF_ASSIGN_OR_RETURN(std::vector<Endpoint> outs, op(op_name, inputs, std::move(attrs), base));
  if (outs.empty()) return Status(Error::internal, "gradient op " + op_name + " has no output");
  return outs[0];
}
Expected<Endpoint> GradContext::constant(const ops::Tensor& value, const std::string& base) {
  return bp_.constant(analysis::output_frame(bp_.g, bp_.cf, node_), value, base);
}
Expected<Endpoint> GradContext::scalar(DType dtype, double value) {
  switch (dtype) {
    case DType::float32: return constant(ops::Tensor::scalar<float>(static_cast<float>(value)));
    case DType::float64: return constant(ops::Tensor::scalar<double>(value));
    case DType::int32: return constant(ops::Tensor::scalar<int32_t>(static_cast<int32_t>(value)));
    case DType::int64: return constant(ops::Tensor::scalar<int64_t>(static_cast<int64_t>(value)));
    default: {
      TF_ASSIGN_OR_RETURN(Endpoint d, constant(ops::Tensor::scalar<double>(value)));
      return op1("Cast", {d}, {{"DstT", dtype}});
    }
  }
}
Expected<Endpoint> GradContext::int_vector(const std::vector<int32_t>& values) {
  return constant(ops::Tensor::vector<int32_t>(values));
}
void GradContext::set(int i, Endpoint grad) {
  if (dx_.size() < node().inputs.size()) dx_.resize(node().inputs.size());
  if (i < 0 || static_cast<size_t>(i) >= dx_.size()) return;
  auto& slot = dx_[static_cast<size_t>(i)];
  if (!slot) {
    slot = grad;
    return;
  }
  auto sum = op1("AddN", {*slot, grad});
  if (sum.ok()) slot = *sum;
}

}  // namespace autodiff
}  // namespace tagflow::graph
