#include <boost/test/unit_test.hpp>

#include <algorithm>

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
                      {{"strides", int_list({1, 1, 1, 1})}, {"padding", "VALID"}, {"data_format", "NCHW"}}) ==
             "unimplemented: Conv2D 'test_Conv2D': data_format NCHW is not implemented (only NHWC)");
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

BOOST_AUTO_TEST_SUITE_END()
