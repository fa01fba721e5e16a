// The WAV format of DecodeWav and EncodeWav (ops/audio_ops.cpp): RIFF
// files of 16-bit little-endian PCM, read and written as TensorFlow's
// wav_io.cc does — the same files accepted, the same refused, the same
// bytes written. Plain functions over bytes; thread-safe.
//
// A file is "RIFF" <u32 size> "WAVE", then chunks of <4-byte id> <u32
// size> <bytes>: before "fmt " only padding and broadcast-WAV chunks
// (JUNK, bext, iXML, qlty, mext, levl, link, axml) may come; "fmt " holds
// format 1 (PCM), channels, sample rate, bytes per second, bytes per frame
// and 16 bits per sample (16 bytes, or 18 with an unused extension size);
// after it any chunks, exactly one of them "data". Samples are
// interleaved: frame by frame, the channels of a frame together.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ops/status.hpp"

namespace tagflow::ops::wav {

struct DecodedWav {
  std::vector<float> samples;  // frames * channels, interleaved, in [-1, 1)
  int64_t frames = 0;
  int64_t channels = 0;
  uint32_t sample_rate = 0;
};

// A sample as a float: int16 / 32768.
float sample_to_float(int16_t sample);
// A float as a sample: x * 32768 rounded half away from zero, clamped to
// [-32768, 32767]; NaN becomes 0.
int16_t float_to_sample(float x);

// The samples of a WAV file. A malformed, truncated or non-16-bit-PCM
// file is an invalid_argument error saying what is wrong and where; the
// data chunk's declared size is checked against the bytes there before
// anything is allocated for it.
Expected<DecodedWav> decode(std::string_view file);

// A WAV file of `frames` x `channels` interleaved samples (44 bytes of
// header, then the samples). invalid_argument for a sample rate outside
// (0, 2^32), channels outside (0, 2^16) or a file past 4 GiB.
Expected<std::string> encode(const float* samples, int64_t frames, int64_t channels, int64_t sample_rate);

}  // namespace tagflow::ops::wav
