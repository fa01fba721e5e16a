#include "ops/truth_value.hpp"

#include <complex>
#include <type_traits>

namespace tagflow::ops {

Expected<bool> truth_value(const Tensor& t) {
  if (!t.shape().is_scalar()) return t.num_elements() > 0;
  const DType type = base_dtype(t.dtype());
  if (type == DType::string) return !t.data<std::string>()[0].empty();
  bool truth = false, known = false;
  dispatch_pod(type, [&](auto zero) {
    using T = decltype(zero);
    // TensorFlow's ToBool takes real numbers and bool, not complex ones.
    if constexpr (!std::is_same_v<T, std::complex<float>> && !std::is_same_v<T, std::complex<double>>) {
      known = true;
      truth = !(t.data<T>()[0] == zero);
    }
  });
  if (!known)
    return Status(Error::invalid_argument, "a scalar of type " + dtype_name(t.dtype()) + " has no truth value");
  return truth;
}

}  // namespace tagflow::ops
