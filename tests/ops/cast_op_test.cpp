#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

std::string cast(const Tensor& x, DType to, bool truncate = false) {
  return result("Cast", {x}, {{"SrcT", x.dtype()}, {"DstT", to}, {"Truncate", truncate}});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cast_op)

BOOST_AUTO_TEST_CASE(float_to_integer_truncates_toward_zero) {
  Tensor x = tensor<float>({4}, {1.7f, -1.7f, 0.5f, -0.5f});
  BOOST_TEST(cast(x, DType::int32) == "int32[4] [1,-1,0,0]");
  BOOST_TEST(cast(x, DType::int64) == "int64[4] [1,-1,0,0]");
  BOOST_TEST(cast(tensor<double>({2}, {3.99, -2.01}), DType::int16) == "int16[2] [3,-2]");
}

BOOST_AUTO_TEST_CASE(out_of_range_floats_saturate) {
  const float inf = std::numeric_limits<float>::infinity();
  Tensor x = tensor<float>({5}, {1e10f, -1e10f, inf, std::nanf(""), -inf});
  BOOST_TEST(cast(x, DType::int32) == "int32[5] [2147483647,-2147483648,2147483647,0,-2147483648]");
  BOOST_TEST(cast(x, DType::uint8) == "uint8[5] [255,0,255,0,0]");
  BOOST_TEST(cast(tensor<double>({2}, {1e300, -1e300}), DType::int64) ==
             "int64[2] [9223372036854775807,-9223372036854775808]");
  BOOST_TEST(cast(tensor<double>({1}, {-0.9}), DType::uint32) == "uint32[1] [0]");
}

BOOST_AUTO_TEST_CASE(narrowing_integers_wrap) {
  BOOST_TEST(cast(tensor<int64_t>({2}, {(int64_t{1} << 32) + 5, -1}), DType::int32) ==
             "int32[2] [5,-1]");
  BOOST_TEST(cast(tensor<int32_t>({3}, {300, -1, 127}), DType::uint8) == "uint8[3] [44,255,127]");
  BOOST_TEST(cast(tensor<int32_t>({2}, {200, -200}), DType::int8) == "int8[2] [-56,56]");
  BOOST_TEST(cast(tensor<int32_t>({1}, {-1}), DType::uint16) == "uint16[1] [65535]");
}

BOOST_AUTO_TEST_CASE(to_and_from_bool) {
  BOOST_TEST(cast(tensor<float>({3}, {0, -0.0f, 0.25f}), DType::boolean) == "bool[3] [false,false,true]");
  BOOST_TEST(cast(tensor<int64_t>({2}, {0, -7}), DType::boolean) == "bool[2] [false,true]");
  Tensor b = tensor<bool>({2}, {true, false});
  BOOST_TEST(cast(b, DType::float32) == "float32[2] [1,0]");
  BOOST_TEST(cast(b, DType::int32) == "int32[2] [1,0]");
  BOOST_TEST(cast(b, DType::half) == "half[2] [1,0]");
}

BOOST_AUTO_TEST_CASE(half_and_bfloat16) {
  Tensor x = tensor<float>({3}, {1.5f, -2.25f, 65504.0f});
  BOOST_TEST(cast(x, DType::half) == "half[3] [1.5,-2.25,65504]");
  BOOST_TEST(cast(tensor<float>({1}, {1e6f}), DType::half) == "half[1] [inf]");
  // bfloat16 keeps 8 significant bits: 1 + 0.75 * 2^-7 rounds to 1 + 2^-7.
  BOOST_TEST(cast(tensor<float>({1}, {1.005859375f}), DType::bfloat16) == "bfloat16[1] [1.0078125]");
  Tensor h(DType::half, Shape{2});
  h.mutable_data<Eigen::half>()[0] = Eigen::half(2.5f);
  h.mutable_data<Eigen::half>()[1] = Eigen::half(-3.75f);
  BOOST_TEST(cast(h, DType::float32) == "float32[2] [2.5,-3.75]");
  BOOST_TEST(cast(h, DType::int32) == "int32[2] [2,-3]");
  BOOST_TEST(cast(h, DType::bfloat16) == "bfloat16[2] [2.5,-3.75]");
}

BOOST_AUTO_TEST_CASE(truncate_drops_mantissa_bits_instead_of_rounding) {
  Tensor x = tensor<float>({2}, {1.005859375f, -1.005859375f});  // 1 + 0.75 * 2^-7
  BOOST_TEST(cast(x, DType::bfloat16, false) == "bfloat16[2] [1.0078125,-1.0078125]");
  BOOST_TEST(cast(x, DType::bfloat16, true) == "bfloat16[2] [1,-1]");
  // 1 + 3 * 2^-12 rounds to 1 + 2^-10 in half, truncates to 1.
  Tensor y = tensor<float>({1}, {1.000732421875f});
  BOOST_TEST(cast(y, DType::half, false) == "half[1] [1.00097656]");
  BOOST_TEST(cast(y, DType::half, true) == "half[1] [1]");
  // double -> float: 1 + 2^-24 + 2^-30 rounds up to 1 + 2^-23, truncates to 1.
  Tensor z = tensor<double>({1}, {1.0 + std::ldexp(1.0, -24) + std::ldexp(1.0, -30)});
  BOOST_TEST(cast(z, DType::float32, false) == "float32[1] [1.00000012]");
  BOOST_TEST(cast(z, DType::float32, true) == "float32[1] [1]");
  // NaN stays NaN.
  Expected<Tensor> nan = run_op1("Cast", {tensor<float>({1}, {std::nanf("")})},
                                 {{"SrcT", DType::float32}, {"DstT", DType::bfloat16}, {"Truncate", true}});
  BOOST_REQUIRE(nan.ok());
  BOOST_TEST(std::isnan(at(*nan, 0)));
}

BOOST_AUTO_TEST_CASE(complex) {
  Tensor c(DType::complex64, Shape{2});
  c.mutable_data<std::complex<float>>()[0] = {1.5f, 2};
  c.mutable_data<std::complex<float>>()[1] = {-3, 4};
  BOOST_TEST(cast(c, DType::float64) == "float64[2] [1.5,-3]");
  BOOST_TEST(cast(c, DType::complex128) == "complex128[2] [(1.5,2),(-3,4)]");
  BOOST_TEST(cast(tensor<int32_t>({1}, {7}), DType::complex64) == "complex64[1] [(7,0)]");
}

BOOST_AUTO_TEST_CASE(same_dtype_shares_the_buffer) {
  Tensor x = tensor<int32_t>({2}, {1, 2});
  Expected<Tensor> y = run_op1("Cast", {x}, {{"SrcT", DType::int32}, {"DstT", DType::int32}});
  BOOST_REQUIRE(y.ok());
  BOOST_TEST(y->shares_buffer_with(x));
}

BOOST_AUTO_TEST_CASE(shapes_and_empty_tensors) {
  BOOST_TEST(cast(tensor<int32_t>({2, 2}, {1, 2, 3, 4}), DType::float64) == "float64[2,2] [[1,2],[3,4]]");
  BOOST_TEST(cast(tensor<float>({0, 3}, {}), DType::int8) == "int8[0,3] []");
  BOOST_TEST(cast(Tensor::scalar(2.5), DType::float32) == "float32[] 2.5");
}

BOOST_AUTO_TEST_CASE(errors) {
  // The input is not of SrcT.
  BOOST_TEST(error_of("Cast", {tensor<int32_t>({1}, {1})}, {{"SrcT", DType::float32}, {"DstT", DType::int64}}) ==
             "invalid_argument: Cast expects float32 inputs, got int32");
  BOOST_TEST(contains(error_of("Cast", {Tensor::string_scalar("a")},
                               {{"SrcT", DType::string}, {"DstT", DType::int32}}),
                      "attr 'SrcT' of op Cast is string, which is not one of"));
  BOOST_TEST(contains(error_of("Cast", {tensor<int32_t>({1}, {1})}, {{"SrcT", DType::int32}}),
                      "op Cast needs attr 'DstT'"));
}

BOOST_AUTO_TEST_SUITE_END()
