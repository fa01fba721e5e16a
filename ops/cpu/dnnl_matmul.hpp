// Float matrix products on oneDNN: out = op(a) * op(b) for `batch` pairs of
// row-major matrices laid out one after another, op = transpose or not. No
// copy: transposes are strides of oneDNN memory descriptors over tagflow's
// buffers. Large products split into row (or, for few rows, column) blocks
// across the session's threads (ops/cpu/parallel.hpp), each block one
// cached primitive.
//
// Thread-safe. Throws dnnl::error when oneDNN refuses (callers turn it into
// a Status), MemoryLimitExceeded when a scratchpad is over the budget.
#pragma once

#include <cstdint>

namespace tagflow::ops::cpu {

struct MatMulShape {
  int64_t batch = 1;  // pairs of matrices; a and b advance by one matrix each
  int64_t m = 0;      // rows of op(a) and of out
  int64_t k = 0;      // columns of op(a), rows of op(b)
  int64_t n = 0;      // columns of op(b) and of out
  bool transpose_a = false;  // a is stored k x m
  bool transpose_b = false;  // b is stored n x k
};

// out must hold batch * m * n floats; nothing is read from it. With k == 0
// out is zero-filled.
void dnnl_matmul(const MatMulShape& s, const float* a, const float* b, float* out);

}  // namespace tagflow::ops::cpu
