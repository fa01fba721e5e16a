// The unary functions new in ops/unary_ops.cpp (Sign, Reciprocal, Floor,
// IsFinite) and the
// gradient ops through a function's output (SigmoidGrad, TanhGrad,
// SqrtGrad, RsqrtGrad, ReciprocalGrad) against values worked out by hand
// from TensorFlow's formulas; the older unary functions are tested in
// math_ops_test.cpp.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

Tensor f32(const Shape& s, const std::vector<float>& v) { return tensor<float>(s, v); }
Tensor f64(const Shape& s, const std::vector<double>& v) { return tensor<double>(s, v); }
Tensor i32(const Shape& s, const std::vector<int32_t>& v) { return tensor<int32_t>(s, v); }

}  // namespace

BOOST_AUTO_TEST_SUITE(unary_ops)

BOOST_AUTO_TEST_CASE(sign_in_every_real_dtype) {
  BOOST_TEST(result("Sign", {f32({4}, {-2, 0, 3.5f, -0.0f})}) == "float32[4] [-1,0,1,0]");
  BOOST_TEST(result("Sign", {f64({2}, {1e-300, -1e300})}) == "float64[2] [1,-1]");
  BOOST_TEST(result("Sign", {i32({3}, {-5, 0, 7})}) == "int32[3] [-1,0,1]");
  BOOST_TEST(result("Sign", {tensor<int64_t>({}, {-9})}) == "int64[] -1");
  BOOST_TEST(result("Sign", {f32({0, 2}, {})}) == "float32[0,2] []");
}

BOOST_AUTO_TEST_CASE(reciprocal) {
  BOOST_TEST(result("Reciprocal", {f32({4}, {2, -4, 0.5f, 0})}) == "float32[4] [0.5,-0.25,2,inf]");
  BOOST_TEST(result("Reciprocal", {f64({2, 1}, {8, -0.125})}) == "float64[2,1] [[0.125],[-8]]");
  BOOST_TEST(contains(error_of("Reciprocal", {i32({1}, {2})}),
                      "which is not one of {float32, float64, half, bfloat16, complex64, complex128}"));
}

BOOST_AUTO_TEST_CASE(sigmoid_and_tanh_grad) {
  // dy * y * (1 - y)
  BOOST_TEST(result("SigmoidGrad", {f32({2}, {0.5f, 0.25f}), f32({2}, {1, 2})}) ==
             "float32[2] [0.25,0.375]");
  // dy * (1 - y^2)
  BOOST_TEST(result("TanhGrad", {f64({3}, {0.5, -0.5, 0}), f64({3}, {2, 1, 3})}) ==
             "float64[3] [1.5,0.75,3]");
  BOOST_TEST(result("TanhGrad", {Tensor::scalar(1.0f), Tensor::scalar(5.0f)}) == "float32[] 0");
}

BOOST_AUTO_TEST_CASE(sqrt_rsqrt_and_reciprocal_grad) {
  // dy * 0.5 / y
  BOOST_TEST(result("SqrtGrad", {f32({2}, {2, 0.5f}), f32({2}, {1, 3})}) == "float32[2] [0.25,3]");
  BOOST_TEST(result("SqrtGrad", {f32({1}, {0}), f32({1}, {1})}) == "float32[1] [inf]");
  // dy * -0.5 * y^3
  BOOST_TEST(result("RsqrtGrad", {f64({2}, {2, 0.5}), f64({2}, {1, 4})}) == "float64[2] [-4,-0.25]");
  // -dy * y^2
  BOOST_TEST(result("ReciprocalGrad", {f32({2}, {2, -0.5f}), f32({2}, {1, 4})}) ==
             "float32[2] [-4,-1]");
}

BOOST_AUTO_TEST_CASE(grads_take_the_shape_of_y_and_need_as_many_elements) {
  // As TensorFlow's cwise gradient kernels: equal element counts suffice.
  BOOST_TEST(result("SigmoidGrad", {f32({2, 1}, {0.5f, 0.5f}), f32({2}, {4, 8})}) ==
             "float32[2,1] [[1],[2]]");
  BOOST_TEST(result("TanhGrad", {f32({0, 3}, {}), f32({0}, {})}) == "float32[0,3] []");
  BOOST_TEST(error_of("SigmoidGrad", {f32({2}, {1, 2}), f32({3}, {1, 2, 3})}) ==
             "invalid_argument: SigmoidGrad expects inputs of the same number of elements, got "
             "shapes [2] and [3]");
  BOOST_TEST(error_of("RsqrtGrad", {f32({1}, {1}), Tensor::scalar(1.0)}, {{"T", DType::float32}}) ==
             "invalid_argument: RsqrtGrad expects float32 inputs, got float32 and float64");
  BOOST_TEST(contains(error_of("TanhGrad", {i32({1}, {1}), i32({1}, {1})}), "not one of"));
}

BOOST_AUTO_TEST_CASE(floor_rounds_down) {
  BOOST_TEST(result("Floor", {f32({6}, {1.5f, -1.5f, 2, -0.25f, 1048576.5f, 0.999f})}) ==
             "float32[6] [1,-2,2,-1,1048576,0]");
  BOOST_TEST(result("Floor", {f64({2, 1}, {-7.0000001, 3.9999999})}) == "float64[2,1] [[-8],[3]]");
  const float inf = std::numeric_limits<float>::infinity();
  BOOST_TEST(result("Floor", {f32({3}, {inf, -inf, std::nanf("")})}) == "float32[3] [inf,-inf,nan]");
  BOOST_TEST(contains(error_of("Floor", {i32({1}, {2})}), "which is not one of {float32, float64, half, bfloat16}"));
}

BOOST_AUTO_TEST_CASE(is_finite) {
  const double inf = std::numeric_limits<double>::infinity();
  BOOST_TEST(result("IsFinite", {f64({5}, {1, -inf, inf, std::nan(""), -1e308})}) ==
             "bool[5] [true,false,false,false,true]");
  BOOST_TEST(result("IsFinite", {f32({}, {3})}) == "bool[] true");
  BOOST_TEST(result("IsFinite", {f32({0}, {})}) == "bool[0] []");
  BOOST_TEST(contains(error_of("IsFinite", {i32({1}, {2})}), "which is not one of {float32, float64, half, bfloat16}"));
}

BOOST_AUTO_TEST_SUITE_END()
