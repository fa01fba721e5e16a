#include <boost/test/unit_test.hpp>

#include <cmath>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

Tensor f32(const Shape& s, const std::vector<float>& v) { return tensor<float>(s, v); }
Tensor i32(const Shape& s, const std::vector<int32_t>& v) { return tensor<int32_t>(s, v); }

AttrMap format(const char* f) { return {{"data_format", f}}; }

}  // namespace

BOOST_AUTO_TEST_SUITE(nn_ops)

BOOST_AUTO_TEST_CASE(relu) {
  BOOST_TEST(result("Relu", {f32({4}, {-1.5f, 0, 2.5f, -0.25f})}) == "float32[4] [0,0,2.5,0]");
  BOOST_TEST(result("Relu", {tensor<double>({2}, {-3, 3})}) == "float64[2] [0,3]");
  BOOST_TEST(result("Relu", {i32({2, 2}, {-1, 2, 3, -4})}) == "int32[2,2] [[0,2],[3,0]]");
  BOOST_TEST(result("Relu", {tensor<int64_t>({1}, {-7})}) == "int64[1] [0]");
  BOOST_TEST(result("Relu", {Tensor::scalar(5.0f)}) == "float32[] 5");
  BOOST_TEST(result("Relu", {f32({0}, {})}) == "float32[0] []");
  BOOST_TEST(error_of("Relu", {i32({1}, {1})}, {{"T", DType::float32}}) ==
             "invalid_argument: Relu expects float32 inputs, got int32");
}

BOOST_AUTO_TEST_CASE(relu_grad) {
  // gradients where features > 0, else 0
  BOOST_TEST(result("ReluGrad", {f32({4}, {1, 2, 3, 4}), f32({4}, {-1, 0, 0.5f, 2})}) ==
             "float32[4] [0,0,3,4]");
  BOOST_TEST(result("ReluGrad", {tensor<double>({2}, {-1.5, 2}), tensor<double>({2}, {3, 1})}) ==
             "float64[2] [-1.5,2]");
  BOOST_TEST(result("ReluGrad", {i32({2, 2}, {5, 6, 7, 8}), i32({2, 2}, {1, -1, 0, 9})}) ==
             "int32[2,2] [[5,0],[0,8]]");
  BOOST_TEST(result("ReluGrad", {f32({0}, {}), f32({0}, {})}) == "float32[0] []");
  BOOST_TEST(error_of("ReluGrad", {f32({2}, {1, 2}), f32({1, 2}, {1, 2})}) ==
             "invalid_argument: ReluGrad expects inputs of the same shape, got shapes [2] and [1,2]");
}

BOOST_AUTO_TEST_CASE(log_softmax) {
  // x - max - log(sum(exp(x - max))): log(1 + e^-1 + e^-2) = 0.4076059644443803
  Expected<Tensor> y = run_op1("LogSoftmax", {f32({2, 3}, {1, 2, 3, 1000, 1000, 1000})});
  BOOST_REQUIRE(y.ok());
  BOOST_TEST(y->shape().to_string() == "[2,3]");
  const double want[] = {-2.4076059644443803, -1.4076059644443803, -0.4076059644443803,
                         -1.0986122886681098, -1.0986122886681098, -1.0986122886681098};
  for (int i = 0; i < 6; ++i) BOOST_TEST(std::abs(at(*y, i) - want[i]) < 1e-6, "element " << i);
  Expected<Tensor> d = run_op1("LogSoftmax", {tensor<double>({3}, {1, 2, 3})});
  BOOST_REQUIRE(d.ok());
  for (int i = 0; i < 3; ++i) BOOST_TEST(std::abs(at(*d, i) - want[i]) < 1e-14);
  BOOST_TEST(result("LogSoftmax", {f32({2, 0}, {})}) == "float32[2,0] [[],[]]");
  BOOST_TEST(result("LogSoftmax", {f32({1, 1}, {7})}) == "float32[1,1] [[0]]");
  BOOST_TEST(error_of("LogSoftmax", {Tensor::scalar(1.0f)}) ==
             "invalid_argument: LogSoftmax: logits must have rank >= 1, got shape []");
}

BOOST_AUTO_TEST_CASE(softmax_over_the_last_axis) {
  Expected<Tensor> y = run_op1("Softmax", {f32({2, 3}, {1, 2, 3, 0, 0, std::log(2.0f)})});
  BOOST_REQUIRE(y.ok());
  BOOST_TEST(y->shape().to_string() == "[2,3]");
  // exp(1,2,3) / sum: 0.0900306, 0.2447285, 0.6652410
  const double want[] = {0.09003057317038046, 0.24472847105479767, 0.6652409557748219, 0.25, 0.25, 0.5};
  for (int i = 0; i < 6; ++i) BOOST_TEST(std::abs(at(*y, i) - want[i]) < 1e-6, "element " << i);

  Expected<Tensor> d = run_op1("Softmax", {tensor<double>({3}, {1, 2, 3})});
  BOOST_REQUIRE(d.ok());
  for (int i = 0; i < 3; ++i) BOOST_TEST(std::abs(at(*d, i) - want[i]) < 1e-12);
}

BOOST_AUTO_TEST_CASE(softmax_is_stable_for_large_logits) {
  BOOST_TEST(result("Softmax", {f32({1, 2}, {1000, 1000})}) == "float32[1,2] [[0.5,0.5]]");
  BOOST_TEST(result("Softmax", {f32({2}, {-1000, 0})}) == "float32[2] [0,1]");
  BOOST_TEST(result("Softmax", {f32({1, 1}, {42})}) == "float32[1,1] [[1]]");
}

BOOST_AUTO_TEST_CASE(softmax_of_empty_tensors_and_errors) {
  BOOST_TEST(result("Softmax", {f32({0, 3}, {})}) == "float32[0,3] []");
  BOOST_TEST(result("Softmax", {f32({2, 0}, {})}) == "float32[2,0] [[],[]]");
  BOOST_TEST(error_of("Softmax", {Tensor::scalar(1.0f)}) ==
             "invalid_argument: Softmax: logits must have rank >= 1, got shape []");
  BOOST_TEST(contains(error_of("Softmax", {i32({2}, {1, 2})}), "which is not one of {float32, float64}"));
  BOOST_TEST(error_of("Softmax", {tensor<double>({1}, {1})}, {{"T", DType::float32}}) ==
             "invalid_argument: Softmax expects float32 inputs, got float64");
}

BOOST_AUTO_TEST_CASE(bias_add_nhwc) {
  Tensor bias = f32({3}, {10, 20, 30});
  BOOST_TEST(result("BiasAdd", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), bias}) ==
             "float32[2,3] [[11,22,33],[14,25,36]]");
  BOOST_TEST(result("BiasAdd", {f32({1, 2, 1, 3}, {1, 2, 3, 4, 5, 6}), bias}, format("NHWC")) ==
             "float32[1,2,1,3] [[[[11,22,33]],[[14,25,36]]]]");
  BOOST_TEST(result("BiasAdd", {i32({2, 2}, {1, 2, 3, 4}), i32({2}, {-1, 1})}) == "int32[2,2] [[0,3],[2,5]]");
  BOOST_TEST(result("BiasAdd", {tensor<int64_t>({1, 1}, {5}), tensor<int64_t>({1}, {7})}) == "int64[1,1] [[12]]");
  BOOST_TEST(result("BiasAddV1", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), bias}) ==
             "float32[2,3] [[11,22,33],[14,25,36]]");
  BOOST_TEST(result("BiasAdd", {f32({0, 3}, {}), bias}) == "float32[0,3] []");
}

BOOST_AUTO_TEST_CASE(bias_add_nchw) {
  // N=2, C=2, H*W=2: the bias runs along dimension 1.
  Tensor value = tensor<double>({2, 2, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  BOOST_TEST(result("BiasAdd", {value, tensor<double>({2}, {100, 200})}, format("NCHW")) ==
             "float64[2,2,1,2] [[[[101,102]],[[203,204]]],[[[105,106]],[[207,208]]]]");
  BOOST_TEST(result("BiasAdd", {i32({1, 3, 2}, {1, 2, 3, 4, 5, 6}), i32({3}, {1, 2, 3})}, format("NCHW")) ==
             "int32[1,3,2] [[[2,3],[5,6],[8,9]]]");
  // Rank 2: the channel dimension is both 1 and last.
  BOOST_TEST(result("BiasAdd", {f32({2, 2}, {1, 2, 3, 4}), f32({2}, {10, 20})}, format("NCHW")) ==
             "float32[2,2] [[11,22],[13,24]]");
}

BOOST_AUTO_TEST_CASE(bias_add_errors) {
  BOOST_TEST(error_of("BiasAdd", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2}, {1, 2})}) ==
             "invalid_argument: BiasAdd: bias must be a vector of 3 elements (dimension 1 of value [2,3]), "
             "got shape [2]");
  BOOST_TEST(contains(error_of("BiasAdd", {f32({2, 3, 1}, {1, 2, 3, 4, 5, 6}), f32({1}, {1})}, format("NCHW")),
                      "bias must be a vector of 3 elements (dimension 1 of value [2,3,1])"));
  BOOST_TEST(error_of("BiasAdd", {f32({3}, {1, 2, 3}), f32({3}, {1, 2, 3})}) ==
             "invalid_argument: BiasAdd: value must have rank >= 2, got shape [3]");
  BOOST_TEST(error_of("BiasAdd", {f32({1, 1}, {1}), f32({1}, {1})}, format("NCWH")) ==
             "invalid_argument: BiasAdd: data_format must be NHWC or NCHW, got 'NCWH'");
  BOOST_TEST(error_of("BiasAdd", {f32({1, 1}, {1}), i32({1}, {1})}) ==
             "invalid_argument: BiasAdd expects float32 inputs, got float32 and int32");
}

BOOST_AUTO_TEST_CASE(bias_add_grad_sums_all_but_the_channels) {
  BOOST_TEST(result("BiasAddGrad", {f32({2, 3}, {1, 2, 3, 4, 5, 6})}) == "float32[3] [5,7,9]");
  BOOST_TEST(result("BiasAddGrad", {f32({1, 2, 1, 3}, {1, 2, 3, 4, 5, 6})}, format("NHWC")) ==
             "float32[3] [5,7,9]");
  // N=2, C=2, H*W=2: channel 0 holds 1,2,5,6 and channel 1 holds 3,4,7,8.
  BOOST_TEST(result("BiasAddGrad", {tensor<double>({2, 2, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8})},
                    format("NCHW")) == "float64[2] [14,22]");
  BOOST_TEST(result("BiasAddGrad", {i32({2, 2}, {1, 2, 3, 4})}, format("NCHW")) == "int32[2] [4,6]");
  BOOST_TEST(result("BiasAddGrad", {tensor<int64_t>({3, 1}, {1, 2, 3})}) == "int64[1] [6]");
  BOOST_TEST(result("BiasAddGrad", {f32({0, 3}, {})}) == "float32[3] [0,0,0]");
  BOOST_TEST(result("BiasAddGrad", {f32({2, 0, 2}, {})}, format("NCHW")) == "float32[0] []");
}

BOOST_AUTO_TEST_CASE(bias_add_grad_errors) {
  BOOST_TEST(error_of("BiasAddGrad", {f32({3}, {1, 2, 3})}) ==
             "invalid_argument: BiasAddGrad: out_backprop must have rank >= 2, got shape [3]");
  BOOST_TEST(error_of("BiasAddGrad", {f32({1, 1}, {1})}, format("HWNC")) ==
             "invalid_argument: BiasAddGrad: data_format must be NHWC or NCHW, got 'HWNC'");
  BOOST_TEST(contains(error_of("BiasAddGrad", {tensor<bool>({1, 1}, {true})}), "not one of"));
}

BOOST_AUTO_TEST_CASE(elu_and_its_gradient) {
  // exp(x) - 1 below zero, x above, computed by a reference loop.
  const std::vector<float> x = {-2, -0.5f, 0, 0.5f, 3};
  Expected<Tensor> y = run_op1("Elu", {f32({5}, x)});
  BOOST_TEST_REQUIRE(y.ok());
  for (size_t i = 0; i < x.size(); ++i)
    BOOST_TEST(at(*y, static_cast<int64_t>(i)) == (x[i] < 0 ? std::exp(x[i]) - 1 : x[i]),
               boost::test_tools::tolerance(1e-6));
  BOOST_TEST(result("Elu", {tensor<double>({2, 1}, {-1e9, 2})}) == "float64[2,1] [[-1],[2]]");
  // EluGrad(gradients, outputs): gradients * (outputs + 1) where outputs < 0.
  BOOST_TEST(result("EluGrad", {f32({3}, {2, 2, 2}), f32({3}, {-0.75f, 0, 4})}) ==
             "float32[3] [0.5,2,2]");
  BOOST_TEST(error_of("EluGrad", {f32({2}, {1, 1}), f32({2, 1}, {1, 1})}) ==
             "invalid_argument: EluGrad expects inputs of the same shape, got shapes [2] and [2,1]");
  BOOST_TEST(contains(error_of("Elu", {i32({1}, {1})}), "not one of"));
}

BOOST_AUTO_TEST_CASE(relu6_and_its_gradient) {
  BOOST_TEST(result("Relu6", {f32({5}, {-3, 0, 2.5f, 6, 9})}) == "float32[5] [0,0,2.5,6,6]");
  BOOST_TEST(result("Relu6", {i32({3}, {-1, 4, 8})}) == "int32[3] [0,4,6]");
  // gradients where 0 < features < 6
  BOOST_TEST(result("Relu6Grad", {f32({4}, {5, 5, 5, 5}), f32({4}, {-1, 3, 6, 7})}) == "float32[4] [0,5,0,0]");
  BOOST_TEST(error_of("Relu6Grad", {f32({2}, {1, 1}), f32({3}, {1, 1, 1})}) ==
             "invalid_argument: Relu6Grad expects inputs of the same shape, got shapes [2] and [3]");
}

BOOST_AUTO_TEST_CASE(softsign_and_its_gradient) {
  BOOST_TEST(result("Softsign", {f32({4}, {-3, 0, 1, 7})}) == "float32[4] [-0.75,0,0.5,0.875]");
  BOOST_TEST(result("Softsign", {tensor<double>({}, {-1})}) == "float64[] -0.5");
  // gradients / (1 + |features|)^2
  BOOST_TEST(result("SoftsignGrad", {f32({3}, {8, 8, 1}), f32({3}, {1, -3, 0})}) ==
             "float32[3] [2,0.5,1]");
  BOOST_TEST(contains(error_of("Softsign", {i32({1}, {1})}), "not one of"));
}

BOOST_AUTO_TEST_SUITE_END()
