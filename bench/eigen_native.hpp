// The Eigen product compiled for the machine the benchmark is built on
// (-march=native, eigen_native.cpp): the "Eigen built for the machine"
// baseline of kernels_bench. Not part of tagflow.
#pragma once

#include <cstdint>

namespace tagflow::bench {

// out (m x n) = a (m x k) * b (k x n), row-major float.
void eigen_native_matmul(const float* a, const float* b, float* out, int64_t m, int64_t k, int64_t n);
// Which vector unit this translation unit was compiled for.
const char* eigen_native_simd();

}  // namespace tagflow::bench
