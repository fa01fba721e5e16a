// The gradient functions of the convolution, pooling and fused batch norm
// ops, in the form of TensorFlow's nn_grad.py: Conv2D's and
// DepthwiseConv2dNative's gradients are their two backprop ops, MaxPool's and AvgPool's their *Grad ops, a fused batch
// norm's its FusedBatchNormGrad twin fed the reserve spaces (training) or
// the population statistics (inference). The window attrs are copied from
// the forward node. Added to GradientRegistry::global() by
// gradient_functions.cpp.
#include "graph/gradients.hpp"

namespace tagflow::graph {

namespace {

using C = GradContext;
using ops::AttrMap;

#define TRY(lhs, expr) TF_ASSIGN_OR_RETURN(lhs, expr)

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

#undef TRY

}  // namespace

void add_nn_gradients(GradientRegistry& r) {
  (void)r.add("Conv2D", conv_grad("Conv2D"));
  (void)r.add("DepthwiseConv2dNative", conv_grad("DepthwiseConv2dNative"));
  (void)r.add("MaxPool", max_pool_grad);
  (void)r.add("AvgPool", avg_pool_grad);
  (void)r.add("FusedBatchNorm", batch_norm_grad("FusedBatchNormGrad", false));
  (void)r.add("FusedBatchNormV2", batch_norm_grad("FusedBatchNormGradV2", false));
  (void)r.add("FusedBatchNormV3", batch_norm_grad("FusedBatchNormGradV3", true));
}

}  // namespace tagflow::graph
