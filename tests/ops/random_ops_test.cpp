// RandomUniform, RandomStandardNormal and TruncatedNormal
// (ops/random_ops.cpp): ranges and moments of many draws, determinism for
// given seeds (and per node name for seeds 0, 0), new values on each call of
// one kernel, empty shapes and bad shapes. The values are tagflow's own, not
// TensorFlow's, so no value is compared with TensorFlow's.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

AttrMap attrs(DType dtype, int seed, int seed2) {
  return {{"dtype", dtype}, {"T", DType::int32}, {"seed", seed}, {"seed2", seed2}};
}

Tensor draw(const std::string& op, const Shape& shape, DType dtype = DType::float32, int seed = 1,
            int seed2 = 2, const std::string& node = "") {
  RunOptions options;
  options.node_name = node;
  const std::vector<int64_t> dims = shape.dims();
  Expected<Tensor> out = run_op1(op, {Tensor::vector<int32_t>({dims.begin(), dims.end()})},
                                 attrs(dtype, seed, seed2), options);
  BOOST_REQUIRE_MESSAGE(out.ok(), out.status().to_string());
  return *out;
}

struct Moments {
  double min = 1e300, max = -1e300, mean = 0, variance = 0;
};

Moments moments(const Tensor& t) {
  Moments m;
  const int64_t n = t.num_elements();
  for (int64_t i = 0; i < n; ++i) {
    const double v = at(t, i);
    m.min = std::min(m.min, v);
    m.max = std::max(m.max, v);
    m.mean += v / static_cast<double>(n);
  }
  for (int64_t i = 0; i < n; ++i) m.variance += std::pow(at(t, i) - m.mean, 2) / static_cast<double>(n);
  return m;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(random_ops)

BOOST_AUTO_TEST_CASE(uniform_in_zero_one) {
  for (DType t : {DType::float32, DType::float64}) {
    Tensor x = draw("RandomUniform", Shape{100, 1000}, t);
    BOOST_TEST((x.dtype() == t));
    BOOST_TEST(x.shape().to_string() == "[100,1000]");
    const Moments m = moments(x);
    BOOST_TEST(m.min >= 0.0);
    BOOST_TEST(m.max < 1.0);
    BOOST_TEST(std::abs(m.mean - 0.5) < 0.005);
    BOOST_TEST(std::abs(m.variance - 1.0 / 12) < 0.005);
  }
}

BOOST_AUTO_TEST_CASE(normal_and_truncated_normal_moments) {
  const Moments n = moments(draw("RandomStandardNormal", Shape{100000}, DType::float64));
  BOOST_TEST(std::abs(n.mean) < 0.02);
  BOOST_TEST(std::abs(n.variance - 1) < 0.03);
  BOOST_TEST(n.max > 3.0);  // P(no draw above 3 in 1e5) is negligible
  // A standard normal cut at +-2 has variance 1 - 4 phi(2) / (2 Phi(2) - 1) = 0.7737.
  const Moments t = moments(draw("TruncatedNormal", Shape{100000}, DType::float32));
  BOOST_TEST(t.min >= -2.0);
  BOOST_TEST(t.max <= 2.0);
  BOOST_TEST(std::abs(t.mean) < 0.02);
  BOOST_TEST(std::abs(t.variance - 0.7737) < 0.03);
}

BOOST_AUTO_TEST_CASE(seeds_make_draws_repeatable) {
  for (const char* op : {"RandomUniform", "RandomStandardNormal", "TruncatedNormal"}) {
    const Tensor a = draw(op, Shape{3, 4});
    BOOST_TEST((a == draw(op, Shape{3, 4})), op);
    BOOST_TEST((a != draw(op, Shape{3, 4}, DType::float32, 1, 3)), op);
    BOOST_TEST((a != draw(op, Shape{3, 4}, DType::float32, 7, 2)), op);
    // Seeds 0, 0: the node's name seeds it.
    const Tensor x = draw(op, Shape{8}, DType::float32, 0, 0, "x");
    BOOST_TEST((x == draw(op, Shape{8}, DType::float32, 0, 0, "x")), op);
    BOOST_TEST((x != draw(op, Shape{8}, DType::float32, 0, 0, "y")), op);
  }
}

BOOST_AUTO_TEST_CASE(each_call_of_a_kernel_draws_anew) {
  const OpDef* def = OpRegistry::global().find("RandomUniform");
  BOOST_REQUIRE(def != nullptr);
  BOOST_TEST(def->is_stateful());
  AttrMap a = attrs(DType::float32, 5, 6);
  BOOST_REQUIRE(def->check_and_complete_attrs(a).ok());
  const DTypes in = {DType::int32}, out = {DType::float32};
  const std::string name = "r";
  auto draws = [&] {
    Expected<std::unique_ptr<Kernel>> kernel = def->make_kernel(KernelInit{name, a, in, out});
    BOOST_REQUIRE(kernel.ok());
    std::vector<Tensor> values;
    for (int call = 0; call < 2; ++call) {
      Tensor inputs[] = {Tensor::vector<int32_t>({4})};
      Tensor outputs[1];
      KernelContext ctx(inputs, 1, outputs, 1);
      BOOST_REQUIRE((*kernel)->compute(ctx).ok());
      values.push_back(outputs[0]);
    }
    return values;
  };
  const std::vector<Tensor> first = draws();
  BOOST_TEST((first[0] != first[1]));
  const std::vector<Tensor> again = draws();  // a new kernel repeats the sequence
  BOOST_TEST((first[0] == again[0]));
  BOOST_TEST((first[1] == again[1]));
}

BOOST_AUTO_TEST_CASE(shapes) {
  BOOST_TEST(draw("RandomUniform", Shape{0, 5}).shape().to_string() == "[0,5]");
  BOOST_TEST(draw("TruncatedNormal", Shape{}).shape().to_string() == "[]");
  BOOST_TEST(result("RandomUniform", {Tensor::vector<int64_t>({0})},
                    {{"dtype", DType::float64}, {"T", DType::int64}}) == "float64[0] []");
  BOOST_TEST(error_of("RandomUniform", {Tensor::vector<int32_t>({2, -1})}, attrs(DType::float32, 1, 1)) ==
             "invalid_argument: RandomUniform shape [2,-1] has a negative dimension");
  BOOST_TEST(error_of("RandomStandardNormal", {Tensor::scalar<int32_t>(2)}, attrs(DType::float32, 1, 1)) ==
             "invalid_argument: RandomStandardNormal shape must be a vector, got shape []");
  BOOST_TEST(contains(error_of("RandomUniform", {Tensor::vector<int32_t>({2})}, attrs(DType::int32, 1, 1)),
                      "not one of {float32, float64}"));
}

BOOST_AUTO_TEST_SUITE_END()
