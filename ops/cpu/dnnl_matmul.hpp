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

#include "ops/cpu/dnnl.hpp"

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
// out is zero-filled. The epilogue's bias has n values; whether it was
// applied is returned (not with k == 0, nor when the product splits into
// column blocks, where oneDNN would pick other kernels for the post-op and
// round the sums differently from the plain product).
bool dnnl_matmul(const MatMulShape& s, const float* a, const float* b, float* out,
                 const Epilogue& epilogue = Epilogue());

// Products with fewer multiply-adds than this, and matrix-vector products,
// run on Eigen built for the machine's instruction set
// (ops/cpu/isa_kernels.hpp): oneDNN's fixed cost of a call (~1 µs) is more
// than their work (1x64x64: 0.3 µs on Eigen, 1.0 on oneDNN called
// directly; bench/kernels_bench.cpp).
inline constexpr int64_t kMinDnnlProduct = int64_t{1} << 15;

// The float product of tagflow's kernels (MatMul, BatchMatMul, the RNN
// cells): dnnl_matmul, or the instruction-set table's Eigen product for
// small ones. As dnnl_matmul, except that with k == 0 nothing is written.
void matmul_f32(const MatMulShape& s, const float* a, const float* b, float* out);
// Whether matmul_f32 runs s on oneDNN.
bool on_dnnl(const MatMulShape& s);

}  // namespace tagflow::ops::cpu
