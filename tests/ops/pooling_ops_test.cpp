#include <boost/test/unit_test.hpp>

#include <algorithm>

#include "cpu/test_pool.hpp"
#include "nn_test_util.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

struct Pool {
  int64_t kh, kw, sh, sw;
  std::string padding;

  AttrMap attrs(DType t = DType::float64) const {
    return {{"ksize", int_list({1, kh, kw, 1})},
            {"strides", int_list({1, sh, sw, 1})},
            {"padding", padding},
            {"T", t}};
  }
  AttrMap nchw_attrs(DType t) const {
    return {{"ksize", int_list({1, 1, kh, kw})},
            {"strides", int_list({1, 1, sh, sw})},
            {"padding", padding},
            {"data_format", std::string("NCHW")},
            {"T", t}};
  }
  std::string name() const {
    return padding + " ksize " + std::to_string(kh) + "x" + std::to_string(kw) + " strides " +
           std::to_string(sh) + "," + std::to_string(sw);
  }
};

// Max or average over the window positions inside the image, with
// TensorFlow's output size and SAME offset.
Tensor direct_pool(const Tensor& in, const Pool& p, bool max) {
  const int64_t B = in.dim(0), H = in.dim(1), W = in.dim(2), C = in.dim(3);
  const bool same = p.padding == "SAME";
  const int64_t OH = same ? (H + p.sh - 1) / p.sh : (H - p.kh) / p.sh + 1;
  const int64_t OW = same ? (W + p.sw - 1) / p.sw : (W - p.kw) / p.sw + 1;
  const int64_t pt = same ? std::max<int64_t>((OH - 1) * p.sh + p.kh - H, 0) / 2 : 0;
  const int64_t pl = same ? std::max<int64_t>((OW - 1) * p.sw + p.kw - W, 0) / 2 : 0;
  const std::vector<double> x = values_of(in);
  std::vector<double> out;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t y = 0; y < OH; ++y)
      for (int64_t xo = 0; xo < OW; ++xo)
        for (int64_t c = 0; c < C; ++c) {
          double acc = max ? -INFINITY : 0;
          int n = 0;
          for (int64_t i = 0; i < p.kh; ++i)
            for (int64_t j = 0; j < p.kw; ++j) {
              const int64_t iy = y * p.sh - pt + i, ix = xo * p.sw - pl + j;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              const double v = x[((b * H + iy) * W + ix) * C + c];
              acc = max ? std::max(acc, v) : acc + v;
              ++n;
            }
          out.push_back(max ? acc : acc / n);
        }
  return Tensor::from_vector<double>(Shape{B, OH, OW, C}, out);
}

std::vector<Pool> pools() {
  return {{2, 2, 2, 2, "VALID"}, {3, 3, 1, 1, "VALID"}, {3, 2, 2, 1, "VALID"},
          {2, 2, 2, 2, "SAME"},  {3, 3, 2, 2, "SAME"},  {3, 1, 1, 3, "SAME"}};
}

const Shape kIn{2, 5, 7, 3};

}  // namespace

BOOST_AUTO_TEST_SUITE(pooling_ops)

BOOST_AUTO_TEST_CASE(max_pool_small_example_by_hand) {
  const Tensor x = tensor<float>({1, 3, 3, 1}, {1, 5, 3, 4, 2, 6, 7, 8, 0});
  const Pool p{2, 2, 2, 2, "SAME"};
  // SAME at stride 2 on 3x3: windows at rows/cols 0 and 2, padding after.
  BOOST_TEST(result("MaxPool", {x}, p.attrs(DType::float32)) ==
             "float32[1,2,2,1] [[[[5],[6]],[[8],[0]]]]");
  BOOST_TEST(result("AvgPool", {x}, p.attrs(DType::float32)) ==
             "float32[1,2,2,1] [[[[3],[4.5]],[[7.5],[0]]]]");
  BOOST_TEST(result("MaxPool", {tensor<int32_t>({1, 2, 2, 1}, {-3, -1, -2, -4})},
                    Pool{2, 2, 1, 1, "VALID"}.attrs(DType::int32)) == "int32[1,1,1,1] [[[[-1]]]]");
}

BOOST_AUTO_TEST_CASE(pools_match_the_direct_loop) {
  const Tensor x = random_tensor<double>(kIn, 1);
  for (const Pool& p : pools()) {
    for (bool max : {true, false}) {
      Expected<Tensor> y = run_op1(max ? "MaxPool" : "AvgPool", {x}, p.attrs());
      BOOST_REQUIRE_MESSAGE(y.ok(), p.name() << ": " << y.status().to_string());
      const Tensor want = direct_pool(x, p, max);
      BOOST_TEST(y->shape().to_string() == want.shape().to_string(), p.name());
      BOOST_TEST(max_abs_diff(values_of(*y), values_of(want)) < 1e-12, p.name() << (max ? " max" : " avg"));
    }
  }
}

BOOST_AUTO_TEST_CASE(pool_gradients_match_finite_differences) {
  const Tensor x = random_tensor<double>(kIn, 2);
  for (const Pool& p : pools()) {
    Expected<Tensor> y = run_op1("MaxPool", {x}, p.attrs());
    BOOST_REQUIRE(y.ok());
    const Tensor dy = random_tensor<double>(y->shape(), 3);
    // Random inputs have no ties, so a small step stays on one linear piece.
    Expected<Tensor> dx = run_op1("MaxPoolGrad", {x, *y, dy}, p.attrs());
    BOOST_REQUIRE_MESSAGE(dx.ok(), p.name() << ": " << dx.status().to_string());
    BOOST_TEST(max_abs_diff(values_of(*dx), numeric_gradient("MaxPool", {x}, p.attrs(), 0, dy, 1e-6)) < 1e-8,
               p.name());
    Expected<Tensor> da = run_op1("AvgPoolGrad", {shape_tensor(kIn), dy}, p.attrs());
    BOOST_REQUIRE_MESSAGE(da.ok(), p.name() << ": " << da.status().to_string());
    BOOST_TEST(max_abs_diff(values_of(*da), numeric_gradient("AvgPool", {x}, p.attrs(), 0, dy, 1e-3)) < 1e-8,
               p.name());
  }
}

BOOST_AUTO_TEST_CASE(max_pool_grad_goes_to_the_first_maximum) {
  // Every value ties: each window's gradient lands on its top-left pixel.
  const Tensor x = tensor<float>({1, 2, 4, 1}, {1, 1, 1, 1, 1, 1, 1, 1});
  const Tensor y = tensor<float>({1, 1, 2, 1}, {1, 1});
  const Tensor dy = tensor<float>({1, 1, 2, 1}, {10, 20});
  BOOST_TEST(result("MaxPoolGrad", {x, y, dy}, Pool{2, 2, 2, 2, "VALID"}.attrs(DType::float32)) ==
             "float32[1,2,4,1] [[[[10],[0],[20],[0]],[[0],[0],[0],[0]]]]");
  // Overlapping windows add up on a shared maximum.
  const Tensor x2 = tensor<float>({1, 1, 3, 1}, {0, 9, 0});
  BOOST_TEST(result("MaxPoolGrad",
                    {x2, tensor<float>({1, 1, 2, 1}, {9, 9}), tensor<float>({1, 1, 2, 1}, {1, 2})},
                    Pool{1, 2, 1, 1, "VALID"}.attrs(DType::float32)) ==
             "float32[1,1,3,1] [[[[0],[3],[0]]]]");
}

BOOST_AUTO_TEST_CASE(pooling_errors) {
  const Tensor x = random_tensor<float>({1, 4, 4, 2}, 4);
  const Pool p{2, 2, 2, 2, "VALID"};
  BOOST_TEST(error_of("MaxPool", {random_tensor<float>({4, 4, 2}, 1)}, p.attrs(DType::float32)) ==
             "invalid_argument: MaxPool: input must have rank 4 (NHWC), got shape [4,4,2]");
  BOOST_TEST(error_of("MaxPool", {x}, {{"ksize", int_list({1, 2, 2})}, {"strides", int_list({1, 1, 1, 1})},
                                       {"padding", "VALID"}}) ==
             "invalid_argument: attr 'ksize' of op MaxPool is 3, less than the minimum 4");
  BOOST_TEST(error_of("MaxPool", {x}, {{"ksize", int_list({2, 2, 2, 1})}, {"strides", int_list({1, 1, 1, 1})},
                                       {"padding", "VALID"}}) ==
             "invalid_argument: MaxPool: ksize [2,2,2,1] must be 1 in the batch and depth dimensions");
  BOOST_TEST(contains(error_of("MaxPool", {x}, {{"ksize", int_list({1, 1, 1, 2})},
                                                {"strides", int_list({1, 1, 1, 2})}, {"padding", "VALID"}}),
                      "pooling over the depth dimension"));
  BOOST_TEST(contains(error_of("MaxPool", {x}, {{"ksize", int_list({1, 5, 1, 1})},
                                                {"strides", int_list({1, 1, 1, 1})}, {"padding", "VALID"}}),
                      "the window does not fit in the height: input size 4, effective window size 5"));
  BOOST_TEST(error_of("AvgPool", {x}, {{"ksize", int_list({1, 2, 2, 1})}, {"strides", int_list({1, 1, 1, 1})},
                                       {"padding", "VALID"}, {"data_format", "NCHW_VECT_C"}}) ==
             "unimplemented: AvgPool 'test_AvgPool': data_format NCHW_VECT_C is not implemented (only NHWC and NCHW)");
  // NCHW lists are read in NCHW order: [1,2,2,1] is a window over depth.
  BOOST_TEST(contains(error_of("AvgPool", {x}, {{"ksize", int_list({1, 2, 2, 1})}, {"strides", int_list({1, 1, 1, 1})},
                                                {"padding", "VALID"}, {"data_format", "NCHW"}}),
                      "pooling over the depth dimension (ksize [1,2,2,1]"));
  BOOST_TEST(error_of("AvgPool", {random_tensor<float>({4, 4, 2}, 1)},
                      {{"ksize", int_list({1, 1, 2, 2})}, {"strides", int_list({1, 1, 1, 2})},
                       {"padding", "VALID"}, {"data_format", "NCHW"}}) ==
             "invalid_argument: AvgPool: input must have rank 4 (NCHW), got shape [4,4,2]");
  BOOST_TEST(error_of("MaxPoolGrad", {x, random_tensor<float>({1, 2, 2, 2}, 1), random_tensor<float>({1, 2, 3, 2}, 1)},
                      p.attrs(DType::float32)) ==
             "invalid_argument: MaxPoolGrad: grad has shape [1,2,3,2], pooling input [1,4,4,2] gives [1,2,2,2]");
  BOOST_TEST(contains(error_of("AvgPoolGrad", {Tensor::vector<int32_t>({1, 4, 4}), random_tensor<float>({1, 2, 2, 2}, 1)},
                               p.attrs(DType::float32)),
                      "orig_input_shape must be an int32 vector of 4 elements"));
}

// Float MaxPool, AvgPool and AvgPoolGrad run on oneDNN (pooling_ops.cpp):
// against the double kernels on the same values, NHWC and NCHW, at several
// thread counts (a 16-image batch splits). A max is exact; a mean of n
// values and its gradient are within float rounding of a few terms.

namespace {

std::vector<Pool> special_pools() {
  std::vector<Pool> ps = pools();
  ps.push_back({1, 1, 1, 1, "VALID"});
  ps.push_back({5, 7, 1, 1, "VALID"});   // the whole image
  ps.push_back({2, 3, 6, 9, "SAME"});    // strides beyond the image
  ps.push_back({4, 4, 3, 3, "SAME"});
  return ps;
}

}  // namespace

BOOST_AUTO_TEST_CASE(float_pools_agree_with_double_in_both_layouts_at_every_thread_count) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    cpu::WorkerPoolScope scope(&pool);
    for (const Shape& in : {kIn, Shape{16, 20, 19, 8}}) {
      const Tensor x = random_tensor<float>(in, 5);
      for (const Pool& p : special_pools()) {
        for (const char* op : {"MaxPool", "AvgPool"}) {
          Expected<Tensor> want = run_op1(op, {as_double(x)}, p.attrs(DType::float64));
          BOOST_REQUIRE(want.ok());
          const Tensor dy = random_tensor<float>(want->shape(), 6);
          Expected<Tensor> want_dx = run_op1("AvgPoolGrad", {shape_tensor(in), as_double(dy)}, p.attrs(DType::float64));
          Expected<Tensor> want_mdx = run_op1("MaxPoolGrad", {as_double(x), *want, as_double(dy)}, p.attrs(DType::float64));
          BOOST_REQUIRE(want_dx.ok());
          BOOST_REQUIRE(want_mdx.ok());
          for (bool nchw : {false, true}) {
            const std::string what = std::string(op) + " " + p.name() + (nchw ? " NCHW " : " NHWC ") +
                                     in.to_string() + " threads " + std::to_string(threads);
            const AttrMap attrs = nchw ? p.nchw_attrs(DType::float32) : p.attrs(DType::float32);
            Expected<Tensor> y = run_op1(op, {nchw ? to_nchw(x) : x}, attrs);
            BOOST_REQUIRE_MESSAGE(y.ok(), what << ": " << y.status().to_string());
            const Tensor y_nhwc = nchw ? to_nhwc(*y) : *y;
            BOOST_TEST(y_nhwc.shape().to_string() == want->shape().to_string(), what);
            const double tol = std::string(op) == "MaxPool" ? 0.0 : 1e-6;
            BOOST_TEST(max_abs_diff(values_of(y_nhwc), values_of(*want)) <= tol, what);
            if (std::string(op) == "AvgPool") {
              Expected<Tensor> dx = run_op1(
                  "AvgPoolGrad", {shape_tensor(nchw ? nchw_shape(in) : in), nchw ? to_nchw(dy) : dy}, attrs);
              BOOST_REQUIRE_MESSAGE(dx.ok(), what << ": " << dx.status().to_string());
              BOOST_TEST(max_abs_diff(values_of(nchw ? to_nhwc(*dx) : *dx), values_of(*want_dx)) < 1e-5, what);
            } else {
              // MaxPoolGrad (Eigen in both dtypes) in NCHW: the same routing.
              Expected<Tensor> dx = run_op1("MaxPoolGrad", {nchw ? to_nchw(x) : x, *y, nchw ? to_nchw(dy) : dy},
                                            attrs);
              BOOST_REQUIRE_MESSAGE(dx.ok(), what << ": " << dx.status().to_string());
              BOOST_TEST(max_abs_diff(values_of(nchw ? to_nhwc(*dx) : *dx), values_of(*want_mdx)) < 1e-5, what);
            }
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(double_and_int_pools_in_nchw_are_the_transposed_nhwc) {
  const Tensor x = random_tensor<double>(kIn, 7);
  const Tensor xi = tensor<int32_t>({1, 3, 3, 2}, {5, -1, 2, 8, -4, 0, 9, 3, 1, 1, -7, 6, 4, 2, 0, -2, 8, 8});
  for (const Pool& p : special_pools()) {
    for (const char* op : {"MaxPool", "AvgPool"}) {
      Expected<Tensor> y = run_op1(op, {x}, p.attrs(DType::float64));
      Expected<Tensor> yc = run_op1(op, {to_nchw(x)}, p.nchw_attrs(DType::float64));
      BOOST_REQUIRE(y.ok());
      BOOST_REQUIRE_MESSAGE(yc.ok(), p.name() << ": " << yc.status().to_string());
      BOOST_TEST(values_of(to_nhwc(*yc)) == values_of(*y), op << " " << p.name());
    }
    if (p.kh > 3 || p.kw > 3) continue;  // the 3x3 int image
    Expected<Tensor> yi = run_op1("MaxPool", {xi}, p.attrs(DType::int32));
    Expected<Tensor> yic = run_op1("MaxPool", {to_nchw(xi)}, p.nchw_attrs(DType::int32));
    BOOST_REQUIRE(yi.ok());
    BOOST_REQUIRE(yic.ok());
    BOOST_TEST(values_of(to_nhwc(*yic)) == values_of(*yi), "int32 " << p.name());
  }
}

BOOST_AUTO_TEST_SUITE_END()
