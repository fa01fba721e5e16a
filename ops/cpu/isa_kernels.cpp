#include "ops/cpu/isa_kernels.hpp"

#include "ops/cpu/isa.hpp"

namespace tagflow::ops::cpu {

const IsaKernels& isa_kernels() {
  static const IsaKernels& kernels = []() -> const IsaKernels& {
    switch (active_isa()) {
      case Isa::avx512: return isa_avx512::kKernels;
      case Isa::avx2: return isa_avx2::kKernels;
      case Isa::baseline: break;
    }
    return isa_baseline::kKernels;
  }();
  return kernels;
}

}  // namespace tagflow::ops::cpu
