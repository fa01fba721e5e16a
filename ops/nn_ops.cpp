#include "ops/op_def.hpp"

namespace tagflow::ops {

void register_nn_ops(OpRegistry&) {}

}  // namespace tagflow::ops
