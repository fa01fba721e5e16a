// LinSpace and Empty (ops/linspace_empty_ops.cpp): LinSpace against
// TensorFlow's documented example and start + i * step by a loop, with the
// last value exactly stop; Empty's zeros in any dtype; the errors.
#include <boost/test/unit_test.hpp>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

std::string linspace(const Tensor& start, const Tensor& stop, const Tensor& num) {
  return result("LinSpace", {start, stop, num}, {{"Tidx", base_dtype(num.dtype())}});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(linspace_empty_ops)

BOOST_AUTO_TEST_CASE(linspace_spaces_values_evenly) {
  // tf.linspace(10.0, 12.0, 3) == [10, 11, 12].
  BOOST_TEST(linspace(Tensor::scalar(10.0f), Tensor::scalar(12.0f), Tensor::scalar<int32_t>(3)) ==
             "float32[3] [10,11,12]");
  BOOST_TEST(linspace(Tensor::scalar(1.0), Tensor::scalar(-1.0), Tensor::scalar<int64_t>(5)) ==
             "float64[5] [1,0.5,0,-0.5,-1]");
  BOOST_TEST(linspace(Tensor::scalar(3.0f), Tensor::scalar(7.0f), Tensor::scalar<int32_t>(1)) ==
             "float32[1] [3]");
  Expected<Tensor> out = run_op1("LinSpace", {Tensor::scalar(0.1f), Tensor::scalar(0.7f), Tensor::scalar<int32_t>(7)});
  BOOST_TEST_REQUIRE(out.ok());
  const float step = (0.7f - 0.1f) / 6;
  for (int i = 0; i < 6; ++i) BOOST_TEST(out->data<float>()[i] == 0.1f + step * static_cast<float>(i));
  BOOST_TEST(out->data<float>()[6] == 0.7f);
}

BOOST_AUTO_TEST_CASE(linspace_errors) {
  BOOST_TEST(linspace(Tensor::scalar(0.0f), Tensor::scalar(1.0f), Tensor::scalar<int32_t>(0)) ==
             "error: invalid_argument: LinSpace num must be positive, got 0");
  BOOST_TEST(linspace(Tensor::vector<float>({0}), Tensor::scalar(1.0f), Tensor::scalar<int32_t>(2)) ==
             "error: invalid_argument: LinSpace start must be a scalar, got shape [1]");
  BOOST_TEST(contains(linspace(Tensor::scalar<int32_t>(0), Tensor::scalar<int32_t>(1),
                               Tensor::scalar<int32_t>(2)),
                      "not one of"));
}

BOOST_AUTO_TEST_CASE(empty_makes_zeros_of_any_dtype) {
  BOOST_TEST(result("Empty", {Tensor::vector<int32_t>({2, 2})}, {{"dtype", DType::float32}}) ==
             "float32[2,2] [[0,0],[0,0]]");
  BOOST_TEST(result("Empty", {Tensor::vector<int32_t>({1})},
                    {{"dtype", DType::string}, {"init", true}}) == "string[1] [\"\"]");
  BOOST_TEST(result("Empty", {Tensor::vector<int32_t>({})}, {{"dtype", DType::int64}}) ==
             "int64[] 0");
  BOOST_TEST(result("Empty", {Tensor::vector<int32_t>({0, 3})}, {{"dtype", DType::boolean}}) ==
             "bool[0,3] []");
  BOOST_TEST(contains(result("Empty", {Tensor::vector<int32_t>({-1})}, {{"dtype", DType::float32}}),
                      "negative dimension"));
  BOOST_TEST(contains(result("Empty", {Tensor::scalar<int32_t>(1)}, {{"dtype", DType::float32}}),
                      "Empty shape must be a vector"));
}

BOOST_AUTO_TEST_SUITE_END()
