// Unique (ops/unique_op.cpp): first-occurrence order, idx such that
// x[i] == y[idx[i]] checked by a loop, both out_idx dtypes, strings and
// floats (0.0 == -0.0, NaN never equal), and the vector-only error.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

std::vector<std::string> unique(const Tensor& x, DType out_idx = DType::int32) {
  Expected<std::vector<Tensor>> out = run_op("Unique", {x}, {{"out_idx", out_idx}});
  if (!out.ok()) return {"error: " + out.status().to_string()};
  return {(*out)[0].debug_string(), (*out)[1].debug_string()};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(unique_op)

BOOST_AUTO_TEST_CASE(unique_keeps_first_occurrence_order) {
  // TensorFlow's documented example.
  auto r = unique(Tensor::vector<int32_t>({1, 1, 2, 4, 4, 4, 7, 8, 8}));
  BOOST_TEST(r[0] == "int32[5] [1,2,4,7,8]");
  BOOST_TEST(r[1] == "int32[9] [0,0,1,2,2,2,3,4,4]");
  r = unique(Tensor::vector<int64_t>({5, -3, 5, 9, -3}), DType::int64);
  BOOST_TEST(r[0] == "int64[3] [5,-3,9]");
  BOOST_TEST(r[1] == "int64[5] [0,1,0,2,1]");
  r = unique(Tensor::vector<std::string>({"b", "a", "b"}));
  BOOST_TEST(r[0] == "string[2] [\"b\",\"a\"]");
  BOOST_TEST(r[1] == "int32[3] [0,1,0]");
  r = unique(Tensor::vector<int32_t>({}));
  BOOST_TEST(r[0] == "int32[0] []");
  BOOST_TEST(r[1] == "int32[0] []");
}

BOOST_AUTO_TEST_CASE(unique_idx_reconstructs_x) {
  std::vector<int64_t> x;
  for (int i = 0; i < 200; ++i) x.push_back((i * 37) % 23 - 11);
  Expected<std::vector<Tensor>> out = run_op("Unique", {Tensor::vector<int64_t>(x)}, {{"out_idx", DType::int64}});
  BOOST_TEST_REQUIRE(out.ok());
  const int64_t* y = (*out)[0].data<int64_t>();
  const int64_t* idx = (*out)[1].data<int64_t>();
  BOOST_TEST((*out)[0].num_elements() == 23);
  for (size_t i = 0; i < x.size(); ++i) BOOST_TEST(y[idx[i]] == x[i]);
  for (int64_t j = 1; j < 23; ++j) {  // y in order of first occurrence
    size_t first_prev = 0, first_this = 0;
    while (x[first_prev] != y[j - 1]) ++first_prev;
    while (x[first_this] != y[j]) ++first_this;
    BOOST_TEST(first_prev < first_this);
  }
}

BOOST_AUTO_TEST_CASE(unique_compares_floats_with_equality) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto r = unique(Tensor::vector<float>({0.0f, -0.0f, nan, 1.5f, nan}));
  BOOST_TEST(r[0] == "float32[4] [0,nan,1.5,nan]");
  BOOST_TEST(r[1] == "int32[5] [0,0,1,2,3]");
}

BOOST_AUTO_TEST_CASE(unique_errors) {
  BOOST_TEST(unique(tensor<int32_t>({2, 2}, {1, 2, 3, 4}))[0] ==
             "error: invalid_argument: Unique expects a vector, got shape [2,2]");
  BOOST_TEST(contains(unique(Tensor::vector<int32_t>({1}), DType::float32)[0], "out_idx"));
}

BOOST_AUTO_TEST_SUITE_END()
