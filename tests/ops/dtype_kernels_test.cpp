// The dtypes of the elementwise and reduction kernels (ops/type_list.hpp):
// every dtype an op accepts has a kernel, and each kernel agrees with the
// same op computed in a wide type — int64 for integers, float64 for floats,
// complex128 for complex numbers — and cast back: exactly for integers
// (wrapping included, which the modular Cast reproduces), to the type's
// precision for floats (half and bfloat16 compute in float and round once
// per op, as TensorFlow's CPU kernels do).
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

Tensor cast(const Tensor& t, DType to) {
  if (t.dtype() == to) return t;
  Expected<Tensor> out = run_op1("Cast", {t}, {{"SrcT", t.dtype()}, {"DstT", to}});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  return *out;
}

DType wide(DType t) {
  if (dtype_is_integer(t)) return DType::int64;
  if (t == DType::complex64 || t == DType::complex128) return DType::complex128;
  return DType::float64;
}

// The relative error a result of dtype t may have after one rounding of
// each of a few operations.
double tolerance(DType t) {
  switch (t) {
    case DType::half: return 4e-3;
    case DType::bfloat16: return 3e-2;
    case DType::float32: case DType::complex64: return 1e-6;
    default: return 1e-12;
  }
}

// The allowed dtypes of op's attr T.
std::vector<DType> allowed(const std::string& op) {
  const AttrSpec* a = OpRegistry::global().find(op)->find_attr("T");
  BOOST_TEST_REQUIRE(a != nullptr);
  return a->allowed_types;
}

// Compares op computed in t with op computed in wide(t) and cast to t.
void check_agrees(const std::string& op, DType t, const std::vector<Tensor>& wide_inputs, AttrMap attrs = {},
                  int output = 0) {
  const DType w = wide(t);
  // The float64 inputs are the op's operands, the others (axes) stay.
  std::vector<Tensor> narrow, wide_in;
  for (const Tensor& in : wide_inputs) {
    const bool operand = in.dtype() == DType::float64;
    narrow.push_back(operand ? cast(in, t) : in);
    wide_in.push_back(operand ? cast(narrow.back(), w) : in);
  }
  AttrMap narrow_attrs = attrs, wide_attrs = attrs;
  narrow_attrs["T"] = t;
  wide_attrs["T"] = w;
  Expected<std::vector<Tensor>> got = run_op(op, narrow, narrow_attrs);
  BOOST_TEST_REQUIRE(got.ok(), op << " " << dtype_name(t) << ": " << got.status().to_string());
  Expected<std::vector<Tensor>> want = run_op(op, wide_in, wide_attrs);
  BOOST_TEST_REQUIRE(want.ok(), op << " " << dtype_name(w) << ": " << want.status().to_string());
  const Tensor& g = (*got)[output];
  const Tensor& e = (*want)[output];
  if (g.dtype() == DType::boolean) {
    BOOST_TEST(g.debug_string() == e.debug_string(), op << " " << dtype_name(t));
    return;
  }
  BOOST_TEST_REQUIRE((g.dtype() == t), op << ": output is " << dtype_name(g.dtype()));
  const Tensor g_wide = cast(g, w);
  const Tensor e_round = cast(cast(e, t), w);
  BOOST_TEST_REQUIRE(g_wide.num_elements() == e_round.num_elements());
  for (int64_t i = 0; i < g_wide.num_elements(); ++i) {
    if (w == DType::int64) {
      BOOST_TEST(g_wide.data<int64_t>()[i] == e_round.data<int64_t>()[i], op << " " << dtype_name(t) << " [" << i << "]");
    } else if (w == DType::complex128) {
      const auto a = g_wide.data<std::complex<double>>()[i], b = e.data<std::complex<double>>()[i];
      BOOST_TEST(std::abs(a - b) <= tolerance(t) * (1 + std::abs(b)), op << " " << dtype_name(t) << " [" << i << "]");
    } else {
      const double a = g_wide.data<double>()[i], b = e.data<double>()[i];
      BOOST_TEST(std::abs(a - b) <= tolerance(t) * (1 + std::abs(b)),
                 op << " " << dtype_name(t) << " [" << i << "]: " << a << " vs " << b);
    }
  }
}

const Tensor kX = Tensor::from_vector<double>(Shape{2, 3}, {1, 2, 3, 5, 7, 9});
const Tensor kY = Tensor::from_vector<double>(Shape{2, 3}, {2, 1, 3, 4, 2, 5});
const Tensor kRow = Tensor::from_vector<double>(Shape{3}, {3, 1, 2});

bool contains_dtype(const std::vector<DType>& v, DType t) { return std::find(v.begin(), v.end(), t) != v.end(); }

}  // namespace

BOOST_AUTO_TEST_SUITE(dtype_kernels)

BOOST_AUTO_TEST_CASE(add_takes_every_dtype_tensorflow_registers) {
  const std::vector<DType> a = allowed("AddV2");
  for (DType t : {DType::bfloat16, DType::half, DType::float32, DType::float64, DType::uint8, DType::int8,
                  DType::int16, DType::int32, DType::int64, DType::complex64, DType::complex128, DType::string})
    BOOST_TEST(contains_dtype(a, t), dtype_name(t));
}

BOOST_AUTO_TEST_CASE(binary_ops_agree_with_the_wide_type_in_every_dtype) {
  for (const char* op : {"Add", "AddV2", "Sub", "Mul", "RealDiv", "Div", "FloorDiv", "FloorMod", "Pow", "Maximum",
                         "Minimum", "SquaredDifference", "Less", "LessEqual", "Greater", "GreaterEqual", "Equal",
                         "NotEqual"}) {
    for (DType t : allowed(op)) {
      if (t == DType::string || t == DType::boolean) continue;
      check_agrees(op, t, {kX, kY});
      check_agrees(op, t, {kX, kRow});  // broadcast rows
    }
  }
}

BOOST_AUTO_TEST_CASE(unary_ops_agree_with_the_wide_type_in_every_dtype) {
  for (const char* op : {"Neg", "Abs", "Square", "Sign", "Reciprocal", "Sqrt", "Rsqrt", "Exp", "Log", "Sin", "Cos",
                         "Tanh", "Sigmoid", "Floor", "IsFinite", "Relu", "Relu6", "Elu", "Softsign"})
    for (DType t : allowed(op)) check_agrees(op, t, {op == std::string("Exp") ? kY : kX});
}

BOOST_AUTO_TEST_CASE(add_n_and_select_take_every_number) {
  const Tensor cond = Tensor::from_vector<bool>(Shape{2, 3}, {true, false, true, false, false, true});
  for (DType t : allowed("AddN")) {
    if (t == DType::variant) continue;
    check_agrees("AddN", t, {kX, kY, kX}, {{"N", int64_t{3}}});
  }
  for (const char* op : {"Select", "SelectV2"})
    for (DType t : allowed(op)) {
      if (t == DType::string || t == DType::boolean) continue;
      Expected<Tensor> got = run_op1(op, {cond, cast(kX, t), cast(kY, t)}, {{"T", t}});
      BOOST_TEST_REQUIRE(got.ok(), op << " " << dtype_name(t) << ": " << got.status().to_string());
      BOOST_TEST(cast(*got, DType::float64).debug_string() == "float64[2,3] [[1,1,3],[4,2,9]]", op << " " << dtype_name(t));
    }
}

BOOST_AUTO_TEST_CASE(reductions_agree_with_the_wide_type_in_every_dtype) {
  const Tensor axis0 = Tensor::scalar<int32_t>(0), both = Tensor::vector<int32_t>({0, 1});
  for (const char* op : {"Sum", "Mean", "Prod", "Max", "Min"}) {
    for (DType t : allowed(op)) {
      check_agrees(op, t, {kX, axis0});
      check_agrees(op, t, {kX, both});
    }
  }
  for (const char* op : {"ArgMax", "ArgMin"})
    for (DType t : allowed(op)) {
      Expected<Tensor> got = run_op1(op, {cast(kX, t), Tensor::scalar<int32_t>(1)}, {{"T", t}});
      BOOST_TEST_REQUIRE(got.ok(), got.status().to_string());
      BOOST_TEST(got->debug_string() == (op == std::string("ArgMax") ? "int64[2] [2,2]" : "int64[2] [0,0]"),
                 op << " " << dtype_name(t));
    }
}

BOOST_AUTO_TEST_CASE(half_and_bfloat16_are_16_bit_types_that_round) {
  // 2049 is not a half (11 significant bits): 2048 + 1 rounds to even, 2048.
  Expected<Tensor> sum = run_op1("AddV2", {cast(Tensor::scalar<double>(2048), DType::half),
                                           cast(Tensor::scalar<double>(1), DType::half)});
  BOOST_TEST_REQUIRE(sum.ok());
  BOOST_TEST(sum->byte_size() == 2u);
  BOOST_TEST(static_cast<float>(sum->scalar_value<Eigen::half>()) == 2048.0f);
  // 256 + 1 in bfloat16 (8 significant bits) is 256; a float32 Sum of 300
  // halves of 1 is 300, not the 256 a 16-bit accumulator would stall at.
  Expected<Tensor> bsum = run_op1("AddV2", {cast(Tensor::scalar<double>(256), DType::bfloat16),
                                            cast(Tensor::scalar<double>(1), DType::bfloat16)});
  BOOST_TEST(static_cast<float>(bsum->scalar_value<Eigen::bfloat16>()) == 256.0f);
  Expected<Tensor> total = run_op1("Sum", {cast(Tensor::from_vector<double>(Shape{300}, std::vector<double>(300, 1.0)),
                                                DType::bfloat16),
                                           Tensor::scalar<int32_t>(0)});
  BOOST_TEST_REQUIRE(total.ok());
  BOOST_TEST(static_cast<float>(total->scalar_value<Eigen::bfloat16>()) == 300.0f);
}

BOOST_AUTO_TEST_CASE(strings_add_by_concatenation_and_compare_with_broadcasting) {
  BOOST_TEST(result("Add", {Tensor::vector<std::string>({"a", "b"}), Tensor::string_scalar("!")}) ==
             "string[2] [\"a!\",\"b!\"]");
  BOOST_TEST(result("AddV2", {Tensor::from_vector<std::string>(Shape{2, 1}, {"x", "y"}),
                              Tensor::vector<std::string>({"1", "2"})}) ==
             "string[2,2] [[\"x1\",\"x2\"],[\"y1\",\"y2\"]]");
  BOOST_TEST(result("Equal", {Tensor::vector<std::string>({"yes", "no"}), Tensor::string_scalar("yes")}) ==
             "bool[2] [true,false]");
  BOOST_TEST(result("NotEqual", {Tensor::vector<std::string>({"yes", "no"}), Tensor::string_scalar("yes")}) ==
             "bool[2] [false,true]");
  BOOST_TEST(contains(error_of("Add", {Tensor::vector<std::string>({"a", "b"}), Tensor::vector<std::string>({"a", "b", "c"})}),
                      "incompatible shapes"));
  BOOST_TEST(result("Equal", {Tensor::vector<std::string>({"a", "b"}), Tensor::vector<std::string>({"a", "b", "c"})},
                    {{"incompatible_shape_error", false}}) == "bool[] false");
}

BOOST_AUTO_TEST_CASE(unsigned_and_narrow_integers_wrap_and_divide_as_cpp) {
  // uint8 3 - 5 wraps to 254; int8 100 + 100 to -56; int8 -128 / -1 wraps
  // to -128 instead of trapping.
  BOOST_TEST(result("Sub", {Tensor::scalar<uint8_t>(3), Tensor::scalar<uint8_t>(5)}) == "uint8[] 254");
  BOOST_TEST(result("AddV2", {Tensor::scalar<int8_t>(100), Tensor::scalar<int8_t>(100)}) == "int8[] -56");
  BOOST_TEST(result("Div", {Tensor::scalar<int8_t>(-128), Tensor::scalar<int8_t>(-1)}) == "int8[] -128");
  BOOST_TEST(result("FloorMod", {Tensor::scalar<uint16_t>(7), Tensor::scalar<uint16_t>(3)}) == "uint16[] 1");
  BOOST_TEST(contains(error_of("FloorDiv", {Tensor::scalar<uint32_t>(7), Tensor::scalar<uint32_t>(0)}),
                      "integer division by zero"));
}

BOOST_AUTO_TEST_CASE(narrow_integer_products_wrap_and_means_do_not) {
  // 16-bit products wrap in 16 bits (C++ would compute them in int, where
  // 65535 * 65535 overflows): 300 * 300 = 90000 = 24464 + 65536.
  BOOST_TEST(result("Mul", {Tensor::scalar<int16_t>(300), Tensor::scalar<int16_t>(300)}) == "int16[] 24464");
  BOOST_TEST(result("Mul", {Tensor::scalar<int16_t>(-1), Tensor::scalar<int16_t>(-1)}) == "int16[] 1");
  BOOST_TEST(result("Mul", {Tensor::scalar<uint16_t>(65535), Tensor::scalar<uint16_t>(65535)}) == "uint16[] 1");
  BOOST_TEST(result("Square", {Tensor::scalar<uint16_t>(65535)}) == "uint16[] 1");
  BOOST_TEST(result("Prod", {Tensor::vector<int16_t>({300, 300}), Tensor::scalar<int32_t>(0)}) == "int16[] 24464");
  // A Mean of integers sums in 64 bits, as TensorFlow's does.
  BOOST_TEST(result("Mean", {Tensor::vector<uint8_t>({200, 200}), Tensor::scalar<int32_t>(0)}) == "uint8[] 200");
  BOOST_TEST(result("Mean", {Tensor::vector<int32_t>({1 << 30, 1 << 30}), Tensor::scalar<int32_t>(0)}) ==
             "int32[] 1073741824");
  BOOST_TEST(result("Mean", {Tensor::vector<uint64_t>({uint64_t{1} << 63, 0}), Tensor::scalar<int32_t>(0)}) ==
             "uint64[] 4611686018427387904");
  BOOST_TEST(result("Mean", {Tensor::vector<int8_t>({-100, -100, 1}), Tensor::scalar<int32_t>(0)}) == "int8[] -66");
}

BOOST_AUTO_TEST_CASE(sizes_whose_bytes_overflow_are_refused_not_wrapped) {
  // 2^62 float32 elements: the count fits int64, the bytes do not.
  Expected<Tensor> r = run_op1("ResizeBilinear", {Tensor(DType::float32, Shape{1, 1, 1, 1 << 20}),
                                                  Tensor::vector<int32_t>({1 << 21, 1 << 21})});
  BOOST_TEST_REQUIRE(!r.ok());
}

BOOST_AUTO_TEST_SUITE_END()
