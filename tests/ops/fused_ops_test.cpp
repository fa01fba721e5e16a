// _FusedMatMul and _FusedConv2D give bitwise what their separate ops give
// (ops/fused_ops.cpp), and refuse fused_ops they cannot run.
#include <boost/test/unit_test.hpp>

#include <cstring>
#include <random>

#include "op_test_util.hpp"

using namespace tagflow::ops;
using tagflow::ops::testing::run_op1;

namespace {

Tensor random(const Shape& s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  Tensor t(DType::float32, s);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_data<float>()[i] = u(rng);
  return t;
}

AttrValue ops_list(std::vector<std::string> names) {
  AttrList l;
  l.s = std::move(names);
  return l;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(fused_ops)

BOOST_AUTO_TEST_CASE(fused_matmul_equals_matmul_bias_add_activation_bitwise) {
  const Tensor a = random(Shape({5, 7}), 1), b = random(Shape({7, 3}), 2), bias = random(Shape({3}), 3);
  for (const std::string act : {"", "Relu", "Relu6", "Tanh", "Sigmoid", "Elu"}) {
    BOOST_TEST_CONTEXT(act) {
      Tensor want = run_op1("MatMul", {a, b}).value();
      want = run_op1("BiasAdd", {want, bias}).value();
      if (!act.empty()) want = run_op1(act, {want}).value();
      std::vector<std::string> names = {"BiasAdd"};
      if (!act.empty()) names.push_back(act);
      auto got = run_op1("_FusedMatMul", {a, b, bias}, {{"num_args", int64_t{1}}, {"fused_ops", ops_list(names)}});
      BOOST_REQUIRE_MESSAGE(got.ok(), got.status().to_string());
      BOOST_TEST((got->shape() == want.shape()));
      BOOST_TEST(std::memcmp(got->raw_data(), want.raw_data(), want.byte_size()) == 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(fused_conv2d_equals_conv2d_bias_add_relu_bitwise) {
  const Tensor in = random(Shape({1, 5, 5, 2}), 4), filter = random(Shape({3, 3, 2, 4}), 5),
               bias = random(Shape({4}), 6);
  AttrList strides;
  strides.i = {1, 1, 1, 1};
  AttrMap conv{{"strides", strides}, {"padding", AttrValue(std::string("SAME"))}};
  Tensor want = run_op1("Conv2D", {in, filter}, conv).value();
  want = run_op1("Relu", {run_op1("BiasAdd", {want, bias}).value()}).value();
  AttrMap fused = conv;
  fused["num_args"] = int64_t{1};
  fused["fused_ops"] = ops_list({"BiasAdd", "Relu"});
  auto got = run_op1("_FusedConv2D", {in, filter, bias}, fused);
  BOOST_REQUIRE_MESSAGE(got.ok(), got.status().to_string());
  BOOST_TEST((got->shape() == want.shape()));
  BOOST_TEST(std::memcmp(got->raw_data(), want.raw_data(), want.byte_size()) == 0);
}

BOOST_AUTO_TEST_CASE(unsupported_fused_ops_are_refused_by_name) {
  const Tensor a = random(Shape({2, 2}), 1);
  auto r = run_op1("_FusedMatMul", {a, a, random(Shape({2}), 2)},
                   {{"num_args", int64_t{1}}, {"fused_ops", ops_list({"BiasAdd", "Softplus"})}});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message().find("fused_ops") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
