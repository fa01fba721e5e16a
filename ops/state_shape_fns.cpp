// Shape functions of the ops with state or structure: variables and
// resource variables, training updates, queues, stacks, TensorArrays and
// TensorLists, optionals, checkpoints, summaries and asserts; the
// control-flow and transfer primitives (Switch, Enter, Exit,
// NextIteration pass their input's shape through; Merge is the fixed
// point's own rule, in graph/shapes/shape_inference.cpp; a _Recv has the shapes
// it declares). The functional ops' rules follow their functions and live
// with the function library (graph/shapes/functional_shape_functions.hpp).
#include "ops/shape_fns.hpp"

namespace tagflow::ops::shape_fns {



Status none(InferenceContext&) { return ok_status(); }  // no outputs, or nothing known of them

Status scalars(InferenceContext& c) {
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, shape::scalar());
  return ok_status();
}

// The shape in a `shape` attr (VariableV2).
Status shape_attr(InferenceContext& c) {
  if (const auto* s = c.attr<PartialShape>("shape")) c.set_output(0, *s);
  return ok_status();
}

// Assign: the variable takes the value's shape (validate_shape or not).
Status assign(InferenceContext& c) {
  const bool validate = c.bool_attr("validate_shape", true);
  if (validate) {
    auto m = shape::merge(c.input_shape(0), c.input_shape(1));
    c.set_output(0, m ? *m : c.input_shape(1));
  } else {
    c.set_output(0, c.input_shape(1));
  }
  return ok_status();
}

// A TensorList element_shape input: -1 (a scalar) is unknown rank.
static PartialShape element_shape(const InferenceContext& c, int i) {
  if (const Tensor* v = c.input_value(i); v != nullptr && v->rank() == 0) return shape::unknown();
  if (!c.input_shape(i).unknown_rank && c.input_shape(i).dims.empty()) return shape::unknown();
  return c.input_as_shape(i);
}

Status list_item(InferenceContext& c) {
  c.set_output(c.num_outputs() - 1, element_shape(c, c.num_inputs() - 1));
  for (int i = 0; i + 1 < c.num_outputs(); ++i) c.set_output(i, shape::scalar());
  return ok_status();
}

Status list_stack(InferenceContext& c) {
  const PartialShape e = element_shape(c, 1);
  const int64_t n = c.int_attr("num_elements", -1);
  c.set_output(0, shape::concat(shape::vector(n), e));
  return ok_status();
}

Status list_gather(InferenceContext& c) {
  const PartialShape& idx = c.input_shape(1);
  const PartialShape e = element_shape(c, 2);
  c.set_output(0, shape::concat(shape::vector(shape::dim(idx, 0)), e));
  return ok_status();
}

Status list_concat(InferenceContext& c) {
  const PartialShape e = element_shape(c, 1);
  if (!e.unknown_rank && !e.dims.empty()) {
    PartialShape out = e;
    out.dims[0] = -1;
    c.set_output(0, out);
  }
  c.set_output(1, shape::vector(-1));
  return ok_status();
}

Status tensor_array_v3(InferenceContext& c) {
  c.set_output(0, shape::scalar());  // a resource handle
  c.set_output(1, shape::scalar());
  return ok_status();
}

Status tensor_array_gather(InferenceContext& c) {
  const auto* e = c.attr<PartialShape>("element_shape");
  if (e != nullptr && !e->unknown_rank) c.set_output(0, shape::concat(shape::vector(shape::dim(c.input_shape(1), 0)), *e));
  return ok_status();
}

Status tensor_array_concat(InferenceContext& c) {
  const auto* e = c.attr<PartialShape>("element_shape_except0");
  if (e != nullptr && !e->unknown_rank) c.set_output(0, shape::concat(shape::vector(-1), *e));
  c.set_output(1, shape::vector(-1));
  return ok_status();
}

Status optional_get_value(InferenceContext& c) {
  const auto* l = c.attr<AttrList>("output_shapes");
  if (l != nullptr && l->shape.size() == static_cast<size_t>(c.num_outputs()))
    for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, l->shape[static_cast<size_t>(i)]);
  return ok_status();
}

Status switch_n(InferenceContext& c) {
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, c.input_shape(0));
  return ok_status();
}

Status switch_op(InferenceContext& c) {
  for (int i = 0; i < c.num_outputs(); ++i) {
    c.set_output(i, c.input_shape(0));
    if (c.input_value(0) != nullptr) c.set_value(i, *c.input_value(0));
  }
  return ok_status();
}

bool declared_output_shapes(InferenceContext& c) {
  for (const char* key : {"_output_shapes", "output_shapes"}) {
    const auto* l = c.attr<AttrList>(key);
    if (l == nullptr || l->shape.size() != static_cast<size_t>(c.num_outputs()) || l->shape.empty()) continue;
    for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, l->shape[static_cast<size_t>(i)]);
    return true;
  }
  return false;
}

Status recv(InferenceContext& c) {
  declared_output_shapes(c);
  return ok_status();
}

Status list_element_shape(InferenceContext& c) {
  c.set_output(0, shape::vector(-1));
  return ok_status();
}

}  // namespace tagflow::ops::shape_fns
