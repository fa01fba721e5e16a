#include "ops/op_def.hpp"

namespace tagflow::ops {

void register_math_ops(OpRegistry&) {}

}  // namespace tagflow::ops
