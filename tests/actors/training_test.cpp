// Training in one Session the TensorFlow 1.x way: linear regression
// y = w x + b on eight points of y = 3 x + 2, built with GraphBuilder, its
// gradients from gradients(), and Adam updates — ApplyAdam on ref variables
// (VariableV2) or ResourceApplyAdam on resource variables (VarHandleOp),
// with the beta powers kept in variables and advanced after the updates, as
// tf.train.AdamOptimizer does. The first step is checked against a hand
// computation of the gradient and of Adam's update; 200 steps must fit the
// line. Also: a seeded random op's values across the steps of a session.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <utility>

#include "graph/builder/builder.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using graph::GraphBuilder;
using graph::NodeOptions;
using graph::Output;
using ops::DType;
using ops::Tensor;

namespace {

const DType f32 = DType::float32;
const std::vector<float> kX = {-1, -0.5f, 0, 0.5f, 1, 1.5f, 2, 2.5f};
constexpr float kW0 = 0.5f, kB0 = -0.5f;  // initial values
constexpr double kLr = 0.1, kBeta1 = 0.9, kBeta2 = 0.999, kEpsilon = 1e-8;

// What the test runs and reads.
struct Model {
  graph::Graph graph;
  std::vector<std::string> init;  // targets
  std::string train;              // target
  std::string loss, w, b, beta1_power;
};

// One variable of either kind: the node gradients() and the update ops take,
// its value for other ops, and its initialiser.
struct Var {
  Output node, value, init;
};

Var variable(GraphBuilder& b, bool resource, const std::string& name, const Tensor& initial) {
  const ops::AttrMap attrs = {{"dtype", f32}, {"shape", ops::PartialShape{false, initial.shape().dims()}}};
  Var v;
  if (resource) {
    v.node = b.op1("VarHandleOp", {}, attrs, name);
    v.init = b.op("AssignVariableOp", {v.node, b.constant(initial)}, {}, name + "/Assign").control();
    v.value = b.op1("ReadVariableOp", {v.node}, {{"dtype", f32}}, name + "/read");
  } else {
    v.node = b.op1("VariableV2", {}, attrs, name);
    v.init = b.op1("Assign", {v.node, b.constant(initial)}, {}, name + "/Assign");
    v.value = b.identity(v.node, name + "/read");
  }
  return v;
}

// value * factor assigned to v once every `after` has run.
Output advance(GraphBuilder& b, bool resource, const Var& v, Output factor,
               const std::vector<Output>& after) {
  NodeOptions o = NodeOptions::unique(v.node.node_name() + "/update");
  o.control_inputs = after;
  if (resource) return b.op("AssignVariableOp", {v.node, b.mul(v.value, factor)}, {}, o).control();
  return b.op1("Assign", {v.node, b.mul(v.value, factor)}, {}, o);
}

Model build(bool resource) {
  GraphBuilder b;
  const Tensor zero11 = Tensor::from_vector<float>(ops::Shape{1, 1}, {0});
  const Tensor zero1 = Tensor::vector<float>({0});
  Var w = variable(b, resource, "w", Tensor::from_vector<float>(ops::Shape{1, 1}, {kW0}));
  Var bias = variable(b, resource, "b", Tensor::vector<float>({kB0}));
  Var m_w = variable(b, resource, "w/Adam", zero11), v_w = variable(b, resource, "w/Adam_1", zero11);
  Var m_b = variable(b, resource, "b/Adam", zero1), v_b = variable(b, resource, "b/Adam_1", zero1);
  Var beta1_power = variable(b, resource, "beta1_power", Tensor::scalar<float>(kBeta1));
  Var beta2_power = variable(b, resource, "beta2_power", Tensor::scalar<float>(kBeta2));

  std::vector<float> ys;
  for (float x : kX) ys.push_back(3 * x + 2);
  Output x = b.constant(Tensor::from_vector<float>(ops::Shape{8, 1}, kX), "x");
  Output y = b.constant(Tensor::from_vector<float>(ops::Shape{8, 1}, ys), "y");
  Output pred = b.add(b.matmul(x, w.value), bias.value, "pred");
  Output loss = b.reduce_mean(b.square(b.sub(pred, y)), b.vector<int32_t>({0, 1}), false, "loss");
  std::vector<Output> grads = b.gradients({loss}, {w.node, bias.node});

  Output lr = b.scalar<float>(kLr, "lr"), beta1 = b.scalar<float>(kBeta1, "beta1"),
         beta2 = b.scalar<float>(kBeta2, "beta2"), eps = b.scalar<float>(kEpsilon, "epsilon");
  const std::string apply = resource ? "ResourceApplyAdam" : "ApplyAdam";
  auto adam = [&](const Var& var, const Var& m, const Var& v, Output grad, const char* name) {
    return b.op(apply, {var.node, m.node, v.node, beta1_power.value, beta2_power.value, lr, beta1,
                        beta2, eps, grad},
                {{"T", f32}}, std::string("Adam/update_") + name)
        .control();
  };
  const std::vector<Output> updates = {adam(w, m_w, v_w, grads[0], "w"),
                                       adam(bias, m_b, v_b, grads[1], "b")};
  Output train = b.group({advance(b, resource, beta1_power, beta1, updates),
                          advance(b, resource, beta2_power, beta2, updates)},
                         "Adam");
  auto built = b.finish();
  BOOST_REQUIRE_MESSAGE(built.ok(), built.status().to_string());
  Model model{std::move(built).value(), {}, train.node_name(), loss.name(), w.value.name(),
              bias.value.name(), beta1_power.value.name()};
  for (const Var* v : {&w, &bias, &m_w, &v_w, &m_b, &v_b, &beta1_power, &beta2_power})
    model.init.push_back(v->init.node_name());
  return model;
}

// The loss and its gradients at (w, b), by hand: L = mean((w x + b - y)^2).
struct Hand {
  double loss = 0, dw = 0, db = 0;
};
Hand by_hand(double w, double b) {
  Hand h;
  for (float xf : kX) {
    const double x = xf, r = w * x + b - (3 * x + 2);
    h.loss += r * r / 8;
    h.dw += 2 * r * x / 8;
    h.db += 2 * r / 8;
  }
  return h;
}

// One Adam step from m = v = 0 at t = 1 (beta powers beta1, beta2).
double adam_step(double var, double g) {
  const double m = (1 - kBeta1) * g, v = (1 - kBeta2) * g * g;
  const double alpha = kLr * std::sqrt(1 - kBeta2) / (1 - kBeta1);
  return var - m * alpha / (std::sqrt(v) + kEpsilon);
}

float scalar(const Tensor& t) { return t.data<float>()[0]; }

void train_and_check(bool resource, const Mode& mode) {
  const Model model = build(resource);
  auto s = make_session(model.graph, mode);
  must_run(*s, {}, {}, model.init);
  const Hand h0 = by_hand(kW0, kB0);
  const float loss0 = scalar(must_run(*s, {}, {model.loss})[0]);
  BOOST_TEST(std::abs(loss0 - h0.loss) < 1e-4);

  must_run(*s, {}, {}, {model.train});
  auto after = must_run(*s, {}, {model.w, model.b, model.beta1_power});
  BOOST_TEST(std::abs(scalar(after[0]) - adam_step(kW0, h0.dw)) < 1e-6);
  BOOST_TEST(std::abs(scalar(after[1]) - adam_step(kB0, h0.db)) < 1e-6);
  BOOST_TEST(std::abs(scalar(after[2]) - kBeta1 * kBeta1) < 1e-7);

  for (int step = 1; step < 200; ++step) must_run(*s, {}, {}, {model.train});
  auto last = must_run(*s, {}, {model.loss, model.w, model.b});
  BOOST_TEST(scalar(last[0]) < 1e-4 * loss0);
  BOOST_TEST(std::abs(scalar(last[1]) - 3) < 0.01);
  BOOST_TEST(std::abs(scalar(last[2]) - 2) < 0.01);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(training)

BOOST_AUTO_TEST_CASE(linear_regression_with_apply_adam_on_ref_variables) {
  for (const Mode& m : {modes()[0], modes()[2]})
    BOOST_TEST_CONTEXT(m.name) { train_and_check(false, m); }
}

BOOST_AUTO_TEST_CASE(linear_regression_with_resource_apply_adam) {
  for (const Mode& m : {modes()[0], modes()[2]})
    BOOST_TEST_CONTEXT(m.name) { train_and_check(true, m); }
}

// A seeded random op is stateful: each step of a session draws new numbers
// (its generator moves on), and a new session repeats the sequence — what
// initialisers such as tf.truncated_normal(seed=...) rely on.
BOOST_AUTO_TEST_CASE(a_seeded_random_op_draws_anew_each_step_and_repeats_per_session) {
  GraphBuilder b;
  Output r = b.op1("TruncatedNormal", {b.vector<int32_t>({4})},
                   {{"dtype", f32}, {"seed", int64_t{7}}, {"seed2", int64_t{3}}}, "r");
  auto built = b.finish();
  BOOST_REQUIRE_MESSAGE(built.ok(), built.status().to_string());
  for (const Mode& m : {modes()[0], modes()[2]}) {
    BOOST_TEST_CONTEXT(m.name) {
      auto first = make_session(*built, m);
      const Tensor a = must_run(*first, {}, {r.name()})[0];
      const Tensor b2 = must_run(*first, {}, {r.name()})[0];
      BOOST_TEST((a != b2));
      auto second = make_session(*built, m);
      BOOST_TEST((must_run(*second, {}, {r.name()})[0] == a));
      BOOST_TEST((must_run(*second, {}, {r.name()})[0] == b2));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
