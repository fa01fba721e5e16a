// TopKV2 and NearestNeighbors (ops/topk_ops.cpp) against naive reference
// selections: largest first with ties in index order, batched rows, both
// index dtypes, squared distances recomputed by a loop, k beyond the
// number of centers, and the errors.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <limits>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

std::vector<std::string> top_k(const Tensor& input, int32_t k, AttrMap attrs = {}) {
  Expected<std::vector<Tensor>> out = run_op("TopKV2", {input, Tensor::scalar<int32_t>(k)}, attrs);
  if (!out.ok()) return {"error: " + out.status().to_string()};
  return {(*out)[0].debug_string(), (*out)[1].debug_string()};
}

std::vector<std::string> nearest(const Tensor& points, const Tensor& centers, int64_t k) {
  Expected<std::vector<Tensor>> out =
      run_op("NearestNeighbors", {points, centers, Tensor::scalar<int64_t>(k)});
  if (!out.ok()) return {"error: " + out.status().to_string()};
  return {(*out)[0].debug_string(), (*out)[1].debug_string()};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(topk_ops)

BOOST_AUTO_TEST_CASE(top_k_takes_the_largest_first_ties_by_index) {
  auto r = top_k(Tensor::vector<float>({1, 5, 3, 5, -2}), 3);
  BOOST_TEST(r[0] == "float32[3] [5,5,3]");
  BOOST_TEST(r[1] == "int32[3] [1,3,2]");
  r = top_k(tensor<int32_t>({2, 3}, {4, 4, 4, 0, 9, 1}), 2, {{"index_type", DType::int64}});
  BOOST_TEST(r[0] == "int32[2,2] [[4,4],[9,1]]");
  BOOST_TEST(r[1] == "int64[2,2] [[0,1],[1,2]]");
  r = top_k(Tensor::vector<double>({2, 1}), 0);
  BOOST_TEST(r[0] == "float64[0] []");
  r = top_k(Tensor::vector<int64_t>({3, 7}), 2, {{"sorted", false}});
  BOOST_TEST(r[0] == "int64[2] [7,3]");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  r = top_k(Tensor::vector<float>({1, nan, 2}), 2);
  BOOST_TEST(r[0] == "float32[2] [nan,2]");
}

BOOST_AUTO_TEST_CASE(top_k_matches_a_stable_sort) {
  std::vector<int32_t> v;
  for (int i = 0; i < 60; ++i) v.push_back((i * 17) % 11);
  Expected<std::vector<Tensor>> out =
      run_op("TopKV2", {tensor<int32_t>({3, 20}, v), Tensor::scalar<int32_t>(7)});
  BOOST_TEST_REQUIRE(out.ok());
  for (int r = 0; r < 3; ++r) {
    std::vector<int> order(20);
    for (int i = 0; i < 20; ++i) order[static_cast<size_t>(i)] = i;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return v[static_cast<size_t>(r * 20 + a)] > v[static_cast<size_t>(r * 20 + b)];
    });
    for (int j = 0; j < 7; ++j) {
      BOOST_TEST((*out)[1].data<int32_t>()[r * 7 + j] == order[static_cast<size_t>(j)]);
      BOOST_TEST((*out)[0].data<int32_t>()[r * 7 + j] == v[static_cast<size_t>(r * 20 + order[static_cast<size_t>(j)])]);
    }
  }
}

BOOST_AUTO_TEST_CASE(top_k_errors) {
  BOOST_TEST(top_k(Tensor::vector<float>({1, 2}), 3)[0] ==
             "error: invalid_argument: TopKV2 input must have at least k = 3 entries in its last "
             "dimension, got shape [2]");
  BOOST_TEST(top_k(Tensor::vector<float>({1, 2}), -1)[0] ==
             "error: invalid_argument: TopKV2 k must be >= 0, got -1");
  BOOST_TEST(top_k(Tensor::scalar<float>(1), 0)[0] ==
             "error: invalid_argument: TopKV2 input must be at least a vector, got shape []");
  BOOST_TEST(contains(top_k(Tensor::vector<bool>({true}), 1)[0], "not one of"));
}

BOOST_AUTO_TEST_CASE(nearest_neighbors_matches_a_naive_search) {
  const std::vector<float> p = {0, 0, 1, 1, 5, -1, 2, 2};
  const std::vector<float> c = {1, 0, 0, 1, 4, -1};  // centers 0 and 1 tie for point 0
  auto out = run_op("NearestNeighbors", {tensor<float>({4, 2}, p), tensor<float>({3, 2}, c),
                                         Tensor::scalar<int64_t>(2)});
  BOOST_TEST_REQUIRE(out.ok());
  BOOST_TEST((*out)[0].shape().to_string() == "[4,2]");
  for (int i = 0; i < 4; ++i) {
    std::vector<std::pair<float, int>> d;
    for (int j = 0; j < 3; ++j) {
      const float dx = p[static_cast<size_t>(2 * i)] - c[static_cast<size_t>(2 * j)];
      const float dy = p[static_cast<size_t>(2 * i + 1)] - c[static_cast<size_t>(2 * j + 1)];
      d.push_back({dx * dx + dy * dy, j});
    }
    std::sort(d.begin(), d.end());
    for (int j = 0; j < 2; ++j) {
      BOOST_TEST((*out)[0].data<int64_t>()[i * 2 + j] == d[static_cast<size_t>(j)].second);
      BOOST_TEST((*out)[1].data<float>()[i * 2 + j] == d[static_cast<size_t>(j)].first,
                 boost::test_tools::tolerance(1e-5f));
    }
  }
}

BOOST_AUTO_TEST_CASE(nearest_neighbors_limits_k_and_checks_inputs) {
  auto r = nearest(tensor<float>({1, 1}, {3}), tensor<float>({2, 1}, {0, 4}), 5);
  BOOST_TEST(r[0] == "int64[1,2] [[1,0]]");
  BOOST_TEST(r[1] == "float32[1,2] [[1,9]]");
  r = nearest(tensor<float>({1, 1}, {3}), tensor<float>({2, 1}, {0, 4}), 0);
  BOOST_TEST(r[0] == "int64[1,0] [[]]");
  BOOST_TEST(nearest(tensor<float>({1, 2}, {0, 0}), tensor<float>({1, 3}, {0, 0, 0}), 1)[0] ==
             "error: invalid_argument: NearestNeighbors points and centers must have as many "
             "columns, got shapes [1,2] and [1,3]");
  BOOST_TEST(nearest(tensor<float>({0, 2}, {}), tensor<float>({1, 2}, {0, 0}), 1)[0] ==
             "error: invalid_argument: NearestNeighbors needs at least one point, got shape [0,2]");
  BOOST_TEST(nearest(Tensor::vector<float>({0}), tensor<float>({1, 1}, {0}), 1)[0] ==
             "error: invalid_argument: NearestNeighbors points must be a matrix, got shape [1]");
  BOOST_TEST(nearest(tensor<float>({1, 1}, {0}), tensor<float>({1, 1}, {0}), -1)[0] ==
             "error: invalid_argument: NearestNeighbors k must be >= 0, got -1");
}

BOOST_AUTO_TEST_SUITE_END()
