#include "eigen_native.hpp"

#include <cmath>
#include <complex>
#include <cstdlib>
#include <functional>
#include <limits>
#include <new>

// Eigen under another namespace name: its templates instantiated here for
// -march=native must not be merged by the linker with the portable ones
// kernels_bench.cpp instantiates (same names, different code).
#define Eigen eigen_native
#include <Eigen/Core>

namespace tagflow::bench {

void eigen_native_matmul(const float* a, const float* b, float* out, int64_t m, int64_t k, int64_t n) {
  using Matrix = eigen_native::Matrix<float, eigen_native::Dynamic, eigen_native::Dynamic, eigen_native::RowMajor>;
  eigen_native::Map<const Matrix> A(a, m, k), B(b, k, n);
  eigen_native::Map<Matrix> O(out, m, n);
  O.noalias() = A * B;
}

const char* eigen_native_simd() { return eigen_native::SimdInstructionSetsInUse(); }

}  // namespace tagflow::bench
