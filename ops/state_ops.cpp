#include "ops/op_def.hpp"

namespace tagflow::ops {

void register_state_ops(OpRegistry&) {}

}  // namespace tagflow::ops
