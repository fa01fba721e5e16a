// The image codec ops (ops/image_codec_ops.cpp; suite image_ops, with
// image_resize_ops_test.cpp). Decoding reads the files of
// tests/data/images/ (README.md there says how each was made): PNG pixels
// are checked exactly against the formulas that wrote them, JPEG pixels
// against the flat colours of their blocks within a stated tolerance (no
// djpeg is installed to compare with). Every malformed input must give an
// error Status; encoding must round-trip.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <sstream>

#include "inferred_shape.hpp"
#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

std::string image_file(const std::string& name) {
  std::ifstream in(std::string(TAGFLOW_TEST_DATA) + "/images/" + name, std::ios::binary);
  BOOST_TEST_REQUIRE(in.good(), "cannot read tests/data/images/" << name);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

Expected<Tensor> decode(const std::string& op, const std::string& bytes, AttrMap attrs = {}) {
  return run_op1(op, {Tensor::string_scalar(bytes)}, std::move(attrs));
}

std::string decode_error(const std::string& op, const std::string& bytes, AttrMap attrs = {}) {
  Expected<Tensor> out = decode(op, bytes, std::move(attrs));
  return out.ok() ? std::string("no error: decoded ") + out->shape().to_string() : out.status().to_string();
}

// Sample (y, x, k) of an image [h, w, c] of any dtype, as a double.
double px(const Tensor& image, int64_t y, int64_t x, int64_t k) {
  return element_as_double(image, (y * image.dim(1) + x) * image.dim(2) + k);
}

Shape shape3(int64_t h, int64_t w, int64_t c) { return Shape{h, w, c}; }

// --- PNG: pixels as scripts/make_test_pngs.py wrote them ---------------------

BOOST_AUTO_TEST_SUITE(image_ops)

BOOST_AUTO_TEST_CASE(decode_png_rgb8_is_bit_exact) {
  Expected<Tensor> image = decode("DecodePng", image_file("rgb8.png"));
  BOOST_TEST_REQUIRE(image.ok(), image.status().to_string());
  BOOST_TEST((image->dtype() == DType::uint8));
  BOOST_TEST((image->shape() == shape3(3, 5, 3)));
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 5; ++x) {
      BOOST_TEST(px(*image, y, x, 0) == x * 50);
      BOOST_TEST(px(*image, y, x, 1) == y * 100);
      BOOST_TEST(px(*image, y, x, 2) == 255 - x * 20 - y * 10);
    }
}

BOOST_AUTO_TEST_CASE(decode_png_converts_channels) {
  const std::string rgba = image_file("rgba8.png");  // (x*60, y*200, 7, 255-x*80-y), 2x4
  Expected<Tensor> four = decode("DecodePng", rgba);
  BOOST_TEST_REQUIRE(four.ok(), four.status().to_string());
  BOOST_TEST((four->shape() == shape3(2, 4, 4)));
  BOOST_TEST(px(*four, 1, 3, 3) == 255 - 3 * 80 - 1);
  Expected<Tensor> three = decode("DecodePng", rgba, {{"channels", 3}});
  BOOST_TEST_REQUIRE(three.ok());
  BOOST_TEST((three->shape() == shape3(2, 4, 3)));
  BOOST_TEST(px(*three, 1, 2, 0) == 120);
  BOOST_TEST(px(*three, 1, 2, 1) == 200);
  BOOST_TEST(px(*three, 1, 2, 2) == 7);
  // channels 1: gray = 0.299 R + 0.587 G + 0.114 B (BT.601), within one level.
  Expected<Tensor> gray = decode("DecodePng", rgba, {{"channels", 1}});
  BOOST_TEST_REQUIRE(gray.ok());
  BOOST_TEST((gray->shape() == shape3(2, 4, 1)));
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 4; ++x)
      BOOST_TEST(std::abs(px(*gray, y, x, 0) - (0.299 * x * 60 + 0.587 * y * 200 + 0.114 * 7)) <= 1.0);

  const std::string gray8 = image_file("gray8.png");  // (y*4+x)*20, 3x4
  Expected<Tensor> g = decode("DecodePng", gray8);
  BOOST_TEST_REQUIRE(g.ok());
  BOOST_TEST((g->shape() == shape3(3, 4, 1)));
  BOOST_TEST(px(*g, 2, 3, 0) == 220);
  Expected<Tensor> rgb = decode("DecodePng", gray8, {{"channels", 3}});
  BOOST_TEST_REQUIRE(rgb.ok());
  BOOST_TEST((rgb->shape() == shape3(3, 4, 3)));
  BOOST_TEST(px(*rgb, 1, 2, 0) == 120);
  BOOST_TEST(px(*rgb, 1, 2, 2) == 120);
  Expected<Tensor> with_alpha = decode("DecodePng", gray8, {{"channels", 4}});
  BOOST_TEST_REQUIRE(with_alpha.ok());
  BOOST_TEST(px(*with_alpha, 1, 2, 1) == 120);
  BOOST_TEST(px(*with_alpha, 1, 2, 3) == 255);  // added alpha is opaque

  const std::string gray_alpha = image_file("gray_alpha8.png");  // (x*100, 255-x*50), 1x3
  Expected<Tensor> ga = decode("DecodePng", gray_alpha);
  BOOST_TEST_REQUIRE(ga.ok());
  BOOST_TEST((ga->shape() == shape3(1, 3, 2)));
  BOOST_TEST(px(*ga, 0, 2, 0) == 200);
  BOOST_TEST(px(*ga, 0, 2, 1) == 155);
  Expected<Tensor> g1 = decode("DecodePng", gray_alpha, {{"channels", 1}});
  BOOST_TEST_REQUIRE(g1.ok());
  BOOST_TEST((g1->shape() == shape3(1, 3, 1)));
  BOOST_TEST(px(*g1, 0, 1, 0) == 100);
}

BOOST_AUTO_TEST_CASE(decode_png_sixteen_bits) {
  const std::string gray16 = image_file("gray16.png");
  const int values[] = {0x1234, 0xABCD, 0x0000, 0xFFFF, 0x0101, 0x80FF};
  Expected<Tensor> wide = decode("DecodePng", gray16, {{"dtype", DType::uint16}});
  BOOST_TEST_REQUIRE(wide.ok(), wide.status().to_string());
  BOOST_TEST((wide->dtype() == DType::uint16));
  BOOST_TEST((wide->shape() == shape3(2, 3, 1)));
  for (int i = 0; i < 6; ++i) BOOST_TEST(px(*wide, i / 3, i % 3, 0) == values[i]);
  // uint8 keeps the high byte.
  Expected<Tensor> narrow = decode("DecodePng", gray16);
  BOOST_TEST_REQUIRE(narrow.ok());
  for (int i = 0; i < 6; ++i) BOOST_TEST(px(*narrow, i / 3, i % 3, 0) == (values[i] >> 8));

  Expected<Tensor> rgb16 = decode("DecodePng", image_file("rgb16.png"), {{"dtype", DType::uint16}});
  BOOST_TEST_REQUIRE(rgb16.ok());  // (1000*(x+1), 20000+y, 65535-x), 2x2
  BOOST_TEST((rgb16->shape() == shape3(2, 2, 3)));
  BOOST_TEST(px(*rgb16, 1, 1, 0) == 2000);
  BOOST_TEST(px(*rgb16, 1, 1, 1) == 20001);
  BOOST_TEST(px(*rgb16, 1, 1, 2) == 65534);

  // 8-bit samples asked as uint16 are v * 257.
  Expected<Tensor> widened = decode("DecodePng", image_file("rgb8.png"), {{"dtype", DType::uint16}});
  BOOST_TEST_REQUIRE(widened.ok());
  BOOST_TEST(px(*widened, 2, 4, 0) == 200 * 257);
  BOOST_TEST(px(*widened, 2, 4, 2) == (255 - 80 - 20) * 257);
}

BOOST_AUTO_TEST_CASE(decode_png_palettes_low_depths_and_interlacing) {
  const int palette[3][3] = {{10, 20, 30}, {200, 100, 0}, {0, 0, 255}};
  const std::string p2 = image_file("palette2bit.png");  // index (x+y)%3, 2x5, 2 bits
  Expected<Tensor> rgb = decode("DecodePng", p2);
  BOOST_TEST_REQUIRE(rgb.ok(), rgb.status().to_string());
  BOOST_TEST((rgb->shape() == shape3(2, 5, 3)));
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 5; ++x)
      for (int k = 0; k < 3; ++k) BOOST_TEST(px(*rgb, y, x, k) == palette[(x + y) % 3][k]);
  Expected<Tensor> rgba = decode("DecodePng", p2, {{"channels", 4}});
  BOOST_TEST_REQUIRE(rgba.ok());
  BOOST_TEST(px(*rgba, 1, 4, 2) == palette[2][2]);
  BOOST_TEST(px(*rgba, 1, 4, 3) == 255);

  const std::string trns = image_file("palette_trns.png");  // index x, alphas 255, 128, 0
  Expected<Tensor> with_alpha = decode("DecodePng", trns);
  BOOST_TEST_REQUIRE(with_alpha.ok());
  BOOST_TEST((with_alpha->shape() == shape3(1, 3, 4)));
  const int alpha[] = {255, 128, 0};
  for (int x = 0; x < 3; ++x) {
    for (int k = 0; k < 3; ++k) BOOST_TEST(px(*with_alpha, 0, x, k) == palette[x][k]);
    BOOST_TEST(px(*with_alpha, 0, x, 3) == alpha[x]);
  }
  Expected<Tensor> stripped = decode("DecodePng", trns, {{"channels", 3}});
  BOOST_TEST_REQUIRE(stripped.ok());
  BOOST_TEST((stripped->shape() == shape3(1, 3, 3)));
  BOOST_TEST(px(*stripped, 0, 1, 0) == 200);

  Expected<Tensor> bits = decode("DecodePng", image_file("gray1bit.png"));  // (x+y)%2, 2x9, 1 bit
  BOOST_TEST_REQUIRE(bits.ok());
  BOOST_TEST((bits->shape() == shape3(2, 9, 1)));
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 9; ++x) BOOST_TEST(px(*bits, y, x, 0) == ((x + y) % 2) * 255);

  Expected<Tensor> adam7 = decode("DecodePng", image_file("interlaced.png"));  // (x*28, y*28, x*y%256), 9x9
  BOOST_TEST_REQUIRE(adam7.ok(), adam7.status().to_string());
  BOOST_TEST((adam7->shape() == shape3(9, 9, 3)));
  for (int y = 0; y < 9; ++y)
    for (int x = 0; x < 9; ++x) {
      BOOST_TEST(px(*adam7, y, x, 0) == x * 28);
      BOOST_TEST(px(*adam7, y, x, 1) == y * 28);
      BOOST_TEST(px(*adam7, y, x, 2) == (x * y) % 256);
    }
}

BOOST_AUTO_TEST_CASE(decode_image_sniffs_the_format_and_scales_dtypes) {
  const std::string png = image_file("rgb8.png");
  Expected<Tensor> u8 = decode("DecodeImage", png);
  BOOST_TEST_REQUIRE(u8.ok(), u8.status().to_string());
  BOOST_TEST((u8->dtype() == DType::uint8));
  BOOST_TEST((u8->shape() == shape3(3, 5, 3)));
  // float32 of a PNG: decoded at 16 bits (v * 257), times float(1 / 65535).
  Expected<Tensor> f = decode("DecodeImage", png, {{"dtype", DType::float32}});
  BOOST_TEST_REQUIRE(f.ok());
  BOOST_TEST((f->dtype() == DType::float32));
  const float png_scale = static_cast<float>(1.0 / 65535);
  BOOST_TEST(f->data<float>()[(1 * 5 + 2) * 3 + 1] == static_cast<float>(100 * 257) * png_scale);

  // JPEG: uint16 is v * 256, float32 v * float(1 / 255), of the uint8 decode.
  const std::string jpeg = image_file("blocks_rgb444.jpg");
  Expected<Tensor> j8 = decode("DecodeImage", jpeg);
  Expected<Tensor> j16 = decode("DecodeImage", jpeg, {{"dtype", DType::uint16}});
  Expected<Tensor> jf = decode("DecodeImage", jpeg, {{"dtype", DType::float32}});
  BOOST_TEST_REQUIRE((j8.ok() && j16.ok() && jf.ok()));
  BOOST_TEST((j16->shape() == shape3(16, 16, 3)));
  const float jpeg_scale = static_cast<float>(1.0 / 255);
  for (int64_t i = 0; i < j8->num_elements(); ++i) {
    const int v = j8->data<uint8_t>()[i];
    BOOST_TEST(j16->data<uint16_t>()[i] == v * 256);
    BOOST_TEST(jf->data<float>()[i] == static_cast<float>(v) * jpeg_scale);
  }
  // As in TensorFlow, DecodeJpeg decodes a PNG and DecodePng a JPEG.
  Expected<Tensor> png_by_jpeg_op = decode("DecodeJpeg", png);
  BOOST_TEST_REQUIRE(png_by_jpeg_op.ok());
  BOOST_TEST(png_by_jpeg_op->equals(*u8));
  Expected<Tensor> jpeg_by_png_op = decode("DecodePng", jpeg);
  BOOST_TEST_REQUIRE(jpeg_by_png_op.ok());
  BOOST_TEST(jpeg_by_png_op->equals(*j8));
}

// --- JPEG: flat blocks (scripts/make_test_jpegs.c) ---------------------------

// The block colours of the RGB test JPEGs: top-left, top-right,
// bottom-left, bottom-right.
const int kBlockRgb[4][3] = {{200, 40, 40}, {40, 200, 40}, {40, 40, 200}, {128, 128, 128}};
const int kBlockGray[4] = {32, 96, 160, 224};
// Quality 100 leaves flat blocks within a few levels of their colour; the
// YCbCr round trip and the fast integer DCT account for the rest.
constexpr double kJpegTolerance = 3;

int block_of(int64_t y, int64_t x, int64_t size) { return (y >= size / 2) * 2 + (x >= size / 2); }

// Every pixel of an RGB block image within `tolerance` of its block's
// colour; with `margin`, pixels that near a block edge are skipped.
void check_rgb_blocks(const Tensor& image, const int (&colours)[4][3], double tolerance, int64_t margin = 0) {
  const int64_t size = image.dim(0);
  BOOST_TEST_REQUIRE((image.shape() == shape3(size, size, 3)));
  double worst = 0;
  for (int64_t y = 0; y < size; ++y)
    for (int64_t x = 0; x < size; ++x) {
      const int64_t half = size / 2;
      if (std::abs(y - half + 0.5) < margin || std::abs(x - half + 0.5) < margin) continue;
      for (int k = 0; k < 3; ++k)
        worst = std::max(worst, std::abs(px(image, y, x, k) - colours[block_of(y, x, size)][k]));
    }
  BOOST_TEST(worst <= tolerance);
}

BOOST_AUTO_TEST_CASE(decode_jpeg_flat_blocks) {
  const std::string rgb = image_file("blocks_rgb444.jpg");
  Expected<Tensor> image = decode("DecodeJpeg", rgb);
  BOOST_TEST_REQUIRE(image.ok(), image.status().to_string());
  BOOST_TEST((image->dtype() == DType::uint8));
  check_rgb_blocks(*image, kBlockRgb, kJpegTolerance);
  for (const char* dct : {"INTEGER_FAST", "INTEGER_ACCURATE"}) {
    Expected<Tensor> other = decode("DecodeJpeg", rgb, {{"dct_method", dct}});
    BOOST_TEST_REQUIRE(other.ok());
    check_rgb_blocks(*other, kBlockRgb, kJpegTolerance);
  }
  Expected<Tensor> progressive = decode("DecodeJpeg", image_file("blocks_progressive.jpg"));
  BOOST_TEST_REQUIRE(progressive.ok(), progressive.status().to_string());
  check_rgb_blocks(*progressive, kBlockRgb, kJpegTolerance);
  // Adobe's inverted CMYK: (200,100,50,255), (255,255,255,128), (50,150,250,255), (255,0,255,255)
  // give RGB k * c / 255.
  const int cmyk_as_rgb[4][3] = {{200, 100, 50}, {128, 128, 128}, {50, 150, 250}, {255, 0, 255}};
  Expected<Tensor> cmyk = decode("DecodeJpeg", image_file("blocks_cmyk.jpg"));
  BOOST_TEST_REQUIRE(cmyk.ok(), cmyk.status().to_string());
  check_rgb_blocks(*cmyk, cmyk_as_rgb, kJpegTolerance);
}

BOOST_AUTO_TEST_CASE(decode_jpeg_channels) {
  const std::string gray = image_file("blocks_gray.jpg");
  Expected<Tensor> one = decode("DecodeJpeg", gray);
  BOOST_TEST_REQUIRE(one.ok(), one.status().to_string());
  BOOST_TEST((one->shape() == shape3(16, 16, 1)));
  Expected<Tensor> three = decode("DecodeJpeg", gray, {{"channels", 3}});
  BOOST_TEST_REQUIRE(three.ok());
  BOOST_TEST((three->shape() == shape3(16, 16, 3)));
  for (int64_t y = 0; y < 16; ++y)
    for (int64_t x = 0; x < 16; ++x) {
      BOOST_TEST(std::abs(px(*one, y, x, 0) - kBlockGray[block_of(y, x, 16)]) <= kJpegTolerance);
      for (int k = 0; k < 3; ++k) BOOST_TEST(px(*three, y, x, k) == px(*one, y, x, 0));
    }
  // RGB read as gray: its luma, 0.299 R + 0.587 G + 0.114 B.
  Expected<Tensor> luma = decode("DecodeJpeg", image_file("blocks_rgb444.jpg"), {{"channels", 1}});
  BOOST_TEST_REQUIRE(luma.ok());
  BOOST_TEST((luma->shape() == shape3(16, 16, 1)));
  for (int b = 0; b < 4; ++b) {
    const double expected = 0.299 * kBlockRgb[b][0] + 0.587 * kBlockRgb[b][1] + 0.114 * kBlockRgb[b][2];
    BOOST_TEST(std::abs(px(*luma, (b / 2) * 8 + 4, (b % 2) * 8 + 4, 0) - expected) <= kJpegTolerance);
  }
}

BOOST_AUTO_TEST_CASE(decode_jpeg_ratio_and_upscaling) {
  const std::string rgb420 = image_file("blocks_rgb420.jpg");  // 32x32, chroma at half resolution
  for (int ratio : {1, 2, 4, 8}) {
    BOOST_TEST_CONTEXT("ratio " << ratio) {
      Expected<Tensor> image = decode("DecodeJpeg", rgb420, {{"ratio", ratio}});
      BOOST_TEST_REQUIRE(image.ok(), image.status().to_string());
      BOOST_TEST((image->shape() == shape3(32 / ratio, 32 / ratio, 3)));
      // Chroma blurs across block edges: only the pixels away from them.
      check_rgb_blocks(*image, kBlockRgb, kJpegTolerance, 32 / ratio / 4);
    }
  }
  // Without fancy upscaling each chroma sample covers its 2x2 pixels, so
  // the pixels at the block edge keep their block's colour; the smooth
  // upsampling blends the chroma of both blocks there.
  Expected<Tensor> plain = decode("DecodeJpeg", rgb420, {{"fancy_upscaling", false}});
  Expected<Tensor> fancy = decode("DecodeJpeg", rgb420);
  BOOST_TEST_REQUIRE((plain.ok() && fancy.ok()));
  check_rgb_blocks(*plain, kBlockRgb, kJpegTolerance);
  BOOST_TEST(std::abs(px(*fancy, 4, 15, 0) - px(*plain, 4, 15, 0)) > kJpegTolerance);
}

BOOST_AUTO_TEST_CASE(decode_jpeg_truncated) {
  // Cut halfway through the entropy-coded data, after the start-of-scan marker.
  const std::string full = image_file("blocks_rgb420.jpg");
  const size_t scan = full.find("\xFF\xDA");
  BOOST_TEST_REQUIRE(scan != std::string::npos);
  const std::string half = full.substr(0, scan + (full.size() - scan) / 2);
  BOOST_TEST(contains(decode_error("DecodeJpeg", half), "invalid_argument: contents (" +
                                                            std::to_string(half.size()) +
                                                            " bytes) is not a valid JPEG: Premature end"));
  // Recovering: libjpeg decodes what is missing as flat; the top rows are intact.
  Expected<Tensor> recovered = decode("DecodeJpeg", half, {{"try_recover_truncated", true}});
  BOOST_TEST_REQUIRE(recovered.ok(), recovered.status().to_string());
  BOOST_TEST((recovered->shape() == shape3(32, 32, 3)));
  for (int k = 0; k < 3; ++k) BOOST_TEST(std::abs(px(*recovered, 2, 2, k) - kBlockRgb[0][k]) <= kJpegTolerance);
}

// --- malformed inputs: always an error Status --------------------------------

BOOST_AUTO_TEST_CASE(malformed_inputs_are_errors) {
  for (const char* op : {"DecodeJpeg", "DecodePng", "DecodeImage"}) {
    BOOST_TEST_CONTEXT(op) {
      BOOST_TEST(decode_error(op, "") == "invalid_argument: contents is empty: no image to decode");
      BOOST_TEST(contains(error_of(op, {Tensor::vector<std::string>({"a"})}), "contents must be a scalar string"));
      BOOST_TEST(contains(decode_error(op, "GIF89a\x01\x00\x01\x00"), "unimplemented: contents is a GIF image"));
      BOOST_TEST(contains(decode_error(op, "BM\x3a\x00\x00\x00\x00\x00"), "unimplemented: contents is a BMP image"));
      BOOST_TEST(contains(decode_error(op, image_file("huge_dims.jpg")), "JPEG of 65500x65500 pixels"));
      BOOST_TEST(contains(decode_error(op, image_file("huge_dims.png")), "PNG of 100000x100000 pixels is too large"));
      BOOST_TEST(contains(decode_error(op, image_file("bad_crc.png")), "is not a valid PNG: IDAT: CRC error"));
      // Every prefix of every test image is refused (none is a whole image).
      for (const char* name : {"blocks_rgb444.jpg", "blocks_progressive.jpg", "blocks_cmyk.jpg", "rgb8.png",
                               "interlaced.png", "palette_trns.png"}) {
        const std::string bytes = image_file(name);
        int decoded = 0;
        for (size_t n = 1; n < bytes.size(); ++n) decoded += decode(op, bytes.substr(0, n)).ok();
        BOOST_TEST(decoded == 0, name << ": " << decoded << " prefixes decoded");
      }
    }
  }
  BOOST_TEST(contains(decode_error("DecodeJpeg", "not an image at all"),
                      "invalid_argument: contents (19 bytes) is not a valid JPEG: Not a JPEG file: starts with "
                      "0x6e 0x6f"));
  BOOST_TEST(contains(decode_error("DecodePng", "not an image at all"), "is not a valid PNG: Not a PNG file"));
  BOOST_TEST(contains(decode_error("DecodeImage", "not an image at all"), "Unknown image file format"));
  BOOST_TEST(contains(decode_error("DecodeJpeg", image_file("rgb8.png").substr(0, 30)), "is not a valid PNG"));
  // Random bytes, bare and behind each format's magic.
  std::mt19937 rng(7);
  for (const std::string& magic : {std::string(), std::string("\xFF\xD8\xFF", 3), std::string("\x89PNG\r\n\x1A\n")}) {
    for (int trial = 0; trial < 50; ++trial) {
      std::string bytes = magic;
      for (size_t n = rng() % 300 + 1; n > 0; --n) bytes.push_back(static_cast<char>(rng()));
      for (const char* op : {"DecodeJpeg", "DecodePng", "DecodeImage"})
        BOOST_TEST(!decode(op, bytes).ok(), op << " decoded " << bytes.size() << " random bytes");
    }
  }
}

BOOST_AUTO_TEST_CASE(decode_attr_errors) {
  const std::string jpeg = image_file("blocks_rgb444.jpg");
  BOOST_TEST(decode_error("DecodeJpeg", jpeg, {{"channels", 4}}) ==
             "invalid_argument: JPEG does not support 4 channels");
  BOOST_TEST(decode_error("DecodeJpeg", jpeg, {{"channels", 2}}) ==
             "invalid_argument: channels must be 0, 1, 3 or 4, got 2");
  BOOST_TEST(decode_error("DecodeJpeg", jpeg, {{"ratio", 3}}) == "invalid_argument: ratio must be 1, 2, 4, or 8, got 3");
  BOOST_TEST(contains(decode_error("DecodeJpeg", jpeg, {{"dct_method", "FLOAT"}}),
                      "dct_method must be one of {'', 'INTEGER_FAST', 'INTEGER_ACCURATE'}, got 'FLOAT'"));
  BOOST_TEST(contains(decode_error("DecodePng", jpeg, {{"dtype", DType::float32}}), "not one of"));
}

// --- EncodePng -----------------------------------------------------------------

template <class T>
Tensor random_image(const Shape& shape, std::mt19937& rng) {
  Tensor t(dtype_v<T>, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_data<T>()[i] = static_cast<T>(rng());
  return t;
}

BOOST_AUTO_TEST_CASE(encode_png_round_trips) {
  std::mt19937 rng(11);
  for (int channels = 1; channels <= 4; ++channels) {
    for (int compression : {-1, 0, 9}) {
      BOOST_TEST_CONTEXT("channels " << channels << ", compression " << compression) {
        const Tensor image = random_image<uint8_t>(shape3(5, 7, channels), rng);
        Expected<Tensor> png = run_op1("EncodePng", {image}, {{"compression", compression}});
        BOOST_TEST_REQUIRE(png.ok(), png.status().to_string());
        BOOST_TEST(png->shape().is_scalar());
        const std::string& bytes = png->scalar_value<std::string>();
        // The header: the signature, then IHDR width 7, height 5, depth 8 and
        // the colour type of the channels (0 gray, 4 gray+alpha, 2 RGB, 6 RGBA).
        BOOST_TEST(bytes.substr(0, 8) == std::string("\x89PNG\r\n\x1A\n"));
        BOOST_TEST(bytes.substr(16, 10) == std::string("\0\0\0\x07\0\0\0\x05\x08", 9) +
                                               std::string(1, "\0\x04\x02\x06"[channels - 1]));
        Expected<Tensor> back = decode("DecodePng", bytes);
        BOOST_TEST_REQUIRE(back.ok(), back.status().to_string());
        BOOST_TEST(back->equals(image));
      }
    }
  }
  const Tensor wide = random_image<uint16_t>(shape3(3, 4, 3), rng);
  Expected<Tensor> png16 = run_op1("EncodePng", {wide});
  BOOST_TEST_REQUIRE(png16.ok());
  Expected<Tensor> back16 = decode("DecodePng", png16->scalar_value<std::string>(), {{"dtype", DType::uint16}});
  BOOST_TEST_REQUIRE(back16.ok());
  BOOST_TEST(back16->equals(wide));
}

BOOST_AUTO_TEST_CASE(encode_png_batches_and_errors) {
  std::mt19937 rng(3);
  const Tensor batch = random_image<uint8_t>(Shape{2, 3, 2, 4, 1}, rng);  // [2, 3] images of 2x4x1
  Expected<Tensor> pngs = run_op1("EncodePng", {batch});
  BOOST_TEST_REQUIRE(pngs.ok(), pngs.status().to_string());
  BOOST_TEST((pngs->shape() == (Shape{2, 3})));
  for (int i = 0; i < 6; ++i) {
    Expected<Tensor> one = decode("DecodePng", pngs->data<std::string>()[i]);
    BOOST_TEST_REQUIRE(one.ok());
    for (int j = 0; j < 8; ++j) BOOST_TEST(one->data<uint8_t>()[j] == batch.data<uint8_t>()[i * 8 + j]);
  }
  BOOST_TEST(error_of("EncodePng", {random_image<uint8_t>(Shape{4, 4}, rng)}) ==
             "invalid_argument: image must have rank 3 or more ([..., height, width, channels]), got shape [4,4]");
  BOOST_TEST(error_of("EncodePng", {random_image<uint8_t>(shape3(2, 2, 5), rng)}) ==
             "invalid_argument: image must have 1, 2, 3, or 4 channels, got 5");
  BOOST_TEST(error_of("EncodePng", {random_image<uint8_t>(shape3(2, 2, 3), rng)}, {{"compression", 10}}) ==
             "invalid_argument: compression should be in [-1,9], got 10");
  BOOST_TEST(contains(error_of("EncodePng", {Tensor(DType::uint8, shape3(0, 3, 3))}),
                      "cannot encode a 3x0 image with 3 channels as PNG: "));
  BOOST_TEST(contains(error_of("EncodePng", {random_image<int32_t>(shape3(2, 2, 3), rng)}), "not one of"));
}

BOOST_AUTO_TEST_CASE(codec_shape_functions) {
  const OutputInfo contents = known_input(DType::string, shape::scalar());
  BOOST_TEST(inferred("DecodeJpeg", {contents}) == "[?,?,?]");
  BOOST_TEST(inferred("DecodeJpeg", {contents}, {{"channels", 3}}) == "[?,?,3]");
  BOOST_TEST(inferred("DecodePng", {contents}, {{"channels", 4}}) == "[?,?,4]");
  BOOST_TEST(inferred("DecodeImage", {contents}, {{"channels", 1}}) == "?");
  BOOST_TEST(inferred("DecodeImage", {contents}, {{"channels", 1}, {"expand_animations", false}}) == "[?,?,1]");
  BOOST_TEST(contains(inferred("DecodePng", {known_input(DType::string, shape::vector(2))}),
                      "contents must be a scalar, not [2]"));
  BOOST_TEST(inferred("EncodePng", {known_input(DType::uint8, shape::known({4, 5, 6, 3}))}) == "[4]");
  BOOST_TEST(inferred("EncodePng", {known_input(DType::uint8, shape::known({5, 6, 3}))}) == "[]");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
