// The gradient functions of GradientRegistry::global(): one per
// differentiable op, in the form TensorFlow's Python gradients take
// (math_grad.py, array_grad.py, nn_grad.py, tensor_array_grad.py), written
// against a GradContext. Binary elementwise ops reduce a broadcast gradient
// with BroadcastGradientArgs + Sum + Reshape; GatherV2's gradient is dense
// (UnsortedSegmentSum), not IndexedSlices.
#include <cmath>

#include "graph/gradients.hpp"

namespace tagflow::graph {

// The convolution, pooling and batch norm gradients
// (nn_gradient_functions.cpp).
void add_nn_gradients(GradientRegistry& r);
// The TensorList ops' gradients (list_gradient_functions.cpp).
void add_list_gradients(GradientRegistry& r);

namespace {

using C = GradContext;
using ops::AttrMap;

#define TRY(lhs, expr) TF_ASSIGN_OR_RETURN(lhs, expr)

Expected<Endpoint> need_dy(C& c, int i) {
  std::optional<Endpoint> d = c.dy(i);
  if (d) return *d;
  return c.dy_or_zeros(i);
}

// grad (shaped like the broadcast result) summed down to input i's shape.
Expected<Endpoint> unbroadcast(C& c, Endpoint grad, int i, int other) {
  TRY(Endpoint x, c.input(i));
  TRY(Endpoint y, c.input(other));
  TRY(Endpoint sx, c.op1("Shape", {x}));
  TRY(Endpoint sy, c.op1("Shape", {y}));
  TRY(std::vector<Endpoint> r, c.op("BroadcastGradientArgs", {sx, sy}));
  TRY(Endpoint summed, c.op1("Sum", {grad, r[0]}, {{"keep_dims", false}}));
  return c.op1("Reshape", {summed, sx});
}

// Sets both inputs' gradients of a binary op from the unreduced gx, gy.
Status set_binary(C& c, std::optional<Endpoint> gx, std::optional<Endpoint> gy) {
  if (gx) {
    TRY(Endpoint r, unbroadcast(c, *gx, 0, 1));
    c.set(0, r);
  }
  if (gy) {
    TRY(Endpoint r, unbroadcast(c, *gy, 1, 0));
    c.set(1, r);
  }
  return ok_status();
}

Status identity_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  c.set(0, g);
  return ok_status();
}

// y = f(x) with dy/dx = gradient_op(y, g) (SigmoidGrad, TanhGrad, ...).
GradientFunction by_output(const char* op) {
  return [op](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint y, c.output(0));
    TRY(Endpoint dx, c.op1(op, {y, g}));
    c.set(0, dx);
    return ok_status();
  };
}

// The shape `x` keeps after reducing along `axes` with keep_dims.
Expected<Endpoint> kept_shape(C& c, Endpoint x, Endpoint axes) {
  TRY(Endpoint kept, c.op1("Sum", {x, axes}, {{"keep_dims", true}}, "kept"));
  return c.op1("Shape", {kept});
}

Status sum_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint x, c.input(0));
  TRY(Endpoint axes, c.input(1));
  TRY(Endpoint kept, kept_shape(c, x, axes));
  TRY(Endpoint shaped, c.op1("Reshape", {g, kept}));
  TRY(Endpoint sx, c.op1("Shape", {x}));
  TRY(Endpoint dx, c.op1("BroadcastTo", {shaped, sx}));
  c.set(0, dx);
  return ok_status();
}

Status mean_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint x, c.input(0));
  TRY(Endpoint y, c.output(0));
  TRY(Endpoint axes, c.input(1));
  TRY(Endpoint kept, kept_shape(c, x, axes));
  TRY(Endpoint shaped, c.op1("Reshape", {g, kept}));
  TRY(Endpoint sx, c.op1("Shape", {x}));
  TRY(Endpoint spread, c.op1("BroadcastTo", {shaped, sx}));
  TRY(Endpoint nx, c.op1("Size", {x}));
  TRY(Endpoint ny, c.op1("Size", {y}));
  TRY(Endpoint one, c.scalar(DType::int32, 1));
  TRY(Endpoint ny1, c.op1("Maximum", {ny, one}));
  TRY(Endpoint count, c.op1("FloorDiv", {nx, ny1}));
  TRY(Endpoint countf, c.op1("Cast", {count}, {{"DstT", c.output_type(0)}}));
  TRY(Endpoint dx, c.op1("RealDiv", {spread, countf}));
  c.set(0, dx);
  return ok_status();
}

// Max and Min: the gradient is shared by the elements equal to the result.
Status extremum_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint x, c.input(0));
  TRY(Endpoint y, c.output(0));
  TRY(Endpoint axes, c.input(1));
  TRY(Endpoint kept, kept_shape(c, x, axes));
  TRY(Endpoint yk, c.op1("Reshape", {y, kept}));
  TRY(Endpoint gk, c.op1("Reshape", {g, kept}));
  TRY(Endpoint eq, c.op1("Equal", {yk, x}));
  TRY(Endpoint ind, c.op1("Cast", {eq}, {{"DstT", c.input_type(0)}}));
  TRY(Endpoint n, c.op1("Sum", {ind, axes}, {{"keep_dims", true}}));
  TRY(Endpoint share, c.op1("RealDiv", {ind, n}));
  TRY(Endpoint dx, c.op1("Mul", {share, gk}));
  c.set(0, dx);
  return ok_status();
}

Status matmul_grad(C& c, const char* op, const char* ta_attr, const char* tb_attr) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint a, c.input(0));
  TRY(Endpoint b, c.input(1));
  const bool* pta = c.node().attr<bool>(ta_attr);
  const bool* ptb = c.node().attr<bool>(tb_attr);
  const bool ta = pta && *pta, tb = ptb && *ptb;
  auto mm = [&](Endpoint x, Endpoint y, bool tx, bool ty) {
    return c.op1(op, {x, y}, {{ta_attr, tx}, {tb_attr, ty}});
  };
  Expected<Endpoint> ga = Status(Error::internal, "unset"), gb = ga;
  if (!ta && !tb) {
    ga = mm(g, b, false, true);
    gb = mm(a, g, true, false);
  } else if (!ta && tb) {
    ga = mm(g, b, false, false);
    gb = mm(g, a, true, false);
  } else if (ta && !tb) {
    ga = mm(b, g, false, true);
    gb = mm(a, g, false, false);
  } else {
    ga = mm(b, g, true, true);
    gb = mm(g, a, true, true);
  }
  if (!ga.ok()) return ga.status();
  if (!gb.ok()) return gb.status();
  if (std::string(op) == "BatchMatMulV2") {
    // Batch dimensions broadcast: sum the gradients over the broadcast ones.
    TRY(Endpoint sa, c.op1("Shape", {a}));
    TRY(Endpoint sb, c.op1("Shape", {b}));
    TRY(Endpoint zero, c.int_vector({0}));
    TRY(Endpoint minus2, c.int_vector({-2}));
    TRY(Endpoint one, c.int_vector({1}));
    TRY(Endpoint ba, c.op1("StridedSlice", {sa, zero, minus2, one}));
    TRY(Endpoint bb, c.op1("StridedSlice", {sb, zero, minus2, one}));
    TRY(std::vector<Endpoint> r, c.op("BroadcastGradientArgs", {ba, bb}));
    TRY(Endpoint ra, c.op1("Sum", {*ga, r[0]}));
    TRY(Endpoint rb, c.op1("Sum", {*gb, r[1]}));
    TRY(Endpoint da, c.op1("Reshape", {ra, sa}));
    TRY(Endpoint db, c.op1("Reshape", {rb, sb}));
    c.set(0, da);
    c.set(1, db);
    return ok_status();
  }
  c.set(0, *ga);
  c.set(1, *gb);
  return ok_status();
}

Status reshape_like_input(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint x, c.input(0));
  TRY(Endpoint sx, c.op1("Shape", {x}));
  TRY(Endpoint dx, c.op1("Reshape", {g, sx}));
  c.set(0, dx);
  return ok_status();
}

Status select_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint cond, c.input(0));
  TRY(Endpoint zeros, c.op1("ZerosLike", {g}));
  const bool v2 = c.node().op == "SelectV2";
  TRY(Endpoint gt, c.op1(v2 ? "SelectV2" : "Select", {cond, g, zeros}));
  TRY(Endpoint ge, c.op1(v2 ? "SelectV2" : "Select", {cond, zeros, g}));
  if (!v2) {
    c.set(1, gt);
    c.set(2, ge);
    return ok_status();
  }
  TRY(Endpoint rt, unbroadcast(c, gt, 1, 2));
  TRY(Endpoint re, unbroadcast(c, ge, 2, 1));
  c.set(1, rt);
  c.set(2, re);
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

Status softmax_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint y, c.output(0));
  TRY(Endpoint gy, c.op1("Mul", {g, y}));
  TRY(Endpoint last, c.int_vector({-1}));
  TRY(Endpoint s, c.op1("Sum", {gy, last}, {{"keep_dims", true}}));
  TRY(Endpoint diff, c.op1("Sub", {g, s}));
  TRY(Endpoint dx, c.op1("Mul", {diff, y}));
  c.set(0, dx);
  return ok_status();
}

Status log_softmax_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint y, c.output(0));
  TRY(Endpoint last, c.int_vector({-1}));
  TRY(Endpoint s, c.op1("Sum", {g, last}, {{"keep_dims", true}}));
  TRY(Endpoint p, c.op1("Exp", {y}));
  TRY(Endpoint sp, c.op1("Mul", {s, p}));
  TRY(Endpoint dx, c.op1("Sub", {g, sp}));
  c.set(0, dx);
  return ok_status();
}

Status cross_entropy_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint backprop, c.output(1));
  TRY(Endpoint minus1, c.scalar(DType::int32, -1));
  TRY(Endpoint ge, c.op1("ExpandDims", {g, minus1}));
  TRY(Endpoint dx, c.op1("Mul", {ge, backprop}));
  c.set(0, dx);
  return ok_status();
}

Status bias_add_grad(C& c) {
  TRY(Endpoint g, need_dy(c, 0));
  c.set(0, g);
  AttrMap attrs;
  if (const std::string* f = c.node().attr<std::string>("data_format")) attrs["data_format"] = *f;
  TRY(Endpoint db, c.op1("BiasAddGrad", {g}, attrs));
  c.set(1, db);
  return ok_status();
}

Status cast_grad(C& c) {
  if (!is_differentiable(c.input_type(0))) return ok_status();
  TRY(Endpoint g, need_dy(c, 0));
  TRY(Endpoint dx, c.op1("Cast", {g}, {{"DstT", c.input_type(0)}}));
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

// y = f(x) with dx = gradient_op(dy, input or output).
GradientFunction grad_op_of(const char* op, bool of_output) {
  return [op, of_output](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint v, of_output ? c.output(0) : c.input(0));
    TRY(Endpoint dx, c.op1(op, {g, v}));
    c.set(0, dx);
    return ok_status();
  };
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

// --- TensorArrays: gradients go through a gradient array of each array
// (TensorArrayGradV3, one per gradients() call), carried by the flow.

// One gradient array per array and gradients() call: TensorFlow's
// `source` is the gradient's name scope too.
std::string source_of(C& c) { return c.scope(); }

// Read and Gather (handle, index or indices, flow -> value): the gradient
// is written into the gradient array at the same place by `writer` (Write,
// Scatter); its flow is the forward flow's gradient.
GradientFunction ta_read_grad(const char* writer) {
  return [writer](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint handle, c.input(0));
    TRY(Endpoint where, c.input(1));
    TRY(Endpoint flow, c.input(2));
    TRY(std::vector<Endpoint> ga, c.op("TensorArrayGradV3", {handle, flow}, {{"source", source_of(c)}}));
    TRY(Endpoint w, c.op1(writer, {ga[0], where, g, ga[1]}));
    c.set(2, w);
    return ok_status();
  };
}

// Write and Scatter (handle, index or indices, value, flow -> flow): the
// value's gradient is read back from the gradient array by `reader` (Read,
// Gather) once the flow's gradient says it was written.
GradientFunction ta_write_grad(const char* reader) {
  return [reader](C& c) -> Status {
    TRY(Endpoint flow, need_dy(c, 0));
    TRY(Endpoint handle, c.input(0));
    TRY(Endpoint where, c.input(1));
    TRY(std::vector<Endpoint> ga, c.op("TensorArrayGradV3", {handle, flow}, {{"source", source_of(c)}}));
    TRY(Endpoint value, c.op1(reader, {ga[0], where, ga[1]}, {{"dtype", c.input_type(2)}}));
    c.set(2, value);
    c.set(3, flow);
    return ok_status();
  };
}

GradientRegistry make_global() {
  GradientRegistry r;
  auto add = [&r](const char* op, GradientFunction fn) { (void)r.add(op, std::move(fn)); };

  for (const char* op : {"Identity", "Snapshot", "ReadVariableOp", "StopGradientIdentity", "PlaceholderWithDefault"})
    add(op, identity_grad);
  add("IdentityN", [](C& c) -> Status {
    for (int i = 0; i < c.num_outputs(); ++i)
      if (auto d = c.dy(i)) c.set(i, *d);
    return ok_status();
  });
  add("PreventGradient", [](C& c) -> Status {
    const std::string* m = c.node().attr<std::string>("message");
    return Status(Error::invalid_argument,
                  "gradient explicitly prevented on node '" + c.node().name + "'" +
                      (m && !m->empty() ? ": " + *m : std::string()));
  });

  // Optionals (TensorFlow's optional_grad.py): the gradient of wrapping is
  // unwrapping, and back. They carry an If's intermediates to its
  // functional gradient, so a gradient of that gradient passes them.
  add("OptionalFromValue", [](C& c) -> Status {
    std::optional<Endpoint> d = c.dy(0);
    if (!d) return ok_status();
    std::vector<DType> types;
    ops::AttrList shapes;
    for (int i = 0; i < c.num_inputs(); ++i) {
      types.push_back(c.input_type(i));
      shapes.shape.push_back(ops::PartialShape{true, {}});
    }
    ops::AttrList type_list;
    type_list.type = types;
    TRY(std::vector<Endpoint> values,
        c.op("OptionalGetValue", {*d}, {{"output_types", type_list}, {"output_shapes", shapes}}));
    // Lists among the components (a nested loop's accumulators) take
    // gradients too.
    for (int i = 0; i < c.num_inputs(); ++i)
      if (is_differentiable(types[static_cast<size_t>(i)]) || types[static_cast<size_t>(i)] == DType::variant)
        c.set(i, values[static_cast<size_t>(i)]);
    return ok_status();
  });
  add("OptionalGetValue", [](C& c) -> Status {
    std::vector<Endpoint> components;
    for (int i = 0; i < c.num_outputs(); ++i) {
      TRY(Endpoint d, c.dy_or_zeros(i));
      components.push_back(d);
    }
    TRY(Endpoint wrapped, c.op1("OptionalFromValue", components));
    c.set(0, wrapped);
    return ok_status();
  });

  // Binary elementwise math.
  for (const char* op : {"Add", "AddV2"})
    add(op, [](C& c) -> Status {
      TRY(Endpoint g, need_dy(c, 0));
      return set_binary(c, g, g);
    });
  add("Sub", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint ng, c.op1("Neg", {g}));
    return set_binary(c, g, ng);
  });
  add("Mul", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint y, c.input(1));
    TRY(Endpoint gx, c.op1("Mul", {g, y}));
    TRY(Endpoint gy, c.op1("Mul", {x, g}));
    return set_binary(c, gx, gy);
  });
  for (const char* op : {"RealDiv", "Div"})
    add(op, [](C& c) -> Status {
      TRY(Endpoint g, need_dy(c, 0));
      TRY(Endpoint x, c.input(0));
      TRY(Endpoint y, c.input(1));
      TRY(Endpoint gx, c.op1("RealDiv", {g, y}));
      TRY(Endpoint nx, c.op1("Neg", {x}));
      TRY(Endpoint q1, c.op1("RealDiv", {nx, y}));
      TRY(Endpoint q2, c.op1("RealDiv", {q1, y}));
      TRY(Endpoint gy, c.op1("Mul", {g, q2}));
      return set_binary(c, gx, gy);
    });
  for (const char* op : {"Maximum", "Minimum"})
    add(op, [op](C& c) -> Status {
      TRY(Endpoint g, need_dy(c, 0));
      TRY(Endpoint x, c.input(0));
      TRY(Endpoint y, c.input(1));
      TRY(Endpoint mask, c.op1(std::string(op) == "Maximum" ? "GreaterEqual" : "LessEqual", {x, y}));
      TRY(Endpoint sx, c.op1("Shape", {x}));
      TRY(Endpoint sy, c.op1("Shape", {y}));
      TRY(std::vector<Endpoint> bs, c.op("BroadcastGradientArgs", {sx, sy}));
      (void)bs;
      TRY(Endpoint zeros, c.op1("ZerosLike", {g}));
      TRY(Endpoint gx, c.op1("SelectV2", {mask, g, zeros}));
      TRY(Endpoint gy, c.op1("SelectV2", {mask, zeros, g}));
      return set_binary(c, gx, gy);
    });
  add("SquaredDifference", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint y, c.input(1));
    TRY(Endpoint two, c.scalar(c.input_type(0), 2));
    TRY(Endpoint d, c.op1("Sub", {x, y}));
    TRY(Endpoint d2, c.op1("Mul", {two, d}));
    TRY(Endpoint gx, c.op1("Mul", {g, d2}));
    TRY(Endpoint gy, c.op1("Neg", {gx}));
    return set_binary(c, gx, gy);
  });
  add("Pow", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint y, c.input(1));
    TRY(Endpoint z, c.output(0));
    TRY(Endpoint one, c.scalar(c.input_type(0), 1));
    TRY(Endpoint ym1, c.op1("Sub", {y, one}));
    TRY(Endpoint p, c.op1("Pow", {x, ym1}));
    TRY(Endpoint yp, c.op1("Mul", {y, p}));
    TRY(Endpoint gx, c.op1("Mul", {g, yp}));
    // d/dy = z * log(x) where x > 0, else 0.
    TRY(Endpoint zero, c.scalar(c.input_type(0), 0));
    TRY(Endpoint pos, c.op1("Greater", {x, zero}));
    TRY(Endpoint ones, c.op1("OnesLike", {x}));
    TRY(Endpoint safe, c.op1("SelectV2", {pos, x, ones}));
    TRY(Endpoint logx, c.op1("Log", {safe}));
    TRY(Endpoint zeros, c.op1("ZerosLike", {x}));
    TRY(Endpoint logm, c.op1("SelectV2", {pos, logx, zeros}));
    TRY(Endpoint zl, c.op1("Mul", {z, logm}));
    TRY(Endpoint gy, c.op1("Mul", {g, zl}));
    return set_binary(c, gx, gy);
  });
  add("FloorMod", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint y, c.input(1));
    TRY(Endpoint q, c.op1("FloorDiv", {x, y}));
    TRY(Endpoint nq, c.op1("Neg", {q}));
    TRY(Endpoint gy, c.op1("Mul", {g, nq}));
    return set_binary(c, g, gy);
  });
  add("BiasAdd", bias_add_grad);
  add("BiasAddV1", bias_add_grad);
  add("AddN", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    for (int i = 0; i < c.num_inputs(); ++i) c.set(i, g);
    return ok_status();
  });

  // Unary.
  add("Neg", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint dx, c.op1("Neg", {g}));
    c.set(0, dx);
    return ok_status();
  });
  add("Abs", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint s, c.op1("Sign", {x}));
    TRY(Endpoint dx, c.op1("Mul", {g, s}));
    c.set(0, dx);
    return ok_status();
  });
  add("Square", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint two, c.scalar(c.input_type(0), 2));
    TRY(Endpoint x2, c.op1("Mul", {two, x}));
    TRY(Endpoint dx, c.op1("Mul", {g, x2}));
    c.set(0, dx);
    return ok_status();
  });
  add("Exp", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint y, c.output(0));
    TRY(Endpoint dx, c.op1("Mul", {g, y}));
    c.set(0, dx);
    return ok_status();
  });
  add("Log", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint dx, c.op1("RealDiv", {g, x}));
    c.set(0, dx);
    return ok_status();
  });
  add("Sin", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint cos, c.op1("Cos", {x}));
    TRY(Endpoint dx, c.op1("Mul", {g, cos}));
    c.set(0, dx);
    return ok_status();
  });
  add("Cos", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint sin, c.op1("Sin", {x}));
    TRY(Endpoint gs, c.op1("Mul", {g, sin}));
    TRY(Endpoint dx, c.op1("Neg", {gs}));
    c.set(0, dx);
    return ok_status();
  });
  add("Sqrt", by_output("SqrtGrad"));
  add("Rsqrt", by_output("RsqrtGrad"));
  add("Tanh", by_output("TanhGrad"));
  add("Sigmoid", by_output("SigmoidGrad"));
  add("Reciprocal", by_output("ReciprocalGrad"));
  // The gradients of those gradients (math_grad.py _TanhGradGrad,
  // _SigmoidGradGrad), for second derivatives: TanhGrad(y, g) = g (1 - y²),
  // SigmoidGrad(y, g) = g y (1 - y).
  add("TanhGrad", [](C& c) -> Status {
    TRY(Endpoint a, need_dy(c, 0));
    TRY(Endpoint y, c.input(0));
    TRY(Endpoint g, c.input(1));
    TRY(Endpoint minus_two, c.scalar(c.input_type(0), -2.0));
    TRY(Endpoint ag, c.op1("Mul", {a, g}));
    TRY(Endpoint agy, c.op1("Mul", {ag, y}));
    TRY(Endpoint dy, c.op1("Mul", {agy, minus_two}));
    TRY(Endpoint dg, c.op1("TanhGrad", {y, a}));
    c.set(0, dy);
    c.set(1, dg);
    return ok_status();
  });
  add("SigmoidGrad", [](C& c) -> Status {
    TRY(Endpoint a, need_dy(c, 0));
    TRY(Endpoint y, c.input(0));
    TRY(Endpoint g, c.input(1));
    TRY(Endpoint one, c.scalar(c.input_type(0), 1.0));
    TRY(Endpoint two, c.scalar(c.input_type(0), 2.0));
    TRY(Endpoint two_y, c.op1("Mul", {two, y}));
    TRY(Endpoint slope, c.op1("Sub", {one, two_y}));
    TRY(Endpoint ag, c.op1("Mul", {a, g}));
    TRY(Endpoint dy, c.op1("Mul", {ag, slope}));
    TRY(Endpoint dg, c.op1("SigmoidGrad", {y, a}));
    c.set(0, dy);
    c.set(1, dg);
    return ok_status();
  });
  add("Relu", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint y, c.output(0));
    TRY(Endpoint dx, c.op1("ReluGrad", {g, y}));
    c.set(0, dx);
    return ok_status();
  });
  add("Cast", cast_grad);
  add("Softmax", softmax_grad);
  add("LogSoftmax", log_softmax_grad);
  add("SoftmaxCrossEntropyWithLogits", cross_entropy_grad);
  add("SparseSoftmaxCrossEntropyWithLogits", cross_entropy_grad);
  add_nn_gradients(r);
  add_list_gradients(r);

  // Matrix products.
  add("MatMul", [](C& c) { return matmul_grad(c, "MatMul", "transpose_a", "transpose_b"); });
  add("BatchMatMul", [](C& c) { return matmul_grad(c, "BatchMatMul", "adj_x", "adj_y"); });
  add("BatchMatMulV2", [](C& c) { return matmul_grad(c, "BatchMatMulV2", "adj_x", "adj_y"); });

  // Reductions.
  add("Sum", sum_grad);
  add("Mean", mean_grad);
  add("Max", extremum_grad);
  add("Min", extremum_grad);

  // Shapes and layout.
  for (const char* op : {"Reshape", "ExpandDims", "Squeeze"}) add(op, reshape_like_input);
  add("Transpose", transpose_grad);
  add("ConcatV2", concat_grad);
  add("Pack", pack_grad);
  add("Unpack", unpack_grad);
  add("Split", [](C& c) { return split_grad(c, 1, 0); });
  add("SplitV", [](C& c) { return split_grad(c, 0, 2); });
  add("Slice", slice_grad);
  add("StridedSlice", strided_slice_grad);
  add("Tile", tile_grad);
  add("GatherV2", gather_grad);
  add("Select", select_grad);
  add("SelectV2", select_grad);
  add("Fill", fill_grad);
  add("BroadcastTo", broadcast_to_grad);
  add("Pad", pad_grad);
  add("PadV2", pad_grad);
  add("ReverseSequence", reverse_sequence_grad);
  add("ReverseV2", reverse_v2_grad);
  add("Gather", gather_v1_grad);
  add("GatherNd", gather_nd_grad);
  add("ScatterNd", scatter_nd_grad);
  add("Elu", grad_op_of("EluGrad", true));
  add("Relu6", grad_op_of("Relu6Grad", false));
  add("Softsign", grad_op_of("SoftsignGrad", false));

  // TensorArrays.
  add("TensorArrayReadV3", ta_read_grad("TensorArrayWriteV3"));
  add("TensorArrayWriteV3", ta_write_grad("TensorArrayReadV3"));
  add("TensorArrayGatherV3", ta_read_grad("TensorArrayScatterV3"));
  add("TensorArrayScatterV3", ta_write_grad("TensorArrayGatherV3"));

  for (const char* op :
       {"StopGradient", "Shape", "ShapeN", "Size", "Rank", "ZerosLike", "OnesLike", "Range",
        "OneHot", "ArgMax", "ArgMin", "Equal", "NotEqual", "Less", "LessEqual", "Greater",
        "GreaterEqual", "LogicalAnd", "LogicalOr", "LogicalNot", "FloorDiv", "Sign", "Floor",
        "RandomUniform", "RandomStandardNormal", "TruncatedNormal", "BroadcastGradientArgs",
        "TensorArrayV3", "TensorArraySizeV3", "TensorArrayGradV3", "TensorArrayCloseV3",
        "StackV2", "StackPushV2", "StackPopV2", "StackCloseV2", "Assert", "NoOp",
        "InvertPermutation", "ConcatOffset", "ToBool", "IsVariableInitialized",
        "VarIsInitializedOp", "IsFinite", "LinSpace", "Empty", "NearestNeighbors",
        "ScalarSummary"})
    r.add_not_differentiable(op);
  // Ops that change state or leave the graph, as TensorFlow declares them
  // (state_grad.py, resource_variable_ops.py, training ops, io, parsing,
  // queues), and the random and set ops it declares so too.
  for (const char* op :
       {"Assign", "AssignAdd", "AssignSub", "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
        "ScatterAdd", "ScatterSub", "ScatterUpdate", "ResourceScatterAdd", "ResourceScatterSub",
        "ResourceScatterUpdate", "ApplyGradientDescent", "ApplyMomentum", "ApplyAdagrad", "ApplyAdam",
        "ApplyRMSProp", "ResourceApplyGradientDescent", "ResourceApplyMomentum", "ResourceApplyAdagrad",
        "ResourceApplyAdam", "ResourceApplyRMSProp", "SaveV2", "QueueEnqueueV2", "QueueEnqueueManyV2",
        "ParseExample", "ParseExampleV2", "ParseSingleExample", "RandomShuffle", "Unique"})
    r.add_not_differentiable(op);
  return r;
}

#undef TRY

}  // namespace

const GradientRegistry& GradientRegistry::global() {
  static const GradientRegistry registry = make_global();
  return registry;
}

}  // namespace tagflow::graph
