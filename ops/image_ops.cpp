#include "ops/image_ops.hpp"

#include "ops/array_ops.hpp"

namespace tagflow::ops {

void register_image_ops(OpRegistry& r) {
  register_image_codec_ops(r);
  register_image_resize_ops(r);
}

}  // namespace tagflow::ops
