// The shape rules of the functional ops, which follow their functions
// through the library (graph/shapes/functional_shape_functions.hpp).
#include "graph/shapes/functional_shape_functions.hpp"

#include "graph/functions/functional_op.hpp"
#include "ops/op_def.hpp"
#include "ops/shape_fns.hpp"

namespace tagflow::graph {
inline namespace shapes {
namespace {

using ops::InferenceContext;
using ops::OutputInfo;
using ops::PartialShape;
namespace shape = ops::shape;

std::vector<OutputInfo> inputs_from(const InferenceContext& c, int first) {
  std::vector<OutputInfo> args;
  for (int i = first; i < c.num_inputs(); ++i) args.push_back(c.input(i));
  return args;
}

// The outputs every one of `functions` gives, generalised over them.
void call_all(InferenceContext& c, const std::vector<const ops::NameAttrList*>& functions, int first_arg) {
  if (c.call() == nullptr || functions.empty()) return;
  const std::vector<OutputInfo> args = inputs_from(c, first_arg);
  std::vector<PartialShape> out;
  for (const ops::NameAttrList* f : functions) {
    if (f == nullptr) return;
    auto r = (*c.call())(*f, args);
    if (!r || r->size() != static_cast<size_t>(c.num_outputs())) return;
    for (size_t i = 0; i < r->size(); ++i)
      out.push_back(out.size() < r->size() ? (*r)[i].shape : shape::unknown());
    if (out.size() > r->size())
      for (size_t i = 0; i < r->size(); ++i) out[i] = ops::shape::generalize(out[i], (*r)[i].shape);
    out.resize(r->size());
  }
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, out[static_cast<size_t>(i)]);
}

// If / StatelessIf / _If, Case / StatelessCase and the partitioned calls:
// every function the node calls, on the inputs after the ones the op reads
// itself. A malformed node gets no shapes here: validation and lowering
// say what is wrong with it.
Status calls_op(const Node& n, InferenceContext& c, FunctionalKind kind) {
  if (ops::shape_fns::declared_output_shapes(c)) return ok_status();
  auto op = read_functional_op(n, kind);
  if (!op.ok()) return ok_status();
  std::vector<const ops::NameAttrList*> fs;
  for (const FunctionalCallee& callee : op->callees) fs.push_back(&callee.func);
  call_all(c, fs, op->leading_inputs);
  return ok_status();
}


// While: the loop variables generalised with what the body makes of them
// until that changes nothing (a few rounds; then unknown).
Status while_op(const Node& n, InferenceContext& c) {
  if (ops::shape_fns::declared_output_shapes(c)) return ok_status();
  auto op = read_functional_op(n, FunctionalKind::while_op);
  if (!op.ok() || c.call() == nullptr || c.num_inputs() != c.num_outputs()) return ok_status();
  const ops::NameAttrList* body = &op->callee("body")->func;
  std::vector<OutputInfo> vars = inputs_from(c, 0);
  for (int round = 0; round < 8; ++round) {
    auto r = (*c.call())(*body, vars);
    if (!r || r->size() != vars.size()) return ok_status();
    bool changed = false;
    for (size_t i = 0; i < vars.size(); ++i) {
      PartialShape g = ops::shape::generalize(vars[i].shape, (*r)[i].shape);
      const bool value_kept = vars[i].value && (*r)[i].value && vars[i].value->equals(*(*r)[i].value);
      if (!(g == vars[i].shape) || (vars[i].value && !value_kept)) changed = true;
      vars[i].shape = g;
      if (!value_kept) vars[i].value.reset();
    }
    if (!changed) {
      for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, vars[static_cast<size_t>(i)].shape);
      return ok_status();
    }
  }
  return ok_status();
}

// For: what it declares, else unknown (a conservative rule: its body is
// not followed).
Status for_op(InferenceContext& c) {
  ops::shape_fns::declared_output_shapes(c);
  return ok_status();
}

}  // namespace

std::optional<Status> run_shape_function(const Node& node, InferenceContext& c) {
  switch (const FunctionalKind kind = functional_kind(node, [](const std::string&) { return false; })) {
    case FunctionalKind::if_op:
    case FunctionalKind::case_op:
    case FunctionalKind::partitioned_call: return calls_op(node, c, kind);
    case FunctionalKind::while_op: return while_op(node, c);
    case FunctionalKind::for_op: return for_op(c);
    case FunctionalKind::call:
    case FunctionalKind::none: break;
  }
  const ops::OpDef* def = node.def != nullptr ? node.def : ops::OpRegistry::global().find(node.op);
  if (def == nullptr || def->shape_function() == nullptr) return std::nullopt;
  return def->shape_function()(c);
}

}  // namespace shapes
}  // namespace tagflow::graph
