// ops::truth_value, TensorFlow's truth of a predicate, and the ToBool
// kernel that gives it to a lowered If or While.
#include <boost/test/unit_test.hpp>

#include <complex>

#include "op_test_util.hpp"
#include "ops/truth_value.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

bool truth(const Tensor& x) {
  auto r = tagflow::ops::truth_value(x);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  return *r;
}

bool kernel_truth(Tensor x) {
  auto r = run_op1("ToBool", {std::move(x)});
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_REQUIRE(r->dtype() == DType::boolean);
  BOOST_REQUIRE(r->shape().rank() == 0);
  return r->scalar_value<bool>();
}

// Zero and a non-zero value of T as scalars.
template <class T>
std::pair<Tensor, Tensor> zero_and_one() {
  return {Tensor::scalar<T>(T(0)), Tensor::scalar<T>(T(1))};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(truth_value)

BOOST_AUTO_TEST_CASE(a_scalar_of_every_real_dtype_is_true_when_non_zero) {
  const std::vector<std::pair<Tensor, Tensor>> cases = {
      zero_and_one<bool>(),     zero_and_one<float>(),    zero_and_one<double>(),  zero_and_one<int32_t>(),
      zero_and_one<int64_t>(),  zero_and_one<uint8_t>(),  zero_and_one<int8_t>(),  zero_and_one<int16_t>(),
      zero_and_one<uint16_t>(), zero_and_one<uint32_t>(), zero_and_one<uint64_t>(), zero_and_one<Eigen::half>(),
      zero_and_one<Eigen::bfloat16>(),
  };
  for (const auto& [zero, one] : cases) {
    BOOST_TEST_CONTEXT(dtype_name(zero.dtype())) {
      BOOST_TEST(!truth(zero));
      BOOST_TEST(truth(one));
      // the kernel says the same
      BOOST_TEST(!kernel_truth(zero));
      BOOST_TEST(kernel_truth(one));
    }
  }
  BOOST_TEST(truth(Tensor::scalar<int32_t>(-3)));
  BOOST_TEST(!truth(Tensor::scalar<float>(-0.0f)));
  BOOST_TEST(truth(Tensor::scalar<float>(std::numeric_limits<float>::quiet_NaN())));  // NaN != 0
  BOOST_TEST(!truth(Tensor::scalar<Eigen::half>(Eigen::half(-0.0f))));
  BOOST_TEST(truth(Tensor::string_scalar("x")));
  BOOST_TEST(!truth(Tensor::string_scalar("")));
}

BOOST_AUTO_TEST_CASE(a_non_scalar_is_true_when_it_has_elements) {
  BOOST_TEST(truth(Tensor::vector<bool>({false, false})));  // not its values
  BOOST_TEST(truth(Tensor::vector<int32_t>({0})));
  BOOST_TEST(!truth(Tensor::vector<float>({})));
  BOOST_TEST(!truth(Tensor(DType::int32, Shape({2, 0}))));
  BOOST_TEST(kernel_truth(Tensor::vector<int32_t>({0})));
  BOOST_TEST(!kernel_truth(Tensor::vector<float>({})));
}

BOOST_AUTO_TEST_CASE(a_complex_scalar_has_no_truth_value) {
  auto r = tagflow::ops::truth_value(Tensor::scalar<std::complex<float>>({1.0f, 0.0f}));
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().code() == Error::invalid_argument);
  BOOST_TEST(r.status().message() == "a scalar of type complex64 has no truth value");
  auto k = run_op1("ToBool", {Tensor::scalar<std::complex<float>>({1.0f, 0.0f})});
  BOOST_REQUIRE(!k.ok());
  BOOST_TEST(k.status().message().find("ToBool: a scalar of type complex64") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
