// SoftmaxCrossEntropyWithLogits and SparseSoftmaxCrossEntropyWithLogits
// (ops/softmax_xent_ops.cpp): losses and backprops against values worked out
// by hand (softmax of [1,2,3] is 0.0900306, 0.2447285, 0.6652410), large
// logits, empty batches, and the errors for bad shapes and labels.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

Tensor f32(const Shape& s, const std::vector<float>& v) { return tensor<float>(s, v); }

Tensor logits() { return f32({2, 3}, {1, 2, 3, 0, 0, std::log(2.0f)}); }

// Runs op; checks both outputs' shapes and values within tol.
void check(const std::string& op, std::vector<Tensor> in, AttrMap attrs,
           const std::vector<double>& loss, const std::vector<double>& backprop,
           double tol = 1e-6) {
  Expected<std::vector<Tensor>> out = run_op(op, std::move(in), std::move(attrs));
  BOOST_REQUIRE_MESSAGE(out.ok(), out.status().to_string());
  const Tensor& l = (*out)[0];
  const Tensor& b = (*out)[1];
  BOOST_TEST(l.shape().to_string() == "[" + std::to_string(loss.size()) + "]");
  BOOST_TEST(b.num_elements() == static_cast<int64_t>(backprop.size()));
  for (size_t i = 0; i < loss.size(); ++i)
    BOOST_TEST(std::abs(at(l, static_cast<int64_t>(i)) - loss[i]) < tol, "loss " << i << " = " << at(l, i));
  for (size_t i = 0; i < backprop.size(); ++i)
    BOOST_TEST(std::abs(at(b, static_cast<int64_t>(i)) - backprop[i]) < tol, "backprop " << i);
}

std::string error(const std::string& op, std::vector<Tensor> in, AttrMap attrs = {}) {
  Expected<std::vector<Tensor>> out = run_op(op, std::move(in), std::move(attrs));
  return out.ok() ? "ok" : out.status().to_string();
}

const double kLoss0 = 0.4076059644443803;  // -log(softmax([1,2,3])[2])
const double kLog4 = 1.3862943611198906;

}  // namespace

BOOST_AUTO_TEST_SUITE(softmax_xent_ops)

BOOST_AUTO_TEST_CASE(dense_loss_and_backprop) {
  Tensor labels = f32({2, 3}, {0, 0, 1, 0.5f, 0.5f, 0});
  check("SoftmaxCrossEntropyWithLogits", {logits(), labels}, {}, {kLoss0, kLog4},
        {0.09003057317038046, 0.24472847105479767, -0.3347590442251781, -0.25, -0.25, 0.5});
  check("SoftmaxCrossEntropyWithLogits",
        {tensor<double>({1, 3}, {1, 2, 3}), tensor<double>({1, 3}, {0, 0, 1})}, {}, {kLoss0},
        {0.09003057317038046, 0.24472847105479767, -0.3347590442251781}, 1e-14);
  // Large logits do not overflow.
  check("SoftmaxCrossEntropyWithLogits", {f32({1, 2}, {1000, 1000}), f32({1, 2}, {1, 0})}, {},
        {std::log(2.0)}, {-0.5, 0.5});
}

BOOST_AUTO_TEST_CASE(dense_labels_and_logits_broadcast) {
  // One row of labels for every row of logits, as TensorFlow broadcasts them.
  check("SoftmaxCrossEntropyWithLogits", {logits(), f32({1, 3}, {0, 0, 1})}, {},
        {kLoss0, std::log(2.0)},
        {0.09003057317038046, 0.24472847105479767, -0.3347590442251781, 0.25, 0.25, -0.5});
  // One row of logits for two rows of labels, and a rank-1 labels vector.
  check("SoftmaxCrossEntropyWithLogits",
        {f32({1, 2}, {0, 0}), f32({2, 2}, {1, 0, 0, 1})}, {}, {std::log(2.0), std::log(2.0)},
        {-0.5, 0.5, 0.5, -0.5});
  check("SoftmaxCrossEntropyWithLogits", {f32({1, 2}, {0, 0}), f32({2}, {0, 1})}, {},
        {std::log(2.0)}, {0.5, -0.5});
}

BOOST_AUTO_TEST_CASE(sparse_loss_and_backprop) {
  const std::vector<double> backprop = {0.09003057317038046, 0.24472847105479767,
                                        -0.3347590442251781, -0.75, 0.25, 0.5};
  check("SparseSoftmaxCrossEntropyWithLogits", {logits(), Tensor::vector<int64_t>({2, 0})}, {},
        {kLoss0, kLog4}, backprop);
  check("SparseSoftmaxCrossEntropyWithLogits", {logits(), Tensor::vector<int32_t>({2, 0})},
        {{"Tlabels", DType::int32}}, {kLoss0, kLog4}, backprop);
  check("SparseSoftmaxCrossEntropyWithLogits",
        {tensor<double>({1, 3}, {1, 2, 3}), Tensor::vector<int64_t>({2})}, {}, {kLoss0},
        {0.09003057317038046, 0.24472847105479767, -0.3347590442251781}, 1e-14);
}

BOOST_AUTO_TEST_CASE(empty_batches) {
  check("SoftmaxCrossEntropyWithLogits", {f32({0, 3}, {}), f32({0, 3}, {})}, {}, {}, {});
  check("SoftmaxCrossEntropyWithLogits", {f32({2, 0}, {}), f32({2, 0}, {})}, {}, {0, 0}, {});
  check("SparseSoftmaxCrossEntropyWithLogits", {f32({0, 3}, {}), Tensor::vector<int64_t>({})}, {},
        {}, {});
}

BOOST_AUTO_TEST_CASE(errors) {
  BOOST_TEST(error("SoftmaxCrossEntropyWithLogits", {logits(), f32({2, 2}, {0, 1, 1, 0})}) ==
             "invalid_argument: SoftmaxCrossEntropyWithLogits: logits and labels must be "
             "broadcastable, got logits [2,3] and labels [2,2]");
  BOOST_TEST(error("SoftmaxCrossEntropyWithLogits", {f32({3}, {1, 2, 3}), f32({3}, {0, 0, 1})}) ==
             "invalid_argument: SoftmaxCrossEntropyWithLogits: logits and labels must be "
             "2-dimensional, or broadcast to 2 dimensions, got logits [3] and labels [3]");
  BOOST_TEST(error("SparseSoftmaxCrossEntropyWithLogits", {f32({3}, {1, 2, 3}), Tensor::vector<int64_t>({0})}) ==
             "invalid_argument: SparseSoftmaxCrossEntropyWithLogits: logits must be 2-dimensional, "
             "got shape [3]");
  BOOST_TEST(error("SparseSoftmaxCrossEntropyWithLogits", {logits(), Tensor::vector<int64_t>({3, 0})}) ==
             "invalid_argument: SparseSoftmaxCrossEntropyWithLogits: labels[0] = 3 is outside the "
             "valid range of classes [0, 3)");
  BOOST_TEST(error("SparseSoftmaxCrossEntropyWithLogits", {logits(), Tensor::vector<int64_t>({1, -1})}) ==
             "invalid_argument: SparseSoftmaxCrossEntropyWithLogits: labels[1] = -1 is outside the "
             "valid range of classes [0, 3)");
  BOOST_TEST(error("SparseSoftmaxCrossEntropyWithLogits", {logits(), Tensor::vector<int64_t>({1})}) ==
             "invalid_argument: SparseSoftmaxCrossEntropyWithLogits: labels must be a vector of one "
             "class per row of logits, got logits [2,3] and labels [1]");
  BOOST_TEST(error("SparseSoftmaxCrossEntropyWithLogits", {f32({1, 0}, {}), Tensor::vector<int64_t>({0})}) ==
             "invalid_argument: SparseSoftmaxCrossEntropyWithLogits: labels[0] = 0 is outside the "
             "valid range of classes [0, 0)");
  BOOST_TEST(contains(error("SoftmaxCrossEntropyWithLogits",
                            {tensor<int32_t>({1, 1}, {1}), tensor<int32_t>({1, 1}, {1})}),
                      "not one of {float32, float64}"));
}

BOOST_AUTO_TEST_SUITE_END()
