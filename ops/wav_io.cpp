#include "ops/wav_io.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace tagflow::ops::wav {

namespace {

constexpr int64_t kHeaderSize = 44;  // RIFF, fmt and data chunk headers
constexpr int64_t kBytesPerSample = 2;
constexpr uint16_t kPcmFormat = 1;
constexpr uint16_t kBitsPerSample = 16;

Status wav_error(const std::string& what) { return Status(Error::invalid_argument, "WAV: " + what); }

// The chunks TensorFlow passes over between "WAVE" and "fmt ": padding and
// the metadata of broadcast WAV files. Anything else there is refused.
bool skippable_before_format(std::string_view id) {
  for (std::string_view known : {"JUNK", "bext", "iXML", "qlty", "mext", "levl", "link", "axml"})
    if (id == known) return true;
  return false;
}

// Little-endian fields read from the file's bytes, each read checked
// against its end.
class Reader {
 public:
  explicit Reader(std::string_view file) : file_(file) {}

  int64_t offset() const { return offset_; }
  int64_t size() const { return static_cast<int64_t>(file_.size()); }
  bool at_end() const { return offset_ >= size(); }
  int64_t remaining() const { return at_end() ? 0 : size() - offset_; }

  Expected<std::string_view> bytes(int64_t n, std::string_view what) {
    TF_RETURN_IF_ERROR(check_room(n, what));
    std::string_view out = file_.substr(static_cast<size_t>(offset_), static_cast<size_t>(n));
    offset_ += n;
    return out;
  }
  Status skip(int64_t n, std::string_view what) {
    TF_RETURN_IF_ERROR(check_room(n, what));
    offset_ += n;
    return ok_status();
  }
  // TensorFlow moves past the chunks after "fmt " (and the extension of an
  // 18-byte format) without checking that they fit: one that runs past the
  // end just ends the file.
  void skip_unchecked(int64_t n) { offset_ += n; }

  Expected<uint16_t> u16(std::string_view what) {
    TF_ASSIGN_OR_RETURN(std::string_view b, bytes(2, what));
    return static_cast<uint16_t>(byte(b, 0) | byte(b, 1) << 8);
  }
  Expected<uint32_t> u32(std::string_view what) {
    TF_ASSIGN_OR_RETURN(std::string_view b, bytes(4, what));
    return byte(b, 0) | byte(b, 1) << 8 | byte(b, 2) << 16 | byte(b, 3) << 24;
  }
  Status expect(std::string_view text, std::string_view what) {
    TF_ASSIGN_OR_RETURN(std::string_view found, bytes(static_cast<int64_t>(text.size()), what));
    if (found != text)
      return wav_error(fmt::format("header mismatch: expected {} \"{}\" but found \"{}\"", what, text, found));
    return ok_status();
  }

 private:
  static uint32_t byte(std::string_view b, size_t i) { return static_cast<unsigned char>(b[i]); }

  Status check_room(int64_t n, std::string_view what) const {
    if (n > remaining())
      return wav_error(fmt::format("data too short: {} needs {} bytes at offset {}, but the file has {} bytes",
                                   what, n, offset_, size()));
    return ok_status();
  }

  std::string_view file_;
  int64_t offset_ = 0;
};

struct Format {
  uint16_t channels = 0;
  uint32_t sample_rate = 0;
  uint16_t bytes_per_frame = 0;
};

Status read_riff_header(Reader& in) {
  TF_RETURN_IF_ERROR(in.expect("RIFF", "the RIFF chunk id"));
  TF_RETURN_IF_ERROR(in.u32("the RIFF chunk size").status());  // not checked, as TensorFlow
  return in.expect("WAVE", "the RIFF type");
}

// Passes the chunks before "fmt " and its id.
Status skip_to_format(Reader& in) {
  TF_ASSIGN_OR_RETURN(std::string_view id, in.bytes(4, "a chunk id"));
  while (id != "fmt ") {
    if (!skippable_before_format(id))
      return wav_error(fmt::format("unexpected field \"{}\" where the \"fmt \" chunk should be", id));
    TF_ASSIGN_OR_RETURN(uint32_t size, in.u32("a chunk size"));
    TF_RETURN_IF_ERROR(in.skip(size, fmt::format("the \"{}\" chunk", id)));
    TF_ASSIGN_OR_RETURN(id, in.bytes(4, "a chunk id"));
  }
  return ok_status();
}

// The fields of "fmt " after its id, checked as TensorFlow checks them.
Expected<Format> read_format(Reader& in) {
  TF_ASSIGN_OR_RETURN(uint32_t chunk_size, in.u32("the format chunk size"));
  if (chunk_size != 16 && chunk_size != 18)
    return wav_error(fmt::format("bad format chunk size: expected 16 or 18, but got {}", chunk_size));
  TF_ASSIGN_OR_RETURN(uint16_t audio_format, in.u16("the audio format"));
  if (audio_format != kPcmFormat)
    return wav_error(fmt::format("bad audio format: expected 1 (PCM), but got {}", audio_format));
  Format f;
  TF_ASSIGN_OR_RETURN(f.channels, in.u16("the channel count"));
  if (f.channels < 1) return wav_error("bad number of channels: expected at least 1, but got 0");
  TF_ASSIGN_OR_RETURN(f.sample_rate, in.u32("the sample rate"));
  TF_ASSIGN_OR_RETURN(uint32_t bytes_per_second, in.u32("the bytes per second"));
  TF_ASSIGN_OR_RETURN(f.bytes_per_frame, in.u16("the bytes per frame"));
  TF_ASSIGN_OR_RETURN(uint16_t bits_per_sample, in.u16("the bits per sample"));
  if (bits_per_sample != kBitsPerSample)
    return wav_error(fmt::format("can only read 16-bit files, but the file has {} bits per sample", bits_per_sample));
  const uint32_t expected_bytes_per_frame = (uint32_t{kBitsPerSample} * f.channels + 7) / 8;
  if (f.bytes_per_frame != expected_bytes_per_frame)
    return wav_error(fmt::format("bad bytes per frame in the header: expected {} for {} channels, but got {}",
                                 expected_bytes_per_frame, f.channels, f.bytes_per_frame));
  // In 32 bits, wrapping as TensorFlow's check does.
  const uint32_t expected_bytes_per_second = uint32_t{f.bytes_per_frame} * f.sample_rate;
  if (bytes_per_second != expected_bytes_per_second)
    return wav_error(fmt::format("bad bytes per second in the header: expected {} but got {} (sample rate {}, "
                                 "bytes per frame {})",
                                 expected_bytes_per_second, bytes_per_second, f.sample_rate, f.bytes_per_frame));
  if (chunk_size == 18) in.skip_unchecked(2);  // the extension size, unused
  return f;
}

// The data chunk's samples, after its size. The reader ends after the
// whole frames read, not after the declared size: TensorFlow reads what
// follows an odd tail as the next chunk.
Status read_samples(Reader& in, uint32_t chunk_size, const Format& f, DecodedWav& out) {
  const int64_t frames = chunk_size / f.bytes_per_frame;
  const int64_t count = frames * f.channels;
  if (count * kBytesPerSample > in.remaining())
    return wav_error(fmt::format("the data chunk declares {} bytes ({} frames) but only {} bytes follow at offset {}",
                                 chunk_size, frames, in.remaining(), in.offset()));
  out.samples.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    TF_ASSIGN_OR_RETURN(uint16_t bits, in.u16("a sample"));
    out.samples[i] = sample_to_float(static_cast<int16_t>(bits));
  }
  out.frames = frames;
  out.channels = f.channels;
  out.sample_rate = f.sample_rate;
  return ok_status();
}

}  // namespace

float sample_to_float(int16_t sample) { return sample * (1.0f / 32768.0f); }

int16_t float_to_sample(float x) {
  if (std::isnan(x)) return 0;
  const float scaled = std::round(x * 32768.0f);
  if (scaled <= -32768.0f) return std::numeric_limits<int16_t>::min();
  if (scaled >= 32767.0f) return std::numeric_limits<int16_t>::max();
  return static_cast<int16_t>(scaled);
}

Expected<DecodedWav> decode(std::string_view file) {
  Reader in(file);
  TF_RETURN_IF_ERROR(read_riff_header(in));
  TF_RETURN_IF_ERROR(skip_to_format(in));
  TF_ASSIGN_OR_RETURN(Format format, read_format(in));
  DecodedWav out;
  bool data_found = false;
  while (!in.at_end()) {
    TF_ASSIGN_OR_RETURN(std::string_view id, in.bytes(4, "a chunk id"));
    TF_ASSIGN_OR_RETURN(uint32_t size, in.u32(fmt::format("the size of chunk \"{}\"", id)));
    if (size > static_cast<uint32_t>(std::numeric_limits<int32_t>::max()))
      return wav_error(fmt::format("chunk \"{}\" is too large: {} bytes, but the limit is {}", id, size,
                                   std::numeric_limits<int32_t>::max()));
    if (id != "data") {
      in.skip_unchecked(size);
      continue;
    }
    if (data_found) return wav_error("more than one data chunk");
    data_found = true;
    TF_RETURN_IF_ERROR(read_samples(in, size, format, out));
  }
  if (!data_found) return wav_error("no data chunk");
  return out;
}

namespace {

void put_u16(std::string& out, uint32_t v) {
  out.push_back(static_cast<char>(v & 0xff));
  out.push_back(static_cast<char>(v >> 8 & 0xff));
}

void put_u32(std::string& out, uint32_t v) {
  put_u16(out, v & 0xffff);
  put_u16(out, v >> 16);
}

}  // namespace

Expected<std::string> encode(const float* samples, int64_t frames, int64_t channels, int64_t sample_rate) {
  if (sample_rate <= 0 || sample_rate > std::numeric_limits<uint32_t>::max())
    return wav_error(fmt::format("sample_rate must be in (0, 2^32), got {}", sample_rate));
  if (channels <= 0 || channels > std::numeric_limits<uint16_t>::max())
    return wav_error(fmt::format("the channel count must be in (0, 2^16), got {}", channels));
  const int64_t count = frames * channels;
  const int64_t file_size = kHeaderSize + count * kBytesPerSample;
  if (file_size > std::numeric_limits<uint32_t>::max())
    return wav_error(fmt::format("{} frames of {} channels cannot be encoded: the file would pass 4 GiB",
                                 frames, channels));
  const auto u32 = [](int64_t v) { return static_cast<uint32_t>(v); };  // the header's widths, as TensorFlow
  std::string out;
  out.reserve(static_cast<size_t>(file_size));
  out += "RIFF";
  put_u32(out, u32(file_size - 8));
  out += "WAVE";
  out += "fmt ";
  put_u32(out, 16);
  put_u16(out, kPcmFormat);
  put_u16(out, u32(channels));
  put_u32(out, u32(sample_rate));
  put_u32(out, u32(sample_rate * kBytesPerSample * channels));
  put_u16(out, u32(kBytesPerSample * channels) & 0xffff);
  put_u16(out, kBitsPerSample);
  out += "data";
  put_u32(out, u32(count * kBytesPerSample));
  for (int64_t i = 0; i < count; ++i) put_u16(out, static_cast<uint16_t>(float_to_sample(samples[i])));
  return out;
}

}  // namespace tagflow::ops::wav
