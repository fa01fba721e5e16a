// Float kernels compiled once per instruction-set level and chosen by the
// level fixed at start-up (ops/cpu/isa.hpp): the Eigen code that stays on
// the hot path beside oneDNN, built for the machine it runs on from one
// portable binary.
//
// One source, ops/cpu/isa/eigen_kernels.cpp, is compiled three times
// (ops/CMakeLists.txt): for the baseline (x86-64's SSE2), with AVX2 + FMA,
// and with AVX-512 (F, BW, DQ, VL). Each compilation renames Eigen's
// namespace and puts its kernels in a namespace of its own, so that no
// inline function is shared between the variants: the linker keeps one
// copy of a weak symbol, and a copy with AVX-512 instructions chosen for a
// baseline caller would fault on a machine without them.
// tests/ops/cpu/isa_symbols_test.sh checks the variant objects for such
// symbols.
//
// What is here: the float matrix products too small for oneDNN (its fixed
// cost of a call is more than their work), and the float transcendental
// functions of the elementwise kernels (Exp, Log, Tanh, Sigmoid).
// Stateless; thread-safe.
#pragma once

#include <cstdint>

#include "ops/cpu/dnnl_matmul.hpp"

namespace tagflow::ops::cpu {

using FloatMap = void (*)(const float* x, float* y, int64_t n);

struct IsaKernels {
  // out = op(a) * op(b) for s.batch consecutive pairs of row-major
  // matrices (as dnnl_matmul; out need not be zeroed unless s.k == 0,
  // where nothing is written).
  void (*matmul)(const MatMulShape& s, const float* a, const float* b, float* out);
  // y[i] = f(x[i]) for i < n, with Eigen's array functions.
  FloatMap exp, log, tanh, sigmoid;
};

// The kernels of active_isa().
const IsaKernels& isa_kernels();

// Each level's kernels (ops/cpu/isa/eigen_kernels.cpp).
namespace isa_baseline {
extern const IsaKernels kKernels;
}
namespace isa_avx2 {
extern const IsaKernels kKernels;
}
namespace isa_avx512 {
extern const IsaKernels kKernels;
}

}  // namespace tagflow::ops::cpu
