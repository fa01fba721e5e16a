// Split and SplitV (ops/array_layout_ops.cpp): equal and given pieces along
// any axis, the inferred -1 size, empty pieces, strings, and the errors for
// sizes that do not add up. The other layout ops are tested in
// array_ops_test.cpp.
#include <boost/test/unit_test.hpp>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

// 0, 1, ..., n-1 as int32 of the given shape.
Tensor iota(const Shape& s) {
  std::vector<int32_t> v(static_cast<size_t>(s.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i);
  return Tensor::from_vector<int32_t>(s, v);
}

// Every output as a debug string, joined by " | ", or "error: ...".
std::string all(const std::string& op, std::vector<Tensor> inputs, AttrMap attrs) {
  Expected<std::vector<Tensor>> out = run_op(op, std::move(inputs), std::move(attrs));
  if (!out.ok()) return "error: " + out.status().to_string();
  std::string s;
  for (const Tensor& t : *out) s += (s.empty() ? "" : " | ") + t.debug_string();
  return s;
}

std::string split(int32_t dim, const Tensor& value, int num) {
  return all("Split", {Tensor::scalar<int32_t>(dim), value},
             {{"num_split", num}, {"T", base_dtype(value.dtype())}});
}

std::string split_v(const Tensor& value, std::vector<int64_t> sizes, int32_t dim) {
  const int num = static_cast<int>(sizes.size());
  return all("SplitV", {value, Tensor::vector<int64_t>(sizes), Tensor::scalar<int32_t>(dim)},
             {{"num_split", num}});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(array_layout_ops)

BOOST_AUTO_TEST_CASE(split_into_equal_pieces) {
  BOOST_TEST(split(1, iota({2, 4}), 2) == "int32[2,2] [[0,1],[4,5]] | int32[2,2] [[2,3],[6,7]]");
  BOOST_TEST(split(-1, iota({2, 4}), 2) == "int32[2,2] [[0,1],[4,5]] | int32[2,2] [[2,3],[6,7]]");
  BOOST_TEST(split(0, iota({3, 1}), 3) == "int32[1,1] [[0]] | int32[1,1] [[1]] | int32[1,1] [[2]]");
  BOOST_TEST(split(0, iota({4}), 1) == "int32[4] [0,1,2,3]");
  BOOST_TEST(split(0, Tensor::vector<std::string>({"a", "b"}), 2) == "string[1] [\"a\"] | string[1] [\"b\"]");
  BOOST_TEST(split(1, iota({0, 4}), 2) == "int32[0,2] [] | int32[0,2] []");
  BOOST_TEST(split(0, iota({0}), 2) == "int32[0] [] | int32[0] []");
}

BOOST_AUTO_TEST_CASE(split_of_an_empty_tensor_with_a_huge_dimension_returns_at_once) {
  const Tensor x(DType::float32, Shape{int64_t{1} << 40, 0});
  Expected<std::vector<Tensor>> out =
      run_op("Split", {Tensor::scalar<int32_t>(1), x}, {{"num_split", 2}, {"T", DType::float32}});
  BOOST_REQUIRE(out.ok());
  BOOST_TEST((*out)[1].shape().to_string() == "[1099511627776,0]");
}

BOOST_AUTO_TEST_CASE(split_errors) {
  BOOST_TEST(split(0, iota({5}), 2) ==
             "error: invalid_argument: Split: num_split 2 does not evenly divide dimension 0 of "
             "shape [5]");
  BOOST_TEST(split(2, iota({2, 2}), 2) ==
             "error: invalid_argument: Split split_dim 2 is out of range for a tensor of rank 2 "
             "(must be in [-2, 2))");
  BOOST_TEST(split(0, Tensor::scalar<int32_t>(1), 1) ==
             "error: invalid_argument: Split split_dim: cannot split a scalar");
}

BOOST_AUTO_TEST_CASE(split_v_into_given_sizes) {
  BOOST_TEST(split_v(iota({5}), {1, -1, 2}, 0) == "int32[1] [0] | int32[2] [1,2] | int32[2] [3,4]");
  BOOST_TEST(split_v(iota({2, 3}), {2, 1}, 1) == "int32[2,2] [[0,1],[3,4]] | int32[2,1] [[2],[5]]");
  BOOST_TEST(split_v(iota({2, 3}), {0, 3}, -1) == "int32[2,0] [[],[]] | int32[2,3] [[0,1,2],[3,4,5]]");
  BOOST_TEST(split_v(iota({3}), {3, -1}, 0) == "int32[3] [0,1,2] | int32[0] []");
  BOOST_TEST(all("SplitV", {iota({4}), Tensor::vector<int32_t>({3, 1}), Tensor::scalar<int32_t>(0)},
                 {{"num_split", 2}, {"Tlen", DType::int32}}) == "int32[3] [0,1,2] | int32[1] [3]");
}

BOOST_AUTO_TEST_CASE(split_v_errors) {
  BOOST_TEST(split_v(iota({5}), {1, 2}, 0) ==
             "error: invalid_argument: SplitV size_splits [1,2] sums to 3, not the size 5 of "
             "dimension 0 of shape [5]");
  BOOST_TEST(split_v(iota({5}), {4, -1, 2}, 0) ==
             "error: invalid_argument: SplitV size_splits [4,-1,2] sums to 6, more than the size 5 "
             "of dimension 0 of shape [5]");
  BOOST_TEST(split_v(iota({5}), {-1, -1}, 0) ==
             "error: invalid_argument: SplitV size_splits [-1,-1]: only one size may be -1");
  BOOST_TEST(split_v(iota({5}), {6, -2}, 0) ==
             "error: invalid_argument: SplitV size_splits [6,-2] has a negative size");
  BOOST_TEST(all("SplitV", {iota({4}), Tensor::vector<int64_t>({4}), Tensor::scalar<int32_t>(0)},
                 {{"num_split", 2}}) ==
             "error: invalid_argument: SplitV size_splits [4] has 1 entries but num_split is 2");
}

BOOST_AUTO_TEST_SUITE_END()
