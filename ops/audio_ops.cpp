#include "ops/array_ops.hpp"

namespace tagflow::ops {

void register_audio_ops(OpRegistry&) {}

}  // namespace tagflow::ops
