// GatherNd and the legacy Gather (ops/array_gather_ops.cpp), and ScatterNd
// (ops/scatter_nd_op.cpp) — GatherNd's gradient — against TensorFlow's
// documented examples and naive reference loops: tuple depths, batched
// indices, every dtype the kernels move, repeated tuples adding up, and the
// errors naming the bad tuple and the shape it misses.
#include <boost/test/unit_test.hpp>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

Tensor i32(const Shape& s, const std::vector<int32_t>& v) { return tensor<int32_t>(s, v); }

std::string gather_nd(const Tensor& params, const Tensor& indices) {
  return result("GatherNd", {params, indices},
                {{"Tparams", base_dtype(params.dtype())}, {"Tindices", base_dtype(indices.dtype())}});
}

std::string scatter_nd(const Tensor& indices, const Tensor& updates, const Tensor& shape) {
  return result("ScatterNd", {indices, updates, shape},
                {{"T", base_dtype(updates.dtype())}, {"Tindices", base_dtype(indices.dtype())}});
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gather_scatter_nd)

BOOST_AUTO_TEST_CASE(gather_nd_follows_tensorflow_examples) {
  const Tensor p = tensor<std::string>({2, 2}, {"a", "b", "c", "d"});
  // Simple indexing, slice indexing, and batched versions of both.
  BOOST_TEST(gather_nd(p, i32({2, 2}, {0, 0, 1, 1})) == "string[2] [\"a\",\"d\"]");
  BOOST_TEST(gather_nd(p, i32({2, 1}, {1, 0})) == "string[2,2] [[\"c\",\"d\"],[\"a\",\"b\"]]");
  BOOST_TEST(gather_nd(p, i32({2, 1, 2}, {0, 0, 1, 1})) == "string[2,1] [[\"a\"],[\"d\"]]");
  BOOST_TEST(gather_nd(p, i32({2, 1, 1}, {1, 0})) ==
             "string[2,1,2] [[[\"c\",\"d\"]],[[\"a\",\"b\"]]]");
  // One tuple of rank 1 indices gives one element; depth 0 the whole params.
  BOOST_TEST(gather_nd(p, Tensor::vector<int64_t>({1, 0})) == "string[] \"c\"");
  BOOST_TEST(gather_nd(p, i32({1, 0}, {})) == "string[1,2,2] [[[\"a\",\"b\"],[\"c\",\"d\"]]]");
  BOOST_TEST(gather_nd(p, i32({0, 2}, {})) == "string[0] []");
}

BOOST_AUTO_TEST_CASE(gather_nd_matches_a_naive_loop) {
  // params [3,4,2] float; tuples of depth 2 pick rows of 2.
  std::vector<float> pv(24);
  for (size_t i = 0; i < pv.size(); ++i) pv[i] = 0.5f * static_cast<float>(i);
  const std::vector<int64_t> iv = {2, 3, 0, 0, 1, 2, 2, 3};
  Expected<Tensor> out =
      run_op1("GatherNd", {tensor<float>({3, 4, 2}, pv), tensor<int64_t>({4, 2}, iv)},
              {{"Tparams", DType::float32}, {"Tindices", DType::int64}});
  BOOST_TEST_REQUIRE(out.ok());
  BOOST_TEST(out->shape().to_string() == "[4,2]");
  for (int t = 0; t < 4; ++t)
    for (int j = 0; j < 2; ++j)
      BOOST_TEST(at(*out, t * 2 + j) == pv[static_cast<size_t>((iv[t * 2] * 4 + iv[t * 2 + 1]) * 2 + j)]);
  BOOST_TEST(gather_nd(tensor<bool>({3}, {true, false, true}), tensor<int16_t>({2, 1}, {1, 2})) ==
             "bool[2] [false,true]");
}

BOOST_AUTO_TEST_CASE(gather_nd_errors_name_the_tuple) {
  const Tensor p = i32({3, 4}, std::vector<int32_t>(12, 1));
  BOOST_TEST(gather_nd(p, i32({2, 2}, {0, 0, 5, 2})) ==
             "error: invalid_argument: GatherNd indices[1] = [5,2] does not index into "
             "params shape [3,4]");
  BOOST_TEST(gather_nd(p, i32({1, 2, 1}, {0, -1})) ==
             "error: invalid_argument: GatherNd indices[0,1] = [-1] does not index into "
             "params shape [3,4]");
  BOOST_TEST(gather_nd(p, Tensor::vector<int32_t>({0, 0, 0})) ==
             "error: invalid_argument: GatherNd indices has tuples of length 3, more than the "
             "rank 2 of params shape [3,4]");
  BOOST_TEST(gather_nd(p, Tensor::scalar<int32_t>(0)) ==
             "error: invalid_argument: GatherNd indices must have rank >= 1, got shape []");
  BOOST_TEST(gather_nd(Tensor::scalar<int32_t>(1), Tensor::vector<int32_t>({})) ==
             "error: invalid_argument: GatherNd params must be at least a vector, got shape []");
}

BOOST_AUTO_TEST_CASE(legacy_gather_takes_rows) {
  const Tensor p = i32({3, 2}, {1, 2, 3, 4, 5, 6});
  AttrMap a{{"Tparams", DType::int32}, {"Tindices", DType::int32}};
  BOOST_TEST(result("Gather", {p, i32({2, 2}, {2, 0, 1, 1})}, a) ==
             "int32[2,2,2] [[[5,6],[1,2]],[[3,4],[3,4]]]");
  BOOST_TEST(result("Gather", {p, Tensor::scalar<int32_t>(1)}, a) == "int32[2] [3,4]");
  a["validate_indices"] = false;  // accepted; indices are checked anyway
  BOOST_TEST(result("Gather", {p, i32({1}, {3})}, a) ==
             "error: invalid_argument: Gather indices[0] = 3 is not in [0, 3)");
  BOOST_TEST(result("Gather", {Tensor::scalar<int32_t>(1), i32({1}, {0})}, a) ==
             "error: invalid_argument: Gather params must be at least a vector");
}

BOOST_AUTO_TEST_CASE(scatter_nd_follows_tensorflow_examples) {
  // tf.scatter_nd's documented examples.
  BOOST_TEST(scatter_nd(i32({4, 1}, {4, 3, 1, 7}), i32({4}, {9, 10, 11, 12}),
                        Tensor::vector<int32_t>({8})) == "int32[8] [0,11,0,10,9,0,0,12]");
  std::vector<float> up(32);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 16; ++j) up[static_cast<size_t>(i * 16 + j)] = static_cast<float>(j % 4 + 5);
  Expected<Tensor> out = run_op1("ScatterNd",
                                 {i32({2, 1}, {0, 2}), tensor<float>({2, 4, 4}, up),
                                  Tensor::vector<int32_t>({4, 4, 4})},
                                 {{"T", DType::float32}, {"Tindices", DType::int32}});
  BOOST_TEST_REQUIRE(out.ok());
  for (int64_t i = 0; i < 64; ++i) {
    const int64_t slab = i / 16;
    BOOST_TEST(at(*out, i) == (slab == 0 || slab == 2 ? static_cast<double>(i % 4 + 5) : 0.0));
  }
}

BOOST_AUTO_TEST_CASE(scatter_nd_adds_repeated_tuples) {
  BOOST_TEST(scatter_nd(tensor<int64_t>({3, 2}, {0, 1, 1, 0, 0, 1}),
                        tensor<double>({3}, {1.5, 2, 0.25}),
                        Tensor::vector<int64_t>({2, 2})) == "float64[2,2] [[0,1.75],[2,0]]");
  // Integer sums wrap.
  BOOST_TEST(scatter_nd(i32({2, 1}, {0, 0}), i32({2}, {2147483647, 1}),
                        Tensor::vector<int32_t>({1})) == "int32[1] [-2147483648]");
  BOOST_TEST(scatter_nd(i32({0, 1}, {}), tensor<int64_t>({0, 2}, {}),
                        Tensor::vector<int32_t>({2, 2})) == "int64[2,2] [[0,0],[0,0]]");
}

BOOST_AUTO_TEST_CASE(scatter_nd_errors) {
  BOOST_TEST(scatter_nd(i32({2, 1}, {0, 8}), i32({2}, {1, 2}), Tensor::vector<int32_t>({8})) ==
             "error: invalid_argument: ScatterNd indices[1] = [8] does not index into shape [8]");
  BOOST_TEST(scatter_nd(i32({2, 1}, {0, 1}), i32({3}, {1, 2, 3}), Tensor::vector<int32_t>({8})) ==
             "error: invalid_argument: ScatterNd updates must have shape indices.shape[:-1] + "
             "shape[1:] = [2] (indices [2,1], shape [8]), got [3]");
  BOOST_TEST(contains(scatter_nd(i32({1, 1}, {0}), i32({1}, {1}), Tensor::vector<int32_t>({-1})),
                      "negative dimension"));
  BOOST_TEST(scatter_nd(i32({1, 1}, {0}), tensor<bool>({1}, {true}), Tensor::vector<int32_t>({1})) ==
             "error: unimplemented: ScatterNd has no kernel for dtype bool");
}

BOOST_AUTO_TEST_SUITE_END()
