// Float 2-D pooling on oneDNN: MaxPool and AvgPool forward, and AvgPool's
// gradient, over NHWC or NCHW images in tagflow's buffers (no copy).
// Padding never takes part, as in TensorFlow: a max is over the window's
// positions inside the image, an average divides by their number
// (oneDNN's pooling_avg_exclude_padding). Large batches split across the
// session's threads (ops/cpu/parallel.hpp), each share of images one cached
// primitive.
//
// The caller has checked the shapes (pooling_ops.cpp); every size is > 0.
// Thread-safe. Throws dnnl::error when oneDNN refuses.
#pragma once

#include <cstdint>

namespace tagflow::ops::cpu {

enum class PoolKind { max, average };

struct PoolShape {
  int64_t batch = 0, in_h = 0, in_w = 0, channels = 0;
  int64_t out_h = 0, out_w = 0;
  int64_t k_h = 0, k_w = 0;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0;
  bool nchw = false;  // images [batch, c, h, w], else [batch, h, w, c]
};

// y = the pool of x.
void dnnl_pool_forward(PoolKind kind, const PoolShape& s, const float* x, float* y);
// dx = the gradient of the average pool with respect to its input, given dy.
void dnnl_avg_pool_backward(const PoolShape& s, const float* dy, float* dx);

}  // namespace tagflow::ops::cpu
