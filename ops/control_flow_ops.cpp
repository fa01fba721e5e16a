#include "ops/op_def.hpp"

namespace tagflow::ops {

void register_control_flow_ops(OpRegistry&) {}

}  // namespace tagflow::ops
