// The audio ops (ops/audio_ops.cpp): DecodeWav and EncodeWav against WAV
// bytes written out by hand from the RIFF/WAVE layout (RIFF <size> WAVE;
// "fmt " 16: format 1, channels, rate, bytes/s, bytes/frame, 16 bits;
// "data" <size> <int16 LE samples>), every way a file can be malformed,
// and desired_channels / desired_samples; AudioSpectrogram and Mfcc
// against float64 NumPy values from scripts/audio_reference.py (which
// re-implements TensorFlow's spectrogram and MFCC algorithm independently
// of tagflow's code) on the same signals, and against closed forms (a
// windowed impulse, a tone's peak bin, a scaled spectrum shifting only the
// first cepstral coefficient); the shape rules.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "op_result.hpp"
#include "ops/wav_io.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

// --- WAV bytes ----------------------------------------------------------------

std::string le16(uint32_t v) { return {static_cast<char>(v & 0xff), static_cast<char>(v >> 8 & 0xff)}; }
std::string le32(uint32_t v) { return le16(v & 0xffff) + le16(v >> 16); }
std::string chunk(const std::string& id, const std::string& payload) {
  return id + le32(static_cast<uint32_t>(payload.size())) + payload;
}
std::string riff(const std::string& chunks) {
  return "RIFF" + le32(static_cast<uint32_t>(4 + chunks.size())) + "WAVE" + chunks;
}
std::string fmt_payload(uint32_t channels, uint32_t rate, uint32_t bits = 16, uint32_t format = 1) {
  const uint32_t block = (bits * channels + 7) / 8;
  return le16(format) + le16(channels) + le32(rate) + le32(rate * block) + le16(block) + le16(bits);
}
std::string samples16(const std::vector<int16_t>& s) {
  std::string out;
  for (int16_t v : s) out += le16(static_cast<uint16_t>(v));
  return out;
}
// A well-formed 16-bit PCM file of interleaved samples.
std::string wav_file(uint32_t channels, uint32_t rate, const std::vector<int16_t>& s) {
  return riff(chunk("fmt ", fmt_payload(channels, rate)) + chunk("data", samples16(s)));
}

std::string decode_error(const std::string& file) {
  return error_of("DecodeWav", {Tensor::string_scalar(file)});
}

Expected<std::vector<Tensor>> decode(const std::string& file, AttrMap attrs = {}) {
  return run_op("DecodeWav", {Tensor::string_scalar(file)}, std::move(attrs));
}

// --- signals, as scripts/audio_reference.py makes them ---------------------------

// k / 32768, k from bits 15..30 of a 31-bit linear congruential generator.
std::vector<float> lcg_samples(int n, uint64_t seed) {
  std::vector<float> out;
  uint64_t state = seed;
  for (int i = 0; i < n; ++i) {
    state = (state * 1103515245 + 12345) % (uint64_t{1} << 31);
    out.push_back(static_cast<float>((static_cast<int64_t>(state >> 15) % 65536 - 32768) / 32768.0));
  }
  return out;
}

std::vector<float> sine_samples(int n, double cycles_per_sample, double amplitude) {
  std::vector<float> out;
  const double pi = std::acos(-1.0);
  for (int i = 0; i < n; ++i) {
    const double k = std::round(amplitude * 32768 * std::sin(2 * pi * cycles_per_sample * i));
    out.push_back(static_cast<float>(k / 32768.0));
  }
  return out;
}

Tensor audio(int64_t samples, int64_t channels, const std::vector<float>& v) {
  return tensor<float>(Shape{samples, channels}, v);
}

// Each element within 1e-5 of the reference relative to itself, or to the
// largest reference value for those near zero (rounding noise of bins
// that are nearly empty).
void check_close(const Tensor& t, const std::vector<float>& expected) {
  BOOST_TEST_REQUIRE(t.num_elements() == static_cast<int64_t>(expected.size()));
  double scale = 0;
  for (float e : expected) scale = std::max(scale, std::abs(static_cast<double>(e)));
  for (size_t i = 0; i < expected.size(); ++i) {
    const double got = at(t, static_cast<int64_t>(i));
    const double want = expected[i];
    BOOST_TEST(std::abs(got - want) <= 1e-5 * std::abs(want) + 1e-6 * scale,
               "element " << i << ": " << got << " vs. reference " << want);
  }
}

Tensor run_spectrogram(const Tensor& input, int64_t window, int64_t stride, bool squared) {
  Expected<Tensor> out = run_op1("AudioSpectrogram", {input},
                                 {{"window_size", window}, {"stride", stride}, {"magnitude_squared", squared}});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  return *out;
}

// --- shape rules ----------------------------------------------------------------

// The output shapes the op's registered rule gives, "[2,?] []", or its error.
std::string inferred(const std::string& op, std::vector<PartialShape> inputs, AttrMap attrs = {}) {
  const OpDef* def = OpRegistry::global().find(op);
  BOOST_TEST_REQUIRE(def != nullptr);
  def->add_default_attrs(attrs);
  std::vector<OutputInfo> infos(inputs.size());
  std::vector<const OutputInfo*> pointers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    infos[i].shape = inputs[i];
    pointers.push_back(&infos[i]);
  }
  std::vector<OutputInfo> outputs(def->outputs().size());
  InferenceContext c("n", op, attrs, pointers, &outputs, nullptr);
  Status s = def->shape_function()(c);
  if (!s.ok()) return "error: " + s.to_string();
  std::string out;
  for (const OutputInfo& o : outputs) out += (out.empty() ? "" : " ") + o.shape.to_string();
  return out;
}

const PartialShape kUnknown{true, {}};

}  // namespace

// Values from /usr/bin/python3 scripts/audio_reference.py (float64 NumPy,
// rounded to float32 as TensorFlow's kernels round their results).
// kSineMagnitude: 132 values
const std::vector<float> kSineMagnitude = {
    1.66533454e-16f, 1.12576105e-16f, 9.03462944e-17f, 4.00000238f, 8.00000477f, 4.00000238f,
    1.41398016e-16f, 2.8668873e-16f, 8.18026635e-17f, 3.18667718e-16f, 3.04427188e-16f, 1.49397974e-05f,
    2.98795949e-05f, 1.49397974e-05f, 2.0077442e-17f, 1.15168979e-16f, 1.24126709e-16f, 6.64561563e-16f,
    2.45169213e-16f, 2.60611687e-05f, 5.21223374e-05f, 2.60611687e-05f, 1.80463612e-16f, 1.6269834e-16f,
    1.55316461e-16f, 3.55587211e-16f, 1.24617975e-16f, 4.36455703e-05f, 8.72911405e-05f, 4.36455703e-05f,
    3.30944243e-16f, 1.61953944e-16f, 5.55111512e-17f, 1.66533454e-16f, 1.12576105e-16f, 9.03462944e-17f,
    4.00000238f, 8.00000477f, 4.00000238f, 1.41398016e-16f, 2.8668873e-16f, 8.18026635e-17f,
    3.18667718e-16f, 3.04427188e-16f, 1.49397974e-05f, 2.98795949e-05f, 1.49397974e-05f, 2.0077442e-17f,
    1.15168979e-16f, 1.24126709e-16f, 6.64561563e-16f, 2.45169213e-16f, 2.60611687e-05f, 5.21223374e-05f,
    2.60611687e-05f, 1.80463612e-16f, 1.6269834e-16f, 1.55316461e-16f, 3.55587211e-16f, 1.24617975e-16f,
    4.36455703e-05f, 8.72911405e-05f, 4.36455703e-05f, 3.30944243e-16f, 1.61953944e-16f, 5.55111512e-17f,
    1.66533454e-16f, 1.12576105e-16f, 9.03462944e-17f, 4.00000238f, 8.00000477f, 4.00000238f,
    1.41398016e-16f, 2.8668873e-16f, 8.18026635e-17f, 3.18667718e-16f, 3.04427188e-16f, 1.49397974e-05f,
    2.98795949e-05f, 1.49397974e-05f, 2.0077442e-17f, 1.15168979e-16f, 1.24126709e-16f, 6.64561563e-16f,
    2.45169213e-16f, 2.60611687e-05f, 5.21223374e-05f, 2.60611687e-05f, 1.80463612e-16f, 1.6269834e-16f,
    1.55316461e-16f, 3.55587211e-16f, 1.24617975e-16f, 4.36455703e-05f, 8.72911405e-05f, 4.36455703e-05f,
    3.30944243e-16f, 1.61953944e-16f, 5.55111512e-17f, 1.66533454e-16f, 1.12576105e-16f, 9.03462944e-17f,
    4.00000238f, 8.00000477f, 4.00000238f, 1.41398016e-16f, 2.8668873e-16f, 8.18026635e-17f,
    3.18667718e-16f, 3.04427188e-16f, 1.49397974e-05f, 2.98795949e-05f, 1.49397974e-05f, 2.0077442e-17f,
    1.15168979e-16f, 1.24126709e-16f, 6.64561563e-16f, 2.45169213e-16f, 2.60611687e-05f, 5.21223374e-05f,
    2.60611687e-05f, 1.80463612e-16f, 1.6269834e-16f, 1.55316461e-16f, 3.55587211e-16f, 1.24617975e-16f,
    4.36455703e-05f, 8.72911405e-05f, 4.36455703e-05f, 3.30944243e-16f, 1.61953944e-16f, 5.55111512e-17f,
};
// kImpulsePower: 2 values
const std::vector<float> kImpulsePower = {
    0.015625f, 0.03515625f,
};
// kStereoPower: 54 values
const std::vector<float> kStereoPower = {
    0.13537468f, 0.969398558f, 0.302169949f, 0.104661509f, 1.72534692f, 5.96175957f,
    4.9133954f, 1.84211731f, 1.03049815f, 1.03614521f, 2.95133448f, 3.41219854f,
    3.32261896f, 3.2205112f, 0.90373683f, 0.253286123f, 0.299999207f, 5.82324537e-05f,
    1.33629608f, 3.21952033f, 2.5497818f, 0.332670629f, 0.310554504f, 1.44566333f,
    1.58809924f, 1.12662649f, 0.870187104f, 0.13633287f, 0.412411213f, 1.01136625f,
    0.809847176f, 0.537798524f, 2.11852765f, 6.07321167f, 4.3469243f, 0.384695947f,
    0.00246377126f, 0.588300943f, 1.03822625f, 0.330860049f, 0.262103558f, 1.185045f,
    0.295774221f, 0.51624465f, 1.08238053f, 0.0801309198f, 0.527475953f, 1.61566401f,
    1.10158539f, 0.264690936f, 0.221465841f, 1.75110471f, 4.47427368f, 6.89643764f,
};
// kRampMfcc: 10 values
const std::vector<float> kRampMfcc = {
    -1.73000729f, -1.18671155f, -0.00370733254f, -0.184025764f, -0.190749153f, -0.343712956f,
    -1.18671155f, -0.00370733254f, -0.184025764f, -0.190749153f,
};
// kSpeechMfcc: 52 values
const std::vector<float> kSpeechMfcc = {
    25.598793f, -3.20309401f, 0.310411155f, -0.923463523f, -0.668079436f, -0.483937263f,
    -1.07636392f, -0.702007413f, 0.152265459f, 0.138372272f, 0.0804306865f, 0.00971076265f,
    0.48667407f, 25.8114986f, -3.33998609f, 0.0186335556f, -1.04211509f, -1.11570144f,
    -0.757476807f, -0.627283275f, 0.120794922f, -0.540039003f, 0.0720961839f, 0.480047345f,
    0.212447733f, -0.139866292f, 25.2509251f, -3.94048762f, 0.382649809f, -0.672124326f,
    0.0967903882f, -0.325438082f, 0.0524564423f, -0.0175139625f, 0.390020818f, -0.0448229276f,
    -0.366113067f, -0.527991593f, -0.670178533f, 24.1596947f, -3.80457854f, 0.136246502f,
    -1.05213463f, 0.3470065f, -0.942213774f, -0.535913825f, 0.601596117f, 0.455117464f,
    0.208322167f, -0.38303408f, -0.185011178f, 0.233722746f,
};

BOOST_AUTO_TEST_SUITE(audio_ops)

// --- EncodeWav --------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(encode_wav_writes_the_riff_header_and_the_samples) {
  // 3 stereo frames at 8000 Hz: 0, 1 | -1, 0.5 | 2 (clamped), -0.25.
  Expected<Tensor> out = run_op1("EncodeWav", {audio(3, 2, {0.0f, 1.0f, -1.0f, 0.5f, 2.0f, -0.25f}),
                                               Tensor::scalar<int32_t>(8000)});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  const std::string expected(
      "RIFF" "\x30\x00\x00\x00" "WAVE"                     // 44 + 12 - 8 bytes follow
      "fmt " "\x10\x00\x00\x00"                            // 16 bytes of format
      "\x01\x00" "\x02\x00"                                // PCM, 2 channels
      "\x40\x1f\x00\x00" "\x00\x7d\x00\x00"                // 8000 Hz, 32000 bytes/s
      "\x04\x00" "\x10\x00"                                // 4 bytes/frame, 16 bits
      "data" "\x0c\x00\x00\x00"                            // 12 bytes of samples
      "\x00\x00" "\xff\x7f" "\x00\x80" "\x00\x40" "\xff\x7f" "\x00\xe0",  // 0 32767 -32768 16384 32767 -8192
      56);
  BOOST_TEST(out->scalar_value<std::string>() == expected);
}

BOOST_AUTO_TEST_CASE(encode_wav_rounds_half_away_from_zero_and_clamps) {
  const float q = 1.0f / 32768;
  const std::vector<float> in = {0.5f * q, -0.5f * q, 1.5f * q, -2.5f * q, 1.49f * q, 1.0f, -1.0f,
                                 -1.5f, 0.99999f, std::numeric_limits<float>::quiet_NaN()};
  const std::vector<int16_t> want = {1, -1, 2, -3, 1, 32767, -32768, -32768, 32767, 0};
  Expected<Tensor> out = run_op1("EncodeWav", {audio(10, 1, in), Tensor::scalar<int32_t>(16000)});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST(out->scalar_value<std::string>() == wav_file(1, 16000, want));
}

BOOST_AUTO_TEST_CASE(encode_wav_of_no_frames_is_a_header) {
  Expected<Tensor> out = run_op1("EncodeWav", {audio(0, 1, {}), Tensor::scalar<int32_t>(44100)});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST(out->scalar_value<std::string>() == wav_file(1, 44100, {}));
  BOOST_TEST(out->scalar_value<std::string>().size() == 44u);
}

BOOST_AUTO_TEST_CASE(encode_wav_errors) {
  const Tensor rate = Tensor::scalar<int32_t>(8000);
  BOOST_TEST(contains(error_of("EncodeWav", {tensor<float>(Shape{2}, {0, 0}), rate}),
                      "audio must be 2-dimensional, got shape [2]"));
  BOOST_TEST(contains(error_of("EncodeWav", {audio(1, 1, {0}), Tensor::vector<int32_t>({8000})}),
                      "sample_rate must be a scalar, got shape [1]"));
  BOOST_TEST(contains(error_of("EncodeWav", {audio(1, 1, {0}), Tensor::scalar<int32_t>(0)}),
                      "sample_rate must be in (0, 2^32), got 0"));
  BOOST_TEST(contains(error_of("EncodeWav", {audio(1, 1, {0}), Tensor::scalar<int32_t>(-8000)}),
                      "sample_rate must be in (0, 2^32), got -8000"));
  BOOST_TEST(contains(error_of("EncodeWav", {audio(4, 0, {}), rate}), "the channel count must be in (0, 2^16), got 0"));
  BOOST_TEST(contains(error_of("EncodeWav", {tensor<double>(Shape{1, 1}, {0}), rate}),
                      "audio must be float32, not float64"));
}

// --- DecodeWav --------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(decode_wav_reads_samples_as_int16_over_32768) {
  Expected<std::vector<Tensor>> out = decode(wav_file(2, 22050, {0, 32767, -32768, 16384, 1, -1}));
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST((*out)[0].debug_string() ==
             tensor<float>(Shape{3, 2}, {0.0f, 32767 / 32768.0f, -1.0f, 0.5f, 1 / 32768.0f, -1 / 32768.0f})
                 .debug_string());
    BOOST_TEST((*out)[1].debug_string() == "int32[] 22050");
}

BOOST_AUTO_TEST_CASE(wav_round_trip_is_exact_on_the_16_bit_grid) {
  const std::vector<float> samples = lcg_samples(2 * 50, 99);
  Expected<Tensor> file = run_op1("EncodeWav", {audio(50, 2, samples), Tensor::scalar<int32_t>(11025)});
  BOOST_TEST_REQUIRE(file.ok(), file.status().to_string());
  Expected<std::vector<Tensor>> back = run_op("DecodeWav", {*file});
  BOOST_TEST_REQUIRE(back.ok(), back.status().to_string());
  BOOST_TEST((*back)[0].equals(audio(50, 2, samples)));
  BOOST_TEST((*back)[1].debug_string() == "int32[] 11025");
}

BOOST_AUTO_TEST_CASE(decode_wav_fits_desired_channels_and_samples) {
  const std::string mono = wav_file(1, 8000, {16384, -16384});
  const std::string stereo = wav_file(2, 8000, {16384, -8192, 8192, -16384, 4096, 0});
  auto audio_of = [](const std::string& file, AttrMap attrs) {
    Expected<std::vector<Tensor>> out = decode(file, std::move(attrs));
    return out.ok() ? (*out)[0].debug_string() : out.status().to_string();
  };
  // A mono file repeated over three channels.
  BOOST_TEST(audio_of(mono, {{"desired_channels", 3}}) == "float32[2,3] [[0.5,0.5,0.5],[-0.5,-0.5,-0.5]]");
  // Channels beyond those desired dropped.
  BOOST_TEST(audio_of(stereo, {{"desired_channels", 1}}) == "float32[3,1] [[0.5],[0.25],[0.125]]");
  BOOST_TEST(audio_of(stereo, {{"desired_channels", 0}}) == "float32[3,0] [[],[],[]]");
  // Cut, or padded with zeros.
  BOOST_TEST(audio_of(stereo, {{"desired_samples", 2}}) == "float32[2,2] [[0.5,-0.25],[0.25,-0.5]]");
  BOOST_TEST(audio_of(mono, {{"desired_samples", 4}}) == "float32[4,1] [[0.5],[-0.5],[0],[0]]");
  BOOST_TEST(audio_of(stereo, {{"desired_samples", 4}, {"desired_channels", 3}}) ==
             "float32[4,3] [[0.5,-0.25,-0.25],[0.25,-0.5,-0.5],[0.125,0,0],[0,0,0]]");
  BOOST_TEST(audio_of(mono, {{"desired_samples", 0}}) == "float32[0,1] []");
}

BOOST_AUTO_TEST_CASE(decode_wav_passes_over_other_chunks) {
  const std::string fmt = chunk("fmt ", fmt_payload(1, 8000));
  const std::string data = chunk("data", samples16({100, -100}));
  const std::string want = tensor<float>(Shape{2, 1}, {100 / 32768.0f, -100 / 32768.0f}).debug_string();
  auto audio_of = [](const std::string& file) {
    Expected<std::vector<Tensor>> out = decode(file);
    return out.ok() ? (*out)[0].debug_string() : out.status().to_string();
  };
  // Padding and broadcast-WAV chunks before "fmt ".
  BOOST_TEST(audio_of(riff(chunk("JUNK", std::string(28, '\0')) + chunk("bext", "abcd") + fmt + data)) == want);
  // An 18-byte format (with the unused extension size).
  BOOST_TEST(audio_of(riff(chunk("fmt ", fmt_payload(1, 8000) + le16(0)) + data)) == want);
  // Any chunk between "fmt " and "data", and after it; one running past
  // the end after the data ends the file.
  BOOST_TEST(audio_of(riff(fmt + chunk("LIST", "INFOxxxx") + data + chunk("fact", "1234"))) == want);
  BOOST_TEST(audio_of(riff(fmt + data + "LIST" + le32(1000) + "short")) == want);
}

BOOST_AUTO_TEST_CASE(decode_wav_refuses_malformed_files) {
  const std::string fmt = chunk("fmt ", fmt_payload(1, 8000));
  const std::string data = chunk("data", samples16({1, 2}));
  const std::string good = riff(fmt + data);
  BOOST_TEST(decode_error(good).empty());
  // Empty, truncated anywhere in the header.
  BOOST_TEST(contains(decode_error(""),
                      "data too short: the RIFF chunk id needs 4 bytes at offset 0, but the file has 0"));
  BOOST_TEST(contains(decode_error("RIFF\x24\x00"), "data too short: the RIFF chunk size"));
  BOOST_TEST(contains(decode_error(good.substr(0, 10)), "data too short: the RIFF type"));
  BOOST_TEST(contains(decode_error(good.substr(0, 26)), "data too short: the sample rate needs 4 bytes at offset 24"));
  BOOST_TEST(contains(decode_error(good.substr(0, 30)), "data too short: the bytes per second"));
  BOOST_TEST(contains(decode_error(good.substr(0, 34)), "data too short: the bits per sample"));
  // The file ending right after "fmt ": no data.
  BOOST_TEST(contains(decode_error(good.substr(0, 36)), "no data chunk"));
  // Not RIFF, not WAVE.
  BOOST_TEST(contains(decode_error("RIFX" + good.substr(4)),
                      "header mismatch: expected the RIFF chunk id \"RIFF\" but found \"RIFX\""));
  BOOST_TEST(contains(decode_error("RIFF" + le32(4) + "AVI " + fmt + data),
                      "expected the RIFF type \"WAVE\" but found \"AVI \""));
  // An unknown chunk before "fmt ", a chunk there longer than the file.
  BOOST_TEST(contains(decode_error(riff(chunk("LIST", "abcd") + fmt + data)), "unexpected field \"LIST\""));
  BOOST_TEST(contains(decode_error(riff("JUNK" + le32(0xfffffff0u) + fmt + data)),
                      "data too short: the \"JUNK\" chunk needs 4294967280 bytes"));
  // Bad format fields.
  BOOST_TEST(contains(decode_error(riff(chunk("fmt ", fmt_payload(1, 8000) + "abcd") + data)),
                      "bad format chunk size: expected 16 or 18, but got 20"));
  BOOST_TEST(contains(decode_error(riff(chunk("fmt ", fmt_payload(1, 8000, 32, 3)) + data)),
                      "bad audio format: expected 1 (PCM), but got 3"));
  BOOST_TEST(contains(decode_error(riff(chunk("fmt ", fmt_payload(1, 8000, 8)) + data)),
                      "can only read 16-bit files, but the file has 8 bits per sample"));
  BOOST_TEST(contains(decode_error(riff(chunk("fmt ", fmt_payload(1, 8000, 24)) + data)),
                      "can only read 16-bit files, but the file has 24 bits per sample"));
  BOOST_TEST(contains(decode_error(riff(chunk("fmt ", fmt_payload(0, 8000)) + data)),
                      "bad number of channels: expected at least 1, but got 0"));
  // Fields that disagree: 2 bytes per frame for stereo, 8000 bytes/s for 8000 Hz mono.
  const std::string stereo_2_bytes = le16(1) + le16(2) + le32(8000) + le32(32000) + le16(2) + le16(16);
  const std::string mono_8000_bytes_per_second = le16(1) + le16(1) + le32(8000) + le32(8000) + le16(2) + le16(16);
  BOOST_TEST(contains(decode_error(riff(chunk("fmt ", stereo_2_bytes) + data)),
                      "bad bytes per frame in the header: expected 4 for 2 channels, but got 2"));
  BOOST_TEST(contains(decode_error(riff(chunk("fmt ", mono_8000_bytes_per_second) + data)),
                      "bad bytes per second in the header: expected 16000 but got 8000"));
  // Data missing, doubled, shorter than declared.
  BOOST_TEST(contains(decode_error(riff(fmt)), "no data chunk"));
  BOOST_TEST(contains(decode_error(riff(fmt + chunk("LIST", "abcd"))), "no data chunk"));
  BOOST_TEST(contains(decode_error(riff(fmt + data + data)), "more than one data chunk"));
  BOOST_TEST(contains(decode_error(riff(fmt + "data" + le32(8) + samples16({1, 2}))),
                      "the data chunk declares 8 bytes (4 frames) but only 4 bytes follow at offset 44"));
  BOOST_TEST(contains(decode_error(riff(fmt + "data" + le32(4))), "the data chunk declares 4 bytes"));
  BOOST_TEST(contains(decode_error(riff(fmt + "da")), "data too short: a chunk id"));
  // The contents must be one string.
  BOOST_TEST(contains(error_of("DecodeWav", {Tensor::vector<std::string>({good})}),
                      "contents must be a scalar, got shape [1]"));
}

BOOST_AUTO_TEST_CASE(decode_wav_checks_absurd_sizes_before_allocating) {
  const std::string fmt = chunk("fmt ", fmt_payload(2, 8000));
  // 2^31 - 4 bytes of data declared in a 50-byte file: refused without
  // allocating half a billion samples first.
  BOOST_TEST(contains(decode_error(riff(fmt + "data" + le32(0x7ffffffcu) + samples16({1}))),
                      "the data chunk declares 2147483644 bytes (536870911 frames) but only 2 bytes follow"));
  // Past TensorFlow's limit of 2^31 - 1 bytes for any chunk.
  BOOST_TEST(contains(decode_error(riff(fmt + "data" + le32(0xffffffffu))),
                      "chunk \"data\" is too large: 4294967295 bytes, but the limit is 2147483647"));
  BOOST_TEST(contains(decode_error(riff(fmt + "LIST" + le32(0x80000000u))), "chunk \"LIST\" is too large"));
}

BOOST_AUTO_TEST_CASE(decode_wav_reads_what_follows_an_odd_data_tail_as_a_chunk) {
  // A 3-byte mono data chunk holds one sample; its third byte starts the
  // next chunk id, as TensorFlow reads it, so the file is too short.
  const std::string fmt = chunk("fmt ", fmt_payload(1, 8000));
  BOOST_TEST(contains(decode_error(riff(fmt + "data" + le32(3) + samples16({7}) + "x")), "data too short: a chunk id"));
}

BOOST_AUTO_TEST_CASE(decode_wav_attr_errors) {
  const std::string file = wav_file(1, 8000, {1});
  BOOST_TEST(contains(decode(file, {{"desired_channels", -2}}).status().to_string(),
                      "desired_channels must be >= -1, got -2"));
  BOOST_TEST(contains(decode(file, {{"desired_samples", -5}}).status().to_string(),
                      "desired_samples must be >= -1, got -5"));
  BOOST_TEST(contains(decode(file, {{"desired_samples", int64_t{1} << 40}}).status().to_string(),
                      "attr 'desired_samples' is 1099511627776, which does not fit in an int32"));
}

// --- AudioSpectrogram -----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(spectrogram_of_a_tone_peaks_at_its_bin) {
  // 4 cycles per 64 samples: bin 4 of a 64-point FFT. The periodic Hann
  // window puts A * N / 4 = 8 there and half of that in bins 3 and 5.
  Tensor out = run_spectrogram(audio(160, 1, sine_samples(160, 4.0 / 64, 0.5)), 64, 32, false);
  BOOST_TEST(out.shape().to_string() == "[1,4,33]");
  check_close(out, kSineMagnitude);
  const float* s = out.data<float>();
  for (int f = 0; f < 4; ++f) {
    const float* row = s + f * 33;
    BOOST_TEST(std::max_element(row, row + 33) - row == 4);
    BOOST_TEST(std::abs(row[4] - 8.0f) < 1e-3f);
    BOOST_TEST(std::abs(row[3] - 4.0f) < 1e-3f);
  }
}

BOOST_AUTO_TEST_CASE(spectrogram_of_an_impulse_is_flat) {
  // window 30 (FFT 32, 17 bins), stride 40 > window: frames [0, 30) and
  // [40, 70) hold impulses 0.5 at 5 and 0.25 at 50, seen through the
  // window at 5 and 10: (0.5 w(5))^2 and (0.25 w(10))^2 in every bin,
  // w(n) = 0.5 - 0.5 cos(2 pi n / 30): w(5) = 0.25, w(10) = 0.75.
  std::vector<float> x(100, 0.0f);
  x[5] = 0.5f;
  x[50] = 0.25f;
  Tensor out = run_spectrogram(audio(100, 1, x), 30, 40, true);
  BOOST_TEST(out.shape().to_string() == "[1,2,17]");
  BOOST_TEST(kImpulsePower == (std::vector<float>{0.015625f, 0.03515625f}));
  for (int f = 0; f < 2; ++f)
    for (int k = 0; k < 17; ++k) BOOST_TEST(std::abs(at(out, f * 17 + k) - kImpulsePower[f]) < 1e-8);
}

BOOST_AUTO_TEST_CASE(spectrogram_of_stereo_noise) {
  // window 12 (not a power of two: FFT 16, 9 bins), stride 7, 30 samples:
  // 1 + (30 - 12) / 7 = 3 frames per channel.
  Tensor out = run_spectrogram(audio(30, 2, lcg_samples(60, 7)), 12, 7, true);
  BOOST_TEST(out.shape().to_string() == "[2,3,9]");
  check_close(out, kStereoPower);
  // The magnitude is the square root of the power.
  Tensor magnitude = run_spectrogram(audio(30, 2, lcg_samples(60, 7)), 12, 7, false);
  for (int64_t i = 0; i < out.num_elements(); ++i)
    BOOST_TEST(at(magnitude, i) == std::sqrt(static_cast<float>(at(out, i))));
}

BOOST_AUTO_TEST_CASE(spectrogram_frame_counts) {
  BOOST_TEST(run_spectrogram(audio(11, 2, std::vector<float>(22, 0.1f)), 12, 7, false).shape().to_string() ==
             "[2,0,9]");
  BOOST_TEST(run_spectrogram(audio(12, 1, std::vector<float>(12, 0.1f)), 12, 7, false).shape().to_string() ==
             "[1,1,9]");
  BOOST_TEST(run_spectrogram(audio(0, 1, {}), 2, 1, false).shape().to_string() == "[1,0,2]");
  BOOST_TEST(run_spectrogram(audio(20, 0, {}), 16, 4, false).shape().to_string() == "[0,2,9]");
  // A huge window over a short input: no frames, nothing allocated for it.
  BOOST_TEST(run_spectrogram(audio(3, 1, {0, 0, 0}), 1 << 30, 1, false).shape().to_string() == "[1,0,536870913]");
}

BOOST_AUTO_TEST_CASE(spectrogram_errors) {
  const Tensor x = audio(4, 1, {0, 0, 0, 0});
  auto error = [](const Tensor& in, AttrMap attrs) { return error_of("AudioSpectrogram", {in}, std::move(attrs)); };
  BOOST_TEST(contains(error(x, {{"window_size", 1}, {"stride", 1}}), "window_size must be > 1, got 1"));
  BOOST_TEST(contains(error(x, {{"window_size", 2}, {"stride", 0}}), "stride must be > 0, got 0"));
  BOOST_TEST(contains(error(x, {{"stride", 1}}), "window_size"));
  BOOST_TEST(contains(error(tensor<float>(Shape{4}, {0, 0, 0, 0}), {{"window_size", 2}, {"stride", 1}}),
                      "input must be 2-dimensional, got shape [4]"));
  BOOST_TEST(contains(error(tensor<double>(Shape{4, 1}, {0, 0, 0, 0}), {{"window_size", 2}, {"stride", 1}}),
                      "input must be float32, not float64"));
}

// --- Mfcc -------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(mfcc_of_a_given_spectrogram) {
  // 33 bins at 8000 Hz (125 Hz apart), 8 bands over 100..3500 Hz, 5
  // coefficients; frame 1 is frame 0 times 2.
  std::vector<float> spectrum;
  for (int f = 0; f < 2; ++f)
    for (int k = 0; k < 33; ++k) spectrum.push_back(static_cast<float>((k % 7 + 1) * (f + 1)) / 64.0f);
  Expected<Tensor> out = run_op1("Mfcc", {tensor<float>(Shape{1, 2, 33}, spectrum), Tensor::scalar<int32_t>(8000)},
                                 {{"upper_frequency_limit", 3500.0f}, {"lower_frequency_limit", 100.0f},
                                  {"filterbank_channel_count", 8}, {"dct_coefficient_count", 5}});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST(out->shape().to_string() == "[1,2,5]");
  check_close(*out, kRampMfcc);
  // Doubling the power adds ln(2) / 2 to each band's log and so changes
  // only coefficient 0, by sqrt(2 / 8) * 8 * ln(2) / 2 = ln 4.
  BOOST_TEST(std::abs(at(*out, 5) - at(*out, 0) - std::log(4.0)) < 1e-5);
  for (int i = 1; i < 5; ++i) BOOST_TEST(std::abs(at(*out, 5 + i) - at(*out, i)) < 1e-6);
}

BOOST_AUTO_TEST_CASE(mfcc_of_a_speech_commands_front_end) {
  // As tensorflow/examples/speech_commands: 16 kHz, 30 ms windows every
  // 10 ms, squared magnitudes, then Mfcc with its defaults (40 bands over
  // 20..4000 Hz, 13 coefficients).
  Tensor power = run_spectrogram(audio(1000, 1, lcg_samples(1000, 12345)), 480, 160, true);
  BOOST_TEST(power.shape().to_string() == "[1,4,257]");
  Expected<Tensor> out = run_op1("Mfcc", {power, Tensor::scalar<int32_t>(16000)});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST(out->shape().to_string() == "[1,4,13]");
  check_close(*out, kSpeechMfcc);
}

BOOST_AUTO_TEST_CASE(mfcc_agrees_with_tensorflows_golden_values) {
  // TensorFlow's mfcc_test.cc (AgreesWithPythonGoldenValues): bins 1..513
  // at 22050 Hz with the defaults, to within its 1e-4.
  std::vector<float> spectrum;
  for (int i = 0; i < 513; ++i) spectrum.push_back(static_cast<float>(i + 1));
  Expected<Tensor> out = run_op1("Mfcc", {tensor<float>(Shape{1, 1, 513}, spectrum), Tensor::scalar<int32_t>(22050)});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  const std::vector<double> golden = {29.13970072, -6.41568601, -0.61903012, -0.96778652, -0.26819878,
                                      -0.40907028, -0.15614748, -0.23203119, -0.10481487, -0.1543029,
                                      -0.0769791,  -0.10806114, -0.06047613};
  BOOST_TEST_REQUIRE(out->num_elements() == 13);
  for (int i = 0; i < 13; ++i) BOOST_TEST(std::abs(at(*out, i) - golden[i]) < 1e-4, "coefficient " << i);
}

BOOST_AUTO_TEST_CASE(mfcc_of_silence_is_the_log_floor) {
  // Every band floored at 1e-12: coefficient 0 is sqrt(2 / 40) * 40 *
  // ln(1e-12), and a constant has no other DCT-II component.
  Expected<Tensor> out = run_op1("Mfcc", {tensor<float>(Shape{1, 1, 513}, std::vector<float>(513, 0.0f)),
                                          Tensor::scalar<int32_t>(22050)});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST(std::abs(at(*out, 0) - std::sqrt(2.0 / 40) * 40 * std::log(1e-12)) < 1e-4);
  for (int i = 1; i < 13; ++i) BOOST_TEST(std::abs(at(*out, i)) < 1e-5, "coefficient " << i);
}

BOOST_AUTO_TEST_CASE(mfcc_of_one_low_bin_peaks_at_the_first_cosine) {
  // TensorFlow's SimpleInputSaneResult: one hot bin (10 of 129, 8000 Hz)
  // over 125..3800 Hz, 40 bands and 40 coefficients: c_1 is the largest.
  std::vector<float> spectrum(129, 0.0f);
  spectrum[10] = 1.0f;
  Expected<Tensor> out = run_op1("Mfcc", {tensor<float>(Shape{1, 1, 129}, spectrum), Tensor::scalar<int32_t>(8000)},
                                 {{"lower_frequency_limit", 125.0f}, {"upper_frequency_limit", 3800.0f},
                                  {"dct_coefficient_count", 40}});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  const float* c = out->data<float>();
  BOOST_TEST(std::max_element(c, c + 40) - c == 1);
}

BOOST_AUTO_TEST_CASE(mfcc_above_the_nyquist_frequency_is_zeros) {
  // TensorFlow's filterbank gives nothing when its last band passes the
  // spectrogram's top bin; its DCT of nothing is zeros.
  Expected<Tensor> out = run_op1("Mfcc", {tensor<float>(Shape{1, 1, 33}, std::vector<float>(33, 1.0f)),
                                          Tensor::scalar<int32_t>(8000)},
                                 {{"upper_frequency_limit", 4500.0f}});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST(out->equals(tensor<float>(Shape{1, 1, 13}, std::vector<float>(13, 0.0f))));
}

BOOST_AUTO_TEST_CASE(mfcc_errors) {
  const Tensor spectrum = tensor<float>(Shape{1, 1, 33}, std::vector<float>(33, 1.0f));
  const Tensor rate = Tensor::scalar<int32_t>(8000);
  auto error = [](const Tensor& s, const Tensor& r, AttrMap attrs = {}) {
    return error_of("Mfcc", {s, r}, std::move(attrs));
  };
  BOOST_TEST(error(spectrum, rate).empty());
  BOOST_TEST(contains(error(tensor<float>(Shape{1, 1, 1}, {1}), rate),
                      "the spectrogram has 1 frequency bins, at least 2"));
  BOOST_TEST(contains(error(spectrum, Tensor::scalar<int32_t>(0)), "sample_rate must be positive, got 0"));
  BOOST_TEST(contains(error(spectrum, rate, {{"filterbank_channel_count", 0}}),
                      "filterbank_channel_count must be positive, got 0"));
  BOOST_TEST(contains(error(spectrum, rate, {{"lower_frequency_limit", -1.0f}}),
                      "lower_frequency_limit must be non-negative, got -1"));
  BOOST_TEST(contains(error(spectrum, rate, {{"upper_frequency_limit", 20.0f}}),
                      "upper_frequency_limit (20) must be greater than lower_frequency_limit (20)"));
  BOOST_TEST(contains(error(spectrum, rate, {{"upper_frequency_limit", std::numeric_limits<float>::quiet_NaN()}}),
                      "the frequency limits must be finite"));
  BOOST_TEST(contains(error(spectrum, rate, {{"dct_coefficient_count", 0}}),
                      "dct_coefficient_count must be positive, got 0"));
  BOOST_TEST(contains(error(spectrum, rate, {{"dct_coefficient_count", 41}}),
                      "dct_coefficient_count (41) must not exceed filterbank_channel_count (40)"));
  BOOST_TEST(contains(error(tensor<float>(Shape{1, 33}, std::vector<float>(33, 1.0f)), rate),
                      "spectrogram must be 3-dimensional, got shape [1,33]"));
  BOOST_TEST(contains(error(spectrum, Tensor::vector<int32_t>({8000})), "sample_rate must be a scalar, got shape [1]"));
  // Every coefficient as many bands as asked: the DCT may keep them all.
  BOOST_TEST(error(spectrum, rate, {{"filterbank_channel_count", 13}}).empty());
}

// --- shape rules --------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(shape_rules) {
  BOOST_TEST(inferred("DecodeWav", {shape::scalar()}) == "[?,?] []");
  BOOST_TEST(inferred("DecodeWav", {kUnknown}, {{"desired_channels", 2}, {"desired_samples", 16000}}) ==
             "[16000,2] []");
  BOOST_TEST(contains(inferred("DecodeWav", {shape::vector(2)}), "contents must have rank 0, got shape [2]"));
  BOOST_TEST(contains(inferred("DecodeWav", {shape::scalar()}, {{"desired_channels", -3}}),
                      "desired_channels must be >= -1, got -3"));

  BOOST_TEST(inferred("EncodeWav", {shape::known({-1, 2}), shape::scalar()}) == "[]");
  BOOST_TEST(contains(inferred("EncodeWav", {shape::vector(3), shape::scalar()}), "audio must have rank 2"));
  BOOST_TEST(contains(inferred("EncodeWav", {shape::known({3, 1}), shape::vector(1)}), "sample_rate must have rank 0"));

  const AttrMap window_30 = {{"window_size", 30}, {"stride", 40}};
  BOOST_TEST(inferred("AudioSpectrogram", {shape::known({100, 2})}, window_30) == "[2,2,17]");
  BOOST_TEST(inferred("AudioSpectrogram", {shape::known({29, 1})}, window_30) == "[1,0,17]");
  BOOST_TEST(inferred("AudioSpectrogram", {shape::known({-1, 3})}, window_30) == "[3,?,17]");
  BOOST_TEST(inferred("AudioSpectrogram", {kUnknown}, {{"window_size", 512}, {"stride", 1}}) == "[?,?,257]");
  BOOST_TEST(contains(inferred("AudioSpectrogram", {shape::vector(4)}, window_30), "input must have rank 2"));
  BOOST_TEST(contains(inferred("AudioSpectrogram", {kUnknown}, {{"window_size", 1}, {"stride", 1}}),
                      "window_size must be > 1"));
  BOOST_TEST(contains(inferred("AudioSpectrogram", {kUnknown}, {{"window_size", 4}, {"stride", -1}}),
                      "stride must be > 0"));

  BOOST_TEST(inferred("Mfcc", {shape::known({2, 98, 257}), shape::scalar()}) == "[2,98,13]");
  BOOST_TEST(inferred("Mfcc", {kUnknown, kUnknown}, {{"dct_coefficient_count", 20}}) == "[?,?,20]");
  BOOST_TEST(contains(inferred("Mfcc", {shape::known({98, 257}), shape::scalar()}), "spectrogram must have rank 3"));
  BOOST_TEST(contains(inferred("Mfcc", {kUnknown, shape::vector(1)}), "sample_rate must have rank 0"));
}

BOOST_AUTO_TEST_SUITE_END()
