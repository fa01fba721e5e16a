// TensorFlow's audio ops (core/ops/audio_ops.cc), the front end of its
// speech examples: DecodeWav and EncodeWav (the WAV format: wav_io.hpp),
// AudioSpectrogram and Mfcc (the arithmetic: audio_dsp.hpp). Signatures,
// attrs, shape rules and the cases refused are TensorFlow's; results agree
// with its kernels' to float rounding. All four are stateless and
// TensorFlow declares none of them differentiable.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "ops/array_ops.hpp"
#include "ops/audio_dsp.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/wav_io.hpp"

namespace tagflow::ops {

namespace {

Status invalid(const std::string& what) { return Status(Error::invalid_argument, what); }

// TensorFlow reads these int attrs as int32: a value outside is refused.
Expected<int64_t> int32_attr(const KernelInit& init, const std::string& name) {
  TF_ASSIGN_OR_RETURN(int64_t v, init.attr<int64_t>(name));
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())
    return invalid(fmt::format("attr '{}' is {}, which does not fit in an int32", name, v));
  return v;
}

Status expect_input(const Tensor& t, const char* name, DType dtype, int rank) {
  if (t.dtype() != dtype)
    return invalid(fmt::format("{} must be {}, not {}", name, dtype_name(dtype), dtype_name(t.dtype())));
  if (t.rank() != rank)
    return invalid(rank == 0 ? fmt::format("{} must be a scalar, got shape {}", name, t.shape().to_string())
                             : fmt::format("{} must be {}-dimensional, got shape {}", name, rank,
                                           t.shape().to_string()));
  return ok_status();
}

// --- DecodeWav ----------------------------------------------------------------

// The decoded samples fitted to the desired shape: frames past the file's
// are zeros; channels past its last repeat the last, as a mono file spread
// over stereo; channels and frames beyond those desired are dropped.
Tensor fit_samples(const wav::DecodedWav& decoded, const Shape& shape) {
  Tensor out(DType::float32, shape);
  float* o = out.mutable_data<float>();
  const int64_t frames = std::min(shape.dim(0), decoded.frames);
  const int64_t channels = shape.dim(1);
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t c = 0; c < channels; ++c)
      o[f * channels + c] = decoded.samples[f * decoded.channels + std::min(c, decoded.channels - 1)];
  return out;
}

class DecodeWavKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(desired_channels_, int32_attr(init, "desired_channels"));
    TF_ASSIGN_OR_RETURN(desired_samples_, int32_attr(init, "desired_samples"));
    if (desired_channels_ < -1)
      return invalid(fmt::format("desired_channels must be >= -1, got {}", desired_channels_));
    if (desired_samples_ < -1)
      return invalid(fmt::format("desired_samples must be >= -1, got {}", desired_samples_));
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    const Tensor& contents = ctx.input(0);
    TF_RETURN_IF_ERROR(expect_input(contents, "contents", DType::string, 0));
    const std::string& file = contents.scalar_value<std::string>();
    if (file.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
      return invalid(fmt::format("WAV contents are too large: {} bytes, the limit is 2^31 - 1", file.size()));
    TF_ASSIGN_OR_RETURN(wav::DecodedWav decoded, wav::decode(file));
    const int64_t samples = desired_samples_ == -1 ? decoded.frames : desired_samples_;
    const int64_t channels = desired_channels_ == -1 ? decoded.channels : desired_channels_;
    TF_ASSIGN_OR_RETURN(Shape shape, Shape::make({samples, channels}));
    ctx.set_output(0, fit_samples(decoded, shape));
    ctx.set_output(1, Tensor::scalar<int32_t>(static_cast<int32_t>(decoded.sample_rate)));
    return ok_status();
  }

 private:
  int64_t desired_channels_ = -1;
  int64_t desired_samples_ = -1;
};

// --- EncodeWav ----------------------------------------------------------------

Status encode_wav(KernelContext& ctx) {
  const Tensor& audio = ctx.input(0);
  const Tensor& rate = ctx.input(1);
  TF_RETURN_IF_ERROR(expect_input(audio, "audio", DType::float32, 2));
  TF_RETURN_IF_ERROR(expect_input(rate, "sample_rate", DType::int32, 0));
  if (audio.num_elements() >= std::numeric_limits<int32_t>::max())
    return invalid(fmt::format("cannot encode audio of {} elements: the limit is 2^31 - 1", audio.num_elements()));
  TF_ASSIGN_OR_RETURN(std::string file, wav::encode(audio.data<float>(), audio.dim(0), audio.dim(1),
                                                    rate.scalar_value<int32_t>()));
  ctx.set_output(0, Tensor::string_scalar(std::move(file)));
  return ok_status();
}

// --- AudioSpectrogram -----------------------------------------------------------

class AudioSpectrogramKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(window_size_, int32_attr(init, "window_size"));
    TF_ASSIGN_OR_RETURN(stride_, int32_attr(init, "stride"));
    TF_ASSIGN_OR_RETURN(magnitude_squared_, init.attr<bool>("magnitude_squared"));
    if (window_size_ <= 1) return invalid(fmt::format("window_size must be > 1, got {}", window_size_));
    if (stride_ <= 0) return invalid(fmt::format("stride must be > 0, got {}", stride_));
    return ok_status();
  }

  // input [samples, channels] -> [channels, frames, bins], channel by channel.
  Status compute(KernelContext& ctx) const override {
    const Tensor& input = ctx.input(0);
    TF_RETURN_IF_ERROR(expect_input(input, "input", DType::float32, 2));
    const int64_t channels = input.dim(1);
    const int64_t frames = audio::spectrogram_frames(input.dim(0), window_size_, stride_);
    const int64_t bins = audio::spectrogram_bins(window_size_);
    TF_ASSIGN_OR_RETURN(Shape shape, Shape::make({channels, frames, bins}));
    Tensor out = Tensor::uninitialized(DType::float32, shape);
    float* o = out.mutable_data<float>();
    audio::Spectrogram spectrogram(window_size_, stride_);
    for (int64_t c = 0; c < channels; ++c)
      spectrogram.squared_magnitudes(input.data<float>() + c, channels, frames, o + c * frames * bins);
    if (!magnitude_squared_)
      for (int64_t i = 0; i < out.num_elements(); ++i) o[i] = std::sqrt(o[i]);  // in float, as TensorFlow
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  int64_t window_size_ = 0;
  int64_t stride_ = 0;
  bool magnitude_squared_ = false;
};

// --- Mfcc -----------------------------------------------------------------------

class MfccKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(float upper, init.attr<float>("upper_frequency_limit"));
    TF_ASSIGN_OR_RETURN(float lower, init.attr<float>("lower_frequency_limit"));
    options_.upper_frequency_limit = upper;
    options_.lower_frequency_limit = lower;
    TF_ASSIGN_OR_RETURN(options_.filterbank_channel_count, int32_attr(init, "filterbank_channel_count"));
    TF_ASSIGN_OR_RETURN(options_.dct_coefficient_count, int32_attr(init, "dct_coefficient_count"));
    return ok_status();
  }

  // spectrogram [channels, frames, bins] -> [channels, frames, coefficients].
  Status compute(KernelContext& ctx) const override {
    const Tensor& spectrogram = ctx.input(0);
    const Tensor& rate = ctx.input(1);
    TF_RETURN_IF_ERROR(expect_input(spectrogram, "spectrogram", DType::float32, 3));
    TF_RETURN_IF_ERROR(expect_input(rate, "sample_rate", DType::int32, 0));
    const int64_t bins = spectrogram.dim(2);
    TF_ASSIGN_OR_RETURN(audio::Mfcc mfcc, audio::Mfcc::make(bins, rate.scalar_value<int32_t>(), options_));
    const int64_t rows = spectrogram.dim(0) * spectrogram.dim(1);
    const int64_t n = mfcc.coefficients();
    Tensor out = Tensor::uninitialized(DType::float32, Shape{spectrogram.dim(0), spectrogram.dim(1), n});
    const float* in = spectrogram.data<float>();
    float* o = out.mutable_data<float>();
    for (int64_t r = 0; r < rows; ++r) mfcc.compute(in + r * bins, o + r * n);
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  audio::MfccOptions options_;
};

// --- shape rules ------------------------------------------------------------------

// Input i has the given rank, or an unknown one.
Status with_rank(const InferenceContext& c, int i, int rank, const char* name) {
  const PartialShape& s = c.input_shape(i);
  if (shape::known_rank(s) && shape::rank(s) != rank)
    return c.error(fmt::format("{} must have rank {}, got shape {}", name, rank, s.to_string()));
  return ok_status();
}

// A dimension from an attr where -1 means "as found in the file".
Status desired_dim(const InferenceContext& c, const char* attr, int64_t* dim) {
  *dim = c.int_attr(attr, -1);
  if (*dim < -1) return c.error(fmt::format("{} must be >= -1, got {}", attr, *dim));
  return ok_status();
}

Status decode_wav_shape(InferenceContext& c) {
  TF_RETURN_IF_ERROR(with_rank(c, 0, 0, "contents"));
  int64_t channels = -1, samples = -1;
  TF_RETURN_IF_ERROR(desired_dim(c, "desired_channels", &channels));
  TF_RETURN_IF_ERROR(desired_dim(c, "desired_samples", &samples));
  c.set_output(0, shape::known({samples, channels}));
  c.set_output(1, shape::scalar());
  return ok_status();
}

Status encode_wav_shape(InferenceContext& c) {
  TF_RETURN_IF_ERROR(with_rank(c, 0, 2, "audio"));
  TF_RETURN_IF_ERROR(with_rank(c, 1, 0, "sample_rate"));
  c.set_output(0, shape::scalar());
  return ok_status();
}

Status audio_spectrogram_shape(InferenceContext& c) {
  TF_RETURN_IF_ERROR(with_rank(c, 0, 2, "input"));
  const int64_t window_size = c.int_attr("window_size", 0);
  const int64_t stride = c.int_attr("stride", 0);
  if (window_size <= 1 || window_size > std::numeric_limits<int32_t>::max())
    return c.error(fmt::format("window_size must be > 1 and fit in an int32, got {}", window_size));
  if (stride <= 0) return c.error(fmt::format("stride must be > 0, got {}", stride));
  const PartialShape& in = c.input_shape(0);
  const int64_t samples = shape::dim(in, 0);
  const int64_t frames = samples < 0 ? -1 : audio::spectrogram_frames(samples, window_size, stride);
  c.set_output(0, shape::known({shape::dim(in, 1), frames, audio::spectrogram_bins(window_size)}));
  return ok_status();
}

Status mfcc_shape(InferenceContext& c) {
  TF_RETURN_IF_ERROR(with_rank(c, 0, 3, "spectrogram"));
  TF_RETURN_IF_ERROR(with_rank(c, 1, 0, "sample_rate"));
  const PartialShape& in = c.input_shape(0);
  const int64_t coefficients = c.int_attr("dct_coefficient_count", -1);
  c.set_output(0, shape::known({shape::dim(in, 0), shape::dim(in, 1), coefficients >= 0 ? coefficients : -1}));
  return ok_status();
}

}  // namespace

void register_audio_ops(OpRegistry& r) {
  register_builtin(r, OpDef("DecodeWav").shape_fn(decode_wav_shape)
                          .input("contents: string")
                          .output("audio: float")
                          .output("sample_rate: int32")
                          .attr("desired_channels", "int", -1)
                          .attr("desired_samples", "int", -1)
                          .kernel(make_kernel_factory<DecodeWavKernel>()));
  register_builtin(r, OpDef("EncodeWav").shape_fn(encode_wav_shape)
                          .input("audio: float")
                          .input("sample_rate: int32")
                          .output("contents: string")
                          .kernel_fn(encode_wav));
  register_builtin(r, OpDef("AudioSpectrogram").shape_fn(audio_spectrogram_shape)
                          .input("input: float")
                          .output("spectrogram: float")
                          .attr("window_size", "int")
                          .attr("stride", "int")
                          .attr("magnitude_squared", "bool", false)
                          .kernel(make_kernel_factory<AudioSpectrogramKernel>()));
  register_builtin(r, OpDef("Mfcc").shape_fn(mfcc_shape)
                          .input("spectrogram: float")
                          .input("sample_rate: int32")
                          .output("output: float")
                          .attr("upper_frequency_limit", "float", 4000.0f)
                          .attr("lower_frequency_limit", "float", 20.0f)
                          .attr("filterbank_channel_count", "int", 40)
                          .attr("dct_coefficient_count", "int", 13)
                          .kernel(make_kernel_factory<MfccKernel>()));
}

}  // namespace tagflow::ops
