// Helpers for the nn kernel tests (convolutions, pooling, batch norm, RNN
// cells): seeded random tensors, element access as doubles, and gradients
// by central finite differences of a forward op, against which the
// gradient kernels are checked; layouts converted by the Transpose op.
#pragma once

#include <cmath>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "op_result.hpp"

namespace tagflow::ops::testing {

// Uniform values in [lo, hi) from a fixed seed.
template <class T>
Tensor random_tensor(const Shape& shape, uint32_t seed, double lo = -1, double hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(shape.num_elements());
  for (T& x : v) x = static_cast<T>(dist(gen));
  return Tensor::from_vector<T>(shape, v);
}

inline std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i) v[i] = element_as_double(t, i);
  return v;
}

inline double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - b[i]));
  return m;
}

// A copy of t (float or double) with element i moved by delta.
inline Tensor nudged(const Tensor& t, int64_t i, double delta) {
  Tensor c(t.dtype(), t.shape());
  std::memcpy(c.raw_mutable_data(), t.raw_data(), t.byte_size());
  if (t.dtype() == DType::float64) c.mutable_data<double>()[i] += delta;
  else c.mutable_data<float>()[i] += static_cast<float>(delta);
  return c;
}

// d/d inputs[which] of the sum over (out, weights) of sum(weights *
// output `out` of op(inputs)), by central differences with step h; NaN
// entries if the op fails.
inline std::vector<double> numeric_gradient(const std::string& op, const std::vector<Tensor>& inputs,
                                            const AttrMap& attrs, int which,
                                            const std::vector<std::pair<int, Tensor>>& weighted, double h) {
  auto objective = [&](const Tensor& x) -> double {
    std::vector<Tensor> in = inputs;
    in[which] = x;
    Expected<std::vector<Tensor>> y = run_op(op, in, attrs);
    if (!y.ok()) return NAN;
    double s = 0;
    for (const auto& [out, weights] : weighted) {
      const std::vector<double> v = values_of((*y)[out]), w = values_of(weights);
      for (size_t i = 0; i < v.size() && i < w.size(); ++i) s += v[i] * w[i];
    }
    return s;
  };
  const Tensor& x = inputs[which];
  std::vector<double> g(x.num_elements());
  for (int64_t i = 0; i < x.num_elements(); ++i)
    g[i] = (objective(nudged(x, i, h)) - objective(nudged(x, i, -h))) / (2 * h);
  return g;
}

// The same for one output `out` weighted by `weights`.
inline std::vector<double> numeric_gradient(const std::string& op, const std::vector<Tensor>& inputs,
                                            const AttrMap& attrs, int which, const Tensor& weights,
                                            double h, int out = 0) {
  return numeric_gradient(op, inputs, attrs, which, {{out, weights}}, h);
}

inline AttrList int_list(std::vector<int64_t> v) {
  AttrList l;
  l.i = std::move(v);
  return l;
}

inline Tensor shape_tensor(const Shape& s) {
  std::vector<int32_t> v;
  for (int i = 0; i < s.rank(); ++i) v.push_back(static_cast<int32_t>(s.dim(i)));
  return Tensor::vector<int32_t>(v);
}

// The same values in double.
inline Tensor as_double(const Tensor& t) { return Tensor::from_vector<double>(t.shape(), values_of(t)); }

// t with its last dimension moved to 1 (NHWC to NCHW, NDHWC to NCDHW), and
// back, by the Transpose op.
inline Tensor transposed(const Tensor& t, std::vector<int32_t> perm) {
  Expected<Tensor> out = run_op1("Transpose", {t, Tensor::vector<int32_t>(perm)});
  if (!out.ok()) throw std::runtime_error("Transpose: " + out.status().to_string());
  return *out;
}
inline Tensor to_channels_first(const Tensor& t) {
  std::vector<int32_t> perm{0, static_cast<int32_t>(t.rank() - 1)};
  for (int d = 1; d + 1 < t.rank(); ++d) perm.push_back(d);
  return transposed(t, perm);
}
inline Tensor to_channels_last(const Tensor& t) {
  std::vector<int32_t> perm{0};
  for (int d = 2; d < t.rank(); ++d) perm.push_back(d);
  perm.push_back(1);
  return transposed(t, perm);
}
inline Tensor to_nchw(const Tensor& t) { return to_channels_first(t); }
inline Tensor to_nhwc(const Tensor& t) { return to_channels_last(t); }
inline Shape nchw_shape(const Shape& s) { return Shape{s.dim(0), s.dim(3), s.dim(1), s.dim(2)}; }

}  // namespace tagflow::ops::testing
