// ZerosLike and OnesLike (ops/array_ops.cpp) over every dtype tagflow
// stores: zeros (empty strings) of the input's shape in a fresh buffer, and
// ones for each dtype OnesLike takes (TensorFlow's list: not string).
#include <boost/test/unit_test.hpp>

#include <cstring>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

// Every dtype a tensor can hold but resource and variant, whose ZerosLike
// TensorFlow defines otherwise.
std::vector<DType> stored_dtypes() {
  std::vector<DType> out;
  for (int n = 1; n <= 23; ++n) {
    const DType t = static_cast<DType>(n);
    if (t != DType::resource && t != DType::variant) out.push_back(t);
  }
  return out;
}

// A [2,3] tensor of `t` whose bytes (or strings) are not zero.
Tensor nonzero(DType t) {
  Tensor x(t, Shape{2, 3});
  if (dtype_is_object(t)) {
    for (int i = 0; i < 6; ++i) x.mutable_data<std::string>()[i] = "s";
  } else {
    std::memset(x.raw_mutable_data(), 1, x.byte_size());
  }
  return x;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(zeros_ones_like)

BOOST_AUTO_TEST_CASE(zeros_like_of_every_stored_dtype) {
  for (DType t : stored_dtypes()) {
    const Tensor x = nonzero(t);
    Expected<Tensor> y = run_op1("ZerosLike", {x});
    BOOST_REQUIRE_MESSAGE(y.ok(), dtype_name(t) << ": " << y.status().to_string());
    BOOST_TEST((y->dtype() == t), dtype_name(t));
    BOOST_TEST(y->shape().to_string() == "[2,3]");
    BOOST_TEST(!y->shares_buffer_with(x));
    if (dtype_is_object(t)) {
      for (int i = 0; i < 6; ++i) BOOST_TEST(y->data<std::string>()[i].empty());
    } else {
      const auto* bytes = static_cast<const unsigned char*>(y->raw_data());
      bool zero = true;
      for (size_t i = 0; i < y->byte_size(); ++i) zero = zero && bytes[i] == 0;
      BOOST_TEST(zero, dtype_name(t));
    }
  }
  BOOST_TEST(result("ZerosLike", {Tensor::vector<std::string>({"a", "b"})}) == "string[2] [\"\",\"\"]");
  BOOST_TEST(result("ZerosLike", {tensor<bool>({2}, {true, true})}) == "bool[2] [false,false]");
  BOOST_TEST(result("ZerosLike", {tensor<float>({0, 2}, {})}) == "float32[0,2] []");
  BOOST_TEST(result("ZerosLike", {Tensor::scalar<int64_t>(7)}) == "int64[] 0");
}

BOOST_AUTO_TEST_CASE(ones_like_of_every_dtype_it_takes) {
  const OpDef* def = OpRegistry::global().find("OnesLike");
  BOOST_REQUIRE(def != nullptr);
  const std::vector<DType> allowed = def->find_attr("T")->allowed_types;
  BOOST_TEST(allowed.size() == 15u);
  for (DType t : allowed) {
    Expected<Tensor> y = run_op1("OnesLike", {Tensor(t, Shape{2})});
    BOOST_REQUIRE_MESSAGE(y.ok(), dtype_name(t) << ": " << y.status().to_string());
    std::string want = dtype_name(t) + "[2] [1,1]";
    if (t == DType::boolean) want = "bool[2] [true,true]";
    if (t == DType::complex64 || t == DType::complex128) want = dtype_name(t) + "[2] [(1,0),(1,0)]";
    BOOST_TEST(y->debug_string() == want);
  }
  BOOST_TEST(result("OnesLike", {tensor<float>({0}, {})}) == "float32[0] []");
  BOOST_TEST(contains(error_of("OnesLike", {Tensor::vector<std::string>({"a"})}), "not one of"));
}

BOOST_AUTO_TEST_SUITE_END()
