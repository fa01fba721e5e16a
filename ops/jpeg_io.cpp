// libjpeg reports a fatal error by calling the error manager's error_exit,
// which must not return. Ours formats libjpeg's message and longjmps back to
// the setjmp of the phase that called libjpeg (read_header, read_rows).
// Those two functions touch only C structs and trivially destructible
// locals, so the jump skips no destructor; every C++ object (the output
// Tensor, the Status) lives in decode_jpeg, which the jump never crosses.
#include "ops/jpeg_io.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <csetjmp>
#include <cstdio>  // jpeglib.h needs FILE and size_t declared first
#include <cstring>

#include <jpeglib.h>
#include <jerror.h>

namespace tagflow::ops {

namespace {

struct ErrorManager {
  jpeg_error_mgr pub;  // first, so that libjpeg's pointer to it is ours
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void on_fatal_error(j_common_ptr cinfo) {
  ErrorManager* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// libjpeg counts warnings (data it could decode around) and calls this to
// print them; a library must not write to stderr.
void on_message(j_common_ptr) {}

const JOCTET kFakeEoi[2] = {0xFF, JPEG_EOI};

// The compressed bytes, all in memory. When they run out, libjpeg asks for
// more: that is an error, or, when recovering truncated files, an
// end-of-image marker once (libjpeg then decodes what is missing as flat).
struct MemorySource {
  jpeg_source_mgr pub;  // first, as ErrorManager's
  const JOCTET* data;
  size_t size;
  bool recover_truncated;
  bool gave_fake_eoi;
};

void init_source(j_decompress_ptr cinfo) {
  MemorySource* src = reinterpret_cast<MemorySource*>(cinfo->src);
  src->pub.next_input_byte = src->data;
  src->pub.bytes_in_buffer = src->size;
}

boolean fill_input_buffer(j_decompress_ptr cinfo) {
  MemorySource* src = reinterpret_cast<MemorySource*>(cinfo->src);
  if (src->recover_truncated && !src->gave_fake_eoi) {
    WARNMS(cinfo, JWRN_JPEG_EOF);
    src->gave_fake_eoi = true;
    src->pub.next_input_byte = kFakeEoi;
    src->pub.bytes_in_buffer = sizeof kFakeEoi;
    return TRUE;
  }
  ERREXIT(cinfo, JERR_INPUT_EOF);
  return FALSE;  // not reached: ERREXIT does not return
}

void skip_input_data(j_decompress_ptr cinfo, long count) {
  MemorySource* src = reinterpret_cast<MemorySource*>(cinfo->src);
  if (count <= 0) return;
  if (static_cast<size_t>(count) > src->pub.bytes_in_buffer) {
    src->pub.bytes_in_buffer = 0;
    (void)fill_input_buffer(cinfo);
    return;
  }
  src->pub.next_input_byte += count;
  src->pub.bytes_in_buffer -= static_cast<size_t>(count);
}

void term_source(j_decompress_ptr) {}

// One decompression: libjpeg's state and ours, plain C data.
struct Decoder {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  MemorySource src;
  int components;  // of the output: 1 or 3
  bool cmyk;       // decoded as CMYK, each row converted to RGB
  JDIMENSION rows_read;
};

// Owns a Decoder; destroying a decompressor that was never created is a
// no-op in libjpeg (its memory manager pointer is still null).
class Decompressor {
 public:
  Decompressor() : d_() {}
  ~Decompressor() { jpeg_destroy_decompress(&d_.cinfo); }
  Decompressor(const Decompressor&) = delete;
  Decompressor& operator=(const Decompressor&) = delete;
  Decoder* get() { return &d_; }

 private:
  Decoder d_;
};

// Reads the header and sets the output's colour space, scale, upsampling
// and DCT; false, with the message in d->err, if libjpeg failed.
bool read_header(Decoder* d, const unsigned char* data, size_t size, const JpegDecodeOptions* options) {
  jpeg_decompress_struct* c = &d->cinfo;
  c->err = jpeg_std_error(&d->err.pub);
  d->err.pub.error_exit = on_fatal_error;
  d->err.pub.output_message = on_message;
  if (setjmp(d->err.jump)) return false;
  jpeg_create_decompress(c);
  d->src.pub.init_source = init_source;
  d->src.pub.fill_input_buffer = fill_input_buffer;
  d->src.pub.skip_input_data = skip_input_data;
  d->src.pub.resync_to_restart = jpeg_resync_to_restart;
  d->src.pub.term_source = term_source;
  d->src.data = data;
  d->src.size = size;
  d->src.recover_truncated = options->try_recover_truncated;
  c->src = &d->src.pub;
  jpeg_read_header(c, TRUE);

  // Channels 0 takes the file's, CMYK read as RGB (TensorFlow's rule).
  d->components = options->channels != 0 ? options->channels : (c->num_components < 3 ? c->num_components : 3);
  d->cmyk = d->components == 3 && (c->jpeg_color_space == JCS_CMYK || c->jpeg_color_space == JCS_YCCK);
  c->out_color_space = d->components == 1 ? JCS_GRAYSCALE : d->cmyk ? JCS_CMYK : JCS_RGB;
  c->do_fancy_upsampling = options->fancy_upscaling ? TRUE : FALSE;
  c->scale_num = 1;
  c->scale_denom = static_cast<unsigned int>(options->ratio);
  c->dct_method = options->accurate_dct ? JDCT_ISLOW : JDCT_IFAST;
  jpeg_calc_output_dimensions(c);
  return true;
}

// CMYK as libjpeg decodes it to RGB, TensorFlow's conversion: Adobe's
// files store the inks inverted.
void cmyk_to_rgb(const JSAMPLE* cmyk, JSAMPLE* rgb, JDIMENSION width, bool adobe) {
  for (JDIMENSION x = 0; x < width; ++x, cmyk += 4, rgb += 3) {
    const int k = cmyk[3];
    for (int i = 0; i < 3; ++i)
      rgb[i] = static_cast<JSAMPLE>(adobe ? k * cmyk[i] / 255 : (255 - k) * (255 - cmyk[i]) / 255);
  }
}

// Decodes the rows into `out` (output_height rows of output_width *
// components bytes), counting them in d->rows_read; false, with the
// message in d->err, if libjpeg failed.
bool read_rows(Decoder* d, JSAMPLE* out) {
  jpeg_decompress_struct* c = &d->cinfo;
  if (setjmp(d->err.jump)) return false;
  jpeg_start_decompress(c);
  const size_t row_bytes = static_cast<size_t>(c->output_width) * static_cast<size_t>(d->components);
  JSAMPROW cmyk_row = nullptr;
  if (d->cmyk)
    cmyk_row = (*c->mem->alloc_sarray)(reinterpret_cast<j_common_ptr>(c), JPOOL_IMAGE, c->output_width * 4, 1)[0];
  while (c->output_scanline < c->output_height) {
    JSAMPROW row = out + c->output_scanline * row_bytes;
    JSAMPROW target = d->cmyk ? cmyk_row : row;
    // 0 rows: the source suspended, which ends the image here.
    if (jpeg_read_scanlines(c, &target, 1) != 1) break;
    if (d->cmyk) cmyk_to_rgb(cmyk_row, row, c->output_width, c->saw_Adobe_marker);
    ++d->rows_read;
  }
  if (d->rows_read == c->output_height)
    jpeg_finish_decompress(c);
  else
    jpeg_abort_decompress(c);
  return true;
}

Status not_a_jpeg(std::string_view contents, const Decoder& d) {
  return Status(Error::invalid_argument,
                fmt::format("contents ({} bytes) is not a valid JPEG: {}", contents.size(), d.err.message));
}

// The rows an image ended without, as TensorFlow fills them: repeating the
// last row read when recovering truncated files; else black, if enough of
// the image was read.
Status complete_rows(uint8_t* pixels, int64_t rows_read, int64_t height, int64_t row_bytes,
                     const JpegDecodeOptions& options) {
  uint8_t* missing = pixels + rows_read * row_bytes;
  const int64_t missing_bytes = (height - rows_read) * row_bytes;
  if (options.try_recover_truncated) {
    for (int64_t y = rows_read; y < height; ++y, missing += row_bytes) {
      if (y == 0) std::memset(missing, 0, static_cast<size_t>(row_bytes));
      else std::memcpy(missing, missing - row_bytes, static_cast<size_t>(row_bytes));
    }
    return ok_status();
  }
  const float fraction = static_cast<float>(rows_read) / static_cast<float>(height);
  if (fraction < std::min(1.0f, options.acceptable_fraction))
    return Status(Error::invalid_argument,
                  fmt::format("JPEG data ended after {} of its {} rows, less than acceptable_fraction {}",
                              rows_read, height, options.acceptable_fraction));
  std::memset(missing, 0, static_cast<size_t>(missing_bytes));
  return ok_status();
}

}  // namespace

Expected<Tensor> decode_jpeg(std::string_view contents, const JpegDecodeOptions& options) {
  if (options.ratio != 1 && options.ratio != 2 && options.ratio != 4 && options.ratio != 8)
    return Status(Error::invalid_argument, fmt::format("ratio must be 1, 2, 4, or 8, got {}", options.ratio));
  if (options.channels != 0 && options.channels != 1 && options.channels != 3)
    return Status(Error::invalid_argument,
                  fmt::format("a JPEG decodes to 1 or 3 channels (or 0: the file's), not {}", options.channels));
  Decompressor decompressor;
  Decoder* d = decompressor.get();
  if (!read_header(d, reinterpret_cast<const unsigned char*>(contents.data()), contents.size(), &options))
    return not_a_jpeg(contents, *d);
  const int64_t height = d->cinfo.output_height, width = d->cinfo.output_width;
  // TensorFlow bounds the file's components, not the channels asked for:
  // a CMYK file decoded to RGB is measured at 4 bytes a pixel.
  const int64_t file_components = d->cinfo.num_components;
  const int64_t bytes = height * width * file_components;
  if (bytes >= kMaxJpegBytes)
    return Status(Error::invalid_argument,
                  fmt::format("JPEG of {}x{} pixels with {} components is too large to decode: {} bytes, the limit is {}",
                              width, height, file_components, bytes, kMaxJpegBytes));
  if (d->cinfo.output_components != (d->cmyk ? 4 : d->components))
    return Status(Error::internal, fmt::format("libjpeg decodes {} components where {} were asked for",
                                               d->cinfo.output_components, d->components));
  Tensor image = Tensor::uninitialized(DType::uint8, Shape{height, width, d->components});
  if (!read_rows(d, image.mutable_data<uint8_t>())) return not_a_jpeg(contents, *d);
  if (d->rows_read < height)
    TF_RETURN_IF_ERROR(complete_rows(image.mutable_data<uint8_t>(), d->rows_read, height, width * d->components,
                                     options));
  return image;
}

}  // namespace tagflow::ops
