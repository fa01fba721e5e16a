// The shape arithmetic of ops/shape_ops.cpp that gradient graphs run:
// ShapeN, BroadcastGradientArgs, ConcatOffset and InvertPermutation, with
// values worked out from TensorFlow's definitions (BCast's reduction
// indices, Concat's offsets). Shape, Size and Rank are tested in
// array_ops_test.cpp.
#include <boost/test/unit_test.hpp>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

Tensor i32(std::vector<int32_t> v) { return Tensor::vector<int32_t>(v); }
Tensor i64(std::vector<int64_t> v) { return Tensor::vector<int64_t>(v); }

// Every output as a debug string, joined by " | ", or "error: ...".
std::string all(const std::string& op, std::vector<Tensor> inputs, AttrMap attrs = {}) {
  Expected<std::vector<Tensor>> out = run_op(op, std::move(inputs), std::move(attrs));
  if (!out.ok()) return "error: " + out.status().to_string();
  std::string s;
  for (const Tensor& t : *out) s += (s.empty() ? "" : " | ") + t.debug_string();
  return s;
}

std::string bga(std::vector<int32_t> s0, std::vector<int32_t> s1) {
  return all("BroadcastGradientArgs", {i32(std::move(s0)), i32(std::move(s1))});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(shape_ops)

BOOST_AUTO_TEST_CASE(shape_n_gives_each_input_its_shape) {
  Tensor a(DType::float32, Shape{2, 3});
  Tensor b(DType::float32, Shape{});
  Tensor c(DType::float32, Shape{0, 4});
  BOOST_TEST(all("ShapeN", {a, b, c}, {{"N", 3}}) == "int32[2] [2,3] | int32[0] [] | int32[2] [0,4]");
  BOOST_TEST(all("ShapeN", {a}, {{"N", 1}, {"out_type", DType::int64}}) == "int64[2] [2,3]");
  BOOST_TEST(all("ShapeN", {Tensor::vector<std::string>({"x", "y"}), Tensor::vector<std::string>({})},
                 {{"N", 2}}) == "int32[1] [2] | int32[1] [0]");
}

BOOST_AUTO_TEST_CASE(broadcast_gradient_args_as_tensorflow_bcast) {
  BOOST_TEST(bga({2, 3, 5}, {1}) == "int32[0] [] | int32[3] [0,1,2]");
  BOOST_TEST(bga({2, 3, 5}, {3, 5}) == "int32[0] [] | int32[1] [0]");
  BOOST_TEST(bga({3, 5}, {2, 3, 5}) == "int32[1] [0] | int32[0] []");
  BOOST_TEST(bga({2, 1, 5}, {3, 1}) == "int32[1] [1] | int32[2] [0,2]");
  BOOST_TEST(bga({}, {2, 3}) == "int32[2] [0,1] | int32[0] []");
  BOOST_TEST(bga({0}, {1}) == "int32[0] [] | int32[1] [0]");
  // Equal shapes reduce over nothing, even dimensions of 1; otherwise a
  // dimension that is 1 on both sides is reduced on both.
  BOOST_TEST(bga({4, 1}, {4, 1}) == "int32[0] [] | int32[0] []");
  BOOST_TEST(bga({1}, {1}) == "int32[0] [] | int32[0] []");
  BOOST_TEST(bga({1, 1}, {1}) == "int32[2] [0,1] | int32[2] [0,1]");
  BOOST_TEST(bga({2, 1}, {1}) == "int32[1] [1] | int32[2] [0,1]");
  BOOST_TEST(all("BroadcastGradientArgs", {i64({5, 1, 2}), i64({7, 1})}, {{"T", DType::int64}}) ==
             "int64[1] [1] | int64[2] [0,2]");
  // A scalar is a shape of one dimension, as in TensorFlow.
  BOOST_TEST(all("BroadcastGradientArgs", {Tensor::scalar<int32_t>(3), i32({2, 1})}) ==
             "int32[1] [0] | int32[1] [1]");
}

BOOST_AUTO_TEST_CASE(broadcast_gradient_args_errors) {
  BOOST_TEST(bga({2, 3}, {4}) ==
             "error: invalid_argument: BroadcastGradientArgs: incompatible shapes for "
             "broadcasting: [2,3] and [4]");
  BOOST_TEST(bga({0}, {2}) ==
             "error: invalid_argument: BroadcastGradientArgs: incompatible shapes for "
             "broadcasting: [0] and [2]");
  BOOST_TEST(all("BroadcastGradientArgs", {Tensor(DType::int32, Shape{1, 2}), i32({1})}) ==
             "error: invalid_argument: BroadcastGradientArgs s0 must be a vector, got shape [1,2]");
  BOOST_TEST(contains(all("BroadcastGradientArgs", {Tensor::vector<float>({1}), Tensor::vector<float>({1})}),
                      "not one of {int32, int64}"));
}

BOOST_AUTO_TEST_CASE(concat_offset_of_each_input) {
  // [2,2,5,7] ++ [2,3,5,7] ++ [2,4,5,7] along 1 starts at 0, 2 and 5.
  const std::vector<Tensor> shapes = {i32({2, 2, 5, 7}), i32({2, 3, 5, 7}), i32({2, 4, 5, 7})};
  std::vector<Tensor> in = {Tensor::scalar<int32_t>(1)};
  in.insert(in.end(), shapes.begin(), shapes.end());
  const std::string want = "int32[4] [0,0,0,0] | int32[4] [0,2,0,0] | int32[4] [0,5,0,0]";
  BOOST_TEST(all("ConcatOffset", in, {{"N", 3}}) == want);
  in[0] = Tensor::scalar<int32_t>(-3);
  BOOST_TEST(all("ConcatOffset", in, {{"N", 3}}) == want);
  BOOST_TEST(all("ConcatOffset", {Tensor::scalar<int32_t>(0), i32({0}), i32({3})}, {{"N", 2}}) ==
             "int32[1] [0] | int32[1] [0]");
}

BOOST_AUTO_TEST_CASE(concat_offset_errors) {
  BOOST_TEST(all("ConcatOffset", {Tensor::scalar<int32_t>(1), i32({2, 2}), i32({3, 2})}, {{"N", 2}}) ==
             "error: invalid_argument: ConcatOffset: all dimensions except 1 must match: input 1 "
             "has shape [3,2] and input 0 has shape [2,2]");
  BOOST_TEST(all("ConcatOffset", {Tensor::scalar<int32_t>(0), i32({2, 2}), i32({2})}, {{"N", 2}}) ==
             "error: invalid_argument: ConcatOffset: all dimensions except 0 must match: input 1 "
             "has shape [2] and input 0 has shape [2,2]");
  BOOST_TEST(all("ConcatOffset", {Tensor::scalar<int32_t>(2), i32({2, 2}), i32({2, 2})}, {{"N", 2}}) ==
             "error: invalid_argument: ConcatOffset concat_dim 2 is out of range for a tensor of "
             "rank 2 (must be in [-2, 2))");
  BOOST_TEST(all("ConcatOffset", {i32({0}), i32({2}), i32({2})}, {{"N", 2}}) ==
             "error: invalid_argument: ConcatOffset concat_dim must be a scalar, got shape [1]");
  BOOST_TEST(contains(all("ConcatOffset", {Tensor::scalar<int32_t>(0), Tensor::scalar<int32_t>(2),
                                           i32({2})},
                          {{"N", 2}}),
                      "input 0: ConcatOffset shape must be a vector, got shape []"));
  BOOST_TEST(contains(all("ConcatOffset", {Tensor::scalar<int32_t>(0), i32({2})}, {{"N", 1}}),
                      "less than the minimum 2"));
}

BOOST_AUTO_TEST_CASE(invert_permutation) {
  BOOST_TEST(result("InvertPermutation", {i32({3, 4, 0, 2, 1})}) == "int32[5] [2,4,3,0,1]");
  BOOST_TEST(result("InvertPermutation", {i64({1, 0})}) == "int64[2] [1,0]");
  BOOST_TEST(result("InvertPermutation", {i32({})}) == "int32[0] []");
  BOOST_TEST(error_of("InvertPermutation", {i32({0, 2})}) ==
             "invalid_argument: InvertPermutation: 2 is not between 0 and 2");
  BOOST_TEST(error_of("InvertPermutation", {i32({0, -1})}) ==
             "invalid_argument: InvertPermutation: -1 is not between 0 and 2");
  BOOST_TEST(error_of("InvertPermutation", {i32({1, 1})}) ==
             "invalid_argument: InvertPermutation: 1 is duplicated in the input");
  BOOST_TEST(error_of("InvertPermutation", {Tensor::scalar<int32_t>(0)}) ==
             "invalid_argument: InvertPermutation expects a vector, got shape []");
}

BOOST_AUTO_TEST_SUITE_END()
