#include <boost/test/unit_test.hpp>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

// a = [[1,2,3],[4,5,6]], b = [[7,8],[9,10],[11,12]]; a b = [[58,64],[139,154]]
template <class T>
Tensor a() { return tensor<T>({2, 3}, {1, 2, 3, 4, 5, 6}); }
template <class T>
Tensor a_t() { return tensor<T>({3, 2}, {1, 4, 2, 5, 3, 6}); }
template <class T>
Tensor b() { return tensor<T>({3, 2}, {7, 8, 9, 10, 11, 12}); }
template <class T>
Tensor b_t() { return tensor<T>({2, 3}, {7, 9, 11, 8, 10, 12}); }

AttrMap transposed(bool ta, bool tb) { return {{"transpose_a", ta}, {"transpose_b", tb}}; }
AttrMap adjoint(bool x, bool y) { return {{"adj_x", x}, {"adj_y", y}}; }

Tensor i32(const Shape& s, const std::vector<int32_t>& v) { return tensor<int32_t>(s, v); }

}  // namespace

BOOST_AUTO_TEST_SUITE(matmul_ops)

BOOST_AUTO_TEST_CASE(matmul_in_every_real_dtype) {
  BOOST_TEST(result("MatMul", {a<float>(), b<float>()}) == "float32[2,2] [[58,64],[139,154]]");
  BOOST_TEST(result("MatMul", {a<double>(), b<double>()}) == "float64[2,2] [[58,64],[139,154]]");
  BOOST_TEST(result("MatMul", {a<int32_t>(), b<int32_t>()}) == "int32[2,2] [[58,64],[139,154]]");
  BOOST_TEST(result("MatMul", {a<int64_t>(), b<int64_t>()}) == "int64[2,2] [[58,64],[139,154]]");
  BOOST_TEST(result("MatMul", {b<float>(), a<float>()}) ==
             "float32[3,3] [[39,54,69],[49,68,87],[59,82,105]]");
}

BOOST_AUTO_TEST_CASE(matmul_transposes) {
  const std::string ab = "float32[2,2] [[58,64],[139,154]]";
  BOOST_TEST(result("MatMul", {a_t<float>(), b<float>()}, transposed(true, false)) == ab);
  BOOST_TEST(result("MatMul", {a<float>(), b_t<float>()}, transposed(false, true)) == ab);
  BOOST_TEST(result("MatMul", {a_t<float>(), b_t<float>()}, transposed(true, true)) == ab);
  BOOST_TEST(result("MatMul", {a<int64_t>(), a<int64_t>()}, transposed(false, true)) ==
             "int64[2,2] [[14,32],[32,77]]");
}

BOOST_AUTO_TEST_CASE(matmul_of_empty_matrices) {
  // An empty inner dimension gives zeros.
  BOOST_TEST(result("MatMul", {tensor<float>({2, 0}, {}), tensor<float>({0, 3}, {})}) ==
             "float32[2,3] [[0,0,0],[0,0,0]]");
  BOOST_TEST(result("MatMul", {tensor<float>({0, 3}, {}), b<float>()}) == "float32[0,2] []");
  BOOST_TEST(result("MatMul", {a<int32_t>(), i32({3, 0}, {})}) == "int32[2,0] [[],[]]");
}

BOOST_AUTO_TEST_CASE(integer_matmul_wraps) {
  BOOST_TEST(result("MatMul", {i32({1, 2}, {65536, 1}), i32({2, 1}, {65536, 5})}) == "int32[1,1] [[5]]");
}

BOOST_AUTO_TEST_CASE(matmul_errors) {
  BOOST_TEST(error_of("MatMul", {a<float>(), tensor<float>({2, 2}, {1, 2, 3, 4})}) ==
             "invalid_argument: MatMul: inner dimensions differ: a [2,3] (transpose_a=false) has 3, "
             "b [2,2] (transpose_b=false) has 2");
  BOOST_TEST(contains(error_of("MatMul", {a<float>(), b<float>()}, transposed(true, false)),
                      "a [2,3] (transpose_a=true) has 2, b [3,2] (transpose_b=false) has 3"));
  BOOST_TEST(error_of("MatMul", {tensor<float>({3}, {1, 2, 3}), b<float>()}) ==
             "invalid_argument: MatMul: a and b must be matrices, got shapes [3] and [3,2]");
  BOOST_TEST(error_of("MatMul", {a<float>(), b<double>()}) ==
             "invalid_argument: MatMul expects float32 inputs, got float32 and float64");
  BOOST_TEST(contains(error_of("MatMul", {tensor<bool>({1, 1}, {true}), tensor<bool>({1, 1}, {true})}),
                      "which is not one of"));
}

BOOST_AUTO_TEST_CASE(batch_matmul_over_equal_batches) {
  // batch 0: identity times [5,6]; batch 1: [[1,2],[3,4]] times [1,1].
  Tensor x = i32({2, 2, 2}, {1, 0, 0, 1, 1, 2, 3, 4});
  Tensor y = i32({2, 2, 1}, {5, 6, 1, 1});
  const std::string want = "int32[2,2,1] [[[5],[6]],[[3],[7]]]";
  BOOST_TEST(result("BatchMatMulV2", {x, y}) == want);
  BOOST_TEST(result("BatchMatMul", {x, y}) == want);
}

BOOST_AUTO_TEST_CASE(batch_matmul_v2_broadcasts_batch_dimensions) {
  // [2,1] batch of row vectors against a [3] batch of column vectors.
  Tensor rows = i32({2, 1, 1, 2}, {1, 2, 3, 4});
  Tensor cols = i32({3, 2, 1}, {1, 0, 0, 1, 1, 1});
  BOOST_TEST(result("BatchMatMulV2", {rows, cols}) ==
             "int32[2,3,1,1] [[[[1]],[[2]],[[3]]],[[[3]],[[4]],[[7]]]]");
  // A plain matrix against a batch.
  BOOST_TEST(result("BatchMatMulV2", {i32({1, 2}, {1, 2}), i32({2, 2, 1}, {5, 6, 1, 1})}) ==
             "int32[2,1,1] [[[17]],[[3]]]");
  BOOST_TEST(result("BatchMatMulV2", {tensor<double>({2, 1, 2}, {1, 2, 3, 4}), tensor<double>({2, 1}, {10, 1})}) ==
             "float64[2,1,1] [[[12]],[[34]]]");
  BOOST_TEST(result("BatchMatMulV2", {tensor<float>({0, 2, 2}, {}), tensor<float>({2, 2}, {1, 2, 3, 4})}) ==
             "float32[0,2,2] []");
}

BOOST_AUTO_TEST_CASE(batch_matmul_adjoints) {
  const std::string ab = "float32[1,2,2] [[[58,64],[139,154]]]";
  Tensor x = a<float>().reshaped(Shape{1, 2, 3}).value();
  Tensor xt = a_t<float>().reshaped(Shape{1, 3, 2}).value();
  Tensor y = b<float>().reshaped(Shape{1, 3, 2}).value();
  Tensor yt = b_t<float>().reshaped(Shape{1, 2, 3}).value();
  BOOST_TEST(result("BatchMatMulV2", {x, y}) == ab);
  BOOST_TEST(result("BatchMatMulV2", {xt, y}, adjoint(true, false)) == ab);
  BOOST_TEST(result("BatchMatMulV2", {x, yt}, adjoint(false, true)) == ab);
  BOOST_TEST(result("BatchMatMulV2", {xt, yt}, adjoint(true, true)) == ab);
}

BOOST_AUTO_TEST_CASE(batch_matmul_errors) {
  BOOST_TEST(error_of("BatchMatMulV2", {i32({2, 1, 1}, {1, 2}), i32({3, 1, 1}, {1, 2, 3})}) ==
             "invalid_argument: BatchMatMulV2: batch dimensions of x [2,1,1] and y [3,1,1]: "
             "incompatible shapes for broadcasting: [2] and [3]");
  BOOST_TEST(error_of("BatchMatMul", {i32({2, 1, 1}, {1, 2}), i32({1, 1, 1}, {1})}) ==
             "invalid_argument: BatchMatMul: batch dimensions differ: x [2,1,1], y [1,1,1]");
  BOOST_TEST(error_of("BatchMatMulV2", {i32({2, 2, 3}, std::vector<int32_t>(12)), i32({2, 2, 3}, std::vector<int32_t>(12))}) ==
             "invalid_argument: BatchMatMulV2: inner dimensions differ: x [2,2,3] (adj_x=false) has 3, "
             "y [2,2,3] (adj_y=false) has 2");
  BOOST_TEST(error_of("BatchMatMulV2", {i32({2}, {1, 2}), i32({2, 1}, {1, 2})}) ==
             "invalid_argument: BatchMatMulV2: x and y must have rank >= 2, got shapes [2] and [2,1]");
  BOOST_TEST(contains(error_of("BatchMatMulV2", {i32({1, 1}, {1}), tensor<int64_t>({1, 1}, {1})}),
                      "BatchMatMulV2 expects int32 inputs, got int32 and int64"));
}

BOOST_AUTO_TEST_SUITE_END()
