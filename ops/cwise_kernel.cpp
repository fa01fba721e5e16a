#include "ops/cwise_kernel.hpp"

namespace tagflow::ops {

Status input_dtype_error(const char* op, DType expected, const Tensor* const* inputs, int n) {
  std::string got;
  for (int i = 0; i < n; ++i)
    got += (i == 0 ? "" : i == n - 1 ? " and " : ", ") +
           (inputs[i]->valid() ? dtype_name(inputs[i]->dtype()) : std::string("no tensor"));
  return Status(Error::invalid_argument, std::string(op) + " expects " + dtype_name(expected) +
                                             " inputs, got " + got);
}

Status no_kernel_error(const char* op, DType t) {
  return Status(Error::unimplemented, std::string(op) + " has no kernel for dtype " + dtype_name(t));
}

}  // namespace tagflow::ops
