// TensorFlow's truth of a predicate (its `ToBool`): a scalar is true when
// it is not zero — false, 0 of any real number type, ±0.0 of a float type,
// the empty string — and any other tensor when it has elements. One rule
// for every op that tests a predicate of any dtype: the ToBool kernel (the
// lowered If and While) and the functional ops run as written
// (actors/function_runtime.hpp). Pure function.
#pragma once

#include "ops/status.hpp"
#include "ops/tensor.hpp"

namespace tagflow::ops {

// An error for a scalar of a dtype with no truth value (complex, resource,
// variant, quantized), naming the dtype.
Expected<bool> truth_value(const Tensor& t);

}  // namespace tagflow::ops
