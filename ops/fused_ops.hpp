// _FusedMatMul and _FusedConv2D (ops/fused_ops.cpp): a MatMul or Conv2D,
// its BiasAdd and optionally an activation, in one node.
#pragma once

#include <string>

namespace tagflow::ops {

// The activations a fused node may end with: Relu, Relu6, Elu, Tanh,
// Sigmoid. The graph optimiser's fusion pass fuses exactly these.
bool is_fusable_activation(const std::string& op);

}  // namespace tagflow::ops
