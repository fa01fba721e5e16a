// _FusedMatMul and _FusedConv2D give bitwise what their separate ops give
// (ops/fused_ops.cpp), and refuse fused_ops they cannot run.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "cpu/test_pool.hpp"
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

// Float [BiasAdd] and [BiasAdd, Relu] run as one kernel, the bias inside
// oneDNN's product and convolution (or after Eigen's small products):
// bitwise the separate kernels' numbers (NaN where they give NaN, its sign
// bit aside) on products of every path — Eigen's, oneDNN's whole and split
// by rows or columns across threads, transposed — and on convolutions in
// both layouts, with NaNs, infinities and zeros of both signs in the
// inputs (NO_SPECIALS=1 leaves those out).

namespace {

Tensor with_specials(Tensor t) {
  float* p = t.mutable_data<float>();
  const float specials[] = {std::nanf(""), INFINITY, -INFINITY, 0.0f, -0.0f};
  if (std::getenv("NO_SPECIALS") == nullptr)
    for (int64_t i = 0; i < t.num_elements(); i += 37) p[i] = specials[(i / 37) % 5];
  return t;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (!(a.shape() == b.shape())) return false;
  const uint32_t* x = static_cast<const uint32_t*>(a.raw_data());
  const uint32_t* y = static_cast<const uint32_t*>(b.raw_data());
  for (int64_t i = 0; i < a.num_elements(); ++i)
    if (x[i] != y[i] && !(std::isnan(a.data<float>()[i]) && std::isnan(b.data<float>()[i]))) {
      float f, g;
      std::memcpy(&f, &x[i], 4);
      std::memcpy(&g, &y[i], 4);
      BOOST_TEST_MESSAGE("element " << i << ": " << f << " (0x" << std::hex << x[i] << ") vs " << g << " (0x" << y[i]
                                    << std::dec << ")");
      return false;
    }
  return true;
}

}  // namespace

BOOST_AUTO_TEST_CASE(one_kernel_fused_matmul_is_bitwise_the_separate_kernels_on_every_path) {
  struct Case {
    int64_t m, k, n;
  };
  for (int threads : {1, 2, 3}) {
    tagflow::ops::testing::ThreadPool pool(threads);
    cpu::WorkerPoolScope scope(&pool);
    for (const Case& c : {Case{1, 64, 64}, Case{5, 7, 3}, Case{64, 64, 64}, Case{300, 200, 40}, Case{20, 300, 700},
                          Case{3, 0, 4}})
      for (bool ta : {false, true})
        for (bool tb : {false, true})
          for (const std::string act : {"", "Relu"}) {
            BOOST_TEST_CONTEXT(c.m << "x" << c.k << "x" << c.n << " ta " << ta << " tb " << tb << " " << act
                                   << " threads " << threads) {
              const Tensor a = with_specials(random(ta ? Shape({c.k, c.m}) : Shape({c.m, c.k}), 7));
              const Tensor b = random(tb ? Shape({c.n, c.k}) : Shape({c.k, c.n}), 8);
              const Tensor bias = with_specials(random(Shape({c.n}), 9));
              const AttrMap mm{{"transpose_a", ta}, {"transpose_b", tb}};
              Tensor want = run_op1("MatMul", {a, b}, mm).value();
              want = run_op1("BiasAdd", {want, bias}).value();
              if (!act.empty()) want = run_op1(act, {want}).value();
              std::vector<std::string> names = {"BiasAdd"};
              if (!act.empty()) names.push_back(act);
              AttrMap fused = mm;
              fused["num_args"] = int64_t{1};
              fused["fused_ops"] = ops_list(names);
              auto got = run_op1("_FusedMatMul", {a, b, bias}, fused);
              BOOST_REQUIRE_MESSAGE(got.ok(), got.status().to_string());
              BOOST_TEST(same_bits(*got, want));
            }
          }
  }
}

BOOST_AUTO_TEST_CASE(one_kernel_fused_conv2d_is_bitwise_the_separate_kernels_in_both_layouts) {
  struct Case {
    Shape in, filter;
    int64_t stride;
    std::string padding;
  };
  for (int threads : {1, 2}) {
    tagflow::ops::testing::ThreadPool pool(threads);
    cpu::WorkerPoolScope scope(&pool);
    for (const Case& c : {Case{{1, 5, 5, 2}, {3, 3, 2, 4}, 1, "SAME"}, Case{{8, 17, 16, 8}, {3, 3, 8, 16}, 2, "SAME"},
                          Case{{2, 9, 9, 3}, {1, 1, 3, 5}, 1, "VALID"}, Case{{1, 0, 4, 3}, {2, 2, 3, 2}, 1, "EXPLICIT"}})
      for (bool nchw : {false, true})
        for (const std::string act : {"", "Relu"}) {
          BOOST_TEST_CONTEXT(c.in.to_string() << " " << c.filter.to_string() << (nchw ? " NCHW " : " NHWC ") << act
                                              << " threads " << threads) {
            Tensor in = with_specials(random(c.in, 10));
            if (nchw) in = run_op1("Transpose", {in, Tensor::vector<int32_t>({0, 3, 1, 2})}).value();
            const Tensor filter = random(c.filter, 11), bias = with_specials(random(Shape({c.filter.dim(3)}), 12));
            AttrList strides, pads;
            strides.i = nchw ? std::vector<int64_t>{1, 1, c.stride, c.stride}
                             : std::vector<int64_t>{1, c.stride, c.stride, 1};
            if (c.padding == "EXPLICIT")
              pads.i = nchw ? std::vector<int64_t>{0, 0, 0, 0, 1, 2, 0, 1} : std::vector<int64_t>{0, 0, 1, 2, 0, 1, 0, 0};
            const std::string format = nchw ? "NCHW" : "NHWC";
            AttrMap conv{{"strides", strides}, {"padding", AttrValue(c.padding)}, {"data_format", AttrValue(format)},
                         {"explicit_paddings", pads}};
            Tensor want = run_op1("Conv2D", {in, filter}, conv).value();
            want = run_op1("BiasAdd", {want, bias}, {{"data_format", AttrValue(format)}}).value();
            if (!act.empty()) want = run_op1(act, {want}).value();
            std::vector<std::string> names = {"BiasAdd"};
            if (!act.empty()) names.push_back(act);
            AttrMap fused = conv;
            fused["num_args"] = int64_t{1};
            fused["fused_ops"] = ops_list(names);
            auto got = run_op1("_FusedConv2D", {in, filter, bias}, fused);
            BOOST_REQUIRE_MESSAGE(got.ok(), got.status().to_string());
            BOOST_TEST(same_bits(*got, want));
          }
        }
  }
  // The bias is checked as BiasAdd checks it, naming the fused op.
  AttrList unit;
  unit.i = {1, 1, 1, 1};
  auto bad = run_op1("_FusedConv2D", {random(Shape({1, 3, 3, 2}), 1), random(Shape({1, 1, 2, 4}), 2), random(Shape({3}), 3)},
                     {{"strides", unit}, {"padding", AttrValue(std::string("VALID"))}, {"num_args", int64_t{1}},
                      {"fused_ops", ops_list({"BiasAdd"})}});
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.status().message() ==
             "_FusedConv2D: bias must be a vector of 4 elements (dimension 3 of value [1,3,3,4]), got shape [3]");
}

BOOST_AUTO_TEST_SUITE_END()
