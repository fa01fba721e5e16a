// UnsortedSegmentSum and DynamicStitch (ops/segment_ops.cpp) against
// TensorFlow's documented examples and hand-computed sums: id ranks, skipped
// negative ids, empty segments and tensors, overwrites, and the errors for
// bad ids and shapes.
#include <boost/test/unit_test.hpp>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

Tensor f32(const Shape& s, const std::vector<float>& v) { return tensor<float>(s, v); }
Tensor i32(const Shape& s, const std::vector<int32_t>& v) { return tensor<int32_t>(s, v); }
Tensor ids(std::vector<int32_t> v) { return Tensor::vector<int32_t>(v); }
Tensor num(int32_t n) { return Tensor::scalar<int32_t>(n); }

std::string segment_sum(const Tensor& data, const Tensor& segment_ids, const Tensor& num_segments) {
  return result("UnsortedSegmentSum", {data, segment_ids, num_segments},
                {{"Tindices", base_dtype(segment_ids.dtype())},
                 {"Tnumsegments", base_dtype(num_segments.dtype())}});
}

std::string stitch(std::vector<Tensor> indices, const std::vector<Tensor>& data) {
  const int n = static_cast<int>(indices.size());
  const DType t = base_dtype(data.at(0).dtype());
  std::vector<Tensor> in = std::move(indices);
  in.insert(in.end(), data.begin(), data.end());
  return result("DynamicStitch", std::move(in), {{"N", n}, {"T", t}});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(segment_ops)

BOOST_AUTO_TEST_CASE(unsorted_segment_sum_adds_rows_by_id) {
  Tensor data = i32({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 4, 3, 2, 1});
  BOOST_TEST(segment_sum(data, ids({0, 1, 0}), num(2)) == "int32[2,4] [[5,5,5,5],[5,6,7,8]]");
  BOOST_TEST(segment_sum(data, ids({0, 1, 0}), num(3)) ==
             "int32[3,4] [[5,5,5,5],[5,6,7,8],[0,0,0,0]]");
  // Negative ids are skipped, as TensorFlow's CPU kernel does.
  BOOST_TEST(segment_sum(data, ids({2, -1, 2}), num(3)) ==
             "int32[3,4] [[0,0,0,0],[0,0,0,0],[5,5,5,5]]");
  // segment_ids of rank 2 over a [2,2] data: every element is a row.
  BOOST_TEST(segment_sum(f32({2, 2}, {1, 2, 3, 4.5f}), i32({2, 2}, {0, 1, 1, 1}), num(2)) ==
             "float32[2] [1,9.5]");
  BOOST_TEST(segment_sum(tensor<double>({2}, {0.5, 0.25}), Tensor::vector<int64_t>({1, 1}),
                         Tensor::scalar<int64_t>(2)) == "float64[2] [0,0.75]");
  BOOST_TEST(segment_sum(tensor<int64_t>({1, 1}, {7}), Tensor::scalar<int32_t>(0), num(1)) ==
             "int64[1,1,1] [[[7]]]");
}

BOOST_AUTO_TEST_CASE(unsorted_segment_sum_of_empty_tensors) {
  BOOST_TEST(segment_sum(f32({0, 3}, {}), ids({}), num(2)) == "float32[2,3] [[0,0,0],[0,0,0]]");
  BOOST_TEST(segment_sum(f32({2, 0}, {}), ids({1, 0}), num(2)) == "float32[2,0] [[],[]]");
  BOOST_TEST(segment_sum(f32({2}, {1, 2}), ids({-1, -1}), num(0)) == "float32[0] []");
}

BOOST_AUTO_TEST_CASE(unsorted_segment_sum_errors) {
  Tensor data = f32({3}, {1, 2, 3});
  BOOST_TEST(segment_sum(data, ids({0, 2, 1}), num(2)) ==
             "error: invalid_argument: UnsortedSegmentSum segment_ids[1] = 2 is out of range [0, 2)");
  BOOST_TEST(segment_sum(f32({2, 2}, {1, 2, 3, 4}), i32({2, 2}, {0, 0, 0, 5}), num(2)) ==
             "error: invalid_argument: UnsortedSegmentSum segment_ids[1,1] = 5 is out of range [0, 2)");
  BOOST_TEST(segment_sum(data, ids({0, 1}), num(2)) ==
             "error: invalid_argument: UnsortedSegmentSum data.shape = [3] does not start with "
             "segment_ids.shape = [2]");
  BOOST_TEST(segment_sum(data, ids({0, 1, 0}), num(-1)) ==
             "error: invalid_argument: UnsortedSegmentSum num_segments = -1 must not be negative");
  BOOST_TEST(segment_sum(data, ids({0, 1, 0}), ids({2})) ==
             "error: invalid_argument: UnsortedSegmentSum num_segments must be a scalar, got shape [1]");
  BOOST_TEST(contains(segment_sum(tensor<bool>({1}, {true}), ids({0}), num(1)), "not one of"));
}

BOOST_AUTO_TEST_CASE(dynamic_stitch_merges_by_index) {
  // TensorFlow's documented example.
  BOOST_TEST(stitch({Tensor::scalar<int32_t>(6), ids({4, 1}), i32({2, 2}, {5, 2, 0, 3})},
                    {f32({2}, {61, 62}), f32({2, 2}, {41, 42, 11, 12}),
                     f32({2, 2, 2}, {51, 52, 21, 22, 1, 2, 31, 32})}) ==
             "float32[7,2] [[1,2],[11,12],[21,22],[31,32],[41,42],[51,52],[61,62]]");
  // The later of two equal indices wins; an index named by no one is zero.
  BOOST_TEST(stitch({ids({0, 1}), ids({1, 3})}, {i32({2}, {1, 2}), i32({2}, {3, 4})}) ==
             "int32[4] [1,3,0,4]");
  BOOST_TEST(stitch({ids({1}), ids({0})},
                    {Tensor::vector<std::string>({"b"}), Tensor::vector<std::string>({"a"})}) ==
             "string[2] [\"a\",\"b\"]");
  BOOST_TEST(stitch({ids({}), ids({})}, {f32({0, 2}, {}), f32({0, 2}, {})}) == "float32[0,2] []");
}

BOOST_AUTO_TEST_CASE(dynamic_stitch_errors) {
  BOOST_TEST(stitch({ids({0, -1})}, {f32({2}, {1, 2})}) ==
             "error: invalid_argument: DynamicStitch indices[0][1] = -1 is negative");
  BOOST_TEST(stitch({ids({0, 1})}, {f32({3}, {1, 2, 3})}) ==
             "error: invalid_argument: DynamicStitch data[0].shape = [3] does not start with "
             "indices[0].shape = [2]");
  BOOST_TEST(stitch({ids({0}), ids({1})}, {f32({1, 2}, {1, 2}), f32({1, 3}, {1, 2, 3})}) ==
             "error: invalid_argument: DynamicStitch data[1] is float32[1,3] with indices of shape "
             "[1], which does not match data[0], float32[1,2], past the indices' dimensions");
}

BOOST_AUTO_TEST_SUITE_END()
