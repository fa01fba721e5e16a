#include <boost/test/unit_test.hpp>

#include <algorithm>

#include "cpu/test_pool.hpp"
#include "nn_test_util.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

// One variant of a 2-D window: strides, dilations and padding as the op's
// attrs take them; explicit pads are (top, bottom, left, right).
struct Variant {
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;
  std::string padding = "VALID";
  std::vector<int64_t> pads;  // EXPLICIT only

  AttrMap attrs() const {
    AttrMap a{{"strides", int_list({1, sh, sw, 1})},
              {"dilations", int_list({1, dh, dw, 1})},
              {"padding", padding}};
    if (padding == "EXPLICIT")
      a["explicit_paddings"] = int_list({0, 0, pads[0], pads[1], pads[2], pads[3], 0, 0});
    return a;
  }
  // The same window for NCHW images: the lists in NCHW order.
  AttrMap nchw_attrs() const {
    AttrMap a{{"strides", int_list({1, 1, sh, sw})},
              {"dilations", int_list({1, 1, dh, dw})},
              {"padding", padding},
              {"data_format", std::string("NCHW")}};
    if (padding == "EXPLICIT")
      a["explicit_paddings"] = int_list({0, 0, 0, 0, pads[0], pads[1], pads[2], pads[3]});
    return a;
  }
  std::string name() const {
    return padding + " strides " + std::to_string(sh) + "," + std::to_string(sw) + " dilations " +
           std::to_string(dh) + "," + std::to_string(dw);
  }
};

// Output size and padding before, as TensorFlow defines them.
void window(const Variant& v, int64_t in, int64_t k, int64_t s, int64_t d, int64_t before,
            int64_t after, int64_t* out, int64_t* pad) {
  const int64_t eff = (k - 1) * d + 1;
  if (v.padding == "SAME") {
    *out = (in + s - 1) / s;
    *pad = std::max<int64_t>((*out - 1) * s + eff - in, 0) / 2;
  } else if (v.padding == "VALID") {
    *out = (in - eff) / s + 1;
    *pad = 0;
  } else {
    *out = (in + before + after - eff) / s + 1;
    *pad = before;
  }
}

// Conv2D by its definition: out[b,y,x,o] = sum over (i,j,c) of
// in[b, y*sh - pad_top + i*dh, x*sw - pad_left + j*dw, c] * f[i,j,c,o].
Tensor direct_conv(const Tensor& in, const Tensor& f, const Variant& v) {
  const int64_t B = in.dim(0), H = in.dim(1), W = in.dim(2), C = in.dim(3);
  const int64_t KH = f.dim(0), KW = f.dim(1), O = f.dim(3);
  const bool ex = v.padding == "EXPLICIT";
  int64_t OH, OW, pt, pl;
  window(v, H, KH, v.sh, v.dh, ex ? v.pads[0] : 0, ex ? v.pads[1] : 0, &OH, &pt);
  window(v, W, KW, v.sw, v.dw, ex ? v.pads[2] : 0, ex ? v.pads[3] : 0, &OW, &pl);
  const std::vector<double> x = values_of(in), w = values_of(f);
  std::vector<double> out(B * OH * OW * O, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t y = 0; y < OH; ++y)
      for (int64_t xo = 0; xo < OW; ++xo)
        for (int64_t o = 0; o < O; ++o) {
          double s = 0;
          for (int64_t i = 0; i < KH; ++i)
            for (int64_t j = 0; j < KW; ++j) {
              const int64_t iy = y * v.sh - pt + i * v.dh, ix = xo * v.sw - pl + j * v.dw;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              for (int64_t c = 0; c < C; ++c)
                s += x[((b * H + iy) * W + ix) * C + c] * w[((i * KW + j) * C + c) * O + o];
            }
          out[((b * OH + y) * OW + xo) * O + o] = s;
        }
  return Tensor::from_vector<double>(Shape{B, OH, OW, O}, out);
}

// DepthwiseConv2dNative by its definition: out[b,y,x,c*M+m] = sum over
// (i,j) of in[b, iy, ix, c] * f[i,j,c,m].
Tensor direct_depthwise(const Tensor& in, const Tensor& f, const Variant& v) {
  const int64_t B = in.dim(0), H = in.dim(1), W = in.dim(2), C = in.dim(3);
  const int64_t KH = f.dim(0), KW = f.dim(1), M = f.dim(3);
  const bool ex = v.padding == "EXPLICIT";
  int64_t OH, OW, pt, pl;
  window(v, H, KH, v.sh, v.dh, ex ? v.pads[0] : 0, ex ? v.pads[1] : 0, &OH, &pt);
  window(v, W, KW, v.sw, v.dw, ex ? v.pads[2] : 0, ex ? v.pads[3] : 0, &OW, &pl);
  const std::vector<double> x = values_of(in), w = values_of(f);
  std::vector<double> out(B * OH * OW * C * M, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t y = 0; y < OH; ++y)
      for (int64_t xo = 0; xo < OW; ++xo)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t m = 0; m < M; ++m) {
            double s = 0;
            for (int64_t i = 0; i < KH; ++i)
              for (int64_t j = 0; j < KW; ++j) {
                const int64_t iy = y * v.sh - pt + i * v.dh, ix = xo * v.sw - pl + j * v.dw;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                s += x[((b * H + iy) * W + ix) * C + c] * w[((i * KW + j) * C + c) * M + m];
              }
            out[(((b * OH + y) * OW + xo) * C + c) * M + m] = s;
          }
  return Tensor::from_vector<double>(Shape{B, OH, OW, C * M}, out);
}

std::vector<Variant> variants() {
  std::vector<Variant> vs;
  for (const char* p : {"VALID", "SAME"})
    for (int64_t s : {1, 2})
      for (int64_t d : {1, 2}) {
        Variant v;
        v.padding = p;
        v.sh = s;
        v.sw = s == 1 ? 2 : 1;  // unequal strides too
        v.dh = d;
        v.dw = d;
        vs.push_back(v);
      }
  Variant e;
  e.padding = "EXPLICIT";
  e.pads = {1, 0, 2, 1};
  e.sh = 2;
  vs.push_back(e);
  e.pads = {0, 2, 0, 0};
  e.sh = 1;
  e.dw = 2;
  vs.push_back(e);
  return vs;
}

// attrs plus T: the backprop of the input takes its dtype from the filter.
AttrMap with_t(AttrMap a, DType t) {
  a["T"] = t;
  return a;
}

const Shape kIn{2, 7, 8, 3};
const Shape kFilter{3, 2, 3, 4};

}  // namespace

BOOST_AUTO_TEST_SUITE(conv_ops)

BOOST_AUTO_TEST_CASE(conv2d_small_example_by_hand) {
  // 1..9 in a 3x3 image, a 2x2 filter of ones: window sums.
  const Tensor x = tensor<float>({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Tensor f = tensor<float>({2, 2, 1, 1}, {1, 1, 1, 1});
  BOOST_TEST(result("Conv2D", {x, f}, {{"strides", int_list({1, 1, 1, 1})}, {"padding", "VALID"}}) ==
             "float32[1,2,2,1] [[[[12],[16]],[[24],[28]]]]");
  // SAME at stride 2: output 2x2, one row and column of padding after.
  BOOST_TEST(result("Conv2D", {x, f}, {{"strides", int_list({1, 2, 2, 1})}, {"padding", "SAME"}}) ==
             "float32[1,2,2,1] [[[[12],[9]],[[15],[9]]]]");
}

BOOST_AUTO_TEST_CASE(conv2d_matches_the_direct_loop) {
  const Tensor x = random_tensor<double>(kIn, 1);
  const Tensor f = random_tensor<double>(kFilter, 2);
  for (const Variant& v : variants()) {
    Expected<Tensor> y = run_op1("Conv2D", {x, f}, v.attrs());
    BOOST_REQUIRE_MESSAGE(y.ok(), v.name() << ": " << y.status().to_string());
    const Tensor want = direct_conv(x, f, v);
    BOOST_TEST(y->shape().to_string() == want.shape().to_string(), v.name() << ": " << y->shape().to_string());
    BOOST_TEST(max_abs_diff(values_of(*y), values_of(want)) < 1e-12, v.name());
  }
  // float32, and a pointwise (1x1) filter, which skips im2col.
  const Tensor xf = random_tensor<float>(kIn, 3);
  const Tensor ff = random_tensor<float>({1, 1, 3, 5}, 4);
  Variant v;
  Expected<Tensor> y = run_op1("Conv2D", {xf, ff}, v.attrs());
  BOOST_REQUIRE(y.ok());
  BOOST_TEST((y->dtype() == DType::float32));
  BOOST_TEST(max_abs_diff(values_of(*y), values_of(direct_conv(xf, ff, v))) < 1e-5);
}

BOOST_AUTO_TEST_CASE(conv2d_empty_batch) {
  Variant v;
  v.padding = "SAME";
  BOOST_TEST(result("Conv2D", {Tensor(DType::float32, {0, 3, 3, 2}), Tensor(DType::float32, {2, 2, 2, 1})},
                    v.attrs()) == "float32[0,3,3,1] []");
}

BOOST_AUTO_TEST_CASE(conv2d_backprops_match_finite_differences) {
  const Tensor x = random_tensor<double>(kIn, 5);
  const Tensor f = random_tensor<double>(kFilter, 6);
  for (const Variant& v : variants()) {
    const Tensor y = direct_conv(x, f, v);
    const Tensor dy = random_tensor<double>(y.shape(), 7);
    Expected<Tensor> dx = run_op1("Conv2DBackpropInput", {shape_tensor(kIn), f, dy},
                                     with_t(v.attrs(), DType::float64));
    BOOST_REQUIRE_MESSAGE(dx.ok(), v.name() << ": " << dx.status().to_string());
    BOOST_TEST(dx->shape().to_string() == kIn.to_string());
    BOOST_TEST(max_abs_diff(values_of(*dx), numeric_gradient("Conv2D", {x, f}, v.attrs(), 0, dy, 1e-3)) <
                   1e-8,
               v.name());
    Expected<Tensor> df = run_op1("Conv2DBackpropFilter", {x, shape_tensor(kFilter), dy}, v.attrs());
    BOOST_REQUIRE_MESSAGE(df.ok(), v.name() << ": " << df.status().to_string());
    BOOST_TEST(df->shape().to_string() == kFilter.to_string());
    BOOST_TEST(max_abs_diff(values_of(*df), numeric_gradient("Conv2D", {x, f}, v.attrs(), 1, dy, 1e-3)) <
                   1e-8,
               v.name());
  }
}

BOOST_AUTO_TEST_CASE(conv2d_float32_backprops_pointwise) {
  const Shape in{2, 3, 4, 3}, fs{1, 1, 3, 2};
  const Tensor x = random_tensor<float>(in, 8);
  const Tensor f = random_tensor<float>(fs, 9);
  const Tensor dy = random_tensor<float>({2, 3, 4, 2}, 10);
  Variant v;
  Expected<Tensor> dx = run_op1("Conv2DBackpropInput", {shape_tensor(in), f, dy},
                                     with_t(v.attrs(), DType::float32));
  Expected<Tensor> df = run_op1("Conv2DBackpropFilter", {x, shape_tensor(fs), dy}, v.attrs());
  BOOST_REQUIRE(dx.ok());
  BOOST_REQUIRE(df.ok());
  BOOST_TEST(max_abs_diff(values_of(*dx), numeric_gradient("Conv2D", {x, f}, v.attrs(), 0, dy, 1e-2)) < 1e-3);
  BOOST_TEST(max_abs_diff(values_of(*df), numeric_gradient("Conv2D", {x, f}, v.attrs(), 1, dy, 1e-2)) < 1e-3);
}

BOOST_AUTO_TEST_CASE(depthwise_conv2d_matches_the_direct_loop_and_finite_differences) {
  const Tensor x = random_tensor<double>(kIn, 21);
  const Shape fs{3, 2, 3, 2};  // channel multiplier 2
  const Tensor f = random_tensor<double>(fs, 22);
  std::vector<Variant> vs = variants();
  vs.push_back(Variant());  // a 1x1 filter below takes the pointwise path
  for (size_t k = 0; k < vs.size(); ++k) {
    const Variant& v = vs[k];
    const Tensor filter = k + 1 == vs.size() ? random_tensor<double>({1, 1, 3, 2}, 23) : f;
    Expected<Tensor> y = run_op1("DepthwiseConv2dNative", {x, filter}, v.attrs());
    BOOST_REQUIRE_MESSAGE(y.ok(), v.name() << ": " << y.status().to_string());
    const Tensor want = direct_depthwise(x, filter, v);
    BOOST_TEST(y->shape().to_string() == want.shape().to_string(), v.name());
    BOOST_TEST(max_abs_diff(values_of(*y), values_of(want)) < 1e-12, v.name());
    const Tensor dy = random_tensor<double>(want.shape(), 24);
    Expected<Tensor> dx = run_op1("DepthwiseConv2dNativeBackpropInput", {shape_tensor(kIn), filter, dy},
                                  with_t(v.attrs(), DType::float64));
    BOOST_REQUIRE_MESSAGE(dx.ok(), v.name() << ": " << dx.status().to_string());
    BOOST_TEST(max_abs_diff(values_of(*dx),
                            numeric_gradient("DepthwiseConv2dNative", {x, filter}, v.attrs(), 0, dy, 1e-3)) < 1e-8,
               v.name());
    Expected<Tensor> df = run_op1("DepthwiseConv2dNativeBackpropFilter", {x, shape_tensor(filter.shape()), dy},
                                  v.attrs());
    BOOST_REQUIRE_MESSAGE(df.ok(), v.name() << ": " << df.status().to_string());
    BOOST_TEST(max_abs_diff(values_of(*df),
                            numeric_gradient("DepthwiseConv2dNative", {x, filter}, v.attrs(), 1, dy, 1e-3)) < 1e-8,
               v.name());
  }
  BOOST_TEST(contains(error_of("DepthwiseConv2dNative", {x, random_tensor<double>({2, 2, 4, 1}, 1)},
                               Variant().attrs()),
                      "input depth 3 (input [2,7,8,3]) differs from the filter's in_channels 4"));
}

BOOST_AUTO_TEST_CASE(conv2d_errors) {
  const Tensor x = random_tensor<float>({1, 4, 4, 2}, 11);
  const Tensor f = random_tensor<float>({2, 2, 2, 3}, 12);
  const AttrMap valid{{"strides", int_list({1, 1, 1, 1})}, {"padding", "VALID"}};
  BOOST_TEST(error_of("Conv2D", {random_tensor<float>({4, 4, 2}, 1), f}, valid) ==
             "invalid_argument: Conv2D: input must have rank 4 (NHWC), got shape [4,4,2]");
  BOOST_TEST(contains(error_of("Conv2D", {x, random_tensor<float>({2, 2, 2}, 1)}, valid),
                      "filter must have rank 4"));
  BOOST_TEST(error_of("Conv2D", {x, random_tensor<float>({2, 2, 3, 3}, 1)}, valid) ==
             "invalid_argument: Conv2D: input depth 2 (input [1,4,4,2]) differs from the filter's "
             "in_channels 3 (filter [2,2,3,3])");
  BOOST_TEST(error_of("Conv2D", {x, f}, {{"strides", int_list({1, 1, 1})}, {"padding", "VALID"}}) ==
             "invalid_argument: Conv2D: strides must have 4 entries (NHWC), got [1,1,1]");
  BOOST_TEST(error_of("Conv2D", {x, f}, {{"strides", int_list({2, 1, 1, 1})}, {"padding", "VALID"}}) ==
             "invalid_argument: Conv2D: strides [2,1,1,1] must be 1 in the batch and depth dimensions");
  BOOST_TEST(contains(error_of("Conv2D", {x, f}, {{"strides", int_list({1, 0, 1, 1})}, {"padding", "VALID"}}),
                      "must be >= 1 in the height and width"));
  BOOST_TEST(contains(error_of("Conv2D", {x, f},
                               {{"strides", int_list({1, 1, 1, 1})}, {"padding", "VALID"},
                                {"dilations", int_list({1, 1, 1, 2})}}),
                      "dilations [1,1,1,2] must be 1 in the batch and depth"));
  BOOST_TEST(error_of("Conv2D", {x, f}, {{"strides", int_list({1, 1, 1, 1})}, {"padding", "FULL"}}) ==
             "invalid_argument: Conv2D: padding must be SAME, VALID or EXPLICIT, got 'FULL'");
  BOOST_TEST(contains(error_of("Conv2D", {x, f},
                               {{"strides", int_list({1, 1, 1, 1})}, {"padding", "EXPLICIT"},
                                {"explicit_paddings", int_list({0, 0, 1, 1})}}),
                      "explicit_paddings must have 8 entries"));
  BOOST_TEST(contains(error_of("Conv2D", {x, f},
                               {{"strides", int_list({1, 1, 1, 1})}, {"padding", "VALID"},
                                {"explicit_paddings", int_list({0, 0, 1, 1, 1, 1, 0, 0})}}),
                      "given with padding other than EXPLICIT"));
  // Paddings whose output would not fit in a shape, and absurd ones.
  const int64_t big = int64_t{1} << 31;
  BOOST_TEST(error_of("Conv2D", {x, f},
                      {{"strides", int_list({1, 1, 1, 1})}, {"padding", "EXPLICIT"},
                       {"explicit_paddings", int_list({0, 0, big, big, big, big, 0, 0})}}) ==
             "invalid_argument: Conv2D: the output shape has too many elements");
  BOOST_TEST(contains(error_of("Conv2D", {x, f},
                               {{"strides", int_list({1, 1, 1, 1})}, {"padding", "EXPLICIT"},
                                {"explicit_paddings", int_list({0, 0, 2 * big, 0, 0, 0, 0, 0})}}),
                      "must be >= 0 and <= 2147483648"));
  BOOST_TEST(contains(error_of("Conv2D", {x, f}, {{"strides", int_list({1, 4 * big, 1, 1})}, {"padding", "SAME"}}),
                      "exceeds 2147483648"));
  BOOST_TEST(error_of("Conv2D", {x, f},
                      {{"strides", int_list({1, 1, 1, 1})}, {"padding", "VALID"}, {"data_format", "NCHW_VECT_C"}}) ==
             "unimplemented: Conv2D 'test_Conv2D': data_format NCHW_VECT_C is not implemented (only NHWC and NCHW)");
  // NCHW lists are read in NCHW order: strides [1,2,1,1] is a depth stride.
  BOOST_TEST(error_of("Conv2D", {x, f},
                      {{"strides", int_list({1, 2, 1, 1})}, {"padding", "VALID"}, {"data_format", "NCHW"}}) ==
             "invalid_argument: Conv2D: strides [1,2,1,1] must be 1 in the batch and depth dimensions");
  BOOST_TEST(error_of("Conv2D", {random_tensor<float>({1, 4, 4, 2}, 1), f},
                      {{"strides", int_list({1, 1, 1, 1})}, {"padding", "VALID"}, {"data_format", "NCHW"}}) ==
             "invalid_argument: Conv2D: input depth 4 (input [1,4,4,2]) differs from the filter's in_channels 2 "
             "(filter [2,2,2,3])");
  // A 2x2 window dilated by 5 spans 6 > 4 pixels.
  BOOST_TEST(contains(error_of("Conv2D", {x, f},
                               {{"strides", int_list({1, 1, 1, 1})}, {"padding", "VALID"},
                                {"dilations", int_list({1, 5, 1, 1})}}),
                      "the window does not fit in the height: input size 4, effective window size 6"));
  BOOST_TEST(contains(error_of("Conv2D", {x, tensor<double>({1, 1, 2, 1}, {1, 2})}, valid),
                      "Conv2D expects float32 inputs"));
  // The backprops check the sizes they are given against out_backprop.
  BOOST_TEST(error_of("Conv2DBackpropInput", {shape_tensor({1, 4, 4, 2}), f, random_tensor<float>({1, 2, 2, 3}, 1)},
                      with_t(valid, DType::float32)) ==
             "invalid_argument: Conv2DBackpropInput: out_backprop has shape [1,2,2,3], the convolution of "
             "input [1,4,4,2] gives [1,3,3,3]");
  BOOST_TEST(contains(error_of("Conv2DBackpropInput", {Tensor::vector<int32_t>({4, 4, 2}), f,
                                                       random_tensor<float>({1, 3, 3, 3}, 1)},
                               with_t(valid, DType::float32)),
                      "input_sizes must be an int32 vector of 4 elements"));
  BOOST_TEST(contains(error_of("Conv2DBackpropFilter", {x, Tensor::vector<int32_t>({2, 2, -2, 3}),
                                                        random_tensor<float>({1, 3, 3, 3}, 1)},
                               valid),
                      "filter_sizes has a negative size"));
}

// float runs on oneDNN, double on Eigen (conv_ops.cpp): float against the
// direct loop in double on the same values, in both layouts, on windows
// oneDNN treats specially, at several thread counts.

namespace {

// Windows beyond variants(): strides larger than the window and the
// image, padding beyond what the last window needs, a 1x1 filter.
std::vector<Variant> special_variants() {
  std::vector<Variant> vs = variants();
  Variant v;
  v.padding = "SAME";
  v.sh = 5;
  v.sw = 9;
  vs.push_back(v);
  v.padding = "VALID";
  v.sh = 6;
  v.sw = 3;
  v.dh = 3;
  vs.push_back(v);
  Variant e;
  e.padding = "EXPLICIT";
  e.pads = {3, 4, 0, 5};
  e.sw = 4;
  vs.push_back(e);
  return vs;
}

// A k-term float sum differs from the double one by at most about
// k * 2^-24 * sum |terms|; the values here are in [-1, 1].
double float_tolerance(const Shape& filter, bool depthwise) {
  const int64_t taps = filter.dim(0) * filter.dim(1) * (depthwise ? 1 : filter.dim(2));
  return 1e-6 * static_cast<double>(taps) + 1e-6;
}

// Checks the float op of `v` (NHWC and NCHW) against the double op on the
// same values, for the forward op and both gradients.
void check_float_against_double(const char* forward, const char* backprop_input, const char* backprop_filter,
                                bool depthwise, const Shape& in, const Shape& fs, const Variant& v,
                                uint32_t seed) {
  const Tensor x = random_tensor<float>(in, seed), f = random_tensor<float>(fs, seed + 1);
  Expected<Tensor> want = run_op1(forward, {as_double(x), as_double(f)}, v.attrs());
  BOOST_REQUIRE_MESSAGE(want.ok(), v.name() << ": " << want.status().to_string());
  const Tensor dy = random_tensor<float>(want->shape(), seed + 2);
  Expected<Tensor> want_dx = run_op1(backprop_input, {shape_tensor(in), as_double(f), as_double(dy)},
                                     with_t(v.attrs(), DType::float64));
  Expected<Tensor> want_df = run_op1(backprop_filter, {as_double(x), shape_tensor(fs), as_double(dy)}, v.attrs());
  BOOST_REQUIRE(want_dx.ok());
  BOOST_REQUIRE(want_df.ok());
  const double tol = float_tolerance(fs, depthwise);
  // The gradients sum over every output pixel a tap touches.
  const double grad_tol = tol * static_cast<double>(want->num_elements() / std::max<int64_t>(in.dim(3), 1) + 1);
  for (bool nchw : {false, true}) {
    const std::string what = v.name() + (nchw ? " NCHW" : " NHWC") + " input " + in.to_string();
    const AttrMap attrs = nchw ? v.nchw_attrs() : v.attrs();
    Expected<Tensor> y = run_op1(forward, {nchw ? to_nchw(x) : x, f}, attrs);
    BOOST_REQUIRE_MESSAGE(y.ok(), what << ": " << y.status().to_string());
    BOOST_TEST((y->dtype() == DType::float32));
    const Tensor y_nhwc = nchw ? to_nhwc(*y) : *y;
    BOOST_TEST((y_nhwc.shape() == want->shape()), what << ": " << y->shape().to_string());
    BOOST_TEST(max_abs_diff(values_of(y_nhwc), values_of(*want)) < tol, what);
    Expected<Tensor> dx = run_op1(backprop_input,
                                  {shape_tensor(nchw ? nchw_shape(in) : in), f, nchw ? to_nchw(dy) : dy},
                                  with_t(attrs, DType::float32));
    BOOST_REQUIRE_MESSAGE(dx.ok(), what << ": " << dx.status().to_string());
    BOOST_TEST(max_abs_diff(values_of(nchw ? to_nhwc(*dx) : *dx), values_of(*want_dx)) < tol, what);
    Expected<Tensor> df = run_op1(backprop_filter, {nchw ? to_nchw(x) : x, shape_tensor(fs), nchw ? to_nchw(dy) : dy},
                                  attrs);
    BOOST_REQUIRE_MESSAGE(df.ok(), what << ": " << df.status().to_string());
    BOOST_TEST((df->shape() == fs), what);
    BOOST_TEST(max_abs_diff(values_of(*df), values_of(*want_df)) < grad_tol, what);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(float_convolutions_agree_with_double_in_both_layouts_at_every_thread_count) {
  // {2,7,8,3} images; an 8-image batch large enough to split by images.
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    cpu::WorkerPoolScope scope(&pool);
    uint32_t seed = 100;
    for (const Variant& v : special_variants()) {
      check_float_against_double("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", false, kIn, kFilter, v,
                                 seed += 3);
      check_float_against_double("DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
                                 "DepthwiseConv2dNativeBackpropFilter", true, kIn, {3, 2, 3, 2}, v, seed += 3);
    }
    Variant same;
    same.padding = "SAME";
    check_float_against_double("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", false, {8, 18, 17, 8},
                               {3, 3, 8, 16}, same, seed += 3);
    check_float_against_double("DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
                               "DepthwiseConv2dNativeBackpropFilter", true, {8, 30, 31, 16}, {3, 3, 16, 1}, same,
                               seed += 3);
    check_float_against_double("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", false, {3, 5, 4, 6},
                               {1, 1, 6, 7}, Variant(), seed += 3);
  }
}

BOOST_AUTO_TEST_CASE(double_nchw_is_the_transposed_nhwc) {
  // The double kernels transpose NCHW images to NHWC and back: bitwise.
  const Tensor x = random_tensor<double>(kIn, 41), f = random_tensor<double>(kFilter, 42);
  for (const Variant& v : special_variants()) {
    Expected<Tensor> y = run_op1("Conv2D", {x, f}, v.attrs());
    Expected<Tensor> yc = run_op1("Conv2D", {to_nchw(x), f}, v.nchw_attrs());
    BOOST_REQUIRE(y.ok());
    BOOST_REQUIRE_MESSAGE(yc.ok(), v.name() << ": " << yc.status().to_string());
    BOOST_TEST(values_of(to_nhwc(*yc)) == values_of(*y), v.name());
    const Tensor dy = random_tensor<double>(y->shape(), 43);
    Expected<Tensor> dx = run_op1("Conv2DBackpropInput", {shape_tensor(kIn), f, dy}, with_t(v.attrs(), DType::float64));
    Expected<Tensor> dxc = run_op1("Conv2DBackpropInput", {shape_tensor(nchw_shape(kIn)), f, to_nchw(dy)},
                                   with_t(v.nchw_attrs(), DType::float64));
    BOOST_REQUIRE(dx.ok());
    BOOST_REQUIRE(dxc.ok());
    BOOST_TEST(values_of(to_nhwc(*dxc)) == values_of(*dx), v.name());
    Expected<Tensor> df = run_op1("Conv2DBackpropFilter", {x, shape_tensor(kFilter), dy}, v.attrs());
    Expected<Tensor> dfc = run_op1("Conv2DBackpropFilter", {to_nchw(x), shape_tensor(kFilter), to_nchw(dy)},
                                   v.nchw_attrs());
    BOOST_REQUIRE(df.ok());
    BOOST_REQUIRE(dfc.ok());
    BOOST_TEST(values_of(*dfc) == values_of(*df), v.name());
  }
}

BOOST_AUTO_TEST_CASE(conv_over_an_empty_image_with_explicit_padding_is_zeros) {
  // Every window covers padding only: zeros, in both dtypes and layouts.
  Variant e;
  e.padding = "EXPLICIT";
  e.pads = {2, 1, 1, 1};
  for (DType t : {DType::float32, DType::float64}) {
    const Tensor x(t, {1, 0, 2, 2}), f = t == DType::float32 ? random_tensor<float>({2, 2, 2, 3}, 1)
                                                             : random_tensor<double>({2, 2, 2, 3}, 1);
    Expected<Tensor> y = run_op1("Conv2D", {x, f}, e.attrs());
    BOOST_REQUIRE_MESSAGE(y.ok(), y.status().to_string());
    // height (0 + 2 + 1 - 2) + 1, width (2 + 1 + 1 - 2) + 1
    BOOST_TEST((y->shape() == Shape{1, 2, 3, 3}), y->shape().to_string());
    BOOST_TEST(max_abs_diff(values_of(*y), std::vector<double>(18, 0.0)) == 0.0);
    Expected<Tensor> df = run_op1("Conv2DBackpropFilter", {x, shape_tensor({2, 2, 2, 3}), Tensor(t, {1, 2, 3, 3})},
                                  e.attrs());
    BOOST_REQUIRE(df.ok());
    BOOST_TEST(max_abs_diff(values_of(*df), std::vector<double>(24, 0.0)) == 0.0);
  }
}

BOOST_AUTO_TEST_SUITE_END()
