#include "ops/kernel.hpp"

#include <stdexcept>

#include <oneapi/dnnl/dnnl.hpp>

#include "ops/memory_budget.hpp"

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

Status run_kernel(const Kernel& kernel, KernelContext& ctx) {
  MemoryBudgetScope scope(ctx.memory());
  try {
    return kernel.compute(ctx);
  } catch (const MemoryLimitExceeded& e) {
    return Status(Error::resource_exhausted, e.what());
  } catch (const std::bad_alloc&) {
    return Status(Error::resource_exhausted, "out of memory: the allocator refused a request");
  } catch (const dnnl::error& e) {
    return Status(Error::internal, std::string("oneDNN refused a primitive: ") + e.what() + " (status " +
                                       std::to_string(static_cast<int>(e.status)) + ")");
  } catch (const std::length_error& e) {
    return Status(Error::resource_exhausted, std::string("out of memory: a buffer would be too long (") +
                                                 e.what() + ")");
  }
}

}  // namespace tagflow::ops
