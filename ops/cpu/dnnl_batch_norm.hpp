// Float batch normalisation on oneDNN, the forward pass and its gradient,
// over channels-last (NHWC, NDHWC) or channels-first (NCHW, NCDHW) images
// in tagflow's buffers (no copy), with separate scale and offset vectors.
// Training normalises by the batch's mean and biased variance, which it
// writes; inference reads them. The gradient of inference treats the
// statistics as constants, as TensorFlow's does.
//
// The caller has checked the shapes (batch_norm_ops.cpp) and handles empty
// tensors; every size here is > 0. Thread-safe. Throws dnnl::error when
// oneDNN refuses.
#pragma once

#include <cstdint>
#include <vector>

namespace tagflow::ops::cpu {

struct BatchNormShape {
  std::vector<int64_t> dims;  // the tensor's shape as stored
  bool channels_first = false;  // dims[1] is the channels, else dims.back()
  float epsilon = 1e-4f;
  bool training = true;
};

// y = (x - mean) / sqrt(variance + epsilon) * scale + offset, per channel.
// Training writes mean and variance (biased); inference reads them.
void dnnl_batch_norm_forward(const BatchNormShape& s, const float* x, const float* scale, const float* offset,
                             float* mean, float* variance, float* y);

// dx, dscale and doffset from dy, given x, scale and the mean and variance
// the forward pass normalised with.
void dnnl_batch_norm_backward(const BatchNormShape& s, const float* dy, const float* x, const float* scale,
                              const float* mean, const float* variance, float* dx, float* dscale,
                              float* doffset);

}  // namespace tagflow::ops::cpu
