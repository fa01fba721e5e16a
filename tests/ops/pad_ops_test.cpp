// Pad and PadV2 (ops/pad_ops.cpp): values by hand, strings, scalars, empty
// inputs and the errors for bad paddings and constants.
#include <boost/test/unit_test.hpp>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

Tensor i32(const Shape& s, const std::vector<int32_t>& v) { return tensor<int32_t>(s, v); }
Tensor paddings(const std::vector<int32_t>& v) {
  return i32(Shape{static_cast<int64_t>(v.size() / 2), 2}, v);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(pad_ops)

BOOST_AUTO_TEST_CASE(pad_with_zeros_or_a_constant) {
  Tensor x = i32({2, 2}, {1, 2, 3, 4});
  BOOST_TEST(result("Pad", {x, paddings({1, 1, 2, 0})}) ==
             "int32[4,4] [[0,0,0,0],[0,0,1,2],[0,0,3,4],[0,0,0,0]]");
  BOOST_TEST(result("PadV2", {x, paddings({0, 1, 1, 1}), Tensor::scalar<int32_t>(9)}) ==
             "int32[3,4] [[9,1,2,9],[9,3,4,9],[9,9,9,9]]");
  BOOST_TEST(result("Pad", {tensor<float>({2}, {1.5f, 2}), tensor<int64_t>({1, 2}, {0, 2})},
                    {{"Tpaddings", DType::int64}}) == "float32[4] [1.5,2,0,0]");
  BOOST_TEST(result("Pad", {x, paddings({0, 0, 0, 0})}) == "int32[2,2] [[1,2],[3,4]]");
  BOOST_TEST(result("Pad", {Tensor::vector<std::string>({"a"}), paddings({1, 0})}) ==
             "string[2] [\"\",\"a\"]");
  BOOST_TEST(result("PadV2", {Tensor::vector<std::string>({"a"}), paddings({0, 1}),
                              Tensor::string_scalar("-")}) == "string[2] [\"a\",\"-\"]");
}

BOOST_AUTO_TEST_CASE(pad_scalars_and_empty_inputs) {
  BOOST_TEST(result("Pad", {Tensor::scalar<int32_t>(5), i32({0, 2}, {})}) == "int32[] 5");
  BOOST_TEST(result("Pad", {i32({0, 2}, {}), paddings({1, 1, 0, 0})}) == "int32[2,2] [[0,0],[0,0]]");
  BOOST_TEST(result("PadV2", {i32({0}, {}), paddings({0, 2}), Tensor::scalar<int32_t>(1)}) ==
             "int32[2] [1,1]");
}

BOOST_AUTO_TEST_CASE(pad_errors) {
  Tensor x = i32({2, 2}, {1, 2, 3, 4});
  BOOST_TEST(error_of("Pad", {x, paddings({1, 1})}) ==
             "invalid_argument: Pad paddings must be a matrix of one [before, after] row per "
             "dimension of the input [2,2], got shape [1,2]");
  BOOST_TEST(error_of("Pad", {x, i32({4}, {1, 1, 1, 1})}) ==
             "invalid_argument: Pad paddings must be a matrix of one [before, after] row per "
             "dimension of the input [2,2], got shape [4]");
  BOOST_TEST(error_of("Pad", {x, paddings({0, 0, -1, 0})}) ==
             "invalid_argument: Pad paddings [0,0,-1,0]: dimension 1 pads by -1 and 0; paddings "
             "must be non-negative");
  BOOST_TEST(error_of("PadV2", {x, paddings({0, 0, 0, 0}), i32({1}, {0})}) ==
             "invalid_argument: PadV2 constant_values must be a scalar of the input's dtype "
             "int32, got int32[1]");
  BOOST_TEST(error_of("PadV2", {x, paddings({0, 0, 0, 0}), Tensor::scalar(1.0f)}, {{"T", DType::int32}}) ==
             "invalid_argument: PadV2 constant_values must be a scalar of the input's dtype "
             "int32, got float32[]");
}

BOOST_AUTO_TEST_SUITE_END()
