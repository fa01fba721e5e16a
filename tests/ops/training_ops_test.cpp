// The optimiser updates (ops/training_ops.cpp) on ref and resource
// variables: values of one step of each against hand computations (float64,
// to 1e-12) and against a naive float loop in TensorFlow's order (float32,
// exactly); the ref output, copy on write, error messages, and concurrent
// updates of one variable.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <thread>
#include <vector>

#include "op_result.hpp"
#include "ops/resource.hpp"

using namespace tagflow::ops;
using testing::contains;
using testing::RunOptions;

namespace {

const DType f32 = DType::float32;
const DType f64 = DType::float64;

template <class T>
Tensor vec(std::vector<T> v) {
  return Tensor::vector<T>(std::move(v));
}

// One session with variables of either kind, made as a graph would make
// them: VariableV2 + Assign, or VarHandleOp + AssignVariableOp.
struct Session {
  ResourceManager rm;
  bool resource = false;  // which kind `variable` makes and `apply` updates

  Expected<std::vector<Tensor>> run(const std::string& op, std::vector<Tensor> inputs,
                                    AttrMap attrs) {
    return testing::run_op(op, std::move(inputs), std::move(attrs), RunOptions{&rm, 1, ""});
  }
  Tensor run1(const std::string& op, std::vector<Tensor> inputs, AttrMap attrs,
              const std::string& node) {
    auto out = testing::run_op(op, std::move(inputs), std::move(attrs), RunOptions{&rm, 1, node});
    BOOST_TEST_REQUIRE(out.ok(), op << ": " << out.status().to_string());
    return out->empty() ? Tensor() : (*out)[0];
  }
  Tensor variable(const std::string& name, const Tensor& value) {
    const AttrMap attrs = {{"dtype", value.dtype()}, {"shape", PartialShape{true, {}}}};
    Tensor h = run1(resource ? "VarHandleOp" : "VariableV2", {}, attrs, name);
    if (resource) run1("AssignVariableOp", {h, value}, {{"dtype", value.dtype()}}, "init");
    else run1("Assign", {h, value}, {{"T", value.dtype()}, {"validate_shape", false}}, "init");
    return h;
  }
  Tensor value(const Tensor& handle) {
    Expected<Tensor> v = deref(handle, rm);
    BOOST_TEST_REQUIRE(v.ok(), v.status().to_string());
    return *v;
  }
  // Runs the ref form (op) or the resource form ("Resource" + op); "ok" or
  // the error.
  std::string apply(const std::string& op, std::vector<Tensor> inputs, AttrMap attrs = {}) {
    if (attrs.count("T") == 0) attrs["T"] = inputs.back().dtype();
    const Tensor ref = inputs[0];
    auto out = run(resource ? "Resource" + op : op, std::move(inputs), std::move(attrs));
    if (!out.ok()) return out.status().to_string();
    if (resource) return out->empty() ? "ok" : "unexpected output";
    return out->size() == 1 && (*out)[0] == ref ? "ok" : "output is not the ref";
  }
};

// Runs `body` once on ref variables and once on resource variables.
template <class F>
void both_kinds(F body) {
  for (bool resource : {false, true}) {
    BOOST_TEST_CONTEXT((resource ? "resource variables" : "ref variables")) {
      Session s;
      s.resource = resource;
      body(s);
    }
  }
}

double at(const Tensor& t, int64_t i) { return element_as_double(t, i); }

}  // namespace

BOOST_AUTO_TEST_SUITE(training_ops)

BOOST_AUTO_TEST_CASE(gradient_descent) {
  both_kinds([](Session& s) {
    Tensor var = s.variable("w", vec<double>({1, 2, -3}));
    BOOST_TEST(s.apply("ApplyGradientDescent",
                       {var, Tensor::scalar<double>(0.5), vec<double>({2, -4, 0.25})}) == "ok");
    BOOST_TEST(s.value(var).debug_string() == "float64[3] [0,4,-3.125]");
  });
}

BOOST_AUTO_TEST_CASE(momentum_plain_and_nesterov) {
  both_kinds([](Session& s) {
    // accum = 0.5 * 0.9 + 2 = 2.45; var = 1 - 2.45 * 0.1 = 0.755.
    Tensor var = s.variable("w", vec<double>({1})), accum = s.variable("a", vec<double>({0.5}));
    const Tensor lr = Tensor::scalar<double>(0.1), mom = Tensor::scalar<double>(0.9);
    BOOST_TEST(s.apply("ApplyMomentum", {var, accum, lr, vec<double>({2}), mom}) == "ok");
    BOOST_TEST(std::abs(at(s.value(accum), 0) - 2.45) < 1e-12);
    BOOST_TEST(std::abs(at(s.value(var), 0) - 0.755) < 1e-12);
    // Nesterov from the same start: var = 1 - (2 * 0.1 + 2.45 * 0.9 * 0.1) = 0.5795.
    Tensor var2 = s.variable("w2", vec<double>({1})), accum2 = s.variable("a2", vec<double>({0.5}));
    BOOST_TEST(s.apply("ApplyMomentum", {var2, accum2, lr, vec<double>({2}), mom},
                       {{"use_nesterov", true}}) == "ok");
    BOOST_TEST(std::abs(at(s.value(accum2), 0) - 2.45) < 1e-12);
    BOOST_TEST(std::abs(at(s.value(var2), 0) - 0.5795) < 1e-12);
  });
}

BOOST_AUTO_TEST_CASE(adagrad_with_and_without_slot_updates) {
  both_kinds([](Session& s) {
    Tensor var = s.variable("w", vec<double>({1})), accum = s.variable("a", vec<double>({0.1}));
    const Tensor lr = Tensor::scalar<double>(0.5), g = vec<double>({0.3});
    BOOST_TEST(s.apply("ApplyAdagrad", {var, accum, lr, g}) == "ok");
    BOOST_TEST(std::abs(at(s.value(accum), 0) - 0.19) < 1e-12);
    BOOST_TEST(std::abs(at(s.value(var), 0) - (1 - 0.15 / std::sqrt(0.19))) < 1e-12);
    BOOST_TEST(s.apply("ApplyAdagrad", {var, accum, lr, g}, {{"T", f64}, {"update_slots", false}}) ==
               "ok");
    BOOST_TEST(std::abs(at(s.value(accum), 0) - 0.19) < 1e-12);
    BOOST_TEST(std::abs(at(s.value(var), 0) - (1 - 0.3 / std::sqrt(0.19))) < 1e-12);
  });
}

BOOST_AUTO_TEST_CASE(rmsprop) {
  both_kinds([](Session& s) {
    Tensor var = s.variable("w", vec<double>({1})), ms = s.variable("ms", vec<double>({1})),
           mom = s.variable("mom", vec<double>({0.25}));
    BOOST_TEST(s.apply("ApplyRMSProp",
                       {var, ms, mom, Tensor::scalar<double>(0.01), Tensor::scalar<double>(0.9),
                        Tensor::scalar<double>(0.5), Tensor::scalar<double>(0.01),
                        vec<double>({2})}) == "ok");
    // ms = 1 + (4 - 1) * 0.1 = 1.3; mom = 0.25 * 0.5 + 0.02 / sqrt(1.31).
    const double m = 0.125 + 0.02 / std::sqrt(1.31);
    BOOST_TEST(std::abs(at(s.value(ms), 0) - 1.3) < 1e-12);
    BOOST_TEST(std::abs(at(s.value(mom), 0) - m) < 1e-12);
    BOOST_TEST(std::abs(at(s.value(var), 0) - (1 - m)) < 1e-12);
  });
}

// The first Adam step from m = v = 0 with bias-corrected powers moves each
// element by almost exactly lr against the sign of its gradient.
BOOST_AUTO_TEST_CASE(adam_one_step_by_hand) {
  both_kinds([](Session& s) {
    Tensor var = s.variable("w", vec<double>({1, 2})), m = s.variable("m", vec<double>({0, 0})),
           v = s.variable("v", vec<double>({0, 0}));
    auto scalar = [](double x) { return Tensor::scalar<double>(x); };
    BOOST_TEST(s.apply("ApplyAdam", {var, m, v, scalar(0.9), scalar(0.999), scalar(0.001),
                                     scalar(0.9), scalar(0.999), scalar(1e-8),
                                     vec<double>({0.1, -0.2})}) == "ok");
    // m = 0.1 g = [0.01, -0.02]; v = 0.001 g^2 = [1e-5, 4e-5];
    // alpha = 0.001 sqrt(0.001) / 0.1 = 3.16227766016838e-4;
    // var -= m alpha / (sqrt(v) + 1e-8).
    const double alpha = 3.16227766016838e-4;
    BOOST_TEST(std::abs(at(s.value(m), 0) - 0.01) < 1e-15);
    BOOST_TEST(std::abs(at(s.value(m), 1) + 0.02) < 1e-15);
    BOOST_TEST(std::abs(at(s.value(v), 0) - 1e-5) < 1e-15);
    BOOST_TEST(std::abs(at(s.value(v), 1) - 4e-5) < 1e-15);
    BOOST_TEST(std::abs(at(s.value(var), 0) - (1 - 0.01 * alpha / (3.16227766016838e-3 + 1e-8))) <
               1e-12);
    BOOST_TEST(std::abs(at(s.value(var), 1) - (2 + 0.02 * alpha / (6.32455532033676e-3 + 1e-8))) <
               1e-12);
    BOOST_TEST(std::abs(at(s.value(var), 0) - 0.999) < 1e-8);  // ~ lr against the sign
    BOOST_TEST(std::abs(at(s.value(var), 1) - 2.001) < 1e-8);
  });
}

// float32 in TensorFlow's order of operations: bit for bit what a naive
// float loop gives; with Nesterov too.
BOOST_AUTO_TEST_CASE(adam_float32_matches_a_naive_loop) {
  for (bool nesterov : {false, true}) {
    both_kinds([nesterov](Session& s) {
      const std::vector<float> var0 = {0.5f, -1.25f, 3.f}, m0 = {0.1f, 0.f, -0.3f},
                               v0 = {0.01f, 0.2f, 0.05f}, g = {0.7f, -0.01f, 2.5f};
      const float b1p = 0.729f, b2p = 0.997003f, lr = 0.01f, b1 = 0.9f, b2 = 0.999f,
                  eps = 1e-7f;
      Tensor var = s.variable("w", vec<float>(var0)), m = s.variable("m", vec<float>(m0)),
             v = s.variable("v", vec<float>(v0));
      auto sc = [](float x) { return Tensor::scalar<float>(x); };
      BOOST_TEST(s.apply("ApplyAdam",
                         {var, m, v, sc(b1p), sc(b2p), sc(lr), sc(b1), sc(b2), sc(eps),
                          vec<float>(g)},
                         {{"T", f32}, {"use_nesterov", nesterov}}) == "ok");
      const float alpha = lr * std::sqrt(1.f - b2p) / (1.f - b1p);
      for (int i = 0; i < 3; ++i) {
        float mi = m0[i], vi = v0[i], wi = var0[i];
        mi += (g[i] - mi) * (1.f - b1);
        vi += (g[i] * g[i] - vi) * (1.f - b2);
        const float num = nesterov ? (g[i] * (1.f - b1) + b1 * mi) * alpha : mi * alpha;
        wi -= num / (std::sqrt(vi) + eps);
        BOOST_TEST(s.value(m).data<float>()[i] == mi);
        BOOST_TEST(s.value(v).data<float>()[i] == vi);
        BOOST_TEST(s.value(var).data<float>()[i] == wi);
      }
    });
  }
}

BOOST_AUTO_TEST_CASE(a_reader_keeps_the_value_it_read) {
  Session s;
  s.resource = true;
  Tensor var = s.variable("w", vec<float>({1, 2}));
  Tensor before = s.run1("ReadVariableOp", {var}, {{"dtype", f32}}, "read");
  BOOST_TEST(s.apply("ApplyGradientDescent", {var, Tensor::scalar<float>(1), vec<float>({1, 1})}) ==
             "ok");
  BOOST_TEST(before.debug_string() == "float32[2] [1,2]");
  BOOST_TEST(s.value(var).debug_string() == "float32[2] [0,1]");
}

BOOST_AUTO_TEST_CASE(errors_name_the_input) {
  both_kinds([](Session& s) {
    const std::string prefix = s.resource ? "invalid_argument: ResourceApplyAdam" :
                                            "invalid_argument: ApplyAdam";
    Tensor var = s.variable("w", vec<float>({1, 2})), m = s.variable("m", vec<float>({0, 0})),
           v = s.variable("v", vec<float>({0, 0})), m3 = s.variable("m3", vec<float>({0, 0, 0}));
    auto sc = [](float x) { return Tensor::scalar<float>(x); };
    const Tensor g = vec<float>({1, 1});
    BOOST_TEST(s.apply("ApplyAdam", {var, m, v, sc(.9f), sc(.9f), vec<float>({1, 1}), sc(.9f),
                                     sc(.9f), sc(1e-8f), g}) ==
               prefix + ": lr is not a scalar: [2]");
    BOOST_TEST(s.apply("ApplyAdam", {var, m3, v, sc(.9f), sc(.9f), sc(.1f), sc(.9f), sc(.9f),
                                     sc(1e-8f), g}) ==
               prefix + ": var and m do not have the same shape: [2] vs [3]");
    BOOST_TEST(s.apply("ApplyAdam", {var, m, v, sc(.9f), sc(.9f), sc(.1f), sc(.9f), sc(.9f),
                                     sc(1e-8f), vec<float>({1})}) ==
               prefix + ": var and grad do not have the same shape: [2] vs [1]");
    BOOST_TEST(s.apply("ApplyAdam", {var, m, v, sc(.9f), Tensor::scalar<double>(.9), sc(.1f),
                                     sc(.9f), sc(.9f), sc(1e-8f), g}) ==
               prefix + " input beta2_power must be float32, got float64");
    const Tensor fresh = s.run1(s.resource ? "VarHandleOp" : "VariableV2", {},
                                {{"dtype", f32}, {"shape", PartialShape{true, {}}}}, "fresh");
    BOOST_TEST(s.apply("ApplyGradientDescent", {fresh, sc(1), g}) ==
               "failed_precondition: variable '/fresh' is not initialized");
    BOOST_TEST(contains(s.apply("ApplyGradientDescent", {sc(1), sc(1), g}),
                        "var must be a scalar resource handle"));
    // Nothing changed on any of these failures.
    BOOST_TEST(s.value(var).debug_string() == "float32[2] [1,2]");
    BOOST_TEST(s.value(m).debug_string() == "float32[2] [0,0]");
    Tensor ints = s.variable("i", vec<int32_t>({1}));
    BOOST_TEST(contains(s.apply("ApplyGradientDescent",
                                {ints, Tensor::scalar<int32_t>(1), vec<int32_t>({1})}),
                        "has no kernel for dtype int32"));
  });
  BOOST_TEST(contains(testing::error_of("ApplyGradientDescent",
                                        {make_handle("w"), Tensor::scalar<float>(1),
                                         vec<float>({1})},
                                        {{"T", f32}}),
                      "needs session state"));
}

BOOST_AUTO_TEST_CASE(concurrent_updates_of_one_variable_all_land) {
  both_kinds([](Session& s) {
    Tensor var = s.variable("w", vec<float>({0, 0})), accum = s.variable("a", vec<float>({0, 0}));
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        for (int i = 0; i < 500; ++i) {
          // momentum 1, lr 0: accum += grad, var unchanged; then var += 1.
          s.apply("ApplyMomentum", {var, accum, Tensor::scalar<float>(0), vec<float>({1, 2}),
                                    Tensor::scalar<float>(1)});
          s.apply("ApplyGradientDescent", {var, Tensor::scalar<float>(-1), vec<float>({1, 1})});
        }
      });
    for (auto& t : threads) t.join();
    BOOST_TEST(s.value(accum).debug_string() == "float32[2] [2000,4000]");
    BOOST_TEST(s.value(var).debug_string() == "float32[2] [2000,2000]");
  });
}

BOOST_AUTO_TEST_CASE(signatures) {
  const OpDef* adam = OpRegistry::global().find("ApplyAdam");
  const OpDef* radam = OpRegistry::global().find("ResourceApplyAdam");
  BOOST_TEST_REQUIRE((adam != nullptr && radam != nullptr));
  BOOST_TEST(adam->inputs().size() == 10u);
  BOOST_TEST(adam->inputs()[2].is_ref);
  BOOST_TEST(!adam->inputs()[3].is_ref);
  BOOST_TEST(adam->outputs().size() == 1u);
  BOOST_TEST(adam->outputs()[0].is_ref);
  BOOST_TEST(radam->outputs().empty());
  BOOST_TEST((radam->inputs()[0].fixed_type == DType::resource));
  BOOST_TEST(adam->is_stateful());
  for (const char* attr : {"use_locking", "use_nesterov", "T"})
    BOOST_TEST((adam->find_attr(attr) != nullptr), attr);
  BOOST_TEST((OpRegistry::global().find("ApplyAdagrad")->find_attr("update_slots") != nullptr));
}

BOOST_AUTO_TEST_SUITE_END()
