// gradients() with GradientOptions::functional through While / StatelessWhile
// (graph/autodiff/while_gradients.cpp): loops built in GraphBuilder's tf2 style,
// differentiated as functional ops, checked against central finite
// differences in float64 and against the gradient of the lowered graph;
// the gradient of a While is a While, the forward While gains its
// TensorList accumulators.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <tuple>

#include "gradient_check.hpp"
#include "graph/autodiff/gradients.hpp"
#include "graph/builder/builder.hpp"
#include "graph/functions/lower_functional.hpp"
#include "graph/proto/graph_def.pb.h"
#include "graph/validate.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using graph::Endpoint;
using graph::GraphBuilder;
using graph::Output;
using ops::DType;
using ops::Tensor;
using Vars = std::vector<Output>;

namespace {

const ops::PartialShape kScalar{false, {}};

// A graph with float64 inputs `xs` (Placeholders, by name, fed `values`),
// other feeds (`fixed`: iteration counts, predicates) and one float64
// scalar output `y`.
struct Program {
  graph::Graph g;
  std::vector<std::string> xs;
  std::vector<Tensor> values;
  std::string y;
  actors::Feeds fixed;
};

Program finish(GraphBuilder& b, std::vector<std::string> xs, std::vector<Tensor> values, Output y) {
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  return {std::move(g).value(), std::move(xs), std::move(values), y.name(), {}};
}

Tensor scalar(double v) { return Tensor::scalar<double>(v); }

struct Differentiated {
  graph::Graph g;
  std::vector<std::string> dxs;
  std::string scope;
};

Differentiated differentiate(const graph::Graph& in, const std::string& y, const std::vector<std::string>& xs,
                             bool functional) {
  Differentiated out{in, {}, {}};
  std::vector<Endpoint> x_endpoints;
  for (const std::string& x : xs) x_endpoints.push_back(endpoint(out.g, x));
  graph::GradientOptions o;
  o.functional = functional;
  o.unconnected = graph::GradientOptions::Unconnected::zeros;
  auto r = graph::gradients(out.g, {endpoint(out.g, y)}, x_endpoints, {}, o);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  for (const Endpoint& d : r->dxs) out.dxs.push_back(out.g.endpoint_name(d));
  out.scope = r->scope;
  return out;
}

actors::Feeds feeds_of(const Program& p, const std::vector<Tensor>& values) {
  actors::Feeds f = p.fixed;
  for (size_t i = 0; i < p.xs.size(); ++i) f.push_back({p.xs[i], values[i]});
  return f;
}

// Central differences of y along every element of every x.
std::vector<std::vector<double>> finite_differences(actors::Session& s, const Program& p) {
  const double h = 1e-6;
  std::vector<std::vector<double>> d;
  for (size_t i = 0; i < p.xs.size(); ++i) {
    d.emplace_back();
    for (int64_t k = 0; k < p.values[i].num_elements(); ++k) {
      const double* v = p.values[i].data<double>();
      std::vector<double> u(v, v + p.values[i].num_elements()), w = u;
      u[static_cast<size_t>(k)] += h;
      w[static_cast<size_t>(k)] -= h;
      std::vector<Tensor> up = p.values, down = p.values;
      up[i] = Tensor::from_vector(p.values[i].shape(), u);
      down[i] = Tensor::from_vector(p.values[i].shape(), w);
      const double fu = must_run(s, feeds_of(p, up), {p.y})[0].scalar_value<double>();
      const double fd = must_run(s, feeds_of(p, down), {p.y})[0].scalar_value<double>();
      d.back().push_back((fu - fd) / (2 * h));
    }
  }
  return d;
}

// A While among the gradient's nodes, or in a gradient function (that of
// a branch holding the loop).
bool gradient_has_while(const Differentiated& d) {
  if (count_ops(d.g, d.scope + "/", {"StatelessWhile", "While"}) > 0) return true;
  for (const auto& f : d.g.library().function()) {
    const std::string& name = f.signature().name();
    if (name.find("_grad") == std::string::npos) continue;
    for (const auto& n : f.node_def())
      if (n.op() == "StatelessWhile" || n.op() == "While") return true;
  }
  return false;
}

std::unique_ptr<actors::Session> lowered_session(const graph::Graph& g, const Mode& m) {
  actors::SessionOptions o;
  o.lower_functional = true;
  return make_session(g, m, o);
}

// Second derivatives through the gradient While (programs of scalar xs):
// the functional gradient of each first derivative, run as written and
// lowered, against central differences of that first derivative.
void check_second_order(const Program& p, const Differentiated& first) {
  for (size_t i = 0; i < p.xs.size(); ++i) {
    BOOST_TEST_CONTEXT("d/d" << p.xs[i] << " of d/d" << p.xs[i] << "...") {
      Differentiated second = differentiate(first.g, first.dxs[i], p.xs, true);
      Program dp = p;
      dp.g = first.g;
      dp.y = first.dxs[i];
      const Mode m = modes()[2];
      auto s1 = make_session(first.g, m);
      const auto want = finite_differences(*s1, dp);
      const auto got = must_run(*make_session(second.g, m), feeds_of(p, p.values), second.dxs);
      const auto got_lowered = must_run(*lowered_session(second.g, m), feeds_of(p, p.values), second.dxs);
      for (size_t j = 0; j < p.xs.size(); ++j) {
        const double g = got[j].scalar_value<double>();
        BOOST_TEST(close(g, want[j][0], 1e-5),
                   "d2/d" << p.xs[i] << "d" << p.xs[j] << ": " << g << " vs finite differences " << want[j][0]);
        BOOST_TEST(close(g, got_lowered[j].scalar_value<double>(), 1e-10));
      }
    }
  }
}

// The functional gradient against finite differences and, when
// `compare_lowered`, against the gradient of the lowered graph; the
// gradient holds a While and no loop or cond primitives.
void check_program(const Program& p, bool compare_lowered) {
  Differentiated tf2 = differentiate(p.g, p.y, p.xs, true);
  BOOST_TEST(gradient_has_while(tf2), "no While in the gradient");
  BOOST_TEST(count_ops(tf2.g, "", {"Enter", "Exit", "Switch", "Merge", "NextIteration"}) == 0);
  std::unique_ptr<Differentiated> tf1;
  if (compare_lowered) tf1 = std::make_unique<Differentiated>(differentiate(lowered(p.g), p.y, p.xs, false));
  for (const Mode& m : {modes()[0], modes()[2]}) {
    BOOST_TEST_CONTEXT(m.name) {
      auto forward = make_session(p.g, m);
      auto s2 = make_session(tf2.g, m);
      const auto want = finite_differences(*forward, p);
      const auto got = must_run(*s2, feeds_of(p, p.values), tf2.dxs);
      std::vector<Tensor> tf1_got;
      if (tf1) tf1_got = must_run(*make_session(tf1->g, m), feeds_of(p, p.values), tf1->dxs);
      for (size_t i = 0; i < p.xs.size(); ++i) {
        BOOST_REQUIRE_EQUAL(got[i].num_elements(), static_cast<int64_t>(want[i].size()));
        for (size_t k = 0; k < want[i].size(); ++k) {
          const double g = got[i].data<double>()[k];
          BOOST_TEST(close(g, want[i][k], 1e-6),
                     "d/d" << p.xs[i] << "[" << k << "]: " << g << " vs finite differences " << want[i][k]);
          if (tf1) {
            const double l = tf1_got[i].data<double>()[k];
            BOOST_TEST(close(g, l, 1e-10), "d/d" << p.xs[i] << "[" << k << "]: " << g << " vs lowered " << l);
          }
        }
      }
      // The gradient graph lowered gives what it gives run as written.
      const auto lowered_got = must_run(*lowered_session(tf2.g, m), feeds_of(p, p.values), tf2.dxs);
      for (size_t i = 0; i < p.xs.size(); ++i)
        for (int64_t k = 0; k < got[i].num_elements(); ++k)
          BOOST_TEST(close(lowered_got[i].data<double>()[k], got[i].data<double>()[k], 1e-12));
      // Lowered and split round-robin over 2 and 3 devices: the forward
      // and gradient loops cross devices, with control loops.
      for (int devices : {2, 3}) {
        actors::SessionOptions o;
        o.lower_functional = true;
        o.num_devices = devices;
        o.placement.strategy = graph::PlacementOptions::Strategy::round_robin;
        auto split = make_session(tf2.g, m, o);
        const auto split_got = must_run(*split, feeds_of(p, p.values), tf2.dxs);
        BOOST_TEST(split->last_partitions().size() == static_cast<size_t>(devices));
        for (size_t i = 0; i < p.xs.size(); ++i)
          for (int64_t k = 0; k < got[i].num_elements(); ++k)
            BOOST_TEST(close(split_got[i].data<double>()[k], got[i].data<double>()[k], 1e-12));
      }
    }
  }
  bool scalars = true;
  for (const Tensor& v : p.values) scalars = scalars && v.shape().is_scalar();
  if (scalars) check_second_order(p, tf2);
}

Output tanh(GraphBuilder& b, Output x) { return b.op1("Tanh", {x}); }

// v = y; n times: v = tanh(v) * x + 0.3 * v, with i < n counting; out = v.
Program simple_loop(int n) {
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output limit = b.scalar<int32_t>(n, "n");
  Output out = b.while_loop([&](const Vars& v) { return b.less(v[0], limit); },
                            [&](const Vars& v) {
                              return Vars{b.add(v[0], b.scalar<int32_t>(1)),
                                          b.add(b.mul(tanh(b, v[1]), x), b.mul(b.scalar(0.3), v[1]))};
                            },
                            {b.scalar<int32_t>(0), y})[1];
  return finish(b, {"x", "y"}, {scalar(0.7), scalar(-0.4)}, out);
}

// The forward While of a differentiated graph: the first While node.
const graph::Node& first_while(const graph::Graph& g) {
  for (const graph::Node& n : g.nodes())
    if (n.op == "StatelessWhile" || n.op == "While") return n;
  BOOST_FAIL("no While");
  return g.node(0);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(functional_while_gradients)

BOOST_AUTO_TEST_CASE(a_while_has_a_while_for_gradient) {
  for (int n : {0, 1, 5, 50}) {
    BOOST_TEST_CONTEXT(n << " iterations") { check_program(simple_loop(n), n != 50); }
  }
}

// For(start, limit, delta): v = tanh(v) * x + i * 0.1 * v per index i,
// then out = v * y; the index enters the body.
Program for_loop(int start, int limit, int delta) {
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  const std::string body = b.function("for_body", {DType::int32, DType::float64, DType::float64},
                                      [](GraphBuilder& f, const Vars& a) {
                                        Output i = f.op1("Cast", {a[0]}, {{"DstT", DType::float64}});
                                        Output v = f.add(f.mul(tanh(f, a[1]), a[2]),
                                                         f.mul(f.mul(i, f.scalar(0.1)), a[1]));
                                        return Vars{v, a[2]};
                                      });
  Output v = b.for_loop(b.scalar<int32_t>(start), b.scalar<int32_t>(limit), b.scalar<int32_t>(delta), body,
                        {y, x}, {"for"})[0];
  return finish(b, {"x", "y"}, {scalar(0.6), scalar(-0.8)}, b.mul(v, y));
}

BOOST_AUTO_TEST_CASE(a_for_has_a_while_for_gradient) {
  for (auto [start, limit, delta] : {std::tuple{0, 5, 1}, std::tuple{6, -1, -2}, std::tuple{3, 3, 1}}) {
    BOOST_TEST_CONTEXT("For(" << start << ", " << limit << ", " << delta << ")") {
      check_program(for_loop(start, limit, delta), true);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_fors_gradient_keeps_its_zero_delta_error) {
  Program p = for_loop(0, 5, 0);
  Differentiated d = differentiate(p.g, p.y, p.xs, true);
  for (bool lower : {false, true}) {
    actors::SessionOptions o;
    o.lower_functional = lower;
    auto s = make_session(d.g, modes()[2], o);
    auto r = s->run(feeds_of(p, p.values), d.dxs);
    BOOST_REQUIRE(!r.ok());
    BOOST_TEST(r.status().message().find("delta must be non-zero") != std::string::npos, r.status().to_string());
    BOOST_TEST(s->run(feeds_of(p, p.values), {p.y}).ok() == false);  // the forward For itself fails too
  }
}

BOOST_AUTO_TEST_CASE(the_forward_while_gains_a_counter_and_accumulators) {
  Program p = simple_loop(5);
  const graph::Node before = first_while(p.g);
  Differentiated d = differentiate(p.g, p.y, p.xs, true);
  const graph::Node& after = first_while(d.g);
  BOOST_TEST(after.name == before.name);
  BOOST_REQUIRE(after.output_types.size() > before.output_types.size() + 1);
  for (size_t i = 0; i < before.output_types.size(); ++i) BOOST_TEST((after.output_types[i] == before.output_types[i]));
  BOOST_TEST((after.output_types[before.output_types.size()] == DType::int32));  // the counter
  for (size_t i = before.output_types.size() + 1; i < after.output_types.size(); ++i) {
    BOOST_TEST((after.output_types[i] == DType::variant));
    BOOST_TEST(d.g.node(after.inputs[i].node).op == "EmptyTensorList");
  }
  int pushes = 0, pops = 0;
  for (const auto& f : d.g.library().function())
    for (const auto& n : f.node_def()) {
      pushes += n.op() == "TensorListPushBack";
      pops += n.op() == "TensorListPopBack";
    }
  const int lists = static_cast<int>(after.output_types.size() - before.output_types.size() - 1);
  BOOST_TEST(pushes == lists);
  BOOST_TEST(pops == lists);
  // The forward outputs are unchanged.
  for (const Mode& m : {modes()[0]}) {
    auto s1 = make_session(p.g, m);
    auto s2 = make_session(d.g, m);
    const double a = must_run(*s1, feeds_of(p, p.values), {p.y})[0].scalar_value<double>();
    const double b = must_run(*s2, feeds_of(p, p.values), {p.y})[0].scalar_value<double>();
    BOOST_TEST(a == b);
  }
}

BOOST_AUTO_TEST_CASE(a_loop_invariant_capture_used_in_several_places) {
  // c is captured and used three times in the body, and c * x (invariant)
  // is computed there: v = tanh(c * v) + (c * x) * v * 0.2 + c; out = v * c.
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output c = b.placeholder(DType::float64, kScalar, "c");
  Output out = b.while_loop([&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(4)); },
                            [&](const Vars& v) {
                              Output cx = b.mul(c, x);
                              Output next = b.add(b.add(tanh(b, b.mul(c, v[1])), b.mul(b.mul(cx, v[1]), b.scalar(0.2))), c);
                              return Vars{b.add(v[0], b.scalar<int32_t>(1)), next};
                            },
                            {b.scalar<int32_t>(0), y})[1];
  Program p = finish(b, {"x", "y", "c"}, {scalar(0.6), scalar(0.8), scalar(-0.7)}, b.mul(out, c));
  check_program(p, true);
}

BOOST_AUTO_TEST_CASE(a_nested_while) {
  // n = 3 outer iterations of: w = v; 2 times: w = tanh(w * x) + 0.1 * v; v = w + 0.5 * v.
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output out = b.while_loop(
      [&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(3)); },
      [&](const Vars& v) {
        Output outer_v = v[1];
        Output w = b.while_loop([&](const Vars& u) { return b.less(u[0], b.scalar<int32_t>(2)); },
                                [&](const Vars& u) {
                                  return Vars{b.add(u[0], b.scalar<int32_t>(1)),
                                              b.add(tanh(b, b.mul(u[1], x)), b.mul(b.scalar(0.1), outer_v))};
                                },
                                {b.scalar<int32_t>(0), outer_v})[1];
        return Vars{b.add(v[0], b.scalar<int32_t>(1)), b.add(w, b.mul(b.scalar(0.5), v[1]))};
      },
      {b.scalar<int32_t>(0), y})[1];
  Program p = finish(b, {"x", "y"}, {scalar(0.9), scalar(0.4)}, out);
  check_program(p, true);
}

BOOST_AUTO_TEST_CASE(an_if_inside_a_while) {
  // 5 iterations of: v = i < 2 ? tanh(v * x) : v * x + 0.1 * v * v.
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output out = b.while_loop(
      [&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(5)); },
      [&](const Vars& v) {
        Output i = v[0], w = v[1];
        Output next = b.cond(b.less(i, b.scalar<int32_t>(2)), [&] { return Vars{tanh(b, b.mul(w, x))}; },
                             [&] { return Vars{b.add(b.mul(w, x), b.mul(b.scalar(0.1), b.mul(w, w)))}; })[0];
        return Vars{b.add(i, b.scalar<int32_t>(1)), next};
      },
      {b.scalar<int32_t>(0), y})[1];
  Program p = finish(b, {"x", "y"}, {scalar(0.8), scalar(1.3)}, out);
  check_program(p, true);
}

BOOST_AUTO_TEST_CASE(a_while_inside_an_if) {
  // p ? (4 times: v = tanh(v) * x + 0.2, from y) : x * y, for both p.
  for (bool which : {true, false}) {
    GraphBuilder b(GraphBuilder::Style::tf2);
    Output x = b.placeholder(DType::float64, kScalar, "x");
    Output y = b.placeholder(DType::float64, kScalar, "y");
    Output pred = b.placeholder(DType::boolean, kScalar, "p");
    Output out = b.cond(
        pred,
        [&] {
          return Vars{b.while_loop([&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(4)); },
                                   [&](const Vars& v) {
                                     return Vars{b.add(v[0], b.scalar<int32_t>(1)),
                                                 b.add(b.mul(tanh(b, v[1]), x), b.scalar(0.2))};
                                   },
                                   {b.scalar<int32_t>(0), y})[1]};
        },
        [&] { return Vars{b.mul(x, y)}; })[0];
    Program p = finish(b, {"x", "y"}, {scalar(1.1), scalar(-0.5)}, out);
    p.fixed.push_back({"p", Tensor::scalar<bool>(which)});
    BOOST_TEST_CONTEXT("p = " << which) { check_program(p, false); }
  }
}

BOOST_AUTO_TEST_CASE(maximum_iterations) {
  // while v < 1e9 (never false here), at most n times: v = v * x + tanh(v).
  for (int n : {0, 3}) {
    GraphBuilder b(GraphBuilder::Style::tf2);
    Output x = b.placeholder(DType::float64, kScalar, "x");
    Output y = b.placeholder(DType::float64, kScalar, "y");
    Output limit = b.placeholder(DType::int32, kScalar, "n");
    graph::WhileOptions o;
    o.maximum_iterations = limit;
    Output out = b.while_loop([&](const Vars& v) { return b.less(v[0], b.scalar(1e9)); },
                              [&](const Vars& v) { return Vars{b.add(b.mul(v[0], x), tanh(b, v[0]))}; }, {y}, o)[0];
    Program p = finish(b, {"x", "y"}, {scalar(0.9), scalar(0.6)}, out);
    p.fixed.push_back({"n", Tensor::scalar<int32_t>(n)});
    BOOST_TEST_CONTEXT(n << " iterations") { check_program(p, true); }
  }
}

BOOST_AUTO_TEST_CASE(a_matmul_body) {
  // v = y (2x2); 3 times: v = tanh(v m) ; out = sum(v).
  GraphBuilder b(GraphBuilder::Style::tf2);
  const ops::PartialShape two{false, {2, 2}};
  Output m = b.placeholder(DType::float64, two, "m");
  Output y = b.placeholder(DType::float64, two, "y");
  Output out = b.while_loop([&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(3)); },
                            [&](const Vars& v) {
                              return Vars{b.add(v[0], b.scalar<int32_t>(1)), tanh(b, b.matmul(v[1], m))};
                            },
                            {b.scalar<int32_t>(0), y})[1];
  Output sum = b.reduce_sum(out, b.vector<int32_t>({0, 1}));
  const Tensor mv = Tensor::from_vector<double>(ops::Shape{2, 2}, {0.5, -0.3, 0.8, 0.2});
  const Tensor yv = Tensor::from_vector<double>(ops::Shape{2, 2}, {0.1, 0.7, -0.4, 0.9});
  Program p = finish(b, {"m", "y"}, {mv, yv}, sum);
  check_program(p, true);
}

BOOST_AUTO_TEST_CASE(an_op_without_gradient_in_the_body_is_an_error_naming_the_body) {
  // v = Prod(v * x, axes) 3 times: Prod has no gradient.
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  graph::WhileOptions o;
  o.name = "loop";
  Output out = b.while_loop([&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(3)); },
                            [&](const Vars& v) {
                              Output prod = b.op1("Prod", {b.mul(v[1], x), b.scalar<int32_t>(0)});
                              return Vars{b.add(v[0], b.scalar<int32_t>(1)), prod};
                            },
                            {b.scalar<int32_t>(0), x}, o)[1];
  Program p = finish(b, {"x"}, {scalar(0.5)}, out);
  graph::Graph g = p.g;
  const graph::Graph before = g;
  graph::GradientOptions go;
  go.functional = true;
  auto r = graph::gradients(g, {endpoint(g, p.y)}, {endpoint(g, "x")}, {}, go);
  BOOST_REQUIRE(!r.ok());
  const std::string m = r.status().to_string();
  BOOST_TEST(m.find("node 'loop'") != std::string::npos, m);
  BOOST_TEST(m.find("body 'loop_body") != std::string::npos, m);
  BOOST_TEST(m.find("op Prod") != std::string::npos, m);
  BOOST_TEST(g.equals(before));  // a failure leaves the graph as it was
}

// A small tanh RNN: h = tanh(h W + x) for `steps` steps, loss = sum(h * h),
// built in the given style; W is 3x3, h and x are 1x3.
Program rnn(GraphBuilder::Style style, int steps) {
  GraphBuilder b(style);
  Output w = b.placeholder(DType::float64, {false, {3, 3}}, "w");
  Output x = b.placeholder(DType::float64, {false, {1, 3}}, "x");
  Output h0 = b.placeholder(DType::float64, {false, {1, 3}}, "h0");
  Output h = b.while_loop([&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(steps)); },
                          [&](const Vars& v) {
                            return Vars{b.add(v[0], b.scalar<int32_t>(1)), tanh(b, b.add(b.matmul(v[1], w), x))};
                          },
                          {b.scalar<int32_t>(0), h0})[1];
  Output loss = b.reduce_sum(b.mul(h, h), b.vector<int32_t>({0, 1}));
  const Tensor wv = Tensor::from_vector<double>(ops::Shape{3, 3}, {0.4, -0.2, 0.1, 0.3, 0.5, -0.6, -0.1, 0.2, 0.7});
  const Tensor xv = Tensor::from_vector<double>(ops::Shape{1, 3}, {0.1, -0.3, 0.2});
  const Tensor hv = Tensor::from_vector<double>(ops::Shape{1, 3}, {0.5, 0.1, -0.2});
  return finish(b, {"w", "x", "h0"}, {wv, xv, hv}, loss);
}

BOOST_AUTO_TEST_CASE(an_rnn_built_tf1_and_tf2_style_has_the_same_gradients) {
  Program tf2 = rnn(GraphBuilder::Style::tf2, 6);
  Program tf1 = rnn(GraphBuilder::Style::tf1, 6);
  check_program(tf2, true);
  Differentiated d2 = differentiate(tf2.g, tf2.y, tf2.xs, true);
  Differentiated d1 = differentiate(tf1.g, tf1.y, tf1.xs, false);
  for (const Mode& m : {modes()[0], modes()[3]}) {
    BOOST_TEST_CONTEXT(m.name) {
      auto a = must_run(*make_session(d2.g, m), feeds_of(tf2, tf2.values), d2.dxs);
      auto c = must_run(*make_session(d1.g, m), feeds_of(tf1, tf1.values), d1.dxs);
      for (size_t i = 0; i < a.size(); ++i)
        for (int64_t k = 0; k < a[i].num_elements(); ++k)
          BOOST_TEST(close(a[i].data<double>()[k], c[i].data<double>()[k], 1e-12));
    }
  }
}

BOOST_AUTO_TEST_CASE(hessian_vector_products_of_an_rnn) {
  // H v for the loss's Hessian w.r.t. W, along v: the gradient of
  // sum(dloss/dW * v), against central differences of dloss/dW * v along
  // W, run as written and lowered.
  Program p = rnn(GraphBuilder::Style::tf2, 5);
  Differentiated first = differentiate(p.g, p.y, {"w"}, true);
  const Tensor v = Tensor::from_vector<double>(ops::Shape{3, 3}, {0.3, -0.1, 0.2, 0.05, 0.4, -0.2, 0.1, 0.0, -0.3});
  graph::Graph g = first.g;
  // dot = sum(dW * v) as nodes of g.
  const graph::NodeId vid = g.add_node([&] {
    graph::Node n;
    n.name = "hvp_v";
    n.op = "Const";
    n.attrs["dtype"] = DType::float64;
    n.attrs["value"] = v;
    return n;
  }()).value();
  graph::Node mul;
  mul.name = "hvp_mul";
  mul.op = "Mul";
  mul.attrs["T"] = DType::float64;
  mul.inputs = {endpoint(g, first.dxs[0]), {vid, 0}};
  const graph::NodeId mid = g.add_node(mul).value();
  graph::Node axes;
  axes.name = "hvp_axes";
  axes.op = "Const";
  axes.attrs["dtype"] = DType::int32;
  axes.attrs["value"] = Tensor::vector<int32_t>({0, 1});
  const graph::NodeId aid = g.add_node(axes).value();
  graph::Node sum;
  sum.name = "hvp_dot";
  sum.op = "Sum";
  sum.attrs["T"] = DType::float64;
  sum.attrs["Tidx"] = DType::int32;
  sum.inputs = {{mid, 0}, {aid, 0}};
  BOOST_REQUIRE(g.add_node(sum).ok());
  BOOST_REQUIRE(graph::validate(g).ok());
  Differentiated second = differentiate(g, "hvp_dot", {"w"}, true);
  Program dot = p;
  dot.g = g;
  dot.y = "hvp_dot";
  dot.xs = {"w"};
  dot.values = {p.values[0]};
  dot.fixed = {{"x", p.values[1]}, {"h0", p.values[2]}};
  for (const Mode& m : {modes()[0], modes()[2]}) {
    BOOST_TEST_CONTEXT(m.name) {
      const auto want = finite_differences(*make_session(g, m), dot);
      const auto got = must_run(*make_session(second.g, m), feeds_of(dot, dot.values), second.dxs);
      const auto lowered_got = must_run(*lowered_session(second.g, m), feeds_of(dot, dot.values), second.dxs);
      for (size_t k = 0; k < want[0].size(); ++k) {
        BOOST_TEST(close(got[0].data<double>()[k], want[0][k], 1e-5),
                   "(Hv)[" << k << "] = " << got[0].data<double>()[k] << " vs finite differences " << want[0][k]);
        BOOST_TEST(close(lowered_got[0].data<double>()[k], got[0].data<double>()[k], 1e-10));
      }
    }
  }
}

// --- TensorList ops' gradients ------------------------------------------------

ops::AttrMap f64_list() { return {{"element_dtype", DType::float64}}; }

Output empty_list(GraphBuilder& b) {
  return b.op1("EmptyTensorList", {b.vector<int32_t>({}), b.scalar<int32_t>(-1)},
               {{"element_dtype", DType::float64}, {"shape_type", DType::int32}});
}

// First order against finite differences for any program; second order
// too when every x is a scalar.
void check_list_program(const Program& p) {
  Differentiated first = differentiate(p.g, p.y, p.xs, true);
  for (const Mode& m : {modes()[0], modes()[2]}) {
    BOOST_TEST_CONTEXT(m.name) {
      const auto want = finite_differences(*make_session(p.g, m), p);
      const auto got = must_run(*make_session(first.g, m), feeds_of(p, p.values), first.dxs);
      for (size_t i = 0; i < p.xs.size(); ++i)
        for (size_t k = 0; k < want[i].size(); ++k)
          BOOST_TEST(close(got[i].data<double>()[k], want[i][k], 1e-6),
                     "d/d" << p.xs[i] << "[" << k << "]: " << got[i].data<double>()[k] << " vs " << want[i][k]);
    }
  }
  bool scalars = true;
  for (const Tensor& v : p.values) scalars = scalars && v.shape().is_scalar();
  if (scalars) check_second_order(p, first);
}

BOOST_AUTO_TEST_CASE(push_back_and_stack) {
  // stack(push(push(empty, x * y), tanh(x))) -> sum of squares.
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output l = b.op1("TensorListPushBack", {empty_list(b), b.mul(x, y)}, f64_list());
  l = b.op1("TensorListPushBack", {l, tanh(b, x)}, f64_list());
  Output stacked = b.op1("TensorListStack", {l, b.vector<int32_t>({})}, f64_list());
  Output loss = b.reduce_sum(b.mul(stacked, stacked), b.vector<int32_t>({0}));
  check_list_program(finish(b, {"x", "y"}, {scalar(0.7), scalar(-1.2)}, loss));
}

BOOST_AUTO_TEST_CASE(push_back_then_pop_back) {
  // a, b popped off push(push(empty, x*x), y*x): a * tanh(b) + a.
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output l = b.op1("TensorListPushBack", {empty_list(b), b.mul(x, x)}, f64_list());
  l = b.op1("TensorListPushBack", {l, b.mul(y, x)}, f64_list());
  graph::Outputs last = b.op("TensorListPopBack", {l, b.vector<int32_t>({})}, f64_list());
  graph::Outputs first = b.op("TensorListPopBack", {last[0], b.vector<int32_t>({})}, f64_list());
  Output out = b.add(b.mul(first[1], tanh(b, last[1])), first[1]);
  check_list_program(finish(b, {"x", "y"}, {scalar(0.9), scalar(0.4)}, out));
}

BOOST_AUTO_TEST_CASE(from_tensor_get_item_and_set_item) {
  // l = from_tensor(v); l' = set_item(l, 0, tanh(v[1])); sum(stack(l')^2) + l[2] * v[0].
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output v = b.placeholder(DType::float64, {false, {3}}, "v");
  Output l = b.op1("TensorListFromTensor", {v, b.vector<int32_t>({})},
                   {{"element_dtype", DType::float64}, {"shape_type", DType::int32}});
  Output one = b.op1("TensorListGetItem", {l, b.scalar<int32_t>(1), b.vector<int32_t>({})}, f64_list());
  Output two = b.op1("TensorListGetItem", {l, b.scalar<int32_t>(2), b.vector<int32_t>({})}, f64_list());
  Output set = b.op1("TensorListSetItem", {l, b.scalar<int32_t>(0), tanh(b, one)}, f64_list());
  Output stacked = b.op1("TensorListStack", {set, b.vector<int32_t>({})}, f64_list());
  Output v0 = b.reshape(b.gather(v, b.scalar<int32_t>(0), b.scalar<int32_t>(0)), b.vector<int32_t>({}));
  Output out = b.add(b.reduce_sum(b.mul(stacked, stacked), b.vector<int32_t>({0})), b.mul(two, v0));
  check_list_program(
      finish(b, {"v"}, {Tensor::from_vector<double>(ops::Shape{3}, {0.3, -0.8, 1.1})}, out));
}

BOOST_AUTO_TEST_CASE(a_scan_over_tensor_lists) {
  // TensorFlow 2's scan: elems in a list (FromTensor), read by GetItem in a
  // While whose body pushes each accumulator (acc = tanh(acc * w + e_i));
  // the stacked accumulators times c, summed. First and second order.
  for (int n : {1, 4}) {
    GraphBuilder b(GraphBuilder::Style::tf2);
    Output w = b.placeholder(DType::float64, kScalar, "w");
    Output a0 = b.placeholder(DType::float64, kScalar, "a0");
    std::vector<double> e;
    for (int i = 0; i < n; ++i) e.push_back(0.3 * i - 0.2);
    Output elems = b.op1("TensorListFromTensor",
                         {b.constant(Tensor::from_vector<double>(ops::Shape{n}, e)), b.vector<int32_t>({})},
                         {{"element_dtype", DType::float64}, {"shape_type", DType::int32}});
    graph::Outputs out = b.while_loop(
        [&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(n)); },
        [&](const Vars& v) {
          Output item = b.op1("TensorListGetItem", {v[2], v[0], b.vector<int32_t>({})}, f64_list());
          Output acc = tanh(b, b.add(b.mul(v[1], w), item));
          Output pushed = b.op1("TensorListPushBack", {v[3], acc}, f64_list());
          return Vars{b.add(v[0], b.scalar<int32_t>(1)), acc, v[2], pushed};
        },
        {b.scalar<int32_t>(0), a0, elems, empty_list(b)});
    Output stacked = b.op1("TensorListStack", {out[3], b.vector<int32_t>({})}, f64_list());
    std::vector<double> c;
    for (int i = 0; i < n; ++i) c.push_back(1.0 + 0.5 * i);
    Output loss = b.reduce_sum(b.mul(stacked, b.constant(Tensor::from_vector<double>(ops::Shape{n}, c))),
                               b.vector<int32_t>({0}));
    BOOST_TEST_CONTEXT(n << " elements") {
      check_program(finish(b, {"w", "a0"}, {scalar(0.8), scalar(0.5)}, loss), false);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
