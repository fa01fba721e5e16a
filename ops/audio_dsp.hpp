// The signal processing of TensorFlow's speech front end, behind the
// AudioSpectrogram and Mfcc kernels (ops/audio_ops.cpp): a windowed FFT
// spectrogram, a mel filterbank, the log floor and a DCT, each computed in
// double with TensorFlow's formulas and in its order of operations
// (spectrogram.cc, mfcc_mel_filterbank.cc, mfcc.cc, mfcc_dct.cc), so that
// float32 results agree with TensorFlow's to rounding.
//
// A Spectrogram or an Mfcc is made for one kernel call and used by that
// call alone (its work buffers are members); nothing here is shared.
// scripts/audio_reference.py re-implements the same arithmetic in NumPy
// for the tests.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include "ops/status.hpp"
#include "ops/tensor.hpp"

namespace tagflow::ops::audio {

// The smallest power of two >= n (1 for n <= 1): the FFT length of a
// window of n samples.
int64_t next_power_of_two(int64_t n);
// The frequency bins of a spectrogram with this window: 1 + fft_length / 2.
int64_t spectrogram_bins(int64_t window_size);
// Windows of `window_size` samples, `stride` apart, that fit in `samples`
// (0 when not even one does). window_size > 1, stride > 0.
int64_t spectrogram_frames(int64_t samples, int64_t window_size, int64_t stride);

// The squared-magnitude spectrogram of one channel: frame f is the FFT of
// samples [f * stride, f * stride + window_size) times a periodic Hann
// window, zero-padded to the FFT length.
class Spectrogram {
 public:
  // window_size > 1, stride > 0 (the kernel checks its attrs).
  Spectrogram(int64_t window_size, int64_t stride);

  int64_t bins() const { return fft_length_ / 2 + 1; }
  // Writes frames x bins squared magnitudes, frame-major, for the channel
  // whose sample i is samples[i * step]; the caller has checked that
  // `frames` windows fit.
  void squared_magnitudes(const float* samples, int64_t step, int64_t frames, float* out);

 private:
  void prepare_fft();
  void fft_in_place();

  int64_t window_size_;
  int64_t stride_;
  int64_t fft_length_;
  // Made on the first frame, so that a huge window over a short input
  // (no frames) allocates nothing.
  std::vector<double> window_;
  std::vector<std::complex<double>> twiddles_;  // exp(-2 pi i k / N), k < N / 2
  std::vector<int64_t> bit_reversed_;
  std::vector<std::complex<double>> buffer_;
};

// What the Mfcc op's attrs and inputs choose.
struct MfccOptions {
  double upper_frequency_limit = 4000;
  double lower_frequency_limit = 20;
  int64_t filterbank_channel_count = 40;
  int64_t dct_coefficient_count = 13;
};

// Mel-frequency cepstral coefficients of squared-magnitude spectrogram
// frames: triangular mel bands over the bins' magnitudes (DC excluded, as
// HTK does), the log of each band floored at 1e-12, then a DCT-II scaled
// by sqrt(2 / bands).
class Mfcc {
 public:
  // An invalid_argument error names the option or input that TensorFlow's
  // Mfcc refuses: fewer than 2 bins, a sample rate <= 0, a negative lower
  // limit, an upper limit not above it, a non-positive band or coefficient
  // count, more coefficients than bands. Its tables are tensors, so that a
  // step's memory budget counts them.
  static Expected<Mfcc> make(int64_t bins, double sample_rate, const MfccOptions& options);

  int64_t coefficients() const { return dct_.dim(0); }
  // One frame: bins() squared magnitudes in, coefficients() values out.
  void compute(const float* frame, float* out);

 private:
  Mfcc() = default;
  void build_filterbank(double sample_rate, const MfccOptions& options);
  void build_dct();
  void mel_bands(const float* frame);

  int64_t bins_ = 0;
  int64_t bands_ = 0;
  // The bins [start_bin_, end_bin_] that the bands cover.
  int64_t start_bin_ = 0;
  int64_t end_bin_ = 0;
  // Per bin: the band whose falling edge it lies on (-1: below the first
  // band's peak), and its weight in that band (1 - weight goes to the next).
  std::vector<int64_t> band_of_bin_;
  std::vector<double> weight_of_bin_;
  Tensor dct_;    // float64 [coefficients, bands]
  Tensor bands_buffer_;  // float64 [bands]: one frame's log mel energies
};

}  // namespace tagflow::ops::audio
