#!/usr/bin/python3
"""Reference values for tests/ops/audio_ops_test.cpp.

Reproduces, in float64 NumPy, what TensorFlow's AudioSpectrogram and Mfcc
kernels compute (tensorflow/core/kernels/spectrogram.cc, mfcc.cc,
mfcc_mel_filterbank.cc, mfcc_dct.cc), written from their documented
algorithm rather than from tagflow's code:

  AudioSpectrogram: frames of window_size samples, stride apart (none when
  the input is shorter than one window), times a periodic Hann window
  0.5 - 0.5 cos(2 pi n / window_size), zero-padded to the next power of
  two, FFT (numpy.fft.rfft here), |X|^2 rounded to float32, and sqrt in
  float32 unless magnitude_squared.

  Mfcc: mel(f) = 1127 ln(1 + f / 700); filterbank_channel_count + 1 band
  peaks equally spaced in mel strictly above mel(lower) up to mel(upper);
  bins spaced sample_rate / 2 / (bins - 1) Hz apart; bins from
  int(1.5 + lower / hz_per_bin) to int(upper / hz_per_bin) used; each bin
  lies on the falling edge of the band whose peak is the last one below it
  and the rising edge of the next, weighted by its mel distance; band
  energies are sums of sqrt(power); log with a floor of 1e-12; DCT-II
  sqrt(2 / N) cos(pi i (j + 0.5) / N) for coefficients i < dct_coefficient_count.

The test signals are made the same way in the C++ test: samples on the
16-bit grid (k / 32768), from a sine or a fixed linear congruential
generator. Run: /usr/bin/python3 scripts/audio_reference.py
"""
import numpy as np


def lcg_samples(n, seed):
    """n samples k / 32768, k = bits 15..30 of a 31-bit LCG, minus 32768."""
    out, state = [], seed
    for _ in range(n):
        state = (state * 1103515245 + 12345) % (1 << 31)
        out.append(((state >> 15) % 65536 - 32768) / 32768.0)
    return np.array(out, dtype=np.float32)


def sine_samples(n, cycles_per_sample, amplitude):
    k = np.round(amplitude * 32768 * np.sin(2 * np.pi * cycles_per_sample * np.arange(n)))
    return (k / 32768.0).astype(np.float32)


def spectrogram(audio, window_size, stride, magnitude_squared):
    """audio float32 [samples, channels] -> float32 [channels, frames, bins]."""
    samples, channels = audio.shape
    fft_length = 1
    while fft_length < window_size:
        fft_length *= 2
    bins = fft_length // 2 + 1
    frames = 0 if samples < window_size else 1 + (samples - window_size) // stride
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(window_size) / window_size)
    out = np.zeros((channels, frames, bins), dtype=np.float32)
    for c in range(channels):
        for f in range(frames):
            piece = audio[f * stride:f * stride + window_size, c].astype(np.float64) * window
            power = np.abs(np.fft.rfft(piece, n=fft_length)) ** 2
            out[c, f] = power.astype(np.float32)
    return out if magnitude_squared else np.sqrt(out)


def mel(freq):
    return 1127.0 * np.log1p(np.asarray(freq, dtype=np.float64) / 700.0)


def mel_matrix(bins, sample_rate, bands, lower, upper):
    """[bands, bins]: how much of each bin's magnitude goes to each band."""
    peaks = mel(lower) + (mel(upper) - mel(lower)) / (bands + 1) * np.arange(1, bands + 2)
    hz_per_bin = 0.5 * sample_rate / (bins - 1)
    start, end = int(1.5 + lower / hz_per_bin), int(upper / hz_per_bin)
    m = np.zeros((bands, bins))
    for i in range(start, min(end, bins - 1) + 1):
        mi = mel(i * hz_per_bin)
        below = int(np.sum(peaks[:bands] < mi)) - 1  # the band whose falling edge holds bin i
        left = peaks[below] if below >= 0 else mel(lower)
        w = (peaks[below + 1] - mi) / (peaks[below + 1] - left)
        if below >= 0:
            m[below, i] += w
        if below + 1 < bands:
            m[below + 1, i] += 1 - w
    return m, end


def mfcc(spec, sample_rate, upper=4000.0, lower=20.0, bands=40, coefficients=13):
    """spec float32 [channels, frames, bins] -> float32 [channels, frames, coefficients]."""
    channels, frames, bins = spec.shape
    m, end = mel_matrix(bins, sample_rate, bands, lower, upper)
    n = np.arange(bands)
    dct = np.sqrt(2.0 / bands) * np.cos(np.pi * np.outer(np.arange(coefficients), n + 0.5) / bands)
    out = np.zeros((channels, frames, coefficients))
    if end >= bins:  # the last band past the spectrogram: TensorFlow gives zeros
        return out.astype(np.float32)
    for c in range(channels):
        for f in range(frames):
            energies = m @ np.sqrt(spec[c, f].astype(np.float64))
            out[c, f] = dct @ np.log(np.maximum(energies, 1e-12))
    return out.astype(np.float32)


def literal(name, values):
    flat = np.asarray(values, dtype=np.float32).ravel()
    items = ["%.9gf" % v for v in flat]
    print("// %s: %d values" % (name, flat.size))
    print("const std::vector<float> %s = {" % name)
    for i in range(0, len(items), 6):
        print("    " + ", ".join(items[i:i + 6]) + ",")
    print("};")


def main():
    sine = sine_samples(160, 4 / 64, 0.5).reshape(160, 1)
    literal("kSineMagnitude", spectrogram(sine, 64, 32, False))

    impulses = np.zeros((100, 1), dtype=np.float32)
    impulses[5, 0], impulses[50, 0] = 0.5, 0.25
    literal("kImpulsePower", spectrogram(impulses, 30, 40, True)[0, :, 0])

    stereo = lcg_samples(60, 7).reshape(30, 2)
    literal("kStereoPower", spectrogram(stereo, 12, 7, True))

    ramp = np.array([[[(k % 7 + 1) * (f + 1) / 64.0 for k in range(33)] for f in range(2)]], dtype=np.float32)
    literal("kRampMfcc", mfcc(ramp, 8000, upper=3500.0, lower=100.0, bands=8, coefficients=5))

    speech = lcg_samples(1000, 12345).reshape(1000, 1)
    literal("kSpeechMfcc", mfcc(spectrogram(speech, 480, 160, True), 16000))


if __name__ == "__main__":
    main()
