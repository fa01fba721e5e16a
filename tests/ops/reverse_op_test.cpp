// ReverseV2 (ops/reverse_op.cpp) against a naive index loop and hand
// examples: no axis, several axes, negative axes, every dtype through
// strings, and the errors for bad and repeated axes.
#include <boost/test/unit_test.hpp>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

std::string reverse(const Tensor& x, const Tensor& axis) {
  return result("ReverseV2", {x, axis}, {{"Tidx", base_dtype(axis.dtype())}});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reverse_op)

BOOST_AUTO_TEST_CASE(reverse_v2_reverses_the_named_axes) {
  const Tensor x = tensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  BOOST_TEST(reverse(x, Tensor::vector<int32_t>({})) == "int32[2,3] [[1,2,3],[4,5,6]]");
  BOOST_TEST(reverse(x, Tensor::vector<int32_t>({1})) == "int32[2,3] [[3,2,1],[6,5,4]]");
  BOOST_TEST(reverse(x, Tensor::vector<int64_t>({-2})) == "int32[2,3] [[4,5,6],[1,2,3]]");
  BOOST_TEST(reverse(x, Tensor::vector<int32_t>({0, -1})) == "int32[2,3] [[6,5,4],[3,2,1]]");
  BOOST_TEST(reverse(Tensor::vector<std::string>({"a", "b"}), Tensor::vector<int32_t>({0})) ==
             "string[2] [\"b\",\"a\"]");
  BOOST_TEST(reverse(Tensor::scalar<bool>(true), Tensor::vector<int32_t>({})) == "bool[] true");
  BOOST_TEST(reverse(tensor<float>({0, 2}, {}), Tensor::vector<int32_t>({0, 1})) == "float32[0,2] []");
}

BOOST_AUTO_TEST_CASE(reverse_v2_matches_a_naive_loop) {
  std::vector<double> v(2 * 3 * 4);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i) * 1.5;
  Expected<Tensor> out = run_op1("ReverseV2", {tensor<double>({2, 3, 4}, v), Tensor::vector<int32_t>({0, 2})});
  BOOST_TEST_REQUIRE(out.ok());
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        BOOST_TEST(at(*out, (a * 3 + b) * 4 + c) == v[static_cast<size_t>(((1 - a) * 3 + b) * 4 + (3 - c))]);
}

BOOST_AUTO_TEST_CASE(reverse_v2_errors) {
  const Tensor x = tensor<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  BOOST_TEST(reverse(x, Tensor::vector<int32_t>({2})) ==
             "error: invalid_argument: ReverseV2 axis 2 is out of range for a tensor of rank 2 "
             "(must be in [-2, 2))");
  BOOST_TEST(reverse(x, Tensor::vector<int32_t>({1, -1})) ==
             "error: invalid_argument: ReverseV2 axis 1 is named more than once in [1,-1]");
  BOOST_TEST(reverse(x, Tensor::scalar<int32_t>(0)) ==
             "error: invalid_argument: ReverseV2 axis must be a vector, got shape []");
}

BOOST_AUTO_TEST_SUITE_END()
