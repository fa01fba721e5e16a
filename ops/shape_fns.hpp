// The shape functions of the built-in ops, each registered with its op
// (OpDef::shape_fn, beside the kernel) — one rule often serves a family
// of ops. The rules are spread by op family: array_shape_fns.cpp (feeds,
// shapes, reshaping, slicing, joining, gathering), math_shape_fns.cpp
// (elementwise with NumPy broadcasting, reductions, matmul),
// nn_shape_fns.cpp (convolution, pooling, normalisation, cells) and
// state_shape_fns.cpp (variables, queues, lists, control flow). The
// functional ops' rules follow their functions through the library and
// live in graph/shapes/functional_shape_functions.hpp. What a rule sees:
// ops/shape_fn.hpp.
#pragma once

#include "ops/shape_fn.hpp"

namespace tagflow::ops::shape_fns {

// --- generic ----------------------------------------------------------------
Status none(InferenceContext&);         // no outputs, or nothing known of them
Status scalars(InferenceContext&);      // every output a scalar
Status identity(InferenceContext&);     // every output input 0's shape and value
Status identity_n(InferenceContext&);   // output i input i's
// The one output has input I's shape.
template <int I>
Status of_input(InferenceContext& c) {
  if (I < c.num_inputs()) c.set_output(0, c.input_shape(I));
  return ok_status();
}
// The one output's shape is input I's value (Fill, Empty, BroadcastTo, the
// random ops, ScatterNd, StridedSliceGrad).
template <int I>
Status from_input(InferenceContext& c) {
  c.set_output(0, c.input_as_shape(I));
  return ok_status();
}
// The shape of what a backprop op differentiates, from input I (a shape
// value, or the original tensor); rank 4 when nothing else is known.
template <int I>
Status from_value(InferenceContext& c) {
  PartialShape s = c.input_as_shape(I);
  c.set_output(0, s.unknown_rank ? shape::of_rank(4) : s);
  return ok_status();
}
// The shapes a node declares in `_output_shapes`, else a non-empty
// `output_shapes` attr, set on its outputs; false if it declares none.
bool declared_output_shapes(InferenceContext&);

// --- array ------------------------------------------------------------------
Status constant(InferenceContext&);
Status placeholder(InferenceContext&);  // its `shape` (unknown when empty before producer 22)
Status shape_of(InferenceContext&);     // Shape, ShapeN: with the value when fully known
Status size(InferenceContext&);
Status rank(InferenceContext&);
Status reshape(InferenceContext&);
Status expand_dims(InferenceContext&);
Status squeeze(InferenceContext&);
Status transpose(InferenceContext&);
Status concat_v2(InferenceContext&);
Status concat_offset(InferenceContext&);
Status pack(InferenceContext&);
Status unpack(InferenceContext&);
Status slice(InferenceContext&);
Status strided_slice(InferenceContext&);
Status tile(InferenceContext&);
Status pad(InferenceContext&);
Status gather(InferenceContext&);  // Gather, GatherV2 (axis, batch_dims)
Status gather_nd(InferenceContext&);
Status split(InferenceContext&);  // Split, SplitV
Status one_hot(InferenceContext&);
Status unique(InferenceContext&);
Status top_k(InferenceContext&);
Status dynamic_stitch(InferenceContext&);
Status unsorted_segment_sum(InferenceContext&);
Status broadcast_gradient_args(InferenceContext&);
Status string_join(InferenceContext&);

// --- math -------------------------------------------------------------------
Status unary(InferenceContext&);            // elementwise: the input's shape
Status binary(InferenceContext&);           // NumPy broadcasting, folding known ints
Status same_shape_pair(InferenceContext&);  // the *Grad ops of unary ops
Status add_n(InferenceContext&);
Status reduction(InferenceContext&);
Status matmul(InferenceContext&);        // MatMul, _FusedMatMul
Status batch_matmul(InferenceContext&);  // BatchMatMul (equal batches), V2 (broadcast)
Status select(InferenceContext&);        // Select, SelectV2
Status arg_reduce(InferenceContext&);
Status range(InferenceContext&);
Status lin_space(InferenceContext&);
Status cast(InferenceContext&);

// --- nn ---------------------------------------------------------------------
Status conv(InferenceContext&);  // Conv2D, DepthwiseConv2dNative, _FusedConv2D
Status pool(InferenceContext&);
Status bias_add(InferenceContext&);
Status bias_add_grad(InferenceContext&);
Status fused_batch_norm(InferenceContext&);
Status softmax_xent(InferenceContext&);
Status lstm_block_cell(InferenceContext&);
Status lstm_block_cell_grad(InferenceContext&);
Status gru_block_cell(InferenceContext&);
Status gru_block_cell_grad(InferenceContext&);
Status nearest_neighbors(InferenceContext&);

// --- state and control flow -------------------------------------------------
Status shape_attr(InferenceContext&);  // the shape in a `shape` attr (VariableV2)
Status assign(InferenceContext&);
Status list_item(InferenceContext&);
Status list_stack(InferenceContext&);
Status list_gather(InferenceContext&);
Status list_concat(InferenceContext&);
Status list_element_shape(InferenceContext&);
Status tensor_array_v3(InferenceContext&);
Status tensor_array_gather(InferenceContext&);
Status tensor_array_concat(InferenceContext&);
Status optional_get_value(InferenceContext&);
Status switch_op(InferenceContext&);  // Switch: both outputs the data's shape and value
Status switch_n(InferenceContext&);
Status recv(InferenceContext&);  // what the transfer declares

}  // namespace tagflow::ops::shape_fns
