#include "ops/array_ops.hpp"

namespace tagflow::ops {

void register_lookup_ops(OpRegistry&) {}

}  // namespace tagflow::ops
