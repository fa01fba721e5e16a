#include "ops/audio_dsp.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tagflow::ops::audio {

namespace {

// pi as TensorFlow's audio code writes it (some platforms lack M_PI).
const double kPi = std::atan(1.0) * 4;
// The smallest mel energy whose log is taken (TensorFlow's kFilterbankFloor).
constexpr double kFilterbankFloor = 1e-12;

// HTK's mel scale, as TensorFlow's filterbank uses it.
double freq_to_mel(double freq) { return 1127.0 * std::log1p(freq / 700.0); }

// A bin index from a non-negative double, truncated as C++'s int cast
// does; values past `limit` become `limit`, which means the same to the
// filterbank and keeps the cast defined.
int64_t bin_index(double value, int64_t limit) {
  if (!(value < static_cast<double>(limit))) return limit;
  return static_cast<int64_t>(value);
}

// A float64 scratch vector whose bytes the step's memory budget counts.
Tensor doubles(int64_t n) { return Tensor::uninitialized(DType::float64, Shape{n}); }

Status mfcc_error(const std::string& what) {
  return Status(Error::invalid_argument, "Mfcc: " + what);
}

}  // namespace

int64_t next_power_of_two(int64_t n) {
  int64_t p = 1;
  while (p < n && p < (int64_t{1} << 62)) p <<= 1;  // the bound keeps the shift defined
  return p;
}

int64_t spectrogram_bins(int64_t window_size) { return 1 + next_power_of_two(window_size) / 2; }

int64_t spectrogram_frames(int64_t samples, int64_t window_size, int64_t stride) {
  if (samples < window_size) return 0;
  return 1 + (samples - window_size) / stride;
}

// --- Spectrogram --------------------------------------------------------------

Spectrogram::Spectrogram(int64_t window_size, int64_t stride)
    : window_size_(window_size), stride_(stride), fft_length_(next_power_of_two(window_size)) {}

void Spectrogram::prepare_fft() {
  // The periodic Hann window: one period of a raised cosine over exactly
  // window_size samples (the symmetric one would divide by window_size - 1).
  window_.resize(static_cast<size_t>(window_size_));
  const double n = static_cast<double>(window_size_);
  for (int64_t i = 0; i < window_size_; ++i)
    window_[i] = 0.5 - 0.5 * std::cos((2 * kPi * static_cast<double>(i)) / n);

  const int64_t half = fft_length_ / 2;
  twiddles_.resize(static_cast<size_t>(half));
  for (int64_t k = 0; k < half; ++k) {
    const double angle = 2 * kPi * static_cast<double>(k) / static_cast<double>(fft_length_);
    twiddles_[k] = {std::cos(angle), -std::sin(angle)};
  }
  int log2 = 0;
  while ((int64_t{1} << log2) < fft_length_) ++log2;
  bit_reversed_.resize(static_cast<size_t>(fft_length_));
  for (int64_t i = 0; i < fft_length_; ++i) {
    int64_t r = 0;
    for (int b = 0; b < log2; ++b)
      if (i & (int64_t{1} << b)) r |= int64_t{1} << (log2 - 1 - b);
    bit_reversed_[i] = r;
  }
  buffer_.resize(static_cast<size_t>(fft_length_));
}

// Radix-2 decimation in time over buffer_, whose input is already in
// bit-reversed order; the products are written out because std::complex's
// operator* takes a slow path for infinities.
void Spectrogram::fft_in_place() {
  for (int64_t len = 2; len <= fft_length_; len <<= 1) {
    const int64_t half = len / 2;
    const int64_t step = fft_length_ / len;
    for (int64_t start = 0; start < fft_length_; start += len) {
      for (int64_t k = 0; k < half; ++k) {
        const std::complex<double> w = twiddles_[k * step];
        std::complex<double>& a = buffer_[start + k];
        std::complex<double>& b = buffer_[start + k + half];
        const std::complex<double> v(b.real() * w.real() - b.imag() * w.imag(),
                                     b.real() * w.imag() + b.imag() * w.real());
        b = a - v;
        a += v;
      }
    }
  }
}

void Spectrogram::squared_magnitudes(const float* samples, int64_t step, int64_t frames, float* out) {
  if (frames == 0) return;
  if (window_.empty()) prepare_fft();
  const int64_t bins = this->bins();
  for (int64_t f = 0; f < frames; ++f) {
    const float* first = samples + f * stride_ * step;
    for (int64_t j = 0; j < window_size_; ++j)
      buffer_[bit_reversed_[j]] = {static_cast<double>(first[j * step]) * window_[j], 0.0};
    for (int64_t j = window_size_; j < fft_length_; ++j) buffer_[bit_reversed_[j]] = 0.0;
    fft_in_place();
    float* row = out + f * bins;
    for (int64_t k = 0; k < bins; ++k) {
      const double re = buffer_[k].real();
      const double im = buffer_[k].imag();
      row[k] = static_cast<float>(re * re + im * im);
    }
  }
}

// --- Mfcc ---------------------------------------------------------------------

Expected<Mfcc> Mfcc::make(int64_t bins, double sample_rate, const MfccOptions& o) {
  const double lower = o.lower_frequency_limit;
  const double upper = o.upper_frequency_limit;
  if (bins < 2)
    return mfcc_error(fmt::format("the spectrogram has {} frequency bins, at least 2 are needed", bins));
  if (!(sample_rate > 0)) return mfcc_error(fmt::format("sample_rate must be positive, got {}", sample_rate));
  if (o.filterbank_channel_count < 1)
    return mfcc_error(fmt::format("filterbank_channel_count must be positive, got {}", o.filterbank_channel_count));
  if (!std::isfinite(lower) || !std::isfinite(upper))
    return mfcc_error(fmt::format("the frequency limits must be finite, got lower_frequency_limit {} and "
                                  "upper_frequency_limit {}", lower, upper));
  if (lower < 0) return mfcc_error(fmt::format("lower_frequency_limit must be non-negative, got {}", lower));
  if (upper <= lower)
    return mfcc_error(fmt::format("upper_frequency_limit ({}) must be greater than lower_frequency_limit ({})",
                                  upper, lower));
  if (o.dct_coefficient_count < 1)
    return mfcc_error(fmt::format("dct_coefficient_count must be positive, got {}", o.dct_coefficient_count));
  if (o.dct_coefficient_count > o.filterbank_channel_count)
    return mfcc_error(fmt::format("dct_coefficient_count ({}) must not exceed filterbank_channel_count ({})",
                                  o.dct_coefficient_count, o.filterbank_channel_count));
  Mfcc m;
  m.bins_ = bins;
  m.bands_ = o.filterbank_channel_count;
  m.build_filterbank(sample_rate, o);
  m.dct_ = Tensor::uninitialized(DType::float64, Shape{o.dct_coefficient_count, m.bands_});
  m.build_dct();
  m.bands_buffer_ = doubles(m.bands_);
  return m;
}

// Band b rises from the peak of band b - 1 (the lower limit for b = 0) to
// its own peak and falls to the peak of band b + 1; the peaks are equally
// spaced in mel between the limits, the last "peak" being the upper limit.
// A bin on band b's falling edge gives it weight_of_bin_ and the rest to
// band b + 1's rising edge.
void Mfcc::build_filterbank(double sample_rate, const MfccOptions& o) {
  Tensor centers_tensor = doubles(bands_ + 1);
  double* centers = centers_tensor.mutable_data<double>();
  const double mel_low = freq_to_mel(o.lower_frequency_limit);
  const double mel_high = freq_to_mel(o.upper_frequency_limit);
  const double mel_spacing = (mel_high - mel_low) / static_cast<double>(bands_ + 1);
  for (int64_t i = 0; i < bands_ + 1; ++i) centers[i] = mel_low + mel_spacing * static_cast<double>(i + 1);

  // Bin 0 (DC) is never used: the first bin is rounded up past the lower limit.
  const double hz_per_bin = 0.5 * sample_rate / static_cast<double>(bins_ - 1);
  start_bin_ = bin_index(1.5 + o.lower_frequency_limit / hz_per_bin, bins_);
  end_bin_ = bin_index(o.upper_frequency_limit / hz_per_bin, bins_);

  band_of_bin_.assign(static_cast<size_t>(bins_), -2);
  weight_of_bin_.assign(static_cast<size_t>(bins_), 0.0);
  int64_t band = 0;
  for (int64_t i = start_bin_; i <= end_bin_ && i < bins_; ++i) {
    const double mel = freq_to_mel(static_cast<double>(i) * hz_per_bin);
    while (band < bands_ && centers[band] < mel) ++band;
    const int64_t b = band - 1;
    band_of_bin_[i] = b;
    weight_of_bin_[i] = b >= 0 ? (centers[b + 1] - mel) / (centers[b + 1] - centers[b])
                               : (centers[0] - mel) / (centers[0] - mel_low);
  }
}

// DCT-II with TensorFlow's scaling: sqrt(2 / bands) for every coefficient,
// the first included.
void Mfcc::build_dct() {
  const int64_t n = bands_;
  const double norm = std::sqrt(2.0 / static_cast<double>(n));
  const double arg = kPi / static_cast<double>(n);
  double* table = dct_.mutable_data<double>();
  for (int64_t i = 0; i < coefficients(); ++i)
    for (int64_t j = 0; j < n; ++j)
      table[i * n + j] = norm * std::cos(static_cast<double>(i) * arg * (static_cast<double>(j) + 0.5));
}

void Mfcc::mel_bands(const float* frame) {
  double* out = bands_buffer_.mutable_data<double>();
  std::fill(out, out + bands_, 0.0);
  for (int64_t i = start_bin_; i <= end_bin_; ++i) {
    const double magnitude = std::sqrt(static_cast<double>(frame[i]));
    const double weighted = magnitude * weight_of_bin_[i];
    const int64_t b = band_of_bin_[i];
    if (b >= 0) out[b] += weighted;
    if (b + 1 < bands_) out[b + 1] += magnitude - weighted;
  }
}

void Mfcc::compute(const float* frame, float* out) {
  // An upper limit above the Nyquist frequency puts the last band past the
  // spectrogram: TensorFlow's filterbank then gives no bands and its DCT of
  // nothing is all zeros, which is what its users' graphs see.
  if (end_bin_ >= bins_) {
    std::fill(out, out + coefficients(), 0.0f);
    return;
  }
  mel_bands(frame);
  double* log_bands = bands_buffer_.mutable_data<double>();
  for (int64_t j = 0; j < bands_; ++j) {
    double v = log_bands[j];
    if (v < kFilterbankFloor) v = kFilterbankFloor;  // NaN stays NaN
    log_bands[j] = std::log(v);
  }
  const double* table = dct_.data<double>();
  for (int64_t i = 0; i < coefficients(); ++i) {
    double sum = 0.0;
    for (int64_t j = 0; j < bands_; ++j) sum += table[i * bands_ + j] * log_bands[j];
    out[i] = static_cast<float>(sum);
  }
}

}  // namespace tagflow::ops::audio
