// Decoding JPEG images through libjpeg(-turbo), as TensorFlow's DecodeJpeg
// does (tensorflow/core/lib/jpeg/jpeg_mem.cc): the options of its attrs,
// CMYK converted to RGB, truncated files refused or recovered. Whatever is
// wrong with the bytes is an invalid_argument Status carrying libjpeg's own
// message; libjpeg never prints, aborts or exits the process. Stateless and
// thread-safe: every call has its own decompressor.
#pragma once

#include <cstdint>
#include <string_view>

#include "ops/status.hpp"
#include "ops/tensor.hpp"

namespace tagflow::ops {

struct JpegDecodeOptions {
  int channels = 0;  // 0: the file's (CMYK read as RGB), 1: grayscale, 3: RGB
  int ratio = 1;     // downscaling while decoding: 1, 2, 4 or 8
  bool fancy_upscaling = true;  // smooth chroma upsampling (4:2:0, 4:2:2)
  // Decode a file that ends early as if it ended there (libjpeg fills in
  // the rest), instead of refusing it.
  bool try_recover_truncated = false;
  // The fraction of rows that must have been read for a file whose rows run
  // out to be accepted; the rows missing are black.
  float acceptable_fraction = 1.0f;
  bool accurate_dct = false;  // libjpeg's JDCT_ISLOW; else JDCT_IFAST
};

// The most bytes (height * width * channels) a decoded JPEG may have, as
// TensorFlow's limit: a header declaring more is refused before anything
// is allocated.
constexpr int64_t kMaxJpegBytes = int64_t{1} << 29;

// The image as uint8 [height, width, channels].
Expected<Tensor> decode_jpeg(std::string_view contents, const JpegDecodeOptions& options);

}  // namespace tagflow::ops
