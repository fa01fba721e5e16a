#include "ops/array_ops.hpp"

namespace tagflow::ops {

void register_image_ops(OpRegistry&) {}

}  // namespace tagflow::ops
