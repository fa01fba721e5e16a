#include "eigen_native.hpp"

#include <Eigen/Core>

namespace tagflow::bench {

void eigen_native_matmul(const float* a, const float* b, float* out, int64_t m, int64_t k, int64_t n) {
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Matrix> A(a, m, k), B(b, k, n);
  Eigen::Map<Matrix> O(out, m, n);
  O.noalias() = A * B;
}

const char* eigen_native_simd() { return Eigen::SimdInstructionSetsInUse(); }

}  // namespace tagflow::bench
