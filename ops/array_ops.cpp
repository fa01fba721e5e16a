#include "ops/op_def.hpp"

namespace tagflow::ops {

void register_array_ops(OpRegistry&) {}

}  // namespace tagflow::ops
