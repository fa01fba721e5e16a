// The image op family (TensorFlow's image_ops.cc): the registration
// functions of its two files, which register_image_ops (array_ops.hpp)
// calls. image_codec_ops.cpp holds DecodeJpeg, DecodePng, DecodeImage and
// EncodePng, decoding through libjpeg (jpeg_io.hpp) and libpng
// (png_io.hpp); image_resize_ops.cpp holds ResizeBilinear,
// ResizeNearestNeighbor and the two Grad ops their gradients are made of.
#pragma once

#include "ops/op_def.hpp"

namespace tagflow::ops {

void register_image_codec_ops(OpRegistry& r);
void register_image_resize_ops(OpRegistry& r);

}  // namespace tagflow::ops
