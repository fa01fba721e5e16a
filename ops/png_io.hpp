// Decoding and encoding PNG images through libpng, as TensorFlow's
// DecodePng and EncodePng do (tensorflow/core/lib/png/png_io.cc): palettes
// expanded, gray and colour converted, alpha added or stripped to the
// channels asked for, 1-, 2- and 4-bit samples widened, Adam7 interlacing
// undone, 8-bit samples widened to 16 as v * 257. Whatever is wrong with
// the bytes is an invalid_argument Status carrying libpng's own message;
// libpng never prints or aborts. Stateless and thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ops/status.hpp"
#include "ops/tensor.hpp"

namespace tagflow::ops {

// TensorFlow's limits on a decoded PNG, checked against the header before
// anything is allocated: each side below 2^27 pixels, the area below 2^29.
constexpr int64_t kMaxPngSide = int64_t{1} << 27;
constexpr int64_t kMaxPngPixels = int64_t{1} << 29;

// The image as [height, width, channels] of uint8 (bits 8) or uint16
// (bits 16). channels 0 takes the file's (a palette gives 3, or 4 with a
// tRNS chunk); else 1 (gray), 2 (gray and alpha), 3 (RGB) or 4 (RGBA).
Expected<Tensor> decode_png(std::string_view contents, int channels, int bits);

// The pixels of one image, rows of width * channels samples of `bits` (8
// or 16, native byte order), with 1 to 4 channels (gray, gray and alpha,
// RGB, RGBA), as a PNG at zlib level `compression` (-1: zlib's default,
// else 0 to 9) into *out.
Status encode_png(const void* pixels, int64_t height, int64_t width, int channels, int bits, int compression,
                  std::string* out);

}  // namespace tagflow::ops
