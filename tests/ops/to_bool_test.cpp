// ToBool: TensorFlow's truthiness of an If / While predicate.
#include <boost/test/unit_test.hpp>

#include "op_test_util.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

bool truth(Tensor x) {
  auto r = run_op1("ToBool", {std::move(x)});
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_REQUIRE(r->dtype() == DType::boolean);
  BOOST_REQUIRE(r->shape().rank() == 0);
  return r->scalar_value<bool>();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(to_bool)

BOOST_AUTO_TEST_CASE(a_scalar_is_true_when_non_zero) {
  BOOST_TEST(truth(Tensor::scalar(true)));
  BOOST_TEST(!truth(Tensor::scalar(false)));
  BOOST_TEST(truth(Tensor::scalar<int32_t>(-3)));
  BOOST_TEST(!truth(Tensor::scalar<int32_t>(0)));
  BOOST_TEST(truth(Tensor::scalar<int64_t>(1)));
  BOOST_TEST(!truth(Tensor::scalar<float>(0.0f)));
  BOOST_TEST(truth(Tensor::scalar<double>(0.5)));
  BOOST_TEST(truth(Tensor::string_scalar("x")));
  BOOST_TEST(!truth(Tensor::string_scalar("")));
}

BOOST_AUTO_TEST_CASE(a_non_scalar_is_true_when_it_has_elements) {
  BOOST_TEST(truth(Tensor::vector<bool>({false, false})));  // not its values
  BOOST_TEST(truth(Tensor::vector<int32_t>({0})));
  BOOST_TEST(!truth(Tensor::vector<float>({})));
  BOOST_TEST(!truth(Tensor(DType::int32, Shape({2, 0}))));
}

BOOST_AUTO_TEST_SUITE_END()
