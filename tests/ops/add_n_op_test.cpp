// AddN (ops/add_n_op.cpp): sums of one, two and many tensors in every
// dtype it takes, empty tensors, and the errors for mismatched inputs.
#include <boost/test/unit_test.hpp>

#include <limits>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

Tensor f32(const Shape& s, const std::vector<float>& v) { return tensor<float>(s, v); }
Tensor i32(const Shape& s, const std::vector<int32_t>& v) { return tensor<int32_t>(s, v); }

AttrMap n(int count) { return {{"N", count}}; }

}  // namespace

BOOST_AUTO_TEST_SUITE(add_n_op)

BOOST_AUTO_TEST_CASE(sums_n_tensors_of_one_shape) {
  BOOST_TEST(result("AddN", {f32({2}, {1, 2}), f32({2}, {3, 4}), f32({2}, {5, 6.5f})}, n(3)) ==
             "float32[2] [9,12.5]");
  BOOST_TEST(result("AddN", {f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {-1, -2, -3, -4})}, n(2)) ==
             "float32[2,2] [[0,0],[0,0]]");
  BOOST_TEST(result("AddN", {tensor<double>({1}, {0.5}), tensor<double>({1}, {0.25})}, n(2)) ==
             "float64[1] [0.75]");
  BOOST_TEST(result("AddN", {i32({3}, {1, 2, 3}), i32({3}, {10, 20, 30}), i32({3}, {100, 200, 300}),
                             i32({3}, {1000, 2000, 3000})},
                    n(4)) == "int32[3] [1111,2222,3333]");
  BOOST_TEST(result("AddN", {tensor<int64_t>({}, {int64_t{1} << 40}), tensor<int64_t>({}, {1})}, n(2)) ==
             "int64[] 1099511627777");
  BOOST_TEST(result("AddN", {Tensor::scalar(2.5f)}, n(1)) == "float32[] 2.5");
}

BOOST_AUTO_TEST_CASE(integer_sums_wrap_and_empty_tensors_stay_empty) {
  const int32_t max = std::numeric_limits<int32_t>::max();
  BOOST_TEST(result("AddN", {i32({1}, {max}), i32({1}, {1})}, n(2)) == "int32[1] [-2147483648]");
  BOOST_TEST(result("AddN", {f32({0, 3}, {}), f32({0, 3}, {}), f32({0, 3}, {})}, n(3)) ==
             "float32[0,3] []");
}

BOOST_AUTO_TEST_CASE(one_input_is_passed_through) {
  Tensor x = f32({2}, {1, 2});
  Expected<Tensor> out = run_op1("AddN", {x}, n(1));
  BOOST_REQUIRE(out.ok());
  BOOST_TEST(out->shares_buffer_with(x));
}

BOOST_AUTO_TEST_CASE(errors_name_the_shapes_and_dtypes) {
  BOOST_TEST(error_of("AddN", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {1, 2, 3})}, n(2)) ==
             "invalid_argument: AddN inputs must have the same shape: input 0 is [2,3] but input 1 is [3]");
  BOOST_TEST(error_of("AddN", {f32({1}, {1}), f32({1}, {1}), f32({}, {1})}, n(3)) ==
             "invalid_argument: AddN inputs must have the same shape: input 0 is [1] but input 2 is []");
  BOOST_TEST(error_of("AddN", {f32({1}, {1}), i32({1}, {1})}, n(2)) ==
             "invalid_argument: AddN expects float32 inputs, got int32 for input 1");
  BOOST_TEST(contains(error_of("AddN", {}, n(0)), "less than the minimum 1"));
  BOOST_TEST(contains(error_of("AddN", {tensor<bool>({1}, {true})}, n(1)), "not one of"));
  BOOST_TEST(error_of("AddN", {f32({1}, {1})}, n(2)) == "invalid_argument: AddN takes 2 inputs, got 1");
}

BOOST_AUTO_TEST_SUITE_END()
