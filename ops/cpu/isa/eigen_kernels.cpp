// The kernels of ops/cpu/isa_kernels.hpp at one instruction-set level:
// compiled once per level by ops/CMakeLists.txt with TAGFLOW_ISA_LEVEL set
// to the level's name and the level's compiler flags. Eigen's namespace is
// renamed for the level (eigen_avx2, ...) before any Eigen header, and the
// kernels live in cpu::isa_<level>: nothing here is an inline function or
// template another translation unit also defines.
#ifndef TAGFLOW_ISA_LEVEL
#error "ops/cpu/isa/eigen_kernels.cpp is compiled once per level, with TAGFLOW_ISA_LEVEL set"
#endif

#define TAGFLOW_ISA_CAT2(a, b) a##b
#define TAGFLOW_ISA_CAT(a, b) TAGFLOW_ISA_CAT2(a, b)
#define Eigen TAGFLOW_ISA_CAT(eigen_, TAGFLOW_ISA_LEVEL)

#include <Eigen/Core>

#include "ops/cpu/isa_kernels.hpp"

namespace tagflow::ops::cpu::TAGFLOW_ISA_CAT(isa_, TAGFLOW_ISA_LEVEL) {

namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Array = Eigen::Array<float, Eigen::Dynamic, 1>;

void matmul(const MatMulShape& s, const float* a, const float* b, float* out) {
  if (s.batch == 0 || s.m == 0 || s.n == 0 || s.k == 0) return;
  // Stored shapes: a is m x k (k x m transposed), b k x n (n x k).
  const int64_t a_rows = s.transpose_a ? s.k : s.m, a_cols = s.transpose_a ? s.m : s.k;
  const int64_t b_rows = s.transpose_b ? s.n : s.k, b_cols = s.transpose_b ? s.k : s.n;
  for (int64_t p = 0; p < s.batch; ++p) {
    Eigen::Map<const Matrix> A(a + p * a_rows * a_cols, a_rows, a_cols);
    Eigen::Map<const Matrix> B(b + p * b_rows * b_cols, b_rows, b_cols);
    Eigen::Map<Matrix> O(out + p * s.m * s.n, s.m, s.n);
    if (!s.transpose_a && !s.transpose_b) O.noalias() = A * B;
    else if (s.transpose_a && !s.transpose_b) O.noalias() = A.transpose() * B;
    else if (!s.transpose_a) O.noalias() = A * B.transpose();
    else O.noalias() = A.transpose() * B.transpose();
  }
}

Eigen::Map<const Array> in(const float* x, int64_t n) { return Eigen::Map<const Array>(x, n); }
Eigen::Map<Array> out(float* y, int64_t n) { return Eigen::Map<Array>(y, n); }

void exp(const float* x, float* y, int64_t n) { out(y, n) = in(x, n).exp(); }
void log(const float* x, float* y, int64_t n) { out(y, n) = in(x, n).log(); }
void tanh(const float* x, float* y, int64_t n) { out(y, n) = in(x, n).tanh(); }
void sigmoid(const float* x, float* y, int64_t n) { out(y, n) = in(x, n).logistic(); }

}  // namespace

const IsaKernels kKernels = {matmul, exp, log, tanh, sigmoid};

}  // namespace tagflow::ops::cpu::TAGFLOW_ISA_CAT(isa_, TAGFLOW_ISA_LEVEL)
