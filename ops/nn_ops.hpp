// The nn op family, split by concept over several files of ops/: Relu,
// Softmax and BiasAdd in nn_ops.cpp, Conv2D and its gradients in
// conv_ops.cpp, MaxPool/AvgPool and their gradients in pooling_ops.cpp, the
// fused batch normalisations in batch_norm_ops.cpp, the fused LSTM and GRU
// cells in rnn_cell_ops.cpp. register_nn_ops (op_def.hpp) calls the parts
// declared here. Internal to ops/.
#pragma once

#include "ops/op_def.hpp"

namespace tagflow::ops {

void register_conv_ops(OpRegistry& r);

// The float _FusedConv2D and _FusedMatMul of [BiasAdd] or [BiasAdd, Relu]
// as one kernel each: the bias added by the product itself (a oneDNN
// post-op, ops/cpu/dnnl.hpp), Relu after it with the Relu kernel's
// expression (and for products Eigen computes, the bias too with BiasAdd's):
// the numbers bitwise those of the separate kernels; where those give NaN,
// NaN, whose sign bit may differ (fused_ops.cpp picks these).
Expected<std::unique_ptr<Kernel>> make_fused_conv2d_kernel(const KernelInit& init, bool relu);
Expected<std::unique_ptr<Kernel>> make_fused_matmul_kernel(const KernelInit& init, bool relu);

// y += bias (if not null) along dimension channel_dim of `shape`, then Relu
// if asked:
// the BiasAdd and Relu kernels' own expressions, in place (nn_ops.cpp).
void apply_bias_relu(float* y, const Shape& shape, int channel_dim, const float* bias, bool relu);

// The check BiasAdd makes of its bias against a value of `shape` whose
// channels are dimension `channel_dim` (nn_ops.cpp), as `op`.
Status check_bias(const char* op, const Shape& shape, int channel_dim, const Tensor& bias);
// _FusedMatMul, _FusedConv2D (fused_ops.cpp).
void register_fused_ops(OpRegistry& r);
void register_pooling_ops(OpRegistry& r);
void register_batch_norm_ops(OpRegistry& r);
void register_rnn_cell_ops(OpRegistry& r);

}  // namespace tagflow::ops
