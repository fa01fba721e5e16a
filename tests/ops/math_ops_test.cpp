// The elementwise math ops: binary ops with broadcasting, comparisons,
// logical ops and unary functions.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cmath>
#include <limits>
#include <thread>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

Tensor f32(const Shape& s, const std::vector<float>& v) { return tensor<float>(s, v); }
Tensor i32(const Shape& s, const std::vector<int32_t>& v) { return tensor<int32_t>(s, v); }
Tensor i64(const Shape& s, const std::vector<int64_t>& v) { return tensor<int64_t>(s, v); }
Tensor b(const Shape& s, const std::vector<bool>& v) { return tensor<bool>(s, v); }

}  // namespace

BOOST_AUTO_TEST_SUITE(math_ops)

BOOST_AUTO_TEST_CASE(add_same_shape_in_every_real_dtype) {
  BOOST_TEST(result("Add", {f32({2}, {1.5f, 2}), f32({2}, {0.25f, -4})}) == "float32[2] [1.75,-2]");
  BOOST_TEST(result("Add", {tensor<double>({2}, {1.5, 2}), tensor<double>({2}, {0.5, 1000})}) ==
             "float64[2] [2,1002]");
  BOOST_TEST(result("Add", {i32({2, 2}, {1, 2, 3, 4}), i32({2, 2}, {10, 20, 30, 40})}) ==
             "int32[2,2] [[11,22],[33,44]]");
  BOOST_TEST(result("AddV2", {i64({2}, {int64_t{1} << 40, 1}), i64({2}, {1, -1})}) ==
             "int64[2] [1099511627777,0]");
  BOOST_TEST(result("Add", {Tensor::scalar(2.5f), Tensor::scalar(4.0f)}) == "float32[] 6.5");
}

BOOST_AUTO_TEST_CASE(sub_mul_realdiv) {
  Tensor x = f32({3}, {6, -3, 1});
  Tensor y = f32({3}, {4, 2, -8});
  BOOST_TEST(result("Sub", {x, y}) == "float32[3] [2,-5,9]");
  BOOST_TEST(result("Mul", {x, y}) == "float32[3] [24,-6,-8]");
  BOOST_TEST(result("RealDiv", {x, y}) == "float32[3] [1.5,-1.5,-0.125]");
  BOOST_TEST(result("RealDiv", {f32({2}, {1, -1}), f32({2}, {0, 0})}) == "float32[2] [inf,-inf]");
  // Integer RealDiv truncates toward zero.
  BOOST_TEST(result("RealDiv", {i32({3}, {7, -7, 6}), i32({3}, {2, 2, -3})}) == "int32[3] [3,-3,-2]");
  BOOST_TEST(result("Sub", {i64({1}, {5}), i64({1}, {7})}) == "int64[1] [-2]");
  BOOST_TEST(result("Mul", {i32({2}, {-3, 4}), Tensor::scalar<int32_t>(3)}) == "int32[2] [-9,12]");
}

BOOST_AUTO_TEST_CASE(broadcast_a_scalar_on_either_side) {
  Tensor m = f32({2, 2}, {1, 2, 3, 4});
  BOOST_TEST(result("Sub", {m, Tensor::scalar(1.0f)}) == "float32[2,2] [[0,1],[2,3]]");
  BOOST_TEST(result("Sub", {Tensor::scalar(1.0f), m}) == "float32[2,2] [[0,-1],[-2,-3]]");
  // A one-element tensor of higher rank is not a plain scalar: the result
  // takes its rank.
  BOOST_TEST(result("Add", {f32({1, 1}, {10}), f32({3}, {1, 2, 3})}) == "float32[1,3] [[11,12,13]]");
  BOOST_TEST(result("Add", {f32({3}, {1, 2, 3}), f32({1, 1}, {10})}) == "float32[1,3] [[11,12,13]]");
}

BOOST_AUTO_TEST_CASE(broadcast_rows_columns_and_3d) {
  Tensor m = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  BOOST_TEST(result("Add", {m, f32({3}, {10, 20, 30})}) == "float32[2,3] [[11,22,33],[14,25,36]]");
  BOOST_TEST(result("Add", {m, f32({1, 3}, {10, 20, 30})}) == "float32[2,3] [[11,22,33],[14,25,36]]");
  BOOST_TEST(result("Sub", {m, f32({2, 1}, {1, 2})}) == "float32[2,3] [[0,1,2],[2,3,4]]");
  BOOST_TEST(result("Sub", {f32({2, 1}, {1, 2}), m}) == "float32[2,3] [[0,-1,-2],[-2,-3,-4]]");
  // An outer product: a column against a row.
  BOOST_TEST(result("Mul", {i32({3, 1}, {1, 2, 3}), i32({1, 2}, {10, 100})}) ==
             "int32[3,2] [[10,100],[20,200],[30,300]]");
  // [2,1,3] + [4,1] -> [2,4,3]: both operands repeat, in different dims.
  Tensor a = i32({2, 1, 3}, {0, 1, 2, 3, 4, 5});
  Tensor c = i32({4, 1}, {0, 10, 20, 30});
  BOOST_TEST(result("Add", {a, c}) ==
             "int32[2,4,3] [[[0,1,2],[10,11,12],[20,21,22],[30,31,32]],"
             "[[3,4,5],[13,14,15],[23,24,25],[33,34,35]]]");
  BOOST_TEST(result("Sub", {c, a}) ==
             "int32[2,4,3] [[[0,-1,-2],[10,9,8],[20,19,18],[30,29,28]],"
             "[[-3,-4,-5],[7,6,5],[17,16,15],[27,26,25]]]");
  // The middle dimension repeats: [2,1,2] * [2,3,2].
  BOOST_TEST(result("Mul", {i64({2, 1, 2}, {1, 2, 3, 4}), i64({2, 3, 2}, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3})}) ==
             "int64[2,3,2] [[[1,2],[2,4],[3,6]],[[3,4],[6,8],[9,12]]]");
}

BOOST_AUTO_TEST_CASE(empty_tensors) {
  BOOST_TEST(result("Add", {f32({0, 3}, {}), f32({3}, {1, 2, 3})}) == "float32[0,3] []");
  BOOST_TEST(result("Add", {f32({2, 0}, {}), f32({2, 1}, {1, 2})}) == "float32[2,0] [[],[]]");
  BOOST_TEST(result("Mul", {f32({0}, {}), Tensor::scalar(2.0f)}) == "float32[0] []");
  BOOST_TEST(result("Mul", {Tensor::scalar(2.0f), f32({0}, {})}) == "float32[0] []");
  BOOST_TEST(result("Add", {f32({0}, {}), f32({0}, {})}) == "float32[0] []");
  BOOST_TEST(result("Less", {f32({0, 2}, {}), f32({1, 2}, {1, 2})}) == "bool[0,2] []");
  BOOST_TEST(contains(error_of("Add", {f32({0}, {}), f32({2}, {1, 2})}), "[0] and [2]"));
}

BOOST_AUTO_TEST_CASE(incompatible_shapes_name_both_shapes) {
  std::string e = error_of("Add", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({4}, {1, 2, 3, 4})});
  BOOST_TEST(e == "invalid_argument: Add: incompatible shapes for broadcasting: [2,3] and [4]");
  BOOST_TEST(contains(error_of("Less", {f32({2, 1}, {1, 2}), f32({3, 2}, {1, 2, 3, 4, 5, 6})}),
                      "[2,1] and [3,2]"));
}

BOOST_AUTO_TEST_CASE(dtype_errors) {
  // Inputs of two dtypes: the kernel checks what it is actually given.
  BOOST_TEST(error_of("Add", {f32({1}, {1}), i32({1}, {1})}) ==
             "invalid_argument: Add expects float32 inputs, got float32 and int32");
  // Both inputs differ from the attr T.
  BOOST_TEST(error_of("Mul", {i32({1}, {1}), i32({1}, {1})}, {{"T", DType::float64}}) ==
             "invalid_argument: Mul expects float64 inputs, got int32 and int32");
  // A T the op does not allow is caught by the registry.
  BOOST_TEST(contains(error_of("Add", {b({1}, {true}), b({1}, {true})}),
                      "attr 'T' of op Add is bool, which is not one of {float32, float64, half, bfloat16, int8, "));
  BOOST_TEST(contains(error_of("Sqrt", {i32({1}, {4})}),
                      "not one of {float32, float64, half, bfloat16, complex64, complex128}"));
  // Logical ops have no T: a float input reaches the kernel, which refuses it.
  BOOST_TEST(error_of("LogicalAnd", {f32({1}, {1}), f32({1}, {0})}) ==
             "invalid_argument: LogicalAnd expects bool inputs, got float32 and float32");
  BOOST_TEST(error_of("LogicalNot", {i32({1}, {1})}) ==
             "invalid_argument: LogicalNot expects bool inputs, got int32");
  BOOST_TEST(error_of("Neg", {f32({1}, {1})}, {{"T", DType::int64}}) ==
             "invalid_argument: Neg expects int64 inputs, got float32");
  BOOST_TEST(contains(error_of("Add", {f32({1}, {1}), Tensor()}), "got float32 and no tensor"));
}

BOOST_AUTO_TEST_CASE(reuses_a_unique_input_buffer) {
  const OpDef* def = OpRegistry::global().find("Add");
  BOOST_REQUIRE(def != nullptr);
  AttrMap attrs{{"T", DType::float32}};
  BOOST_REQUIRE(def->check_and_complete_attrs(attrs).ok());
  std::vector<DType> in{DType::float32, DType::float32}, out{DType::float32};
  std::string name = "add";
  auto kernel = def->make_kernel(KernelInit{name, attrs, in, out});
  BOOST_REQUIRE(kernel.ok());

  Tensor inputs[2] = {f32({2}, {1, 2}), f32({2}, {10, 20})};
  const void* x_buffer = inputs[0].raw_data();
  Tensor outputs[1];
  KernelContext ctx(inputs, 2, outputs, 1);
  BOOST_REQUIRE((*kernel)->compute(ctx).ok());
  BOOST_TEST(outputs[0].raw_data() == x_buffer);
  BOOST_TEST(outputs[0].values_string() == "[11,22]");

  // A shared input is never written: the result gets its own buffer.
  Tensor keep = f32({2}, {1, 2});
  Tensor shared[2] = {keep, keep};
  KernelContext ctx2(shared, 2, outputs, 1);
  BOOST_REQUIRE((*kernel)->compute(ctx2).ok());
  BOOST_TEST(!outputs[0].shares_buffer_with(keep));
  BOOST_TEST(outputs[0].values_string() == "[2,4]");
  BOOST_TEST(keep.values_string() == "[1,2]");

  // Scalars take the same route.
  Tensor scalars[2] = {Tensor::scalar(1.0f), Tensor::scalar(2.0f)};
  const void* y_buffer = scalars[1].raw_data();
  Tensor keep_x = scalars[0];
  KernelContext ctx3(scalars, 2, outputs, 1);
  BOOST_REQUIRE((*kernel)->compute(ctx3).ok());
  BOOST_TEST(outputs[0].raw_data() == y_buffer);
  BOOST_TEST(outputs[0].debug_string() == "float32[] 3");
}

BOOST_AUTO_TEST_CASE(integer_overflow_wraps) {
  const int32_t max = std::numeric_limits<int32_t>::max();
  const int32_t min = std::numeric_limits<int32_t>::min();
  BOOST_TEST(result("Add", {i32({1}, {max}), i32({1}, {1})}) == "int32[1] [-2147483648]");
  BOOST_TEST(result("Sub", {i32({1}, {min}), i32({1}, {1})}) == "int32[1] [2147483647]");
  BOOST_TEST(result("Mul", {i32({1}, {65536}), i32({1}, {65536})}) == "int32[1] [0]");
  BOOST_TEST(result("Neg", {i32({2}, {min, 5})}) == "int32[2] [-2147483648,-5]");
  BOOST_TEST(result("Abs", {i32({3}, {min, -5, 7})}) == "int32[3] [-2147483648,5,7]");
  BOOST_TEST(result("Square", {i64({1}, {int64_t{1} << 32})}) == "int64[1] [0]");
  BOOST_TEST(result("RealDiv", {i32({1}, {min}), i32({1}, {-1})}) == "int32[1] [-2147483648]");
  BOOST_TEST(result("FloorDiv", {i32({1}, {min}), i32({1}, {-1})}) == "int32[1] [-2147483648]");
  BOOST_TEST(result("FloorMod", {i32({1}, {min}), i32({1}, {-1})}) == "int32[1] [0]");
  BOOST_TEST(result("Pow", {i32({1}, {2}), i32({1}, {33})}) == "int32[1] [0]");
}

BOOST_AUTO_TEST_CASE(floor_div_and_floor_mod) {
  Tensor x = i32({4}, {7, -7, 7, -7});
  Tensor y = i32({4}, {2, 2, -2, -2});
  BOOST_TEST(result("FloorDiv", {x, y}) == "int32[4] [3,-4,-4,3]");
  BOOST_TEST(result("FloorMod", {x, y}) == "int32[4] [1,1,-1,-1]");
  BOOST_TEST(result("FloorDiv", {i64({3}, {6, -6, 0}), Tensor::scalar<int64_t>(-3)}) ==
             "int64[3] [-2,2,0]");
  BOOST_TEST(result("FloorMod", {i64({3}, {6, -6, 0}), Tensor::scalar<int64_t>(-4)}) ==
             "int64[3] [-2,-2,0]");
  Tensor fx = f32({4}, {7.5f, -7.5f, 7.5f, -7.5f});
  Tensor fy = f32({4}, {2, 2, -2, -2});
  BOOST_TEST(result("FloorDiv", {fx, fy}) == "float32[4] [3,-4,-4,3]");
  BOOST_TEST(result("FloorMod", {fx, fy}) == "float32[4] [1.5,0.5,-0.5,-1.5]");
  BOOST_TEST(result("FloorMod", {tensor<double>({1}, {-6.5}), tensor<double>({1}, {3})}) ==
             "float64[1] [2.5]");
}

BOOST_AUTO_TEST_CASE(integer_division_by_zero_is_an_error) {
  for (const char* op : {"FloorDiv", "FloorMod", "RealDiv"}) {
    BOOST_TEST(error_of(op, {i32({2}, {1, 2}), i32({2}, {1, 0})}) ==
                   "invalid_argument: " + std::string(op) + ": integer division by zero",
               op);
    BOOST_TEST(contains(error_of(op, {i64({2}, {1, 2}), Tensor::scalar<int64_t>(0)}),
                        "integer division by zero"));
  }
  // Float division by zero is IEEE arithmetic, not an error.
  BOOST_TEST(result("FloorDiv", {f32({1}, {1}), f32({1}, {0})}) == "float32[1] [inf]");
}

BOOST_AUTO_TEST_CASE(pow) {
  BOOST_TEST(result("Pow", {f32({3}, {2, 4, 9}), f32({3}, {3, 0.5f, -1})}) ==
             "float32[3] [8,2,0.111111112]");
  BOOST_TEST(result("Pow", {tensor<double>({2}, {2, 0}), Tensor::scalar(0.0)}) == "float64[2] [1,1]");
  BOOST_TEST(result("Pow", {i32({4}, {3, -2, 0, 5}), i32({4}, {4, 3, 0, 1})}) == "int32[4] [81,-8,1,5]");
  BOOST_TEST(result("Pow", {Tensor::scalar<int64_t>(2), i64({2}, {10, 62})}) ==
             "int64[2] [1024,4611686018427387904]");
  BOOST_TEST(error_of("Pow", {i32({2}, {2, 2}), i32({2}, {1, -1})}) ==
             "invalid_argument: Pow: integers to negative integer powers are not allowed");
}

BOOST_AUTO_TEST_CASE(maximum_and_minimum_propagate_nan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = f32({3}, {1, nan, 5});
  Tensor y = f32({3}, {2, 0, nan});
  BOOST_TEST(result("Maximum", {x, y}) == "float32[3] [2,nan,nan]");
  BOOST_TEST(result("Minimum", {x, y}) == "float32[3] [1,nan,nan]");
  BOOST_TEST(result("Maximum", {i32({2, 2}, {1, 5, -3, 0}), i32({2}, {2, 2})}) ==
             "int32[2,2] [[2,5],[2,2]]");
  BOOST_TEST(result("Minimum", {i64({3}, {1, 5, -3}), Tensor::scalar<int64_t>(0)}) ==
             "int64[3] [0,0,-3]");
}

BOOST_AUTO_TEST_CASE(comparisons) {
  Tensor x = f32({3}, {1, 2, 3});
  Tensor y = f32({3}, {2, 2, 2});
  BOOST_TEST(result("Less", {x, y}) == "bool[3] [true,false,false]");
  BOOST_TEST(result("LessEqual", {x, y}) == "bool[3] [true,true,false]");
  BOOST_TEST(result("Greater", {x, y}) == "bool[3] [false,false,true]");
  BOOST_TEST(result("GreaterEqual", {x, y}) == "bool[3] [false,true,true]");
  BOOST_TEST(result("Equal", {x, y}) == "bool[3] [false,true,false]");
  BOOST_TEST(result("NotEqual", {x, y}) == "bool[3] [true,false,true]");
  BOOST_TEST(result("Less", {i64({2, 1}, {1, 3}), i64({2}, {2, 3})}) ==
             "bool[2,2] [[true,true],[false,false]]");
  BOOST_TEST(result("Greater", {Tensor::scalar<int32_t>(2), i32({3}, {1, 2, 3})}) ==
             "bool[3] [true,false,false]");
  BOOST_TEST(result("Equal", {b({3}, {true, false, true}), Tensor::scalar(true)}) ==
             "bool[3] [true,false,true]");
  BOOST_TEST(result("NotEqual", {tensor<double>({2}, {0.5, std::nan("")}),
                                 tensor<double>({2}, {0.5, std::nan("")})}) ==
             "bool[2] [false,true]");
  BOOST_TEST(contains(error_of("Less", {b({1}, {true}), b({1}, {false})}), "which is not one of"));
}

BOOST_AUTO_TEST_CASE(equality_with_incompatible_shapes) {
  Tensor x = i32({2}, {1, 2});
  Tensor y = i32({3}, {1, 2, 3});
  BOOST_TEST(contains(error_of("Equal", {x, y}), "incompatible shapes for broadcasting: [2] and [3]"));
  AttrMap lenient{{"incompatible_shape_error", false}};
  BOOST_TEST(result("Equal", {x, y}, lenient) == "bool[] false");
  BOOST_TEST(result("NotEqual", {x, y}, lenient) == "bool[] true");
  BOOST_TEST(result("Equal", {x, i32({2}, {1, 0})}, lenient) == "bool[2] [true,false]");
}

BOOST_AUTO_TEST_CASE(logical_ops) {
  Tensor x = b({4}, {true, true, false, false});
  Tensor y = b({4}, {true, false, true, false});
  BOOST_TEST(result("LogicalAnd", {x, y}) == "bool[4] [true,false,false,false]");
  BOOST_TEST(result("LogicalOr", {x, y}) == "bool[4] [true,true,true,false]");
  BOOST_TEST(result("LogicalNot", {x}) == "bool[4] [false,false,true,true]");
  BOOST_TEST(result("LogicalAnd", {b({2, 1}, {true, false}), b({2}, {true, false})}) ==
             "bool[2,2] [[true,false],[false,false]]");
  BOOST_TEST(result("LogicalOr", {Tensor::scalar(false), Tensor::scalar(true)}) == "bool[] true");
  BOOST_TEST(result("LogicalNot", {b({0}, {})}) == "bool[0] []");
}

BOOST_AUTO_TEST_CASE(sign_and_square_ops) {
  BOOST_TEST(result("Neg", {f32({3}, {1, -2.5f, 0})}) == "float32[3] [-1,2.5,-0]");
  BOOST_TEST(result("Neg", {i64({2}, {3, -4})}) == "int64[2] [-3,4]");
  BOOST_TEST(result("Abs", {tensor<double>({2}, {-1.5, 2})}) == "float64[2] [1.5,2]");
  BOOST_TEST(result("Abs", {i32({3}, {-3, 0, 3})}) == "int32[3] [3,0,3]");
  BOOST_TEST(result("Square", {f32({2}, {-3, 0.5f})}) == "float32[2] [9,0.25]");
  BOOST_TEST(result("Square", {i32({2}, {-3, 4})}) == "int32[2] [9,16]");
  BOOST_TEST(result("Neg", {Tensor::scalar(7.0f)}) == "float32[] -7");
  BOOST_TEST(result("Abs", {f32({0, 2}, {})}) == "float32[0,2] []");
}

BOOST_AUTO_TEST_CASE(transcendental_ops) {
  auto check = [](const char* op, double in, double expected) {
    for (DType t : {DType::float32, DType::float64}) {
      Tensor x = t == DType::float32 ? f32({2}, {static_cast<float>(in), static_cast<float>(in)})
                                     : tensor<double>({2}, {in, in});
      Expected<Tensor> y = run_op1(op, {x});
      BOOST_REQUIRE_MESSAGE(y.ok(), op << ": " << y.status().to_string());
      BOOST_TEST(dtype_name(y->dtype()) == dtype_name(t));
      const double tol = t == DType::float32 ? 1e-6 : 1e-12;
      BOOST_TEST(std::abs(at(*y, 1) - expected) <= tol * std::max(1.0, std::abs(expected)),
                 op << "(" << in << ") = " << at(*y, 1) << ", expected " << expected);
    }
  };
  check("Sqrt", 2.25, 1.5);
  check("Rsqrt", 0.25, 2.0);
  check("Rsqrt", 2.0, 0.70710678118654752);
  check("Exp", 1.0, 2.71828182845904524);
  check("Exp", -2.0, 0.13533528323661270);
  check("Log", 10.0, 2.30258509299404568);
  check("Tanh", 0.5, 0.46211715726000974);
  check("Tanh", -3.0, -0.99505475368673045);
  check("Sin", 0.5, 0.47942553860420301);
  check("Sin", -2.0, -0.90929742682568170);
  check("Cos", 0.5, 0.87758256189037276);
  check("Cos", 3.0, -0.98999249660044546);
  check("Sigmoid", 0.0, 0.5);
  check("Sigmoid", 2.0, 0.88079707797788245);
  check("Sigmoid", -2.0, 0.11920292202211755);
  Expected<Tensor> root = run_op1("Sqrt", {f32({1}, {-1})});
  BOOST_REQUIRE(root.ok());
  BOOST_TEST(std::isnan(at(*root, 0)));
  BOOST_TEST(result("Log", {f32({1}, {0})}) == "float32[1] [-inf]");
  BOOST_TEST(result("Exp", {Tensor::scalar(0.0)}) == "float64[] 1");
}

BOOST_AUTO_TEST_CASE(unary_ops_reuse_their_input) {
  const OpDef* def = OpRegistry::global().find("Square");
  BOOST_REQUIRE(def != nullptr);
  AttrMap attrs{{"T", DType::int32}};
  std::vector<DType> types{DType::int32};
  std::string name = "sq";
  auto kernel = def->make_kernel(KernelInit{name, attrs, types, types});
  BOOST_REQUIRE(kernel.ok());
  Tensor inputs[1] = {i32({3}, {1, 2, 3})};
  const void* buffer = inputs[0].raw_data();
  Tensor outputs[1];
  KernelContext ctx(inputs, 1, outputs, 1);
  BOOST_REQUIRE((*kernel)->compute(ctx).ok());
  BOOST_TEST(outputs[0].raw_data() == buffer);
  BOOST_TEST(outputs[0].values_string() == "[1,4,9]");
}

BOOST_AUTO_TEST_CASE(one_kernel_computes_on_several_threads_at_once) {
  const OpDef* def = OpRegistry::global().find("Mul");
  BOOST_REQUIRE(def != nullptr);
  AttrMap attrs{{"T", DType::int64}};
  std::vector<DType> in{DType::int64, DType::int64}, out{DType::int64};
  std::string name = "mul";
  auto kernel = def->make_kernel(KernelInit{name, attrs, in, out});
  BOOST_REQUIRE(kernel.ok());
  const Tensor x = i64({2, 3}, {1, 2, 3, 4, 5, 6});
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        const int64_t k = t * 1000 + i;
        Tensor inputs[2] = {x, i64({3}, {k, 1, 0})};
        Tensor outputs[1];
        KernelContext ctx(inputs, 2, outputs, 1);
        if (!(*kernel)->compute(ctx).ok() ||
            !outputs[0].equals(i64({2, 3}, {k, 2, 0, 4 * k, 5, 0})))
          ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  BOOST_TEST(wrong.load() == 0);
  BOOST_TEST(x.values_string() == "[[1,2,3],[4,5,6]]");
}

BOOST_AUTO_TEST_CASE(squared_difference) {
  BOOST_TEST(result("SquaredDifference", {f32({2}, {1, 5}), f32({2}, {3, 2})}) == "float32[2] [4,9]");
  BOOST_TEST(result("SquaredDifference", {f32({2, 2}, {1, 2, 3, 4}), Tensor::scalar(2.5f)}) ==
             "float32[2,2] [[2.25,0.25],[0.25,2.25]]");
  BOOST_TEST(result("SquaredDifference", {i32({2, 1}, {1, -1}), i32({2}, {3, -4})}) ==
             "int32[2,2] [[4,25],[16,9]]");
  BOOST_TEST(result("SquaredDifference", {i64({1}, {-3}), i64({1}, {3})}) == "int64[1] [36]");
  BOOST_TEST(error_of("SquaredDifference", {f32({2}, {1, 2}), f32({3}, {1, 2, 3})}) ==
             "invalid_argument: SquaredDifference: incompatible shapes for broadcasting: [2] and [3]");
}

BOOST_AUTO_TEST_CASE(legacy_div_truncates_integers_and_broadcasts) {
  // Floats divide exactly; integers truncate toward zero (C++ division, as
  // TensorFlow's CPU kernel), unlike FloorDiv.
  BOOST_TEST(result("Div", {f32({3}, {6, -3, 1}), f32({3}, {4, 2, -8})}) ==
             "float32[3] [1.5,-1.5,-0.125]");
  BOOST_TEST(result("Div", {i32({4}, {7, -7, 7, -7}), i32({4}, {2, 2, -2, -2})}) ==
             "int32[4] [3,-3,-3,3]");
  BOOST_TEST(result("FloorDiv", {i32({4}, {7, -7, 7, -7}), i32({4}, {2, 2, -2, -2})}) ==
             "int32[4] [3,-4,-4,3]");
  BOOST_TEST(result("Div", {i64({2, 2}, {9, -9, 10, -10}), i64({2}, {4, -4})}) ==
             "int64[2,2] [[2,2],[2,2]]");
  BOOST_TEST(result("Div", {tensor<double>({2, 1}, {1, -2}), tensor<double>({3}, {1, 2, 4})}) ==
             "float64[2,3] [[1,0.5,0.25],[-2,-1,-0.5]]");
  const int32_t min = std::numeric_limits<int32_t>::min();
  BOOST_TEST(result("Div", {i32({1}, {min}), i32({1}, {-1})}) == "int32[1] [-2147483648]");
  BOOST_TEST(result("Div", {i32({2}, {1, 2}), i32({2}, {1, 0})}) ==
             "error: invalid_argument: Div: integer division by zero");
  BOOST_TEST(contains(error_of("Div", {b({1}, {true}), b({1}, {true})}), "not one of"));
}

BOOST_AUTO_TEST_SUITE_END()
