// Float 2-D convolutions on oneDNN: Conv2D and DepthwiseConv2dNative
// forward, and the gradients of both with respect to the input and to the
// filter, as direct convolutions (no im2col). Images are NHWC or NCHW in
// tagflow's buffers, used in place; filters are TensorFlow's
// [k_h, k_w, in_c, out_c] (depthwise: [k_h, k_w, in_c, multiplier], a
// grouped convolution of in_c groups), reordered into the layout the chosen
// primitive wants and, for the filter gradient, back. Large batches split
// across the session's threads (ops/cpu/parallel.hpp), each share of
// images one cached primitive; the filter gradient sums the shares' parts.
//
// The caller has checked the shapes (conv_ops.cpp); padding after is
// derived from the output size. Thread-safe. Throws dnnl::error when
// oneDNN refuses, MemoryLimitExceeded when a scratch buffer is over the
// budget.
#pragma once

#include <cstdint>

#include "ops/cpu/dnnl.hpp"

namespace tagflow::ops::cpu {

struct ConvShape {
  int64_t batch = 0, in_h = 0, in_w = 0, in_c = 0;
  int64_t out_h = 0, out_w = 0, out_c = 0;
  int64_t k_h = 0, k_w = 0;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;  // TensorFlow's: 1 is none
  int64_t pad_top = 0, pad_left = 0;
  bool depthwise = false;  // out_c = in_c * multiplier
  bool nchw = false;       // images [batch, c, h, w], else [batch, h, w, c]
};

// y = conv(x, filter), then the epilogue (a bias of out_c values).
// Every size is > 0.
void dnnl_conv_forward(const ConvShape& s, const float* x, const float* filter, float* y,
                       const Epilogue& epilogue = Epilogue());
// dx = the gradient of conv(x, filter) with respect to x, given dy.
void dnnl_conv_backward_data(const ConvShape& s, const float* filter, const float* dy, float* dx);
// dfilter = the gradient with respect to the filter, given x and dy.
void dnnl_conv_backward_weights(const ConvShape& s, const float* x, const float* dy, float* dfilter);

}  // namespace tagflow::ops::cpu
