// The image codec ops with TensorFlow's signatures (core/ops/image_ops.cc)
// and kernels' rules (core/kernels/image/decode_image_op.cc,
// encode_png_op.cc): DecodeJpeg, DecodePng, DecodeImage and EncodePng.
//
// As in TensorFlow, the three decoders tell the format from the first
// bytes, so DecodeJpeg decodes a PNG and DecodePng a JPEG; DecodePng and
// DecodeImage read a JPEG with TensorFlow's default JPEG settings (fast
// integer DCT). GIF, BMP and WebP are recognised and refused as
// unimplemented. Bytes of no known format go to DecodeJpeg's or
// DecodePng's own decoder, whose message says what is wrong with them;
// DecodeImage refuses them. Wider dtypes are scaled as TensorFlow does:
// uint16 from 8-bit samples is v * 256 for JPEG, v * 257 for PNG; float32
// is v / 255 (JPEG) or v / 65535 (PNG, decoded at 16 bits).
//
// Pixels go through libjpeg (ops/jpeg_io.hpp) and libpng (ops/png_io.hpp).
#include <fmt/format.h>

#include <limits>
#include <string>
#include <string_view>

#include "ops/image_ops.hpp"
#include "ops/jpeg_io.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/png_io.hpp"
#include "ops/shape_fns.hpp"

namespace tagflow::ops {

namespace {

enum class ImageFormat { unknown, jpeg, png, gif, bmp, webp };

// The format the magic bytes at the start of `data` name.
ImageFormat sniff_format(std::string_view data) {
  auto starts_with = [data](std::string_view magic) { return data.substr(0, magic.size()) == magic; };
  if (starts_with(std::string_view("\xFF\xD8\xFF", 3))) return ImageFormat::jpeg;
  if (starts_with(std::string_view("\x89PNG\r\n\x1A\n", 8))) return ImageFormat::png;
  if (starts_with("GIF8")) return ImageFormat::gif;
  if (starts_with("BM")) return ImageFormat::bmp;
  if (starts_with("RIFF") && data.size() > 12 && data.substr(8, 4) == "WEBP") return ImageFormat::webp;
  return ImageFormat::unknown;
}

const char* format_name(ImageFormat f) {
  switch (f) {
    case ImageFormat::jpeg: return "JPEG";
    case ImageFormat::png: return "PNG";
    case ImageFormat::gif: return "GIF";
    case ImageFormat::bmp: return "BMP";
    case ImageFormat::webp: return "WebP";
    case ImageFormat::unknown: break;
  }
  return "unknown";
}

// A uint8 image as `dtype`: uint16 as v * uint16_scale, float32 as
// v * float_scale (TensorFlow's constants, float_scale a float).
Tensor widen(const Tensor& image, DType dtype, uint16_t uint16_scale, float float_scale) {
  if (dtype == image.dtype()) return image;
  Tensor out = Tensor::uninitialized(dtype, image.shape());
  const int64_t n = image.num_elements();
  if (image.dtype() == DType::uint8 && dtype == DType::uint16) {
    const uint8_t* in = image.data<uint8_t>();
    uint16_t* o = out.mutable_data<uint16_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<uint16_t>(in[i] * uint16_scale);
  } else if (image.dtype() == DType::uint8) {
    const uint8_t* in = image.data<uint8_t>();
    float* o = out.mutable_data<float>();
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(in[i]) * float_scale;
  } else {
    const uint16_t* in = image.data<uint16_t>();
    float* o = out.mutable_data<float>();
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(in[i]) * float_scale;
  }
  return out;
}

enum class DecodeOp { jpeg, png, image };

// DecodeJpeg, DecodePng or DecodeImage: the attrs are read once; each call
// decodes one scalar string.
template <DecodeOp Op>
class DecodeKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(int64_t channels, init.attr<int64_t>("channels"));
    if (channels != 0 && channels != 1 && channels != 3 && channels != 4)
      return Status(Error::invalid_argument, fmt::format("channels must be 0, 1, 3 or 4, got {}", channels));
    channels_ = static_cast<int>(channels);
    if constexpr (Op == DecodeOp::jpeg) {
      TF_RETURN_IF_ERROR(read_jpeg_attrs(init));
    } else {
      TF_ASSIGN_OR_RETURN(dtype_, init.attr<DType>("dtype"));
    }
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    const Tensor& contents = ctx.input(0);
    if (contents.dtype() != DType::string || contents.rank() != 0)
      return Status(Error::invalid_argument,
                    fmt::format("contents must be a scalar string, got {}{}", dtype_name(contents.dtype()),
                                contents.shape().to_string()));
    const std::string& data = contents.scalar_value<std::string>();
    if (data.empty()) return Status(Error::invalid_argument, "contents is empty: no image to decode");
    TF_ASSIGN_OR_RETURN(Tensor image, decode(data));
    ctx.set_output(0, std::move(image));
    return ok_status();
  }

 private:
  // DecodeJpeg's own attrs; the dct_method names are TensorFlow's, "" its
  // default, the fast integer DCT.
  Status read_jpeg_attrs(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(int64_t ratio, init.attr<int64_t>("ratio"));
    if (ratio != 1 && ratio != 2 && ratio != 4 && ratio != 8)
      return Status(Error::invalid_argument, fmt::format("ratio must be 1, 2, 4, or 8, got {}", ratio));
    jpeg_.ratio = static_cast<int>(ratio);
    TF_ASSIGN_OR_RETURN(jpeg_.fancy_upscaling, init.attr<bool>("fancy_upscaling"));
    TF_ASSIGN_OR_RETURN(jpeg_.try_recover_truncated, init.attr<bool>("try_recover_truncated"));
    TF_ASSIGN_OR_RETURN(jpeg_.acceptable_fraction, init.attr<float>("acceptable_fraction"));
    TF_ASSIGN_OR_RETURN(std::string dct, init.attr<std::string>("dct_method"));
    if (!dct.empty() && dct != "INTEGER_FAST" && dct != "INTEGER_ACCURATE")
      return Status(Error::invalid_argument,
                    fmt::format("dct_method must be one of {{'', 'INTEGER_FAST', 'INTEGER_ACCURATE'}}, got '{}'",
                                abbreviate(dct)));
    jpeg_.accurate_dct = dct == "INTEGER_ACCURATE";
    return ok_status();
  }

  Expected<Tensor> decode(std::string_view data) const {
    const ImageFormat format = sniff_format(data);
    switch (format) {
      case ImageFormat::jpeg: return decode_as_jpeg(data);
      case ImageFormat::png: return decode_as_png(data);
      case ImageFormat::gif:
      case ImageFormat::bmp:
      case ImageFormat::webp:
        return Status(Error::unimplemented,
                      fmt::format("contents is a {} image; tagflow decodes JPEG and PNG images only",
                                  format_name(format)));
      case ImageFormat::unknown: break;
    }
    if (Op == DecodeOp::jpeg) return decode_as_jpeg(data);
    if (Op == DecodeOp::png) return decode_as_png(data);
    return Status(Error::invalid_argument,
                  fmt::format("Unknown image file format: contents ({} bytes) starts with the magic bytes of none "
                              "of JPEG, PNG, GIF, BMP or WebP",
                              data.size()));
  }

  Expected<Tensor> decode_as_jpeg(std::string_view data) const {
    if (channels_ == 4) return Status(Error::invalid_argument, "JPEG does not support 4 channels");
    JpegDecodeOptions options = jpeg_;
    options.channels = channels_;
    TF_ASSIGN_OR_RETURN(Tensor image, decode_jpeg(data, options));
    return widen(image, dtype_, 256, static_cast<float>(1.0 / 255));
  }

  Expected<Tensor> decode_as_png(std::string_view data) const {
    TF_ASSIGN_OR_RETURN(Tensor image, decode_png(data, channels_, dtype_ == DType::uint8 ? 8 : 16));
    return widen(image, dtype_, 1, static_cast<float>(1.0 / 65535));
  }

  int channels_ = 0;
  DType dtype_ = DType::uint8;  // DecodeJpeg's output is always uint8
  JpegDecodeOptions jpeg_;      // TensorFlow's defaults unless DecodeJpeg's attrs say otherwise
};

// EncodePng: [..., height, width, channels] to a string per image, of the
// leading dimensions' shape.
class EncodePngKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(int64_t compression, init.attr<int64_t>("compression"));
    if (compression < -1 || compression > 9)
      return Status(Error::invalid_argument, fmt::format("compression should be in [-1,9], got {}", compression));
    compression_ = static_cast<int>(compression);
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    const Tensor& image = ctx.input(0);
    if (image.dtype() != DType::uint8 && image.dtype() != DType::uint16)
      return Status(Error::invalid_argument,
                    "image must have type uint8 or uint16, got " + dtype_name(image.dtype()));
    const int r = image.rank();
    if (r < 3)
      return Status(Error::invalid_argument, "image must have rank 3 or more ([..., height, width, channels]), got "
                                                 "shape " + image.shape().to_string());
    const int64_t height = image.dim(r - 3), width = image.dim(r - 2), channels = image.dim(r - 1);
    if (channels < 1 || channels > 4)
      return Status(Error::invalid_argument, fmt::format("image must have 1, 2, 3, or 4 channels, got {}", channels));
    if (image.num_elements() >= std::numeric_limits<int32_t>::max())
      return Status(Error::invalid_argument, "image cannot have >= int32 max elements, shape " +
                                                 image.shape().to_string());
    Shape batch;
    for (int i = 0; i < r - 3; ++i) batch.add_dim(image.dim(i));
    Tensor out(DType::string, batch);
    const int bits = image.dtype() == DType::uint8 ? 8 : 16;
    const int64_t image_bytes = height * width * channels * (bits / 8);
    const char* pixels = static_cast<const char*>(image.raw_data());
    std::string* o = out.mutable_data<std::string>();
    for (int64_t i = 0; i < batch.num_elements(); ++i)
      TF_RETURN_IF_ERROR(encode_png(pixels + i * image_bytes, height, width, static_cast<int>(channels), bits,
                                    compression_, &o[i]));
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  int compression_ = -1;
};

// The decoders' static shape: [height, width, channels], channels known
// when the attr gives it; DecodeImage with expand_animations may also give
// a GIF's [frames, height, width, 3], so its rank is unknown.
Status decode_image_shape(InferenceContext& c) {
  const PartialShape& contents = c.input_shape(0);
  if (shape::known_rank(contents) && shape::rank(contents) != 0)
    return c.error("contents must be a scalar, not " + contents.to_string());
  const int64_t channels = c.int_attr("channels", 0);
  if (channels < 0) return c.error(fmt::format("channels must be non-negative, got {}", channels));
  if (c.op() == "DecodeImage" && c.bool_attr("expand_animations", true)) {
    c.set_output(0, shape::unknown());
    return ok_status();
  }
  c.set_output(0, shape::known({-1, -1, channels == 0 ? -1 : channels}));
  return ok_status();
}

// EncodePng: one string per image, the leading dimensions.
Status encode_png_shape(InferenceContext& c) {
  const PartialShape& image = c.input_shape(0);
  if (!shape::known_rank(image)) return ok_status();
  if (shape::rank(image) < 3) return c.error("image must have rank 3 or more, not " + image.to_string());
  c.set_output(0, shape::sub(image, 0, shape::rank(image) - 3));
  return ok_status();
}

}  // namespace

void register_image_codec_ops(OpRegistry& r) {
  register_builtin(r, OpDef("DecodeJpeg").shape_fn(decode_image_shape).expensive()
                          .input("contents: string")
                          .output("image: uint8")
                          .attr("channels", "int", 0)
                          .attr("ratio", "int", 1)
                          .attr("fancy_upscaling", "bool", true)
                          .attr("try_recover_truncated", "bool", false)
                          .attr("acceptable_fraction", "float", 1.0f)
                          .attr("dct_method", "string", std::string())
                          .kernel(make_kernel_factory<DecodeKernel<DecodeOp::jpeg>>()));
  register_builtin(r, OpDef("DecodePng").shape_fn(decode_image_shape).expensive()
                          .input("contents: string")
                          .output("image: dtype")
                          .attr("channels", "int", 0)
                          .type_attr("dtype", {DType::uint8, DType::uint16}, DType::uint8)
                          .kernel(make_kernel_factory<DecodeKernel<DecodeOp::png>>()));
  register_builtin(r, OpDef("DecodeImage").shape_fn(decode_image_shape).expensive()
                          .input("contents: string")
                          .output("image: dtype")
                          .attr("channels", "int", 0)
                          .type_attr("dtype", {DType::uint8, DType::uint16, DType::float32}, DType::uint8)
                          .attr("expand_animations", "bool", true)
                          .kernel(make_kernel_factory<DecodeKernel<DecodeOp::image>>()));
  register_builtin(r, OpDef("EncodePng").shape_fn(encode_png_shape).expensive()
                          .input("image: T")
                          .output("contents: string")
                          .attr("compression", "int", -1)
                          .type_attr("T", {DType::uint8, DType::uint16}, DType::uint8)
                          .kernel(make_kernel_factory<EncodePngKernel>()));
}

}  // namespace tagflow::ops
