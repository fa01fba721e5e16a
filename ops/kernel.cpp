#include "ops/kernel.hpp"

namespace tagflow::ops {

Tensor KernelContext::forward_input_or_allocate(int i, DType dtype, const Shape& shape) {
  Tensor& in = inputs_[i];
  if (in.is_unique() && in.dtype() == dtype && !dtype_is_object(dtype) &&
      in.num_elements() == shape.num_elements()) {
    Tensor t = std::move(in);
    in = Tensor();
    if (t.shape() == shape) return t;  // the per-node fast path: no reshape
    return std::move(t.reshaped(shape).value());
  }
  return Tensor(dtype, shape);
}

}  // namespace tagflow::ops
