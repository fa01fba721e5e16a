// ReverseSequence (ops/reverse_sequence_op.cpp): batch before and after the
// sequence dimension, dimensions between and after them, zero and full
// lengths, strings, and the errors TensorFlow's kernel reports.
#include <boost/test/unit_test.hpp>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

// 0, 1, ..., n-1 (plus `base`) as int32 of the given shape.
Tensor iota(const Shape& s, int32_t base = 0) {
  std::vector<int32_t> v(static_cast<size_t>(s.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = base + static_cast<int32_t>(i);
  return Tensor::from_vector<int32_t>(s, v);
}

std::string reverse(const Tensor& x, std::vector<int64_t> lengths, int seq_dim, int batch_dim = 0) {
  return result("ReverseSequence", {x, Tensor::vector<int64_t>(lengths)},
                {{"seq_dim", seq_dim}, {"batch_dim", batch_dim}});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reverse_sequence_op)

BOOST_AUTO_TEST_CASE(reverses_each_prefix) {
  BOOST_TEST(reverse(iota({3, 4}, 1), {2, 4, 0}, 1) ==
             "int32[3,4] [[2,1,3,4],[8,7,6,5],[9,10,11,12]]");
  // batch_dim after seq_dim
  BOOST_TEST(reverse(iota({3, 2}, 1), {3, 1}, 0, 1) == "int32[3,2] [[5,2],[3,4],[1,6]]");
  // a dimension between them
  BOOST_TEST(reverse(iota({2, 2, 3}), {3, 2}, 2) ==
             "int32[2,2,3] [[[2,1,0],[5,4,3]],[[7,6,8],[10,9,11]]]");
  // a dimension after them: whole rows move
  BOOST_TEST(reverse(iota({1, 3, 2}), {3}, 1) == "int32[1,3,2] [[[4,5],[2,3],[0,1]]]");
  BOOST_TEST(reverse(iota({2, 2}), {1, 1}, -1, -2) == "int32[2,2] [[0,1],[2,3]]");
  BOOST_TEST(result("ReverseSequence",
                    {Tensor::from_vector<std::string>(Shape{1, 3}, {"a", "b", "c"}),
                     Tensor::vector<int32_t>({2})},
                    {{"seq_dim", 1}, {"Tlen", DType::int32}}) ==
             "string[1,3] [[\"b\",\"a\",\"c\"]]");
  BOOST_TEST(reverse(iota({0, 3}), {}, 1) == "int32[0,3] []");
}

BOOST_AUTO_TEST_CASE(an_empty_input_with_a_huge_dimension_returns_at_once) {
  const Tensor x(DType::float32, Shape{2, int64_t{1} << 40, 0});
  Expected<Tensor> out = run_op1("ReverseSequence", {x, Tensor::vector<int64_t>({0, 0})},
                                 {{"seq_dim", 2}});
  BOOST_REQUIRE(out.ok());
  BOOST_TEST(out->shape().to_string() == "[2,1099511627776,0]");
}

BOOST_AUTO_TEST_CASE(errors) {
  Tensor x = iota({2, 3});
  BOOST_TEST(error_of("ReverseSequence", {x, Tensor::vector<int64_t>({1, 1})}, {{"seq_dim", 0}}) ==
             "invalid_argument: ReverseSequence: batch_dim == seq_dim == 0");
  BOOST_TEST(error_of("ReverseSequence", {x, Tensor::vector<int64_t>({1, 1})}, {{"seq_dim", 2}}) ==
             "invalid_argument: ReverseSequence seq_dim 2 is out of range for a tensor of rank 2 "
             "(must be in [-2, 2))");
  BOOST_TEST(error_of("ReverseSequence", {x, Tensor::vector<int64_t>({1})}, {{"seq_dim", 1}}) ==
             "invalid_argument: ReverseSequence: seq_lengths has 1 entries but dimension 0 of "
             "input [2,3] has 2");
  BOOST_TEST(error_of("ReverseSequence", {x, Tensor::vector<int64_t>({1, 4})}, {{"seq_dim", 1}}) ==
             "invalid_argument: ReverseSequence: seq_lengths[1] = 4 is not in [0, 3], the size of "
             "dimension 1 of input [2,3]");
  BOOST_TEST(error_of("ReverseSequence", {x, Tensor::vector<int64_t>({-1, 0})}, {{"seq_dim", 1}}) ==
             "invalid_argument: ReverseSequence: seq_lengths[0] = -1 is not in [0, 3], the size of "
             "dimension 1 of input [2,3]");
  BOOST_TEST(contains(error_of("ReverseSequence", {x, Tensor::vector<int64_t>({1, 1})}),
                      "needs attr 'seq_dim'"));
}

BOOST_AUTO_TEST_SUITE_END()
