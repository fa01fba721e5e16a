// libpng reports a fatal error by calling our error function, which copies
// the message and longjmps to the setjmp of the phase that called libpng
// (read_header, read_rows, write_image). Those functions touch only C
// structs and trivially destructible locals, so the jump skips no
// destructor; the output Tensor and string live in their callers, which
// the jump never crosses. The write callback catches its own exceptions so
// that none unwinds through libpng's C frames.
#include "ops/png_io.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstring>

#include <png.h>
#include <zlib.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "png_io.cpp swaps 16-bit samples to and from PNG's big-endian order on little-endian hosts only"
#endif

namespace tagflow::ops {

namespace {

constexpr size_t kMessageSize = 256;

void on_error(png_structp png, png_const_charp message) {
  std::snprintf(static_cast<char*>(png_get_error_ptr(png)), kMessageSize, "%s", message);
  png_longjmp(png, 1);
}

// A library must not write to stderr; what libpng warns of it recovers from.
void on_warning(png_structp, png_const_charp) {}

struct ReadState {
  png_structp png;
  png_infop info;
  const png_byte* data;
  size_t left;
  char message[kMessageSize];
  png_uint_32 width, height;
  int bit_depth, color_type;
  int channels;        // of the output
  int passes;          // 7 for Adam7, else 1
  bool widen_to_16;    // 16 bits asked of a file of 8 or fewer
};

void read_bytes(png_structp png, png_bytep out, png_size_t n) {
  ReadState* s = static_cast<ReadState*>(png_get_io_ptr(png));
  if (n > s->left) png_error(png, "the data ends early (truncated PNG)");
  std::memcpy(out, s->data, n);
  s->data += n;
  s->left -= n;
}

enum class HeaderResult { ok, libpng_error, too_large };

// Reads the header and sets libpng's transformations to give `channels`
// samples of `bits` per pixel, as TensorFlow's png_io does, except that an
// added alpha is always opaque (TensorFlow's is 2^bit_depth - 1 of the
// file's depth, nearly transparent for 1-, 2- and 4-bit files).
HeaderResult read_header(ReadState* s, int channels, int bits) {
  if (setjmp(png_jmpbuf(s->png))) return HeaderResult::libpng_error;
  s->info = png_create_info_struct(s->png);
  if (s->info == nullptr) png_error(s->png, "out of memory for the PNG header");
  png_set_read_fn(s->png, s, read_bytes);
  png_read_info(s->png, s->info);
  png_get_IHDR(s->png, s->info, &s->width, &s->height, &s->bit_depth, &s->color_type, nullptr, nullptr, nullptr);
  if (s->width >= kMaxPngSide || s->height >= kMaxPngSide ||
      static_cast<int64_t>(s->width) * s->height >= kMaxPngPixels)
    return HeaderResult::too_large;

  const bool palette = s->color_type == PNG_COLOR_TYPE_PALETTE;
  const bool has_trns = png_get_valid(s->png, s->info, PNG_INFO_tRNS) != 0;
  const bool has_alpha = (s->color_type & PNG_COLOR_MASK_ALPHA) != 0;
  s->channels = channels != 0 ? channels : palette ? (has_trns ? 4 : 3) : png_get_channels(s->png, s->info);
  if (s->channels % 2 == 0 && !has_alpha) {
    if (has_trns) png_set_tRNS_to_alpha(s->png);
    else png_set_add_alpha(s->png, s->bit_depth == 16 && bits == 16 ? 0xFFFF : 0xFF, PNG_FILLER_AFTER);
  } else if (s->channels % 2 == 1 && (has_alpha || has_trns)) {
    png_set_strip_alpha(s->png);
  }
  if (s->bit_depth > 8 && bits == 8) png_set_strip_16(s->png);
  s->widen_to_16 = s->bit_depth <= 8 && bits == 16;
  png_set_packing(s->png);
  s->passes = png_set_interlace_handling(s->png);
  if (bits == 16) png_set_swap(s->png);
  if (palette) png_set_palette_to_rgb(s->png);
  const bool is_gray = (s->color_type & PNG_COLOR_MASK_COLOR) == 0;
  if (is_gray && s->bit_depth < 8) png_set_expand_gray_1_2_4_to_8(s->png);
  if (s->channels < 3 && !is_gray) png_set_rgb_to_gray(s->png, PNG_ERROR_ACTION_NONE, 0.299, 0.587);  // BT.601
  if (s->channels >= 3 && is_gray) png_set_gray_to_rgb(s->png);
  png_read_update_info(s->png, s->info);
  const size_t sample_bytes = s->widen_to_16 ? 1 : static_cast<size_t>(bits / 8);
  if (png_get_rowbytes(s->png, s->info) != static_cast<size_t>(s->width) * s->channels * sample_bytes)
    png_error(s->png, "libpng's rows do not have the size its transformations should give");
  return HeaderResult::ok;
}

// Reads every pass of every row into `out`, rows `row_bytes` apart, and the
// chunks after the image data.
bool read_rows(ReadState* s, png_bytep out, size_t row_bytes) {
  if (setjmp(png_jmpbuf(s->png))) return false;
  for (int pass = 0; pass < s->passes; ++pass) {
    png_bytep row = out;
    for (png_uint_32 y = 0; y < s->height; ++y, row += row_bytes) png_read_row(s->png, row, nullptr);
  }
  png_read_end(s->png, nullptr);
  return true;
}

// 8-bit samples at the start of each 16-bit row, widened in place from the
// end (v * 257 maps 0..255 onto 0..65535).
void widen_rows(uint16_t* pixels, int64_t height, int64_t row_samples) {
  for (int64_t y = 0; y < height; ++y) {
    uint16_t* row = pixels + y * row_samples;
    const uint8_t* narrow = reinterpret_cast<const uint8_t*>(row);
    for (int64_t i = row_samples; i-- > 0;) row[i] = static_cast<uint16_t>(narrow[i] * 257);
  }
}

class PngReader {
 public:
  PngReader(std::string_view contents) : s_() {
    s_.data = reinterpret_cast<const png_byte*>(contents.data());
    s_.left = contents.size();
    s_.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, s_.message, on_error, on_warning);
  }
  ~PngReader() {
    if (s_.png != nullptr) png_destroy_read_struct(&s_.png, s_.info != nullptr ? &s_.info : nullptr, nullptr);
  }
  PngReader(const PngReader&) = delete;
  PngReader& operator=(const PngReader&) = delete;
  ReadState* get() { return &s_; }

 private:
  ReadState s_;
};

Status not_a_png(std::string_view contents, const ReadState& s) {
  return Status(Error::invalid_argument,
                fmt::format("contents ({} bytes) is not a valid PNG: {}", contents.size(), s.message));
}

struct WriteState {
  png_structp png;
  png_infop info;
  std::string* out;
  char message[kMessageSize];
};

void write_bytes(png_structp png, png_bytep data, png_size_t n) {
  WriteState* s = static_cast<WriteState*>(png_get_io_ptr(png));
  bool failed = false;
  try {
    s->out->append(reinterpret_cast<const char*>(data), n);
  } catch (const std::exception&) {
    failed = true;
  }
  if (failed) png_error(png, "out of memory for the encoded PNG");
}

void flush_bytes(png_structp) {}

bool write_image(WriteState* s, const png_byte* pixels, png_uint_32 height, png_uint_32 width, int channels,
                 int bits, int compression) {
  static const int kColorTypes[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                    PNG_COLOR_TYPE_RGB_ALPHA};
  if (setjmp(png_jmpbuf(s->png))) return false;
  s->info = png_create_info_struct(s->png);
  if (s->info == nullptr) png_error(s->png, "out of memory for the PNG header");
  png_set_write_fn(s->png, s, write_bytes, flush_bytes);
  png_set_compression_level(s->png, compression < 0 ? Z_DEFAULT_COMPRESSION : compression);
  png_set_compression_mem_level(s->png, MAX_MEM_LEVEL);
  png_set_IHDR(s->png, s->info, width, height, bits, kColorTypes[channels - 1], PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(s->png, s->info);
  if (bits == 16) png_set_swap(s->png);
  const size_t row_bytes = static_cast<size_t>(width) * channels * (bits / 8);
  for (png_uint_32 y = 0; y < height; ++y) png_write_row(s->png, pixels + y * row_bytes);
  png_write_end(s->png, nullptr);
  return true;
}

}  // namespace

Expected<Tensor> decode_png(std::string_view contents, int channels, int bits) {
  if (channels < 0 || channels > 4)
    return Status(Error::invalid_argument, fmt::format("a PNG decodes to 1 to 4 channels (or 0), not {}", channels));
  PngReader reader(contents);
  ReadState* s = reader.get();
  if (s->png == nullptr) return Status(Error::resource_exhausted, "out of memory for a PNG decoder");
  switch (read_header(s, channels, bits)) {
    case HeaderResult::ok: break;
    case HeaderResult::libpng_error: return not_a_png(contents, *s);
    case HeaderResult::too_large:
      return Status(Error::invalid_argument,
                    fmt::format("PNG of {}x{} pixels is too large to decode: the limit is {} pixels, "
                                "{} on a side",
                                s->width, s->height, kMaxPngPixels, kMaxPngSide - 1));
  }
  const int64_t height = s->height, width = s->width;
  Tensor image = Tensor::uninitialized(bits == 8 ? DType::uint8 : DType::uint16, Shape{height, width, s->channels});
  const size_t row_bytes = static_cast<size_t>(width) * s->channels * (bits / 8);
  if (!read_rows(s, static_cast<png_bytep>(image.raw_mutable_data()), row_bytes)) return not_a_png(contents, *s);
  if (s->widen_to_16) widen_rows(image.mutable_data<uint16_t>(), height, width * s->channels);
  return image;
}

Status encode_png(const void* pixels, int64_t height, int64_t width, int channels, int bits, int compression,
                  std::string* out) {
  if (channels < 1 || channels > 4)
    return Status(Error::invalid_argument, fmt::format("a PNG has 1, 2, 3 or 4 channels, not {}", channels));
  WriteState s{};
  s.out = out;
  s.png = png_create_write_struct(PNG_LIBPNG_VER_STRING, s.message, on_error, on_warning);
  if (s.png == nullptr) return Status(Error::resource_exhausted, "out of memory for a PNG encoder");
  const bool ok = write_image(&s, static_cast<const png_byte*>(pixels), static_cast<png_uint_32>(height),
                              static_cast<png_uint_32>(width), channels, bits, compression);
  png_destroy_write_struct(&s.png, s.info != nullptr ? &s.info : nullptr);
  if (!ok)
    return Status(Error::invalid_argument,
                  fmt::format("cannot encode a {}x{} image with {} channels as PNG: {}", width, height, channels,
                              s.message));
  return ok_status();
}

}  // namespace tagflow::ops
