// The gradient functions of the array ops, in the form of TensorFlow's
// array_grad.py: reshapes, concatenation and splitting, slices, tiling,
// gathers (GatherV2's gradient is dense, UnsortedSegmentSum, not
// IndexedSlices), transposes, padding, reversal, scatters. Added to
// GradientRegistry::global() by gradient_functions.cpp.

#include "graph/autodiff/gradient_util.hpp"

namespace tagflow::graph {
inline namespace autodiff {

namespace {

using namespace gradient_util;

Status reshape_like_input(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint x, c.input(0));
  TRY(Endpoint sx, c.op1("Shape", {x}));
  TRY(Endpoint dx, c.op1("Reshape", {g, sx}));
  c.set(0, dx);
  return ok_status();
}

Status concat_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  const int n = c.num_inputs() - 1;
  TRY(Endpoint axis, c.input(n));
  std::vector<Endpoint> shapes;
  for (int i = 0; i < n; ++i) {
    TRY(Endpoint x, c.input(i));
    TRY(Endpoint s, c.op1("Shape", {x}));
    shapes.push_back(s);
  }
  TRY(Endpoint x0, c.input(0));
  TRY(Endpoint rank, c.op1("Rank", {x0}));
  TRY(Endpoint axis32, c.op1("Cast", {axis}, {{"DstT", DType::int32}}));
  TRY(Endpoint nonneg, c.op1("FloorMod", {axis32, rank}));
  std::vector<Endpoint> in{nonneg};
  in.insert(in.end(), shapes.begin(), shapes.end());
  TRY(std::vector<Endpoint> offsets, c.op("ConcatOffset", in, {{"N", int64_t{n}}}));
  for (int i = 0; i < n; ++i) {
    TRY(Endpoint part, c.op1("Slice", {g, offsets[static_cast<size_t>(i)], shapes[static_cast<size_t>(i)]}));
    c.set(i, part);
  }
  return ok_status();
}

Status pack_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  const int n = c.num_inputs();
  const int64_t* axis = c.node().attr<int64_t>("axis");
  TRY(std::vector<Endpoint> parts, c.op("Unpack", {g}, {{"num", int64_t{n}}, {"axis", axis ? *axis : 0}}));
  for (int i = 0; i < n; ++i) c.set(i, parts[static_cast<size_t>(i)]);
  return ok_status();
}

Status unpack_grad(C& c) {
  std::vector<Endpoint> parts;
  for (int i = 0; i < c.num_outputs(); ++i) {
    TRY(Endpoint d, c.dy_or_zeros(i));
    parts.push_back(d);
  }
  const int64_t* axis = c.node().attr<int64_t>("axis");
  TRY(Endpoint dx, c.op1("Pack", parts, {{"axis", axis ? *axis : 0}}));
  c.set(0, dx);
  return ok_status();
}

Status split_grad(C& c, int value_input, int axis_input) {
  std::vector<Endpoint> parts;
  for (int i = 0; i < c.num_outputs(); ++i) {
    TRY(Endpoint d, c.dy_or_zeros(i));
    parts.push_back(d);
  }
  TRY(Endpoint axis, c.input(axis_input));
  parts.push_back(axis);
  TRY(Endpoint dx, c.op1("ConcatV2", parts));
  c.set(value_input, dx);
  return ok_status();
}

Status slice_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint x, c.input(0));
  TRY(Endpoint begin, c.input(1));
  TRY(Endpoint sx, c.op1("Shape", {x}, {{"out_type", c.input_type(1)}}));
  TRY(Endpoint sg, c.op1("Shape", {g}, {{"out_type", c.input_type(1)}}));
  TRY(Endpoint end, c.op1("AddV2", {begin, sg}));
  TRY(Endpoint ones, c.op1("OnesLike", {begin}));
  TRY(Endpoint dx, c.op1("StridedSliceGrad", {sx, begin, end, ones, g}));
  c.set(0, dx);
  return ok_status();
}

Status strided_slice_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint x, c.input(0));
  TRY(Endpoint begin, c.input(1));
  TRY(Endpoint end, c.input(2));
  TRY(Endpoint strides, c.input(3));
  TRY(Endpoint sx, c.op1("Shape", {x}, {{"out_type", c.input_type(1)}}));
  AttrMap attrs;
  for (const char* k : {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"})
    if (const int64_t* v = c.node().attr<int64_t>(k)) attrs[k] = *v;
  TRY(Endpoint dx, c.op1("StridedSliceGrad", {sx, begin, end, strides, g}, attrs));
  c.set(0, dx);
  return ok_status();
}

Status tile_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint x, c.input(0));
  TRY(Endpoint multiples, c.input(1));
  TRY(Endpoint sx, c.op1("Shape", {x}, {{"out_type", c.input_type(1)}}));
  // [m0, s0, m1, s1, ...]: the tiled gradient reshaped so that each copy
  // is one index of an even axis, then summed over those axes.
  TRY(Endpoint paired, c.op1("Pack", {multiples, sx}, {{"axis", int64_t{1}}}));
  TRY(Endpoint minus1, c.int_vector({-1}));
  TRY(Endpoint split_shape, c.op1("Reshape", {paired, minus1}));
  TRY(Endpoint size, c.op1("Size", {split_shape}));
  TRY(Endpoint zero, c.scalar(DType::int32, 0));
  TRY(Endpoint two, c.scalar(DType::int32, 2));
  TRY(Endpoint axes, c.op1("Range", {zero, size, two}));
  TRY(Endpoint reshaped, c.op1("Reshape", {g, split_shape}));
  TRY(Endpoint dx, c.op1("Sum", {reshaped, axes}));
  c.set(0, dx);
  return ok_status();
}

Status gather_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint params, c.input(0));
  TRY(Endpoint indices, c.input(1));
  TRY(Endpoint axis, c.input(2));
  const int64_t* batch_dims = c.node().attr<int64_t>("batch_dims");
  if (batch_dims && *batch_dims != 0)
    return Status(Error::unimplemented, "GatherV2's gradient with batch_dims != 0 is not implemented");
  // Move the gathered axis to the front, sum the slices by index, move back.
  TRY(Endpoint sp, c.op1("Shape", {params}));
  TRY(Endpoint rank, c.op1("Rank", {params}));
  TRY(Endpoint axis32, c.op1("Cast", {axis}, {{"DstT", DType::int32}}));
  TRY(Endpoint a, c.op1("FloorMod", {axis32, rank}));
  TRY(Endpoint zero, c.scalar(DType::int32, 0));
  TRY(Endpoint one, c.scalar(DType::int32, 1));
  TRY(Endpoint ni, c.op1("Size", {indices}));
  TRY(Endpoint minus1, c.int_vector({-1}));
  TRY(Endpoint flat_i, c.op1("Reshape", {indices, minus1}));
  // g has shape params[:a] + indices.shape + params[a+1:]; flatten indices.
  TRY(Endpoint a1, c.op1("AddV2", {a, one}));
  TRY(Endpoint a_v, c.op1("ExpandDims", {a, zero}));
  TRY(Endpoint a1_v, c.op1("ExpandDims", {a1, zero}));
  TRY(Endpoint zero_v, c.int_vector({0}));
  TRY(Endpoint one_v, c.int_vector({1}));
  TRY(Endpoint outer, c.op1("StridedSlice", {sp, zero_v, a_v, one_v}));
  TRY(Endpoint inner, c.op1("StridedSlice", {sp, a1_v, zero_v, one_v}, {{"end_mask", int64_t{1}}}));
  TRY(Endpoint ni_v, c.op1("ExpandDims", {ni, zero}));
  TRY(Endpoint flat_shape, c.op1("ConcatV2", {outer, ni_v, inner, zero}));
  TRY(Endpoint flat_g, c.op1("Reshape", {g, flat_shape}));
  // Transpose the index axis to the front: perm = [a, 0..a-1, a+1..].
  TRY(Endpoint gr, c.op1("Rank", {flat_g}));
  TRY(Endpoint before, c.op1("Range", {zero, a, one}));
  TRY(Endpoint after, c.op1("Range", {a1, gr, one}));
  TRY(Endpoint perm, c.op1("ConcatV2", {a_v, before, after, zero}));
  TRY(Endpoint front, c.op1("Transpose", {flat_g, perm}));
  TRY(Endpoint dim, c.op1("StridedSlice", {sp, a_v, a1_v, one_v}, {{"shrink_axis_mask", int64_t{1}}}));
  TRY(Endpoint flat_i32, c.op1("Cast", {flat_i}, {{"DstT", DType::int32}}));
  TRY(Endpoint summed, c.op1("UnsortedSegmentSum", {front, flat_i32, dim}));
  TRY(Endpoint inverse, c.op1("InvertPermutation", {perm}));
  TRY(Endpoint dx, c.op1("Transpose", {summed, inverse}));
  c.set(0, dx);
  return ok_status();
}

Status transpose_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint perm, c.input(1));
  TRY(Endpoint inverse, c.op1("InvertPermutation", {perm}));
  TRY(Endpoint dx, c.op1("Transpose", {g, inverse}));
  c.set(0, dx);
  return ok_status();
}

Status fill_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint rank, c.op1("Rank", {g}));
  TRY(Endpoint zero, c.scalar(DType::int32, 0));
  TRY(Endpoint one, c.scalar(DType::int32, 1));
  TRY(Endpoint axes, c.op1("Range", {zero, rank, one}));
  TRY(Endpoint dx, c.op1("Sum", {g, axes}));
  c.set(1, dx);
  return ok_status();
}

Status broadcast_to_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint x, c.input(0));
  TRY(Endpoint sx, c.op1("Shape", {x}, {{"out_type", c.input_type(1)}}));
  TRY(Endpoint shape, c.input(1));
  TRY(std::vector<Endpoint> r, c.op("BroadcastGradientArgs", {sx, shape}));
  TRY(Endpoint summed, c.op1("Sum", {g, r[0]}));
  TRY(Endpoint dx, c.op1("Reshape", {summed, sx}));
  c.set(0, dx);
  return ok_status();
}

// Pad and PadV2: the gradient is the slice of dy where x was written.
Status pad_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint x, c.input(0));
  TRY(Endpoint paddings, c.input(1));
  const DType index = c.input_type(1);
  TRY(Endpoint sx, c.op1("Shape", {x}, {{"out_type", index}}));
  // paddings[:, 0]
  TRY(Endpoint begin0, c.int_vector({0, 0}));
  TRY(Endpoint end0, c.int_vector({0, 1}));
  TRY(Endpoint strides, c.int_vector({1, 1}));
  TRY(Endpoint before, c.op1("StridedSlice", {paddings, begin0, end0, strides},
                             {{"begin_mask", int64_t{1}}, {"end_mask", int64_t{1}},
                              {"shrink_axis_mask", int64_t{2}}}));
  TRY(Endpoint dx, c.op1("Slice", {g, before, sx}));
  c.set(0, dx);
  return ok_status();
}

// Gather (axis 0): the rows of dy summed into the rows they were taken from.
Status gather_v1_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint params, c.input(0));
  TRY(Endpoint indices, c.input(1));
  TRY(Endpoint sp, c.op1("Shape", {params}));
  TRY(Endpoint zero, c.scalar(DType::int32, 0));
  TRY(Endpoint minus1, c.int_vector({-1}));
  TRY(Endpoint zero_v, c.int_vector({0}));
  TRY(Endpoint one_v, c.int_vector({1}));
  TRY(Endpoint rows, c.op1("StridedSlice", {sp, zero_v, one_v, one_v}));
  TRY(Endpoint inner, c.op1("StridedSlice", {sp, one_v, zero_v, one_v}, {{"end_mask", int64_t{1}}}));
  TRY(Endpoint flat_shape, c.op1("ConcatV2", {minus1, inner, zero}));
  TRY(Endpoint flat_g, c.op1("Reshape", {g, flat_shape}));
  TRY(Endpoint flat_i, c.op1("Reshape", {indices, minus1}));
  TRY(Endpoint dim, c.op1("Squeeze", {rows}));
  TRY(Endpoint dx, c.op1("UnsortedSegmentSum", {flat_g, flat_i, dim}));
  c.set(0, dx);
  return ok_status();
}

// GatherNd: dy scattered back (and summed) where the tuples took it from.
Status gather_nd_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint params, c.input(0));
  TRY(Endpoint indices, c.input(1));
  TRY(Endpoint sp, c.op1("Shape", {params}, {{"out_type", c.input_type(1)}}));
  TRY(Endpoint dx, c.op1("ScatterNd", {indices, g, sp}));
  c.set(0, dx);
  return ok_status();
}

// ScatterNd: each update's gradient is dy at the slice it went to.
Status scatter_nd_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint indices, c.input(0));
  TRY(Endpoint du, c.op1("GatherNd", {g, indices}));
  c.set(1, du);
  return ok_status();
}

Status reverse_v2_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint axis, c.input(1));
  TRY(Endpoint dx, c.op1("ReverseV2", {g, axis}));
  c.set(0, dx);
  return ok_status();
}

Status reverse_sequence_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint lengths, c.input(1));
  AttrMap attrs;
  for (const char* k : {"seq_dim", "batch_dim"})
    if (const int64_t* v = c.node().attr<int64_t>(k)) attrs[k] = *v;
  TRY(Endpoint dx, c.op1("ReverseSequence", {g, lengths}, attrs));
  c.set(0, dx);
  return ok_status();
}

}  // namespace

void add_array_gradients(GradientRegistry& r) {
  // Shapes and layout.
  for (const char* op : {"Reshape", "ExpandDims", "Squeeze"}) add(r, op, reshape_like_input);
  add(r, "Transpose", transpose_grad);
  add(r, "ConcatV2", concat_grad);
  add(r, "Pack", pack_grad);
  add(r, "Unpack", unpack_grad);
  add(r, "Split", [](C& c) { return split_grad(c, 1, 0); });
  add(r, "SplitV", [](C& c) { return split_grad(c, 0, 2); });
  add(r, "Slice", slice_grad);
  add(r, "StridedSlice", strided_slice_grad);
  add(r, "Tile", tile_grad);
  add(r, "GatherV2", gather_grad);
  add(r, "Fill", fill_grad);
  add(r, "BroadcastTo", broadcast_to_grad);
  add(r, "Pad", pad_grad);
  add(r, "PadV2", pad_grad);
  add(r, "ReverseSequence", reverse_sequence_grad);
  add(r, "ReverseV2", reverse_v2_grad);
  add(r, "Gather", gather_v1_grad);
  add(r, "GatherNd", gather_nd_grad);
  add(r, "ScatterNd", scatter_nd_grad);
}

#undef TRY

}  // namespace autodiff
}  // namespace tagflow::graph
