#include <boost/test/unit_test.hpp>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

Tensor b(const Shape& s, const std::vector<bool>& v) { return tensor<bool>(s, v); }
Tensor f32(const Shape& s, const std::vector<float>& v) { return tensor<float>(s, v); }
Tensor i32(const Shape& s, const std::vector<int32_t>& v) { return tensor<int32_t>(s, v); }

AttrMap typed(DType t) { return {{"T", t}}; }

}  // namespace

BOOST_AUTO_TEST_SUITE(select_ops)

BOOST_AUTO_TEST_CASE(select_elementwise_in_every_dtype) {
  Tensor c = b({2, 2}, {true, false, false, true});
  BOOST_TEST(result("Select", {c, f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {-1, -2, -3, -4})},
                    typed(DType::float32)) == "float32[2,2] [[1,-2],[-3,4]]");
  BOOST_TEST(result("Select", {c, tensor<double>({2, 2}, {1, 2, 3, 4}), tensor<double>({2, 2}, {0, 0, 0, 0})},
                    typed(DType::float64)) == "float64[2,2] [[1,0],[0,4]]");
  BOOST_TEST(result("Select", {c, i32({2, 2}, {1, 2, 3, 4}), i32({2, 2}, {5, 6, 7, 8})},
                    typed(DType::int32)) == "int32[2,2] [[1,6],[7,4]]");
  BOOST_TEST(result("Select", {c, tensor<int64_t>({2, 2}, {1, 2, 3, 4}), tensor<int64_t>({2, 2}, {5, 6, 7, 8})},
                    typed(DType::int64)) == "int64[2,2] [[1,6],[7,4]]");
  BOOST_TEST(result("Select", {c, b({2, 2}, {true, true, true, true}), b({2, 2}, {false, false, false, false})},
                    typed(DType::boolean)) == "bool[2,2] [[true,false],[false,true]]");
}

BOOST_AUTO_TEST_CASE(select_picks_strings) {
  // A TF 2 saver picks its temporary file name with a string Select.
  auto s = [](const Shape& shape, const std::vector<std::string>& v) { return tensor<std::string>(shape, v); };
  Tensor t = s({3}, {"a", "bb", "ccc"});
  Tensor e = s({3}, {"x", "yy", "zzz"});
  BOOST_TEST(result("Select", {b({3}, {true, false, true}), t, e}, typed(DType::string)) ==
             "string[3] [\"a\",\"yy\",\"ccc\"]");
  BOOST_TEST(result("Select", {Tensor::scalar(false), t, e}, typed(DType::string)) ==
             "string[3] [\"x\",\"yy\",\"zzz\"]");
  BOOST_TEST(result("Select", {b({2}, {false, true}), s({2, 2}, {"a", "b", "c", "d"}), s({2, 2}, {"w", "x", "y", "z"})},
                    typed(DType::string)) == "string[2,2] [[\"w\",\"x\"],[\"c\",\"d\"]]");
  BOOST_TEST(result("SelectV2", {b({2, 1}, {true, false}), s({2}, {"p", "q"}), Tensor::scalar(std::string("-"))},
                    typed(DType::string)) == "string[2,2] [[\"p\",\"q\"],[\"-\",\"-\"]]");
  BOOST_TEST(contains(error_of("Select", {b({3}, {true, false, true}), t, i32({3}, {1, 2, 3})}, typed(DType::string)),
                      "Select expects string inputs"));
}

BOOST_AUTO_TEST_CASE(select_with_a_vector_condition_picks_rows) {
  Tensor t = i32({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor e = i32({3, 2}, {-1, -2, -3, -4, -5, -6});
  BOOST_TEST(result("Select", {b({3}, {false, true, false}), t, e}, typed(DType::int32)) ==
             "int32[3,2] [[-1,-2],[3,4],[-5,-6]]");
  BOOST_TEST(result("Select", {b({0}, {}), i32({0, 2}, {}), i32({0, 2}, {})}, typed(DType::int32)) ==
             "int32[0,2] []");
}

BOOST_AUTO_TEST_CASE(select_with_a_scalar_condition_picks_a_tensor) {
  Tensor t = i32({2}, {1, 2});
  Tensor e = i32({2}, {3, 4});
  Expected<Tensor> out = run_op1("Select", {Tensor::scalar(false), t, e}, typed(DType::int32));
  BOOST_REQUIRE(out.ok());
  BOOST_TEST(out->shares_buffer_with(e));
  BOOST_TEST(result("Select", {Tensor::scalar(true), t, e}, typed(DType::int32)) == "int32[2] [1,2]");
}

BOOST_AUTO_TEST_CASE(select_errors) {
  Tensor t = i32({2, 2}, {1, 2, 3, 4});
  BOOST_TEST(error_of("Select", {b({2}, {true, false}), t, i32({4}, {1, 2, 3, 4})}, typed(DType::int32)) ==
             "invalid_argument: Select: t and e must have the same shape, got [2,2] and [4]");
  BOOST_TEST(contains(error_of("Select", {b({3}, {true, false, true}), t, t}, typed(DType::int32)),
                      "condition is [3], t is [2,2]"));
  // Select does not broadcast a row condition.
  BOOST_TEST(contains(error_of("Select", {b({1, 2}, {true, false}), t, t}, typed(DType::int32)),
                      "condition is [1,2]"));
  BOOST_TEST(error_of("Select", {i32({2}, {1, 0}), i32({2}, {1, 2}), i32({2}, {1, 2})}, typed(DType::int32)) ==
             "invalid_argument: Select: condition must be bool, got int32");
  BOOST_TEST(error_of("Select", {b({2}, {true, false}), i32({2}, {1, 2}), f32({2}, {1, 2})}, typed(DType::int32)) ==
             "invalid_argument: Select expects int32 inputs, got int32 and float32");
}

BOOST_AUTO_TEST_CASE(select_v2_broadcasts_all_three) {
  // A column condition, a row t and a scalar e.
  Tensor c = b({2, 1}, {true, false});
  BOOST_TEST(result("SelectV2", {c, i32({3}, {1, 2, 3}), Tensor::scalar<int32_t>(0)}, typed(DType::int32)) ==
             "int32[2,3] [[1,2,3],[0,0,0]]");
  // A row condition (what Select refuses).
  BOOST_TEST(result("SelectV2", {b({2}, {true, false}), f32({2, 2}, {1, 2, 3, 4}), f32({2, 2}, {5, 6, 7, 8})},
                    typed(DType::float32)) == "float32[2,2] [[1,6],[3,8]]");
  // A scalar condition with broadcasting t and e.
  BOOST_TEST(result("SelectV2", {Tensor::scalar(false), i32({2, 1}, {1, 2}), i32({1, 2}, {7, 8})},
                    typed(DType::int32)) == "int32[2,2] [[7,8],[7,8]]");
  // 3-d.
  BOOST_TEST(result("SelectV2", {b({2, 1, 1}, {true, false}), i32({1, 2, 1}, {1, 2}), i32({1, 1, 2}, {8, 9})},
                    typed(DType::int32)) == "int32[2,2,2] [[[1,1],[2,2]],[[8,9],[8,9]]]");
  BOOST_TEST(result("SelectV2", {b({2}, {true, false}), i32({2}, {1, 2}), i32({2}, {3, 4})},
                    typed(DType::int32)) == "int32[2] [1,4]");
  BOOST_TEST(result("SelectV2", {b({0, 1}, {}), i32({3}, {1, 2, 3}), Tensor::scalar<int32_t>(0)},
                    typed(DType::int32)) == "int32[0,3] []");
}

BOOST_AUTO_TEST_CASE(select_v2_errors) {
  BOOST_TEST(error_of("SelectV2", {b({2}, {true, false}), i32({3}, {1, 2, 3}), Tensor::scalar<int32_t>(0)},
                      typed(DType::int32)) ==
             "invalid_argument: SelectV2: incompatible shapes for broadcasting: [2], [3] and []");
  BOOST_TEST(contains(error_of("SelectV2", {Tensor::scalar(1.0f), i32({1}, {1}), i32({1}, {1})}, typed(DType::int32)),
                      "condition must be bool, got float32"));
  BOOST_TEST(contains(error_of("SelectV2", {Tensor::scalar(true), i32({1}, {1}), i32({1}, {1})}, typed(DType::resource)),
                      "which is not one of"));
}

BOOST_AUTO_TEST_SUITE_END()
