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
// _FusedMatMul, _FusedConv2D (fused_ops.cpp).
void register_fused_ops(OpRegistry& r);
void register_pooling_ops(OpRegistry& r);
void register_batch_norm_ops(OpRegistry& r);
void register_rnn_cell_ops(OpRegistry& r);

}  // namespace tagflow::ops
