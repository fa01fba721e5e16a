#include <boost/test/unit_test.hpp>

#include "nn_test_util.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

AttrMap bn_attrs(DType t, bool training, double epsilon = 1e-3, double factor = 1.0, bool with_u = true) {
  AttrMap a{{"T", t}, {"is_training", training}, {"epsilon", static_cast<float>(epsilon)}};
  if (with_u) a["U"] = t;
  if (factor != 1.0) a["exponential_avg_factor"] = static_cast<float>(factor);
  return a;
}

// Per-channel mean and biased variance of x [..., C], by loops.
void moments(const Tensor& x, std::vector<double>& mean, std::vector<double>& var) {
  const int64_t c = x.dim(x.rank() - 1), n = x.num_elements() / c;
  const std::vector<double> v = values_of(x);
  mean.assign(c, 0);
  var.assign(c, 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < c; ++j) mean[j] += v[i * c + j] / n;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < c; ++j) var[j] += (v[i * c + j] - mean[j]) * (v[i * c + j] - mean[j]) / n;
}

std::vector<double> normalise(const Tensor& x, const std::vector<double>& mean, const std::vector<double>& var,
                              const Tensor& scale, const Tensor& offset, double eps) {
  const int64_t c = x.dim(x.rank() - 1);
  const std::vector<double> v = values_of(x), s = values_of(scale), o = values_of(offset);
  std::vector<double> y(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t j = static_cast<int64_t>(i) % c;
    y[i] = (v[i] - mean[j]) / std::sqrt(var[j] + eps) * s[j] + o[j];
  }
  return y;
}

const Shape kX{2, 3, 4, 3};

struct Inputs {
  Tensor x = random_tensor<double>(kX, 1, -2, 3);
  Tensor scale = random_tensor<double>({3}, 2, 0.5, 2);
  Tensor offset = random_tensor<double>({3}, 3);
  Tensor mean = random_tensor<double>({3}, 4);
  Tensor var = random_tensor<double>({3}, 5, 0.5, 1.5);
  std::vector<Tensor> all() const { return {x, scale, offset, mean, var}; }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(batch_norm_ops)

BOOST_AUTO_TEST_CASE(training_by_hand) {
  // One channel, x = 1 and 3: mean 2, biased variance 1, corrected 2.
  const Tensor x = tensor<float>({1, 1, 2, 1}, {1, 3});
  const Tensor one = tensor<float>({1}, {1}), zero = tensor<float>({1}, {0});
  Expected<std::vector<Tensor>> out =
      run_op("FusedBatchNorm", {x, one, zero, zero, one}, bn_attrs(DType::float32, true, 0.0, 1.0, false));
  BOOST_REQUIRE(out.ok());
  BOOST_TEST((*out)[0].debug_string() == "float32[1,1,2,1] [[[[-1],[1]]]]");
  BOOST_TEST((*out)[1].debug_string() == "float32[1] [2]");
  BOOST_TEST((*out)[2].debug_string() == "float32[1] [2]");
  BOOST_TEST((*out)[3].debug_string() == "float32[1] [2]");
  BOOST_TEST((*out)[4].debug_string() == "float32[1] [1]");
}

BOOST_AUTO_TEST_CASE(training_matches_loops) {
  const Inputs in;
  std::vector<double> mean, var;
  moments(in.x, mean, var);
  const double n = 24, eps = static_cast<float>(1e-3);  // the attr is a float
  for (double f : {1.0, 0.25}) {
    Expected<std::vector<Tensor>> out = run_op("FusedBatchNormV3", in.all(), bn_attrs(DType::float64, true, eps, f));
    BOOST_REQUIRE_MESSAGE(out.ok(), out.status().to_string());
    BOOST_REQUIRE(out->size() == 6u);
    BOOST_TEST(max_abs_diff(values_of((*out)[0]), normalise(in.x, mean, var, in.scale, in.offset, eps)) < 1e-12);
    std::vector<double> want_mean(3), want_var(3);
    for (int j = 0; j < 3; ++j) {
      // The float attr holds 0.25 exactly.
      want_mean[j] = (1 - f) * values_of(in.mean)[j] + f * mean[j];
      want_var[j] = (1 - f) * values_of(in.var)[j] + f * var[j] * n / (n - 1);
    }
    BOOST_TEST(max_abs_diff(values_of((*out)[1]), want_mean) < 1e-12, "factor " << f);
    BOOST_TEST(max_abs_diff(values_of((*out)[2]), want_var) < 1e-12, "factor " << f);
    BOOST_TEST(max_abs_diff(values_of((*out)[3]), mean) < 1e-12);
    BOOST_TEST(max_abs_diff(values_of((*out)[4]), var) < 1e-12);
    BOOST_TEST((*out)[5].shape().to_string() == "[]");
  }
  // Training with factor 1 does not read the running statistics.
  std::vector<Tensor> no_stats = in.all();
  no_stats[3] = Tensor(DType::float64, Shape{0});
  no_stats[4] = Tensor(DType::float64, Shape{0});
  BOOST_TEST(run_op("FusedBatchNormV2", no_stats, bn_attrs(DType::float64, true)).ok());
}

BOOST_AUTO_TEST_CASE(inference_matches_loops) {
  const Inputs in;
  const double eps = static_cast<float>(1e-4);  // the attr is a float
  for (const char* op : {"FusedBatchNormV2", "FusedBatchNormV3"}) {
    Expected<std::vector<Tensor>> out = run_op(op, in.all(), bn_attrs(DType::float64, false, eps));
    BOOST_REQUIRE(out.ok());
    BOOST_TEST(max_abs_diff(values_of((*out)[0]),
                            normalise(in.x, values_of(in.mean), values_of(in.var), in.scale, in.offset, eps)) <
               1e-12);
    BOOST_TEST(((*out)[1] == in.mean));
    BOOST_TEST(((*out)[2] == in.var));
    BOOST_TEST(((*out)[3] == in.mean));
    BOOST_TEST(((*out)[4] == in.var));
  }
  // float32, version 1.
  std::vector<Tensor> f32;
  for (const Tensor& t : in.all()) {
    std::vector<float> v;
    for (double d : values_of(t)) v.push_back(static_cast<float>(d));
    f32.push_back(Tensor::from_vector<float>(t.shape(), v));
  }
  Expected<Tensor> y = run_op1("FusedBatchNorm", f32, bn_attrs(DType::float32, false, eps, 1.0, false));
  BOOST_REQUIRE(y.ok());
  BOOST_TEST(max_abs_diff(values_of(*y), normalise(f32[0], values_of(f32[3]), values_of(f32[4]), f32[1], f32[2], eps)) <
             1e-5);
}

BOOST_AUTO_TEST_CASE(gradients_match_finite_differences) {
  const Inputs in;
  const double eps = 1e-3;
  const Tensor dy = random_tensor<double>(kX, 6);
  for (bool training : {true, false}) {
    const AttrMap attrs = bn_attrs(DType::float64, training, eps);
    Expected<std::vector<Tensor>> fwd = run_op("FusedBatchNormV3", in.all(), attrs);
    BOOST_REQUIRE(fwd.ok());
    const std::vector<Tensor>& f = *fwd;
    Expected<std::vector<Tensor>> grad =
        run_op("FusedBatchNormGradV3", {dy, in.x, in.scale, f[3], f[4], f[5]}, attrs);
    BOOST_REQUIRE_MESSAGE(grad.ok(), grad.status().to_string());
    BOOST_REQUIRE(grad->size() == 5u);
    for (int which = 0; which < 3; ++which) {
      const std::vector<double> numeric = numeric_gradient("FusedBatchNormV3", in.all(), attrs, which, dy, 1e-5);
      BOOST_TEST(max_abs_diff(values_of((*grad)[which]), numeric) < 1e-7,
                 (training ? "training" : "inference") << " input " << which);
    }
    BOOST_TEST((*grad)[3].shape().to_string() == "[0]");
    // Versions 1 and 2 compute the same from the same reserve spaces.
    AttrMap v1 = attrs;
    v1.erase("U");
    Expected<std::vector<Tensor>> g1 = run_op("FusedBatchNormGrad", {dy, in.x, in.scale, f[3], f[4]}, v1);
    Expected<std::vector<Tensor>> g2 = run_op("FusedBatchNormGradV2", {dy, in.x, in.scale, f[3], f[4]}, attrs);
    BOOST_REQUIRE(g1.ok());
    BOOST_REQUIRE(g2.ok());
    for (int i = 0; i < 3; ++i) {
      BOOST_TEST(max_abs_diff(values_of((*g1)[i]), values_of((*grad)[i])) == 0.0);
      BOOST_TEST(max_abs_diff(values_of((*g2)[i]), values_of((*grad)[i])) == 0.0);
    }
  }
}

BOOST_AUTO_TEST_CASE(batch_norm_errors) {
  const Inputs in;
  std::vector<Tensor> v = in.all();
  v[0] = random_tensor<double>({4, 3}, 1);
  BOOST_TEST(error_of("FusedBatchNormV3", v, bn_attrs(DType::float64, true)) ==
             "invalid_argument: FusedBatchNormV3: x must have rank 4 (NHWC), got shape [4,3]");
  v = in.all();
  v[1] = random_tensor<double>({4}, 1);
  BOOST_TEST(error_of("FusedBatchNormV3", v, bn_attrs(DType::float64, true)) ==
             "invalid_argument: FusedBatchNormV3: scale must be a vector of 3 elements (the channels of x), "
             "got shape [4]");
  v = in.all();
  v[3] = Tensor(DType::float64, Shape{0});
  BOOST_TEST(contains(error_of("FusedBatchNormV3", v, bn_attrs(DType::float64, false)), "mean must be a vector of 3"));
  BOOST_TEST(contains(error_of("FusedBatchNormV3", v, bn_attrs(DType::float64, true, 1e-3, 0.5)),
                      "mean must be a vector of 3"));
  AttrMap nchw = bn_attrs(DType::float64, true);
  nchw["data_format"] = "NCHW";
  // kX [2,3,4,3] read as NCHW has 3 channels in dimension 1; [2,4,3,3] 4.
  BOOST_TEST(contains(error_of("FusedBatchNormV3", {random_tensor<double>({2, 4, 3, 3}, 1), in.scale, in.offset,
                                                    in.mean, in.var},
                               nchw),
                      "scale must be a vector of 4 elements"));
  BOOST_TEST(error_of("FusedBatchNormV3", {random_tensor<double>({2, 3, 4}, 1), in.scale, in.offset, in.mean, in.var},
                      nchw) ==
             "invalid_argument: FusedBatchNormV3: x must have rank 4 (NCHW), got shape [2,3,4]");
  AttrMap ncdhw = bn_attrs(DType::float64, true);
  ncdhw["data_format"] = "NCDHW";
  BOOST_TEST(contains(error_of("FusedBatchNormV2", in.all(), ncdhw), "data_format must be NHWC or NCHW, got 'NCDHW'"));
  AttrMap mixed = bn_attrs(DType::float64, true);
  mixed["U"] = DType::float32;
  BOOST_TEST(contains(error_of("FusedBatchNormV3", in.all(), mixed), "computes only with U equal to T"));
  BOOST_TEST(contains(error_of("FusedBatchNormGradV2", {random_tensor<double>({2, 2, 2, 3}, 1), in.x, in.scale,
                                                        in.mean, in.var},
                               bn_attrs(DType::float64, true)),
                      "y_backprop has shape [2,2,2,3], x has shape [2,3,4,3]"));
}

// Float runs on oneDNN (batch_norm_ops.cpp): against the double kernels on
// the same values, channels last and first, 4-D and 5-D, training (with and
// without a running average) and inference, and the gradients of both.

BOOST_AUTO_TEST_CASE(float_batch_norm_agrees_with_double_in_every_layout) {
  struct Case {
    Shape x;
    const char* last;
    const char* first;
  };
  for (const Case& k : {Case{{2, 5, 6, 7}, "NHWC", "NCHW"}, Case{{1, 1, 1, 3}, "NHWC", "NCHW"},
                        Case{{2, 3, 4, 5, 6}, "NDHWC", "NCDHW"}, Case{{16, 9, 9, 32}, "NHWC", "NCHW"}}) {
    const int64_t c = k.x.dim(k.x.rank() - 1);
    const Tensor x = random_tensor<float>(k.x, 11, -2, 3), scale = random_tensor<float>({c}, 12, 0.5, 2);
    const Tensor offset = random_tensor<float>({c}, 13), mean = random_tensor<float>({c}, 14);
    const Tensor var = random_tensor<float>({c}, 15, 0.5, 1.5), dy = random_tensor<float>(k.x, 16);
    for (bool training : {true, false})
      for (double factor : {1.0, 0.25}) {
        if (!training && factor != 1.0) continue;
        AttrMap dbl = bn_attrs(DType::float64, training, 1e-3, factor);
        dbl["data_format"] = std::string(k.last);
        Expected<std::vector<Tensor>> want = run_op(
            "FusedBatchNormV3", {as_double(x), as_double(scale), as_double(offset), as_double(mean), as_double(var)},
            dbl);
        BOOST_REQUIRE(want.ok());
        Expected<std::vector<Tensor>> want_grad = run_op(
            "FusedBatchNormGradV3",
            {as_double(dy), as_double(x), as_double(scale), (*want)[3], (*want)[4], (*want)[5]}, dbl);
        BOOST_REQUIRE(want_grad.ok());
        for (bool first : {false, true}) {
          const std::string what = k.x.to_string() + (first ? k.first : k.last) + (training ? " training" : " inference") +
                                   " factor " + std::to_string(factor);
          AttrMap flt = bn_attrs(DType::float32, training, 1e-3, factor);
          flt["data_format"] = std::string(first ? k.first : k.last);
          const Tensor xf = first ? to_channels_first(x) : x, dyf = first ? to_channels_first(dy) : dy;
          Expected<std::vector<Tensor>> got = run_op("FusedBatchNormV3", {xf, scale, offset, mean, var}, flt);
          BOOST_REQUIRE_MESSAGE(got.ok(), what << ": " << got.status().to_string());
          const Tensor y = first ? to_channels_first((*want)[0]) : (*want)[0];
          BOOST_TEST(max_abs_diff(values_of((*got)[0]), values_of(y)) < 2e-5, what);
          for (int i = 1; i < 5; ++i)  // batch and reserve statistics
            BOOST_TEST(max_abs_diff(values_of((*got)[i]), values_of((*want)[i])) < 2e-5, what << " output " << i);
          Expected<std::vector<Tensor>> grad =
              run_op("FusedBatchNormGradV3", {dyf, xf, scale, (*got)[3], (*got)[4], (*got)[5]}, flt);
          BOOST_REQUIRE_MESSAGE(grad.ok(), what << ": " << grad.status().to_string());
          const Tensor dx = first ? to_channels_first((*want_grad)[0]) : (*want_grad)[0];
          BOOST_TEST(max_abs_diff(values_of((*grad)[0]), values_of(dx)) < 1e-4, what);
          // sums over the n = batch x pixels values of a channel
          const double n = static_cast<double>(k.x.num_elements() / c);
          for (int i = 1; i < 3; ++i)
            BOOST_TEST(max_abs_diff(values_of((*grad)[i]), values_of((*want_grad)[i])) < 1e-5 * n + 1e-5,
                       what << " gradient " << i);
        }
      }
  }
}

BOOST_AUTO_TEST_CASE(double_batch_norm_channels_first_is_the_transposed_last) {
  const Inputs in;
  for (bool training : {true, false}) {
    AttrMap last = bn_attrs(DType::float64, training), first = last;
    first["data_format"] = std::string("NCHW");
    // kX [2,3,4,3] as NHWC; its NCHW twin is [2,3,3,4].
    Expected<std::vector<Tensor>> a = run_op("FusedBatchNormV3", in.all(), last);
    std::vector<Tensor> v = in.all();
    v[0] = to_channels_first(in.x);
    Expected<std::vector<Tensor>> b = run_op("FusedBatchNormV3", v, first);
    BOOST_REQUIRE(a.ok());
    BOOST_REQUIRE_MESSAGE(b.ok(), b.status().to_string());
    BOOST_TEST(values_of((*b)[0]) == values_of(to_channels_first((*a)[0])));
    for (int i = 1; i < 5; ++i) BOOST_TEST(values_of((*b)[i]) == values_of((*a)[i]));
  }
}

BOOST_AUTO_TEST_SUITE_END()
