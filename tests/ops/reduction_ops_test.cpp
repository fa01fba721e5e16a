#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

Tensor f32(const Shape& s, const std::vector<float>& v) { return tensor<float>(s, v); }
Tensor i32(const Shape& s, const std::vector<int32_t>& v) { return tensor<int32_t>(s, v); }
Tensor axes(const std::vector<int32_t>& v) { return Tensor::vector<int32_t>(v); }

// [[1,2,3],[4,5,6]]
Tensor m23() { return f32({2, 3}, {1, 2, 3, 4, 5, 6}); }

std::string reduce(const std::string& op, const Tensor& x, const Tensor& axis, bool keep_dims = false) {
  AttrMap attrs{{"keep_dims", keep_dims}, {"Tidx", axis.dtype()}};
  return result(op, {x, axis}, attrs);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reduction_ops)

BOOST_AUTO_TEST_CASE(sum_over_rows_columns_and_everything) {
  BOOST_TEST(reduce("Sum", m23(), axes({0})) == "float32[3] [5,7,9]");
  BOOST_TEST(reduce("Sum", m23(), axes({1})) == "float32[2] [6,15]");
  BOOST_TEST(reduce("Sum", m23(), axes({0, 1})) == "float32[] 21");
  BOOST_TEST(reduce("Sum", m23(), axes({-1})) == "float32[2] [6,15]");
  BOOST_TEST(reduce("Sum", m23(), axes({1, -1, 1})) == "float32[2] [6,15]");  // repeats are fine
  BOOST_TEST(reduce("Sum", m23(), Tensor::scalar<int32_t>(0)) == "float32[3] [5,7,9]");
  BOOST_TEST(reduce("Sum", m23(), Tensor::vector<int64_t>({-2})) == "float32[3] [5,7,9]");
}

BOOST_AUTO_TEST_CASE(keep_dims) {
  BOOST_TEST(reduce("Sum", m23(), axes({0}), true) == "float32[1,3] [[5,7,9]]");
  BOOST_TEST(reduce("Sum", m23(), axes({1}), true) == "float32[2,1] [[6],[15]]");
  BOOST_TEST(reduce("Max", m23(), axes({0, 1}), true) == "float32[1,1] [[6]]");
}

BOOST_AUTO_TEST_CASE(an_empty_axis_list_is_the_identity) {
  Tensor x = m23();
  Expected<Tensor> y = run_op1("Sum", {x, axes({})});
  BOOST_REQUIRE(y.ok());
  BOOST_TEST(y->debug_string() == "float32[2,3] [[1,2,3],[4,5,6]]");
  BOOST_TEST(y->shares_buffer_with(x));
  BOOST_TEST(reduce("Mean", i32({2}, {3, 4}), axes({})) == "int32[2] [3,4]");
  BOOST_TEST(reduce("Prod", Tensor::scalar(2.5f), axes({})) == "float32[] 2.5");
  // Reducing only size-1 dimensions changes just the shape.
  BOOST_TEST(reduce("Mean", i32({1, 2}, {3, 4}), axes({0})) == "int32[2] [3,4]");
}

BOOST_AUTO_TEST_CASE(three_d_reductions_take_every_path) {
  // x[i][j][k] = 100 i + 10 j + k over [2,3,2]
  std::vector<int32_t> v;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) v.push_back(100 * i + 10 * j + k);
  Tensor x = i32({2, 3, 2}, v);
  BOOST_TEST(reduce("Sum", x, axes({0, 2})) == "int32[3] [202,242,282]");       // kept in the middle
  BOOST_TEST(reduce("Sum", x, axes({1})) == "int32[2,2] [[30,33],[330,333]]");  // reduced in the middle
  BOOST_TEST(reduce("Sum", x, axes({1}), true) == "int32[2,1,2] [[[30,33]],[[330,333]]]");
  BOOST_TEST(reduce("Sum", x, axes({1, 2})) == "int32[2] [63,663]");            // rows
  BOOST_TEST(reduce("Sum", x, axes({0, 1})) == "int32[2] [360,366]");           // columns
  BOOST_TEST(reduce("Max", x, axes({0, 2})) == "int32[3] [101,111,121]");
  BOOST_TEST(reduce("Min", x, axes({1})) == "int32[2,2] [[0,1],[100,101]]");
  BOOST_TEST(reduce("Mean", x, axes({0, 2})) == "int32[3] [50,60,70]");
  BOOST_TEST(reduce("Prod", x, axes({1})) == "int32[2,2] [[0,231],[1320000,1356531]]");
}

BOOST_AUTO_TEST_CASE(mean_prod_max_min) {
  BOOST_TEST(reduce("Mean", m23(), axes({1})) == "float32[2] [2,5]");
  BOOST_TEST(reduce("Mean", m23(), axes({0})) == "float32[3] [2.5,3.5,4.5]");
  BOOST_TEST(reduce("Mean", tensor<double>({3}, {1, 2, 2}), axes({0})) == "float64[] 1.66666667");
  // Integer means divide as integers.
  BOOST_TEST(reduce("Mean", i32({2, 2}, {1, 2, 4, 4}), axes({1})) == "int32[2] [1,4]");
  BOOST_TEST(reduce("Mean", tensor<int64_t>({2}, {-3, 0}), axes({0})) == "int64[] -1");
  BOOST_TEST(reduce("Prod", m23(), axes({1})) == "float32[2] [6,120]");
  BOOST_TEST(reduce("Prod", tensor<int64_t>({3}, {-2, 3, 4}), axes({0})) == "int64[] -24");
  BOOST_TEST(reduce("Max", m23(), axes({0})) == "float32[3] [4,5,6]");
  BOOST_TEST(reduce("Min", m23(), axes({1})) == "float32[2] [1,4]");
  BOOST_TEST(reduce("Max", tensor<double>({3}, {-1, -5, -0.5}), axes({0})) == "float64[] -0.5");
  BOOST_TEST(reduce("Min", tensor<int64_t>({3}, {7, -9, 3}), axes({0})) == "int64[] -9");
}

BOOST_AUTO_TEST_CASE(max_and_min_propagate_nan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = f32({2, 3}, {1, nan, 3, 4, 5, 6});
  BOOST_TEST(reduce("Max", x, axes({1})) == "float32[2] [nan,6]");
  BOOST_TEST(reduce("Min", x, axes({0})) == "float32[3] [1,nan,3]");
  BOOST_TEST(reduce("Max", x, axes({0, 1})) == "float32[] nan");
}

BOOST_AUTO_TEST_CASE(integer_sums_wrap) {
  const int32_t max = std::numeric_limits<int32_t>::max();
  BOOST_TEST(reduce("Sum", i32({2}, {max, 1}), axes({0})) == "int32[] -2147483648");
  BOOST_TEST(reduce("Prod", i32({2}, {65536, 65536}), axes({0})) == "int32[] 0");
}

BOOST_AUTO_TEST_CASE(reducing_nothing_gives_the_identity) {
  Tensor empty = f32({0, 3}, {});
  BOOST_TEST(reduce("Sum", empty, axes({0})) == "float32[3] [0,0,0]");
  BOOST_TEST(reduce("Prod", empty, axes({0})) == "float32[3] [1,1,1]");
  BOOST_TEST(reduce("Max", empty, axes({0})) == "float32[3] [-inf,-inf,-inf]");
  BOOST_TEST(reduce("Min", empty, axes({0})) == "float32[3] [inf,inf,inf]");
  BOOST_TEST(reduce("Mean", empty, axes({0})) == "float32[3] [nan,nan,nan]");
  BOOST_TEST(reduce("Sum", empty, axes({1})) == "float32[0] []");
  BOOST_TEST(reduce("Sum", empty, axes({0, 1})) == "float32[] 0");
  BOOST_TEST(reduce("Max", i32({0}, {}), axes({0})) == "int32[] -2147483648");
  BOOST_TEST(reduce("Min", tensor<int64_t>({0}, {}), axes({0})) == "int64[] 9223372036854775807");
  BOOST_TEST(reduce("Mean", i32({0}, {}), axes({0})) == "int32[] 0");
  BOOST_TEST(reduce("Sum", empty, axes({0}), true) == "float32[1,3] [[0,0,0]]");
}

BOOST_AUTO_TEST_CASE(axis_errors) {
  BOOST_TEST(error_of("Sum", {m23(), axes({2})}) ==
             "invalid_argument: Sum: axis 2 is out of range for an input of shape [2,3] (rank 2)");
  BOOST_TEST(contains(error_of("Mean", {m23(), axes({-3})}), "axis -3 is out of range"));
  BOOST_TEST(contains(error_of("Max", {Tensor::scalar(1.0f), axes({0})}), "axis 0 is out of range"));
  // The axis tensor is checked as given, whatever Tidx says.
  BOOST_TEST(error_of("Sum", {m23(), Tensor::vector<float>({0})}) ==
             "invalid_argument: Sum: reduction_indices must be int32 or int64, got float32");
  BOOST_TEST(contains(error_of("Sum", {m23(), tensor<int32_t>({1, 1}, {0})}),
                      "must be a scalar or a vector, got shape [1,1]"));
  BOOST_TEST(error_of("Sum", {i32({1}, {1}), axes({0})}, {{"T", DType::float32}}) ==
             "invalid_argument: Sum expects float32 inputs, got int32");
  BOOST_TEST(contains(error_of("Sum", {tensor<bool>({1}, {true}), axes({0})}), "which is not one of"));
}

BOOST_AUTO_TEST_CASE(arg_max_and_arg_min) {
  Tensor x = f32({2, 3}, {1, 9, 3, 7, 5, 7});
  BOOST_TEST(result("ArgMax", {x, Tensor::scalar<int32_t>(1)}) == "int64[2] [1,0]");  // ties: first
  BOOST_TEST(result("ArgMax", {x, Tensor::scalar<int32_t>(0)}) == "int64[3] [1,0,1]");
  BOOST_TEST(result("ArgMin", {x, Tensor::scalar<int32_t>(-1)}) == "int64[2] [0,1]");
  BOOST_TEST(result("ArgMax", {x, Tensor::scalar<int64_t>(1)},
                    {{"Tidx", DType::int64}, {"output_type", DType::int32}}) == "int32[2] [1,0]");
  BOOST_TEST(result("ArgMax", {tensor<int64_t>({4}, {-5, -2, -9, -2}), Tensor::scalar<int32_t>(0)}) ==
             "int64[] 1");
  BOOST_TEST(result("ArgMin", {tensor<double>({3}, {2, std::nan(""), 1}), Tensor::scalar<int32_t>(0)}) ==
             "int64[] 1");
  // [2,2,2]: along the middle axis.
  BOOST_TEST(result("ArgMax", {i32({2, 2, 2}, {1, 8, 5, 2, 0, 0, 3, -1}), Tensor::scalar<int32_t>(1)}) ==
             "int64[2,2] [[1,0],[1,0]]");
  BOOST_TEST(result("ArgMax", {f32({0, 3}, {}), Tensor::scalar<int32_t>(1)}) == "int64[0] []");
}

BOOST_AUTO_TEST_CASE(arg_max_errors) {
  BOOST_TEST(error_of("ArgMax", {f32({3, 0}, {}), Tensor::scalar<int32_t>(1)}) ==
             "invalid_argument: ArgMax: dimension 1 is empty in shape [3,0]");
  BOOST_TEST(error_of("ArgMax", {m23(), Tensor::scalar<int32_t>(2)}) ==
             "invalid_argument: ArgMax: dimension 2 is out of range for an input of shape [2,3]");
  BOOST_TEST(contains(error_of("ArgMin", {m23(), axes({1})}), "must be an int32 or int64 scalar, got int32[1]"));
  BOOST_TEST(contains(error_of("ArgMax", {m23(), Tensor::scalar<int32_t>(0)}, {{"output_type", DType::float32}}),
                      "attr 'output_type' of op ArgMax is float32"));
}

BOOST_AUTO_TEST_CASE(all_and_any) {
  Tensor x = tensor<bool>({2, 3}, {true, true, false, true, true, true});
  BOOST_TEST(result("All", {x, axes({1})}) == "bool[2] [false,true]");
  BOOST_TEST(result("Any", {x, axes({1})}) == "bool[2] [true,true]");
  BOOST_TEST(result("All", {x, axes({0})}) == "bool[3] [true,true,false]");
  BOOST_TEST(result("All", {x, axes({0, -1})}) == "bool[] false");
  BOOST_TEST(result("Any", {tensor<bool>({3}, {false, false, false}), Tensor::scalar<int32_t>(0)}) ==
             "bool[] false");
  BOOST_TEST(result("Any", {x, axes({1})}, {{"keep_dims", true}}) == "bool[2,1] [[true],[true]]");
  BOOST_TEST(result("All", {x, Tensor::vector<int64_t>({1})}, {{"Tidx", DType::int64}}) ==
             "bool[2] [false,true]");
  // [2,2,2] over axes 0 and 2: the strided path.
  Tensor y = tensor<bool>({2, 2, 2}, {true, true, false, true, true, true, true, true});
  BOOST_TEST(result("All", {y, axes({0, 2})}) == "bool[2] [true,false]");
  BOOST_TEST(result("Any", {tensor<bool>({2, 2, 2}, {false, false, false, true, false, false, false, false}),
                            axes({0, 2})}) == "bool[2] [false,true]");
  // Empty reductions give the identities.
  BOOST_TEST(result("All", {tensor<bool>({0, 2}, {}), axes({0})}) == "bool[2] [true,true]");
  BOOST_TEST(result("Any", {tensor<bool>({0, 2}, {}), axes({0})}) == "bool[2] [false,false]");
  BOOST_TEST(result("Any", {x, axes({})}) == x.debug_string());
  BOOST_TEST(error_of("All", {x, axes({2})}) ==
             "invalid_argument: All: axis 2 is out of range for an input of shape [2,3] (rank 2)");
  BOOST_TEST(error_of("Any", {f32({1}, {1}), axes({0})}) ==
             "invalid_argument: Any expects bool inputs, got float32");
}

BOOST_AUTO_TEST_SUITE_END()
