// The gradient functions of the nn ops, in the form of TensorFlow's
// nn_grad.py: Conv2D's and DepthwiseConv2dNative's gradients are their two
// backprop ops, MaxPool's and AvgPool's their *Grad ops, a fused batch
// norm's its FusedBatchNormGrad twin fed the reserve spaces (training) or
// the population statistics (inference), LSTMBlockCell's and
// GRUBlockCell's their cell Grad ops followed by the weight products of
// lstm_ops.py and gru_ops.py (the attrs copied from the forward node); the
// activations (Relu, Elu, Relu6, Softsign), BiasAdd, Softmax, LogSoftmax,
// the softmax cross entropies and the two image resizes. Added to GradientRegistry::global() by
// gradient_functions.cpp.
#include "graph/autodiff/gradient_util.hpp"

namespace tagflow::graph {
inline namespace autodiff {

namespace {

using namespace gradient_util;

// The forward node's attrs among `names` (those it has).
AttrMap copied_attrs(C& c, std::initializer_list<const char*> names) {
  AttrMap attrs;
  for (const char* n : names) {
    auto it = c.node().attrs.find(n);
    if (it != c.node().attrs.end()) attrs[n] = it->second;
  }
  return attrs;
}

// Conv2D -> Conv2DBackpropInput/Filter, DepthwiseConv2dNative ->
// DepthwiseConv2dNativeBackpropInput/Filter.
GradientFunction conv_grad(std::string op) {
  return [op](C& c) -> Status {
    TRY(Endpoint g, c.dy_or_zeros(0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint f, c.input(1));
    const AttrMap attrs = copied_attrs(
        c, {"strides", "padding", "explicit_paddings", "dilations", "data_format", "use_cudnn_on_gpu"});
    TRY(Endpoint x_shape, c.op1("Shape", {x}));
    TRY(Endpoint f_shape, c.op1("Shape", {f}));
    TRY(Endpoint dx, c.op1(op + "BackpropInput", {x_shape, f, g}, attrs));
    TRY(Endpoint df, c.op1(op + "BackpropFilter", {x, f_shape, g}, attrs));
    c.set(0, dx);
    c.set(1, df);
    return ok_status();
  };
}

Status max_pool_grad(C& c) {
  TRY(Endpoint g, c.dy_or_zeros(0));
  TRY(Endpoint x, c.input(0));
  TRY(Endpoint y, c.output(0));
  TRY(Endpoint dx, c.op1("MaxPoolGrad", {x, y, g},
                         copied_attrs(c, {"ksize", "strides", "padding", "explicit_paddings", "data_format"})));
  c.set(0, dx);
  return ok_status();
}

Status avg_pool_grad(C& c) {
  TRY(Endpoint g, c.dy_or_zeros(0));
  TRY(Endpoint x, c.input(0));
  TRY(Endpoint x_shape, c.op1("Shape", {x}));
  TRY(Endpoint dx, c.op1("AvgPoolGrad", {x_shape, g}, copied_attrs(c, {"ksize", "strides", "padding", "data_format"})));
  c.set(0, dx);
  return ok_status();
}

// The resizes (TensorFlow's image_grad.py): ResizeBilinear's gradient is
// ResizeBilinearGrad of the incoming gradient and the original images,
// ResizeNearestNeighbor's ResizeNearestNeighborGrad to the images' height
// and width; `size` gets none.
Status resize_bilinear_grad(C& c) {
  TRY(Endpoint g, c.dy_or_zeros(0));
  TRY(Endpoint x, c.input(0));
  TRY(Endpoint dx, c.op1("ResizeBilinearGrad", {g, x}, copied_attrs(c, {"align_corners", "half_pixel_centers"})));
  c.set(0, dx);
  return ok_status();
}

Status resize_nearest_neighbor_grad(C& c) {
  TRY(Endpoint g, c.dy_or_zeros(0));
  TRY(Endpoint x, c.input(0));
  TRY(Endpoint shape, c.op1("Shape", {x}, {{"out_type", DType::int32}}));
  TRY(Endpoint begin, c.int_vector({1}));
  TRY(Endpoint size, c.int_vector({2}));
  TRY(Endpoint hw, c.op1("Slice", {shape, begin, size}));
  TRY(Endpoint dx, c.op1("ResizeNearestNeighborGrad", {g, hw},
                         copied_attrs(c, {"align_corners", "half_pixel_centers"})));
  c.set(0, dx);
  return ok_status();
}

// x, scale and offset get gradients; the running mean and variance none.
GradientFunction batch_norm_grad(const char* grad_op, bool v3) {
  return [grad_op, v3](C& c) -> Status {
    TRY(Endpoint g, c.dy_or_zeros(0));
    TRY(Endpoint x, c.input(0));
    TRY(Endpoint scale, c.input(1));
    const bool* training = c.node().attr<bool>("is_training");
    const bool is_training = training == nullptr || *training;
    // Training normalised by the batch statistics kept in the reserve
    // spaces; inference by the mean and variance inputs.
    TRY(Endpoint mean, is_training ? c.output(3) : c.input(3));
    TRY(Endpoint var, is_training ? c.output(4) : c.input(4));
    std::vector<Endpoint> inputs = {g, x, scale, mean, var};
    if (v3) {
      TRY(Endpoint reserve, c.output(5));
      inputs.push_back(reserve);
    }
    TRY(std::vector<Endpoint> d,
        c.op(grad_op, inputs, copied_attrs(c, {"epsilon", "data_format", "is_training"})));
    for (int i = 0; i < 3; ++i) c.set(i, d[i]);
    return ok_status();
  };
}

// [x, second] along axis 1.
Expected<Endpoint> concat_columns(C& c, Endpoint x, Endpoint second) {
  TRY(Endpoint one, c.scalar(DType::int32, 1));
  return c.op1("ConcatV2", {x, second, one});
}

// TensorFlow's lstm_ops.py: only the gradients of cs (output 1) and h
// (output 6) flow back, as there; LSTMBlockCellGrad gives the gradient of
// the gate pre-activations (dicfo), from which x, h_prev, w and b follow by
// products with w and [x, h_prev].
Status lstm_block_cell_grad(C& c) {
  TRY(Endpoint cs_grad, c.dy_or_zeros(1));
  TRY(Endpoint h_grad, c.dy_or_zeros(6));
  std::vector<Endpoint> inputs;
  for (int i = 0; i < 8; ++i) {
    TRY(Endpoint in, c.input(i));
    inputs.push_back(in);
  }
  for (int i = 0; i < 6; ++i) {
    TRY(Endpoint out, c.output(i));
    inputs.push_back(out);
  }
  inputs.push_back(cs_grad);
  inputs.push_back(h_grad);
  TRY(std::vector<Endpoint> d, c.op("LSTMBlockCellGrad", inputs, copied_attrs(c, {"use_peephole"})));
  const Endpoint x = inputs[0], h_prev = inputs[2], w = inputs[3], dicfo = d[1];
  TRY(Endpoint xh, concat_columns(c, x, h_prev));
  TRY(Endpoint xh_grad, c.op1("MatMul", {dicfo, w}, {{"transpose_b", true}}));
  // x's gradient is the first input_size columns, h_prev's the rest.
  TRY(Endpoint x_shape, c.op1("Shape", {x}));
  TRY(Endpoint h_shape, c.op1("Shape", {h_prev}));
  TRY(Endpoint origin, c.int_vector({0, 0}));
  TRY(Endpoint column_mask, c.int_vector({0, 1}));
  TRY(Endpoint h_begin, c.op1("Mul", {x_shape, column_mask}));
  TRY(Endpoint x_grad, c.op1("Slice", {xh_grad, origin, x_shape}));
  TRY(Endpoint h_prev_grad, c.op1("Slice", {xh_grad, h_begin, h_shape}));
  TRY(Endpoint w_grad, c.op1("MatMul", {xh, dicfo}, {{"transpose_a", true}}));
  TRY(Endpoint b_grad, c.op1("BiasAddGrad", {dicfo}));
  const Endpoint grads[] = {x_grad, d[0], h_prev_grad, w_grad, d[2], d[3], d[4], b_grad};
  for (int i = 0; i < 8; ++i) c.set(i, grads[i]);
  return ok_status();
}

// TensorFlow's gru_ops.py: the gradient of h (output 3) flows back.
Status gru_block_cell_grad(C& c) {
  TRY(Endpoint d_h, c.dy_or_zeros(3));
  std::vector<Endpoint> inputs;
  for (int i = 0; i < 6; ++i) {
    TRY(Endpoint in, c.input(i));
    inputs.push_back(in);
  }
  for (int i = 0; i < 3; ++i) {
    TRY(Endpoint out, c.output(i));
    inputs.push_back(out);
  }
  inputs.push_back(d_h);
  TRY(std::vector<Endpoint> d, c.op("GRUBlockCellGrad", inputs));
  const Endpoint x = inputs[0], h_prev = inputs[1], r = inputs[6];
  const Endpoint d_c_bar = d[2], d_ru_bar = d[3];
  TRY(Endpoint xh, concat_columns(c, x, h_prev));
  TRY(Endpoint rh, c.op1("Mul", {h_prev, r}));
  TRY(Endpoint xrh, concat_columns(c, x, rh));
  TRY(Endpoint w_ru_grad, c.op1("MatMul", {xh, d_ru_bar}, {{"transpose_a", true}}));
  TRY(Endpoint w_c_grad, c.op1("MatMul", {xrh, d_c_bar}, {{"transpose_a", true}}));
  TRY(Endpoint b_ru_grad, c.op1("BiasAddGrad", {d_ru_bar}));
  TRY(Endpoint b_c_grad, c.op1("BiasAddGrad", {d_c_bar}));
  const Endpoint grads[] = {d[0], d[1], w_ru_grad, w_c_grad, b_ru_grad, b_c_grad};
  for (int i = 0; i < 6; ++i) c.set(i, grads[i]);
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

}  // namespace

void add_nn_gradients(GradientRegistry& r) {
  add(r, "BiasAdd", bias_add_grad);
  add(r, "BiasAddV1", bias_add_grad);
  add(r, "Relu", [](C& c) -> Status {
    TRY(Endpoint g, need_dy(c, 0));
    TRY(Endpoint y, c.output(0));
    TRY(Endpoint dx, c.op1("ReluGrad", {g, y}));
    c.set(0, dx);
    return ok_status();
  });
  add(r, "Softmax", softmax_grad);
  add(r, "LogSoftmax", log_softmax_grad);
  add(r, "SoftmaxCrossEntropyWithLogits", cross_entropy_grad);
  add(r, "SparseSoftmaxCrossEntropyWithLogits", cross_entropy_grad);
  add(r, "Elu", grad_op_of("EluGrad", true));
  add(r, "Relu6", grad_op_of("Relu6Grad", false));
  add(r, "Softsign", grad_op_of("SoftsignGrad", false));
  add(r, "Conv2D", conv_grad("Conv2D"));
  add(r, "DepthwiseConv2dNative", conv_grad("DepthwiseConv2dNative"));
  add(r, "MaxPool", max_pool_grad);
  add(r, "ResizeBilinear", resize_bilinear_grad);
  add(r, "ResizeNearestNeighbor", resize_nearest_neighbor_grad);
  add(r, "AvgPool", avg_pool_grad);
  add(r, "FusedBatchNorm", batch_norm_grad("FusedBatchNormGrad", false));
  add(r, "FusedBatchNormV2", batch_norm_grad("FusedBatchNormGradV2", false));
  add(r, "FusedBatchNormV3", batch_norm_grad("FusedBatchNormGradV3", true));
  add(r, "LSTMBlockCell", lstm_block_cell_grad);
  add(r, "GRUBlockCell", gru_block_cell_grad);
}

#undef TRY

}  // namespace autodiff
}  // namespace tagflow::graph
