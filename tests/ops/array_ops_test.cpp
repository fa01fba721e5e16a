// Kernels of ops/array_ops.cpp against hand-computed values. Results are
// compared as debug strings ("int32[2,2] [[1,2],[3,4]]") so each case reads
// as input -> expected output; errors are checked by their message.
#include <boost/test/unit_test.hpp>

#include "ops/op_test_util.hpp"

using namespace tagflow::ops;
using tagflow::ops::testing::run_op;
using tagflow::ops::testing::run_op1;

namespace {

Tensor i32(std::vector<int32_t> v) { return Tensor::vector<int32_t>(v); }
Tensor i64(std::vector<int64_t> v) { return Tensor::vector<int64_t>(v); }
Tensor f32(std::vector<float> v) { return Tensor::vector<float>(v); }
Tensor strs(std::vector<std::string> v) { return Tensor::vector<std::string>(v); }
template <class T>
Tensor mat(const Shape& s, std::vector<T> v) { return Tensor::from_vector<T>(s, v); }
// 0, 1, ..., n-1 as int32 of the given shape.
Tensor iota(const Shape& s) {
  std::vector<int32_t> v(static_cast<size_t>(s.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>(i);
  return Tensor::from_vector<int32_t>(s, v);
}

// The single output as a debug string, or "error: <message>".
std::string run(const std::string& op, std::vector<Tensor> inputs, AttrMap attrs = {}) {
  Expected<Tensor> out = run_op1(op, std::move(inputs), std::move(attrs));
  if (!out.ok()) return "error: " + out.status().message();
  return out->debug_string();
}

// True if running the op fails with a message containing `text`.
bool fails_with(const std::string& op, std::vector<Tensor> inputs, const std::string& text,
                AttrMap attrs = {}) {
  Expected<std::vector<Tensor>> out = run_op(op, std::move(inputs), std::move(attrs));
  if (out.ok()) {
    BOOST_TEST_MESSAGE(op << " unexpectedly succeeded");
    return false;
  }
  if (out.status().message().find(text) == std::string::npos) {
    BOOST_TEST_MESSAGE(op << " failed with \"" << out.status().message() << "\", expected \""
                          << text << "\"");
    return false;
  }
  return true;
}

AttrList ints(std::vector<int64_t> v) {
  AttrList l;
  l.i = std::move(v);
  return l;
}

AttrList types(std::vector<DType> v) {
  AttrList l;
  l.type = std::move(v);
  return l;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(array_ops)

// --- Const, placeholders, identities ----------------------------------------

BOOST_AUTO_TEST_CASE(const_outputs_its_value_without_copying) {
  Tensor value = mat<float>(Shape{2}, {1.5f, -2});
  auto out = run_op1("Const", {}, {{"value", value}, {"dtype", DType::float32}});
  BOOST_REQUIRE(out.ok());
  BOOST_TEST(out->debug_string() == "float32[2] [1.5,-2]");
  BOOST_TEST(out->shares_buffer_with(value));
  BOOST_TEST(run("Const", {}, {{"value", Tensor::string_scalar("hi")}, {"dtype", DType::string}}) ==
             "string[] \"hi\"");
  BOOST_TEST(fails_with("Const", {}, "Const value is int32 but its dtype attr is float32",
                        {{"value", i32({1})}, {"dtype", DType::float32}}));
}

BOOST_AUTO_TEST_CASE(placeholder_must_be_fed) {
  auto out = run_op("Placeholder", {}, {{"dtype", DType::float32},
                                       {"shape", PartialShape{false, {2, -1}}}});
  BOOST_REQUIRE(!out.ok());
  BOOST_TEST((out.status().code() == Error::not_found));
  BOOST_TEST(out.status().message() ==
             "You must feed a value for placeholder tensor 'test_Placeholder' with dtype "
             "float32 and shape [2,?]");
  // The shape attr defaults to unknown rank.
  BOOST_TEST(fails_with("Placeholder", {}, "with dtype int32", {{"dtype", DType::int32}}));
}

BOOST_AUTO_TEST_CASE(placeholder_with_default_and_identities_forward_their_input) {
  Tensor x = i32({1, 2, 3});
  auto out = run_op1("PlaceholderWithDefault", {x},
                     {{"dtype", DType::int32}, {"shape", PartialShape{false, {3}}}});
  BOOST_REQUIRE(out.ok());
  BOOST_TEST(out->shares_buffer_with(x));
  BOOST_TEST(run("Identity", {strs({"a", "b"})}) == "string[2] [\"a\",\"b\"]");

  auto n = run_op("IdentityN", {i32({7}), Tensor::string_scalar("s")},
                  {{"T", types({DType::int32, DType::string})}});
  BOOST_REQUIRE(n.ok());
  BOOST_REQUIRE(n->size() == 2u);
  BOOST_TEST((*n)[0].debug_string() == "int32[1] [7]");
  BOOST_TEST((*n)[1].debug_string() == "string[] \"s\"");

  auto none = run_op("NoOp", {});
  BOOST_REQUIRE(none.ok());
  BOOST_TEST(none->empty());
}

BOOST_AUTO_TEST_CASE(stop_gradient_and_prevent_gradient_are_identities) {
  Tensor x = mat<float>(Shape{2}, {1.5f, -2});
  for (const char* op : {"StopGradient", "PreventGradient"}) {
    auto out = run_op1(op, {x});
    BOOST_REQUIRE(out.ok());
    BOOST_TEST(out->shares_buffer_with(x));
  }
  BOOST_TEST(run("StopGradient", {strs({"a"})}) == "string[1] [\"a\"]");
  BOOST_TEST(run("PreventGradient", {i32({})}, {{"message", "no second derivative"}}) == "int32[0] []");
  const OpDef* prevent = OpRegistry::global().find("PreventGradient");
  BOOST_REQUIRE(prevent != nullptr);
  BOOST_TEST(prevent->find_attr("message")->default_value->get<std::string>() == "");
}

// --- Reshape, ExpandDims, Squeeze -------------------------------------------

BOOST_AUTO_TEST_CASE(reshape_shares_the_buffer_and_infers_one_dimension) {
  Tensor x = iota(Shape{2, 3});
  auto out = run_op1("Reshape", {x, i32({3, 2})});
  BOOST_REQUIRE(out.ok());
  BOOST_TEST(out->debug_string() == "int32[3,2] [[0,1],[2,3],[4,5]]");
  BOOST_TEST(out->shares_buffer_with(x));
  BOOST_TEST(run("Reshape", {x, i64({-1, 2})}, {{"Tshape", DType::int64}}) ==
             "int32[3,2] [[0,1],[2,3],[4,5]]");
  BOOST_TEST(run("Reshape", {x, i32({-1})}) == "int32[6] [0,1,2,3,4,5]");
  BOOST_TEST(run("Reshape", {Tensor::vector<int32_t>({5}), i32({})}) == "int32[] 5");
  BOOST_TEST(run("Reshape", {strs({"a", "b", "c", "d"}), i32({2, 2})}) ==
             "string[2,2] [[\"a\",\"b\"],[\"c\",\"d\"]]");
  BOOST_TEST(run("Reshape", {Tensor(DType::float32, Shape{0, 3}), i32({-1, 3})}) ==
             "float32[0,3] []");
}

BOOST_AUTO_TEST_CASE(reshape_errors) {
  Tensor x = iota(Shape{2, 3});
  BOOST_TEST(fails_with("Reshape", {x, i32({-1, -1})}, "only one dimension may be -1"));
  BOOST_TEST(fails_with("Reshape", {x, i32({4})},
                        "Input to Reshape is a tensor with 6 values, but the requested shape "
                        "[4] has 4"));
  BOOST_TEST(fails_with("Reshape", {x, i32({-1, 4})}, "requires a multiple of 4"));
  BOOST_TEST(fails_with("Reshape", {x, i32({-2, -3})}, "negative dimension -2"));
  BOOST_TEST(fails_with("Reshape", {Tensor(DType::float32, Shape{0}), i32({-1, 0})},
                        "cannot infer the -1 dimension"));
  BOOST_TEST(fails_with("Reshape", {x, f32({6})}, "must be an integer tensor"));
}

BOOST_AUTO_TEST_CASE(expand_dims_and_squeeze) {
  Tensor x = iota(Shape{2});
  BOOST_TEST(run("ExpandDims", {x, Tensor::scalar<int32_t>(0)}) == "int32[1,2] [[0,1]]");
  BOOST_TEST(run("ExpandDims", {x, Tensor::scalar<int32_t>(-1)}) == "int32[2,1] [[0],[1]]");
  BOOST_TEST(run("ExpandDims", {x, Tensor::scalar<int64_t>(1)}) == "int32[2,1] [[0],[1]]");
  BOOST_TEST(fails_with("ExpandDims", {x, Tensor::scalar<int32_t>(2)},
                        "ExpandDims dim 2 is out of range for a tensor of rank 2"));

  Tensor y = iota(Shape{1, 2, 1});
  BOOST_TEST(run("Squeeze", {y}) == "int32[2] [0,1]");
  BOOST_TEST(run("Squeeze", {y}, {{"squeeze_dims", ints({-1})}}) == "int32[1,2] [[0,1]]");
  BOOST_TEST(fails_with("Squeeze", {y}, "Can not squeeze dim[1], expected a dimension of 1, got 2",
                        {{"squeeze_dims", ints({1})}}));
  BOOST_TEST(fails_with("Squeeze", {y}, "Squeeze dim 3 is out of range",
                        {{"squeeze_dims", ints({3})}}));
}

// --- Shape, Size, Rank --------------------------------------------------------

BOOST_AUTO_TEST_CASE(shape_size_and_rank) {
  Tensor x(DType::string, Shape{2, 0, 3});
  BOOST_TEST(run("Shape", {x}) == "int32[3] [2,0,3]");
  BOOST_TEST(run("Shape", {x}, {{"out_type", DType::int64}}) == "int64[3] [2,0,3]");
  BOOST_TEST(run("Shape", {Tensor::scalar(1.0f)}) == "int32[0] []");
  BOOST_TEST(run("Size", {iota(Shape{2, 3})}) == "int32[] 6");
  BOOST_TEST(run("Size", {iota(Shape{2, 3})}, {{"out_type", DType::int64}}) == "int64[] 6");
  BOOST_TEST(run("Rank", {x}) == "int32[] 3");
  BOOST_TEST(run("Rank", {Tensor::scalar(true)}) == "int32[] 0");
}

// --- Fill, ZerosLike, OnesLike ------------------------------------------------

BOOST_AUTO_TEST_CASE(fill_zeros_and_ones) {
  BOOST_TEST(run("Fill", {i32({2, 3}), Tensor::scalar(7.5f)}, {{"T", DType::float32}}) ==
             "float32[2,3] [[7.5,7.5,7.5],[7.5,7.5,7.5]]");
  BOOST_TEST(run("Fill", {i64({2}), Tensor::string_scalar("x")},
                 {{"T", DType::string}, {"index_type", DType::int64}}) ==
             "string[2] [\"x\",\"x\"]");
  BOOST_TEST(run("Fill", {i32({0}), Tensor::scalar<int32_t>(1)}) == "int32[0] []");
  BOOST_TEST(fails_with("Fill", {i32({2, -1}), Tensor::scalar(1.0f)}, "negative dimension",
                        {{"T", DType::float32}}));
  BOOST_TEST(fails_with("Fill", {i32({2}), f32({1, 2})}, "Fill value must be a scalar",
                        {{"T", DType::float32}}));

  BOOST_TEST(run("ZerosLike", {mat<double>(Shape{2}, {3, 4})}) == "float64[2] [0,0]");
  BOOST_TEST(run("ZerosLike", {mat<bool>(Shape{1}, {true})}) == "bool[1] [false]");
  BOOST_TEST(run("OnesLike", {iota(Shape{2, 1})}) == "int32[2,1] [[1],[1]]");
  BOOST_TEST(run("OnesLike", {mat<bool>(Shape{2}, {false, true})}) == "bool[2] [true,true]");
  BOOST_TEST(run("OnesLike", {Tensor(DType::half, Shape{2})}) == "half[2] [1,1]");
  BOOST_TEST(run("OnesLike", {Tensor(DType::complex64, Shape{1})}) == "complex64[1] [(1,0)]");
}

BOOST_AUTO_TEST_CASE(allocations_beyond_the_limit_are_errors) {
  auto out = run_op1("Fill", {i64({int64_t{1} << 20, int64_t{1} << 20}), Tensor::scalar(1.0f)},
                     {{"T", DType::float32}, {"index_type", DType::int64}});
  BOOST_REQUIRE(!out.ok());
  BOOST_TEST((out.status().code() == Error::resource_exhausted));
}

// --- Range --------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(range_counts_up_and_down) {
  auto s = [](auto v) { return Tensor::scalar(v); };
  BOOST_TEST(run("Range", {s(0), s(5), s(2)}) == "int32[3] [0,2,4]");
  BOOST_TEST(run("Range", {s(5), s(0), s(-2)}) == "int32[3] [5,3,1]");
  BOOST_TEST(run("Range", {s(int64_t{3}), s(int64_t{3}), s(int64_t{1})},
                 {{"Tidx", DType::int64}}) == "int64[0] []");
  BOOST_TEST(run("Range", {s(0.0f), s(1.0f), s(0.25f)}, {{"Tidx", DType::float32}}) ==
             "float32[4] [0,0.25,0.5,0.75]");
  BOOST_TEST(run("Range", {s(1.0), s(0.0), s(-0.4)}, {{"Tidx", DType::float64}}) ==
             "float64[3] [1,0.6,0.2]");
  BOOST_TEST(fails_with("Range", {s(0), s(5), s(0)}, "Range requires delta != 0"));
  BOOST_TEST(fails_with("Range", {s(5), s(1), s(1)},
                        "Range requires start <= limit when delta > 0: 5/1"));
  BOOST_TEST(fails_with("Range", {s(1), s(5), s(-1)},
                        "Range requires start >= limit when delta < 0: 1/5"));
  BOOST_TEST(fails_with("Range", {i32({0, 1}), s(5), s(1)}, "Range start must be a scalar"));
}

// --- Transpose ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(transpose_permutes_dimensions) {
  BOOST_TEST(run("Transpose", {iota(Shape{2, 3}), i32({1, 0})}) ==
             "int32[3,2] [[0,3],[1,4],[2,5]]");
  BOOST_TEST(run("Transpose", {iota(Shape{2, 2, 3}), i64({2, 0, 1})}, {{"Tperm", DType::int64}}) ==
             "int32[3,2,2] [[[0,3],[6,9]],[[1,4],[7,10]],[[2,5],[8,11]]]");
  BOOST_TEST(run("Transpose", {iota(Shape{2, 3}), i32({0, 1})}) ==
             "int32[2,3] [[0,1,2],[3,4,5]]");
  BOOST_TEST(run("Transpose", {mat<std::string>(Shape{2, 2}, {"a", "b", "c", "d"}), i32({1, 0})}) ==
             "string[2,2] [[\"a\",\"c\"],[\"b\",\"d\"]]");
  BOOST_TEST(run("Transpose", {Tensor(DType::float32, Shape{0, 2}), i32({1, 0})}) ==
             "float32[2,0] [[],[]]");
  BOOST_TEST(run("Transpose", {Tensor::scalar(3), i32({})}) == "int32[] 3");
}

BOOST_AUTO_TEST_CASE(transpose_rejects_bad_perms) {
  Tensor x = iota(Shape{2, 3});
  BOOST_TEST(fails_with("Transpose", {x, i32({0, 0})}, "Transpose perm [0,0]: 0 is duplicated"));
  BOOST_TEST(fails_with("Transpose", {x, i32({0, 2})},
                        "Transpose perm [0,2]: 2 is out of range [0, 2)"));
  BOOST_TEST(fails_with("Transpose", {x, i32({0, 1, 2})}, "has 3 entries for a tensor of shape [2,3]"));
  BOOST_TEST(fails_with("Transpose", {x, i32({-1, 0})}, "-1 is out of range"));
}

BOOST_AUTO_TEST_CASE(byte_moving_kernels_take_every_fixed_size_dtype) {
  Tensor h(DType::half, Shape{2, 2});
  for (int i = 0; i < 4; ++i) h.mutable_data<Eigen::half>()[i] = Eigen::half(static_cast<float>(i) + 0.5f);
  BOOST_TEST(run("Transpose", {h, i32({1, 0})}) == "half[2,2] [[0.5,2.5],[1.5,3.5]]");
  Tensor c = mat<std::complex<double>>(Shape{2}, {{1, 2}, {3, 4}});
  BOOST_TEST(run("Tile", {c, i32({2})}) == "complex128[4] [(1,2),(3,4),(1,2),(3,4)]");
  // Quantized types have no C++ element type here: bytes are moved as is.
  Tensor q(DType::qint8, Shape{3});
  auto* qb = static_cast<uint8_t*>(q.raw_mutable_data());
  qb[0] = 10, qb[1] = 20, qb[2] = 30;
  auto out = run_op1("StridedSlice", {q, i32({0}), i32({0}), i32({-1})},
                     {{"Index", DType::int32}, {"begin_mask", 1}, {"end_mask", 1}});
  BOOST_REQUIRE(out.ok());
  BOOST_TEST(dtype_name(out->dtype()) == "qint8");
  const auto* ob = static_cast<const uint8_t*>(out->raw_data());
  BOOST_TEST((ob[0] == 30 && ob[1] == 20 && ob[2] == 10));
}

// --- ConcatV2, Pack, Unpack --------------------------------------------------------

BOOST_AUTO_TEST_CASE(concat_along_any_axis) {
  Tensor a = iota(Shape{2, 2});
  Tensor b = mat<int32_t>(Shape{2, 1}, {8, 9});
  BOOST_TEST(run("ConcatV2", {a, b, Tensor::scalar(1)}, {{"N", 2}}) ==
             "int32[2,3] [[0,1,8],[2,3,9]]");
  BOOST_TEST(run("ConcatV2", {a, b, Tensor::scalar(int64_t{-1})},
                 {{"N", 2}, {"Tidx", DType::int64}}) == "int32[2,3] [[0,1,8],[2,3,9]]");
  BOOST_TEST(run("ConcatV2", {a, iota(Shape{1, 2}), a, Tensor::scalar(0)}, {{"N", 3}}) ==
             "int32[5,2] [[0,1],[2,3],[0,1],[0,1],[2,3]]");
  BOOST_TEST(run("ConcatV2", {strs({"a"}), strs({"b", "c"}), Tensor::scalar(0)}, {{"N", 2}}) ==
             "string[3] [\"a\",\"b\",\"c\"]");
  BOOST_TEST(run("ConcatV2", {Tensor(DType::int32, Shape{0, 2}), a, Tensor::scalar(0)},
                 {{"N", 2}}) == "int32[2,2] [[0,1],[2,3]]");
}

BOOST_AUTO_TEST_CASE(concat_errors) {
  Tensor a = iota(Shape{2, 2});
  BOOST_TEST(fails_with("ConcatV2", {a, iota(Shape{2, 1}), Tensor::scalar(0)},
                        "ConcatV2 input 1 is int32[2,1], which does not match input 0, "
                        "int32[2,2], outside axis 0",
                        {{"N", 2}}));
  BOOST_TEST(fails_with("ConcatV2", {a, a, Tensor::scalar(2)},
                        "ConcatV2 axis 2 is out of range for a tensor of rank 2 (must be in "
                        "[-2, 2))",
                        {{"N", 2}}));
  BOOST_TEST(fails_with("ConcatV2", {Tensor::scalar(1), Tensor::scalar(2), Tensor::scalar(0)},
                        "cannot concatenate scalars", {{"N", 2}}));
}

BOOST_AUTO_TEST_CASE(pack_and_unpack) {
  Tensor a = i32({1, 2});
  Tensor b = i32({3, 4});
  BOOST_TEST(run("Pack", {a, b}, {{"N", 2}}) == "int32[2,2] [[1,2],[3,4]]");
  BOOST_TEST(run("Pack", {a, b}, {{"N", 2}, {"axis", 1}}) == "int32[2,2] [[1,3],[2,4]]");
  BOOST_TEST(run("Pack", {a, b}, {{"N", 2}, {"axis", -1}}) == "int32[2,2] [[1,3],[2,4]]");
  BOOST_TEST(run("Pack", {Tensor::scalar(1), Tensor::scalar(2), Tensor::scalar(3)}, {{"N", 3}}) ==
             "int32[3] [1,2,3]");
  BOOST_TEST(run("Pack", {Tensor::string_scalar("x"), Tensor::string_scalar("y")}, {{"N", 2}}) ==
             "string[2] [\"x\",\"y\"]");
  BOOST_TEST(fails_with("Pack", {a, i32({1})}, "Pack input 1 is int32[1]", {{"N", 2}}));
  BOOST_TEST(fails_with("Pack", {a, b}, "Pack axis 2 is out of range", {{"N", 2}, {"axis", 2}}));

  auto rows = run_op("Unpack", {iota(Shape{2, 3})}, {{"num", 2}});
  BOOST_REQUIRE(rows.ok());
  BOOST_REQUIRE(rows->size() == 2u);
  BOOST_TEST((*rows)[1].debug_string() == "int32[3] [3,4,5]");
  auto cols = run_op("Unpack", {iota(Shape{2, 3})}, {{"num", 3}, {"axis", -1}});
  BOOST_REQUIRE(cols.ok());
  BOOST_REQUIRE(cols->size() == 3u);
  BOOST_TEST((*cols)[0].debug_string() == "int32[2] [0,3]");
  BOOST_TEST((*cols)[2].debug_string() == "int32[2] [2,5]");
  BOOST_TEST(fails_with("Unpack", {iota(Shape{2, 3})}, "gives 2 tensors, but num is 3",
                        {{"num", 3}}));
}

// --- Slice --------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(slice_with_sizes_and_minus_one) {
  Tensor x = iota(Shape{3, 4});
  BOOST_TEST(run("Slice", {x, i32({1, 1}), i32({2, 2})}, {{"Index", DType::int32}}) ==
             "int32[2,2] [[5,6],[9,10]]");
  BOOST_TEST(run("Slice", {x, i64({1, 2}), i64({-1, -1})}, {{"Index", DType::int64}}) ==
             "int32[2,2] [[6,7],[10,11]]");
  BOOST_TEST(run("Slice", {x, i32({3, 0}), i32({0, 4})}, {{"Index", DType::int32}}) ==
             "int32[0,4] []");
  BOOST_TEST(run("Slice", {strs({"a", "b", "c"}), i32({1}), i32({2})}, {{"Index", DType::int32}}) ==
             "string[2] [\"b\",\"c\"]");
  BOOST_TEST(fails_with("Slice", {x, i32({1, 3}), i32({1, 2})},
                        "size[1] = 2 is not in [0, 1]", {{"Index", DType::int32}}));
  BOOST_TEST(fails_with("Slice", {x, i32({-1, 0}), i32({1, 1})},
                        "begin[0] = -1 is not in [0, 3]", {{"Index", DType::int32}}));
  BOOST_TEST(fails_with("Slice", {x, i32({0}), i32({1})}, "one entry per dimension",
                        {{"Index", DType::int32}}));
}

// --- StridedSlice ------------------------------------------------------------------

namespace {

// StridedSlice(x, begin, end, strides) with int32 indices and masks.
std::string strided(const Tensor& x, std::vector<int32_t> b, std::vector<int32_t> e,
                    std::vector<int32_t> s, AttrMap masks = {}) {
  masks["Index"] = DType::int32;
  return run("StridedSlice", {x, i32(b), i32(e), i32(s)}, std::move(masks));
}

}  // namespace

BOOST_AUTO_TEST_CASE(strided_slice_ranges_and_strides) {
  Tensor x = iota(Shape{3, 4});  // [[0,1,2,3],[4,5,6,7],[8,9,10,11]]
  BOOST_TEST(strided(x, {0, 1}, {2, 3}, {1, 1}) == "int32[2,2] [[1,2],[5,6]]");
  BOOST_TEST(strided(x, {0, 0}, {3, 4}, {2, 3}) == "int32[2,2] [[0,3],[8,11]]");
  // Out-of-range ends are clamped; negative indices count from the end.
  BOOST_TEST(strided(x, {-2, 1}, {100, -1}, {1, 1}) == "int32[2,2] [[5,6],[9,10]]");
  // Only the first dimension given: the rest is kept whole.
  BOOST_TEST(strided(x, {1}, {2}, {1}) == "int32[1,4] [[4,5,6,7]]");
  // Empty results.
  BOOST_TEST(strided(x, {2}, {2}, {1}) == "int32[0,4] []");
  BOOST_TEST(strided(x, {2}, {0}, {1}) == "int32[0,4] []");
}

BOOST_AUTO_TEST_CASE(strided_slice_negative_strides) {
  Tensor v = iota(Shape{6});
  BOOST_TEST(strided(v, {4}, {0}, {-1}) == "int32[4] [4,3,2,1]");
  BOOST_TEST(strided(v, {-1}, {-7}, {-2}) == "int32[3] [5,3,1]");
  BOOST_TEST(strided(v, {0}, {4}, {-1}) == "int32[0] []");
  BOOST_TEST(strided(iota(Shape{2, 3}), {1, 2}, {-3, -4}, {-1, -2}) ==
             "int32[2,2] [[5,3],[2,0]]");
  BOOST_TEST(strided(strs({"a", "b", "c"}), {0}, {0}, {-1}, {{"begin_mask", 1}, {"end_mask", 1}}) ==
             "string[3] [\"c\",\"b\",\"a\"]");
}

BOOST_AUTO_TEST_CASE(strided_slice_begin_and_end_masks) {
  Tensor v = iota(Shape{6});
  BOOST_TEST(strided(v, {3}, {5}, {1}, {{"begin_mask", 1}}) == "int32[5] [0,1,2,3,4]");
  BOOST_TEST(strided(v, {2}, {0}, {1}, {{"end_mask", 1}}) == "int32[4] [2,3,4,5]");
  BOOST_TEST(strided(v, {9}, {9}, {-1}, {{"begin_mask", 1}, {"end_mask", 1}}) ==
             "int32[6] [5,4,3,2,1,0]");
  BOOST_TEST(strided(v, {0}, {1}, {-2}, {{"begin_mask", 1}}) == "int32[2] [5,3]");
  BOOST_TEST(strided(v, {3}, {0}, {-1}, {{"end_mask", 1}}) == "int32[4] [3,2,1,0]");
  // x[:, 1:]: the mask bit only applies to its own dimension.
  BOOST_TEST(strided(iota(Shape{2, 3}), {0, 1}, {0, 3}, {1, 1}, {{"begin_mask", 1}, {"end_mask", 1}}) ==
             "int32[2,2] [[1,2],[4,5]]");
}

BOOST_AUTO_TEST_CASE(strided_slice_ellipsis_mask) {
  Tensor x = iota(Shape{2, 2, 3});
  // x[..., 1:2]
  BOOST_TEST(strided(x, {0, 1}, {0, 2}, {1, 1}, {{"ellipsis_mask", 1}}) ==
             "int32[2,2,1] [[[1],[4]],[[7],[10]]]");
  // x[..., 1]
  BOOST_TEST(strided(x, {0, 1}, {0, 2}, {1, 1}, {{"ellipsis_mask", 1}, {"shrink_axis_mask", 2}}) ==
             "int32[2,2] [[1,4],[7,10]]");
  // x[1, ...]
  BOOST_TEST(strided(x, {1, 0}, {2, 0}, {1, 1}, {{"ellipsis_mask", 2}, {"shrink_axis_mask", 1}}) ==
             "int32[2,3] [[6,7,8],[9,10,11]]");
  // x[...] is everything.
  BOOST_TEST(strided(x, {0}, {0}, {1}, {{"ellipsis_mask", 1}}) ==
             "int32[2,2,3] [[[0,1,2],[3,4,5]],[[6,7,8],[9,10,11]]]");
  BOOST_TEST(fails_with("StridedSlice", {x, i32({0, 0}), i32({0, 0}), i32({1, 1})},
                        "multiple ellipses", {{"Index", DType::int32}, {"ellipsis_mask", 3}}));
}

BOOST_AUTO_TEST_CASE(strided_slice_new_axis_mask) {
  Tensor x = iota(Shape{2, 3});
  // x[newaxis, 0:1]
  BOOST_TEST(strided(x, {0, 0}, {0, 1}, {1, 1}, {{"new_axis_mask", 1}}) ==
             "int32[1,1,3] [[[0,1,2]]]");
  // x[..., newaxis]
  BOOST_TEST(strided(x, {0, 0}, {0, 0}, {1, 1}, {{"ellipsis_mask", 1}, {"new_axis_mask", 2}}) ==
             "int32[2,3,1] [[[0],[1],[2]],[[3],[4],[5]]]");
  // x[:, newaxis, 2]
  BOOST_TEST(strided(x, {0, 0, 2}, {0, 0, 3}, {1, 1, 1},
                     {{"begin_mask", 1}, {"end_mask", 1}, {"new_axis_mask", 2},
                      {"shrink_axis_mask", 4}}) == "int32[2,1] [[2],[5]]");
}

BOOST_AUTO_TEST_CASE(strided_slice_shrink_axis_mask) {
  Tensor x = iota(Shape{3, 4});
  BOOST_TEST(strided(x, {1}, {2}, {1}, {{"shrink_axis_mask", 1}}) == "int32[4] [4,5,6,7]");
  BOOST_TEST(strided(x, {-1, 2}, {0, 3}, {1, 1}, {{"shrink_axis_mask", 3}}) == "int32[] 10");
  // The end is ignored for a shrunk dimension.
  BOOST_TEST(strided(x, {0, -1}, {0, 0}, {1, 1}, {{"begin_mask", 1}, {"end_mask", 1},
                                                   {"shrink_axis_mask", 2}}) ==
             "int32[3] [3,7,11]");
  BOOST_TEST(fails_with("StridedSlice", {x, i32({3}), i32({4}), i32({1})},
                        "index 3 of dimension 0 is out of bounds for size 3",
                        {{"Index", DType::int32}, {"shrink_axis_mask", 1}}));
  BOOST_TEST(fails_with("StridedSlice", {x, i32({1}), i32({0}), i32({-1})},
                        "only stride 1 is allowed on a shrunk",
                        {{"Index", DType::int32}, {"shrink_axis_mask", 1}}));
}

BOOST_AUTO_TEST_CASE(strided_slice_errors) {
  Tensor x = iota(Shape{3, 4});
  const AttrMap index{{"Index", DType::int32}};
  BOOST_TEST(fails_with("StridedSlice", {x, i32({0}), i32({1}), i32({0})},
                        "strides[0] must be non-zero", index));
  BOOST_TEST(fails_with("StridedSlice", {x, i32({0, 0}), i32({1}), i32({1, 1})},
                        "must have the same length", index));
  BOOST_TEST(fails_with("StridedSlice", {x, i32({0, 0, 0}), i32({1, 1, 1}), i32({1, 1, 1})},
                        "index out of range using input dim 2", index));
  BOOST_TEST(fails_with("StridedSlice", {x, i64({0}), i64({1}), i64({1})},
                        "attr 'Index' of op StridedSlice is float32",
                        {{"Index", DType::float32}}));
}

// --- Tile, BroadcastTo ------------------------------------------------------------

BOOST_AUTO_TEST_CASE(tile_repeats_the_input) {
  Tensor x = mat<int32_t>(Shape{2, 2}, {1, 2, 3, 4});
  BOOST_TEST(run("Tile", {x, i32({2, 1})}) == "int32[4,2] [[1,2],[3,4],[1,2],[3,4]]");
  BOOST_TEST(run("Tile", {x, i64({1, 2})}, {{"Tmultiples", DType::int64}}) ==
             "int32[2,4] [[1,2,1,2],[3,4,3,4]]");
  BOOST_TEST(run("Tile", {x, i32({0, 3})}) == "int32[0,6] []");
  BOOST_TEST(run("Tile", {strs({"a", "b"}), i32({2})}) == "string[4] [\"a\",\"b\",\"a\",\"b\"]");
  BOOST_TEST(fails_with("Tile", {x, i32({2})}, "must have one entry per dimension"));
  BOOST_TEST(fails_with("Tile", {x, i32({1, -1})}, "negative entry"));
}

BOOST_AUTO_TEST_CASE(broadcast_to_expands_size_one_dimensions) {
  BOOST_TEST(run("BroadcastTo", {i32({1, 2, 3}), i32({2, 3})}) ==
             "int32[2,3] [[1,2,3],[1,2,3]]");
  BOOST_TEST(run("BroadcastTo", {mat<int32_t>(Shape{2, 1}, {1, 2}), i64({2, 3})},
                 {{"Tidx", DType::int64}}) == "int32[2,3] [[1,1,1],[2,2,2]]");
  BOOST_TEST(run("BroadcastTo", {Tensor::string_scalar("s"), i32({2})}) ==
             "string[2] [\"s\",\"s\"]");
  BOOST_TEST(run("BroadcastTo", {i32({5}), i32({0})}) == "int32[0] []");
  BOOST_TEST(fails_with("BroadcastTo", {i32({1, 2, 3}), i32({2, 2})},
                        "Unable to broadcast a tensor of shape [3] to shape [2,2]"));
  BOOST_TEST(fails_with("BroadcastTo", {iota(Shape{2, 2}), i32({4})}, "Unable to broadcast"));
}

// --- GatherV2, OneHot ---------------------------------------------------------------

BOOST_AUTO_TEST_CASE(gather_along_an_axis) {
  Tensor p = mat<int32_t>(Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  const AttrMap ix32{{"Tparams", DType::int32}, {"Tindices", DType::int32}, {"Taxis", DType::int32}};
  BOOST_TEST(run("GatherV2", {p, i32({2, 0}), Tensor::scalar(0)}, ix32) ==
             "int32[2,2] [[5,6],[1,2]]");
  BOOST_TEST(run("GatherV2", {p, i64({1}), Tensor::scalar(int64_t{-1})},
                 {{"Tparams", DType::int32}, {"Tindices", DType::int64}, {"Taxis", DType::int64}}) ==
             "int32[3,1] [[2],[4],[6]]");
  BOOST_TEST(run("GatherV2", {p, Tensor::scalar(1), Tensor::scalar(0)}, ix32) ==
             "int32[2] [3,4]");
  BOOST_TEST(run("GatherV2", {p, mat<int32_t>(Shape{2, 2}, {0, 1, 1, 0}), Tensor::scalar(1)},
                 ix32) == "int32[3,2,2] [[[1,2],[2,1]],[[3,4],[4,3]],[[5,6],[6,5]]]");
  BOOST_TEST(run("GatherV2", {p, i32({}), Tensor::scalar(0)}, ix32) == "int32[0,2] []");
  AttrMap strings = ix32;
  strings["Tparams"] = DType::string;
  BOOST_TEST(run("GatherV2", {strs({"a", "b", "c"}), i32({2, 2, 0}), Tensor::scalar(0)}, strings) ==
             "string[3] [\"c\",\"c\",\"a\"]");
}

BOOST_AUTO_TEST_CASE(gather_with_batch_dims) {
  Tensor p = mat<int32_t>(Shape{2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor idx = mat<int32_t>(Shape{2, 2}, {2, 0, 1, 1});
  AttrMap attrs{{"Tparams", DType::int32}, {"Tindices", DType::int32}, {"Taxis", DType::int32},
                {"batch_dims", 1}};
  BOOST_TEST(run("GatherV2", {p, idx, Tensor::scalar(1)}, attrs) == "int32[2,2] [[3,1],[5,5]]");
  attrs["batch_dims"] = -1;
  BOOST_TEST(run("GatherV2", {p, idx, Tensor::scalar(1)}, attrs) == "int32[2,2] [[3,1],[5,5]]");
  attrs["batch_dims"] = 2;
  BOOST_TEST(fails_with("GatherV2", {p, idx, Tensor::scalar(1)}, "must be <= axis 1", attrs));
}

BOOST_AUTO_TEST_CASE(gather_rejects_out_of_range_indices_and_axes) {
  Tensor p = mat<int32_t>(Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  const AttrMap ix32{{"Tparams", DType::int32}, {"Tindices", DType::int32}, {"Taxis", DType::int32}};
  BOOST_TEST(fails_with("GatherV2", {p, i32({0, 5}), Tensor::scalar(0)},
                        "GatherV2 indices[1] = 5 is not in [0, 3)", ix32));
  BOOST_TEST(fails_with("GatherV2", {p, mat<int32_t>(Shape{2, 2}, {0, 1, -1, 0}), Tensor::scalar(0)},
                        "GatherV2 indices[1,0] = -1 is not in [0, 3)", ix32));
  BOOST_TEST(fails_with("GatherV2", {p, i32({0}), Tensor::scalar(2)},
                        "GatherV2 axis 2 is out of range for a tensor of rank 2", ix32));
  BOOST_TEST(fails_with("GatherV2", {Tensor::scalar(1), i32({0}), Tensor::scalar(0)},
                        "at least a vector", ix32));
}

BOOST_AUTO_TEST_CASE(one_hot_on_any_axis) {
  Tensor idx = i64({0, 2, -1, 1});
  const Tensor on = Tensor::scalar(1.0f), off = Tensor::scalar(0.0f);
  BOOST_TEST(run("OneHot", {idx, Tensor::scalar(3), on, off}, {{"T", DType::float32}}) ==
             "float32[4,3] [[1,0,0],[0,0,1],[0,0,0],[0,1,0]]");
  BOOST_TEST(run("OneHot", {idx, Tensor::scalar(3), on, off}, {{"T", DType::float32}, {"axis", 0}}) ==
             "float32[3,4] [[1,0,0,0],[0,0,0,1],[0,1,0,0]]");
  BOOST_TEST(run("OneHot", {mat<int32_t>(Shape{2, 1}, {1, 0}), Tensor::scalar(2),
                            Tensor::scalar(5), Tensor::scalar(-5)},
                 {{"T", DType::int32}, {"TI", DType::int32}, {"axis", 1}}) ==
             "int32[2,2,1] [[[-5],[5]],[[5],[-5]]]");
  BOOST_TEST(run("OneHot", {Tensor::scalar(int64_t{1}), Tensor::scalar(2),
                            Tensor::string_scalar("y"), Tensor::string_scalar("n")},
                 {{"T", DType::string}}) == "string[2] [\"n\",\"y\"]");
  BOOST_TEST(fails_with("OneHot", {idx, Tensor::scalar(-1), on, off}, "depth must be non-negative",
                        {{"T", DType::float32}}));
  BOOST_TEST(fails_with("OneHot", {idx, Tensor::scalar(3), on, off}, "OneHot axis 2 is out of range",
                        {{"T", DType::float32}, {"axis", 2}}));
}

// The executor never passes an invalid (dead) tensor to a kernel, but if one
// arrives the kernel must return, not crash.
BOOST_AUTO_TEST_CASE(invalid_input_tensors_do_not_crash) {
  const Tensor none;
  const AttrMap index{{"Index", DType::int32}, {"T", DType::float32}};
  (void)run("Transpose", {none, i32({})}, {{"T", DType::float32}});
  (void)run("Tile", {none, i32({})}, {{"T", DType::float32}});
  (void)run("Slice", {none, i32({}), i32({})}, index);
  (void)run("StridedSlice", {none, i32({0}), i32({0}), i32({1})}, index);
  (void)run("BroadcastTo", {none, i32({2})}, {{"T", DType::float32}});
  (void)run("Pack", {none, none}, {{"N", 2}, {"T", DType::float32}});
  BOOST_TEST(fails_with("Reshape", {iota(Shape{2}), none}, "Reshape shape is missing"));
  BOOST_TEST(fails_with("Fill", {i32({2}), none}, "Fill value must be a scalar",
                        {{"T", DType::float32}}));
  BOOST_TEST(fails_with("Range", {none, Tensor::scalar(1), Tensor::scalar(1)},
                        "Range start must be a scalar"));
}

// --- Kernels are made once and shared -----------------------------------------------

BOOST_AUTO_TEST_CASE(one_kernel_serves_many_calls) {
  const OpDef* def = OpRegistry::global().find("StridedSlice");
  BOOST_REQUIRE(def != nullptr);
  AttrMap attrs{{"T", DType::int32}, {"Index", DType::int32}, {"shrink_axis_mask", 1}};
  BOOST_REQUIRE(def->check_and_complete_attrs(attrs).ok());
  std::vector<DType> in_types = *def->input_types(attrs);
  std::vector<DType> out_types = *def->output_types(attrs);
  const std::string name = "s";
  auto kernel = def->make_kernel(KernelInit{name, attrs, in_types, out_types});
  BOOST_REQUIRE(kernel.ok());
  for (int32_t row = 0; row < 3; ++row) {
    std::vector<Tensor> in = {iota(Shape{3, 2}), i32({row}), i32({row + 1}), i32({1})};
    std::vector<Tensor> out(1);
    KernelContext ctx(in.data(), 4, out.data(), 1);
    BOOST_REQUIRE((*kernel)->compute(ctx).ok());
    BOOST_TEST(out[0].debug_string() ==
               "int32[2] [" + std::to_string(2 * row) + "," + std::to_string(2 * row + 1) + "]");
  }
}

BOOST_AUTO_TEST_SUITE_END()
