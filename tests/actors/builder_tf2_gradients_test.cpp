// GraphBuilder::gradients on graphs built in the tf2 style (functional ops,
// differentiated as written with GradientOptions::functional): the same
// construction code built in the tf1 and the tf2 style has the same first
// and second derivatives, both against central finite differences of the
// forward graph, in float64, for a cond with captures, nested conds, a
// case, and a function call (inlined in the tf1 build); scan and map_fn
// (TensorArrays in tf1, TensorLists in tf2) have the same first
// derivatives, and second ones in tf2.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <optional>

#include "gradient_check.hpp"
#include "graph/autodiff/gradients.hpp"
#include "graph/builder/builder.hpp"
#include "graph/proto/graph_def.pb.h"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using graph::GraphBuilder;
using graph::Output;
using ops::DType;
using ops::Tensor;
using Vars = std::vector<Output>;

namespace {

const ops::PartialShape kScalar{false, {}};

// Forward outputs, their gradients with respect to x and y, and the
// second derivatives d/dx (dy_i/dx) and d/dy (dy_i/dy) of each.
struct Built {
  graph::Graph g;
  std::vector<std::string> ys;
  std::vector<std::string> dxs;  // dys[i]/dx, dys[i]/dy, ... in order
  std::vector<std::string> d2s;  // d/dx (dys[i]/dx), d/dy (dys[i]/dy), ...
};

Output exp(GraphBuilder& b, Output x) { return b.op1("Exp", {x}); }
Output tanh(GraphBuilder& b, Output x) { return b.op1("Tanh", {x}); }

// (x * y + 2 tanh x) * exp(y), as a function or inline.
Output body(GraphBuilder& b, Output x, Output y) {
  return b.mul(b.add(b.mul(x, y), b.mul(tanh(b, x), b.scalar(2.0))), exp(b, y));
}

// The same construction code in both styles; x, y float64, p bool, k int32.
Built build(GraphBuilder::Style style) {
  GraphBuilder b(style);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output p = b.placeholder(DType::boolean, kScalar, "p");
  Output k = b.placeholder(DType::int32, kScalar, "k");
  Output c = b.scalar(1.5, "c");
  Output xy = b.mul(x, y);  // computed outside, captured by the branches
  std::vector<Output> ys;

  // 0: a cond whose branches capture y, c and x*y.
  ys.push_back(b.cond(p, [&] { return Vars{b.add(b.mul(xy, c), b.mul(exp(b, x), y))}; },
                      [&] { return Vars{b.sub(x, b.mul(b.mul(y, y), c))}; })[0]);

  // 1: nested conds on x and y's signs.
  ys.push_back(b.cond(
      p,
      [&] {
        return Vars{b.cond(b.greater(x, b.scalar(0.0)), [&] { return Vars{b.mul(b.mul(x, x), y)}; },
                           [&] { return Vars{b.neg(xy)}; }, "inner")[0]};
      },
      [&] {
        return Vars{b.cond(b.greater(y, b.scalar(0.0)), [&] { return Vars{tanh(b, b.add(x, y))}; },
                           [&] { return Vars{b.mul(xy, y)}; }, "inner")[0]};
      },
      "outer")[0]);

  // 2: a case of three branches (an index out of range takes the last).
  ys.push_back(b.case_(k, {[&] { return Vars{b.mul(xy, x)}; }, [&] { return Vars{b.mul(exp(b, x), y)}; },
                           [&] { return Vars{b.sub(b.mul(x, x), b.mul(y, c))}; }})[0]);

  // 3: a function called inside a cond (inlined in the tf1 build).
  std::string f;
  if (style == GraphBuilder::Style::tf2)
    f = b.function("body", {DType::float64, DType::float64},
                   [](GraphBuilder& fb, const Vars& a) { return Vars{body(fb, a[0], a[1])}; });
  auto call = [&](Output u, Output v) { return f.empty() ? body(b, u, v) : b.call(f, {u, v})[0]; };
  ys.push_back(b.cond(p, [&] { return Vars{call(x, y)}; }, [&] { return Vars{call(y, b.mul(x, c))}; })[0]);

  Built built;
  graph::GradientOptions zeros;  // a derivative that is constant has none of its own
  zeros.unconnected = graph::GradientOptions::Unconnected::zeros;
  for (const Output& out : ys) {
    built.ys.push_back(out.name());
    const std::vector<Output> d = b.gradients({out}, {x, y}, {}, zeros);
    for (const Output& o : d) built.dxs.push_back(o.name());
    built.d2s.push_back(b.gradients({d[0]}, {x}, {}, zeros)[0].name());
    built.d2s.push_back(b.gradients({d[1]}, {y}, {}, zeros)[0].name());
  }
  BOOST_REQUIRE_MESSAGE(b.ok(), b.status().to_string());
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  built.g = std::move(g).value();
  return built;
}

// p and k only for graphs that have them.
struct Feed {
  double x, y;
  std::optional<bool> p;
  int k = 0;
};

actors::Feeds feeds(const Feed& f) {
  actors::Feeds out{{"x", Tensor::scalar<double>(f.x)}, {"y", Tensor::scalar<double>(f.y)}};
  if (f.p) {
    out.push_back({"p", Tensor::scalar<bool>(*f.p)});
    out.push_back({"k", Tensor::scalar<int32_t>(f.k)});
  }
  return out;
}

std::vector<double> run(actors::Session& s, const Feed& f, const std::vector<std::string>& fetches) {
  std::vector<double> out;
  for (const Tensor& t : must_run(s, feeds(f), fetches)) out.push_back(t.scalar_value<double>());
  return out;
}

// Central differences of `fetches` along x and along y: per fetch, d/dx
// then d/dy.
std::vector<double> finite_differences(actors::Session& s, const Feed& f, const std::vector<std::string>& fetches) {
  const double h = 1e-6;
  const auto xu = run(s, {f.x + h, f.y, f.p, f.k}, fetches), xd = run(s, {f.x - h, f.y, f.p, f.k}, fetches);
  const auto yu = run(s, {f.x, f.y + h, f.p, f.k}, fetches), yd = run(s, {f.x, f.y - h, f.p, f.k}, fetches);
  std::vector<double> d;
  for (size_t i = 0; i < fetches.size(); ++i) {
    d.push_back((xu[i] - xd[i]) / (2 * h));
    d.push_back((yu[i] - yd[i]) / (2 * h));
  }
  return d;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(builder_tf2_gradients)

BOOST_AUTO_TEST_CASE(tf1_and_tf2_styles_have_the_same_gradients) {
  Built tf1 = build(GraphBuilder::Style::tf1);
  Built tf2 = build(GraphBuilder::Style::tf2);
  // The tf2 gradients are functional: no cond primitive anywhere.
  for (const graph::Node& n : tf2.g.nodes()) BOOST_TEST((n.op != "Switch" && n.op != "Merge"), n.name);
  for (const auto& f : tf2.g.library().function())
    for (const auto& n : f.node_def()) BOOST_TEST((n.op() != "Switch" && n.op() != "Merge"), n.name());
  for (const Mode& m : {modes()[0], modes()[2]}) {
    auto s1 = make_session(tf1.g, m);
    auto s2 = make_session(tf2.g, m);
    for (const Feed& f : {Feed{0.7, -0.4, true, 0}, Feed{-0.6, 0.9, true, 1}, Feed{0.3, 1.2, false, 2},
                          Feed{-1.1, -0.5, false, 5}}) {
      BOOST_TEST_CONTEXT(m.name << ", x " << f.x << ", y " << f.y << ", p " << *f.p << ", k " << f.k) {
        const auto want1 = finite_differences(*s2, f, tf2.ys);
        const auto want2 = finite_differences(*s2, f, tf2.dxs);
        const auto d1 = run(*s1, f, tf1.dxs), d2 = run(*s2, f, tf2.dxs);
        const auto dd1 = run(*s1, f, tf1.d2s), dd2 = run(*s2, f, tf2.d2s);
        for (size_t i = 0; i < want1.size(); ++i) {
          BOOST_TEST_CONTEXT("first derivative " << i << " (" << tf2.dxs[i] << ")") {
            BOOST_TEST(close(d2[i], want1[i], 1e-6), d2[i] << " vs finite differences " << want1[i]);
            BOOST_TEST(close(d1[i], d2[i], 1e-12), "tf1 " << d1[i] << " vs tf2 " << d2[i]);
          }
          // d2s[i] is d/dx of dxs[i] for even i, d/dy for odd i: the
          // finite differences of dxs[i] along the same variable.
          BOOST_TEST_CONTEXT("second derivative " << i << " (" << tf2.d2s[i] << ")") {
            BOOST_TEST(close(dd2[i], want2[2 * i + (i % 2)], 1e-5),
                       dd2[i] << " vs finite differences " << want2[2 * i + (i % 2)]);
            BOOST_TEST(close(dd1[i], dd2[i], 1e-12), "tf1 " << dd1[i] << " vs tf2 " << dd2[i]);
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(scan_and_map_fn_gradients_in_both_styles) {
  // tf1: loops over TensorArrays, whose stack-based gradient is taken once;
  // tf2: loops over TensorLists, differentiated twice.
  auto build_scan = [](GraphBuilder::Style style, bool second) {
    GraphBuilder b(style);
    Output x = b.placeholder(DType::float64, kScalar, "x");
    Output y = b.placeholder(DType::float64, kScalar, "y");
    Output elems = b.stack({x, b.mul(x, y), y});
    Output s = b.scan([&](const Vars& acc, const Vars& e) { return Vars{tanh(b, b.add(b.mul(acc[0], y), e[0]))}; },
                      {elems}, {x})[0];
    Output m = b.map_fn([&](const Vars& e) { return Vars{b.mul(e[0], exp(b, e[1]))}; }, {elems, s},
                        {DType::float64})[0];
    Output out = b.reduce_sum(b.add(b.mul(s, b.vector<double>({1.0, -2.0, 0.5})), m), b.vector<int32_t>({0}));
    Built built;
    built.ys.push_back(out.name());
    const std::vector<Output> d = b.gradients({out}, {x, y});
    for (const Output& o : d) built.dxs.push_back(o.name());
    if (second) {
      built.d2s.push_back(b.gradients({d[0]}, {x})[0].name());
      built.d2s.push_back(b.gradients({d[1]}, {y})[0].name());
    }
    BOOST_REQUIRE_MESSAGE(b.ok(), b.status().to_string());
    auto g = b.finish();
    BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
    built.g = std::move(g).value();
    return built;
  };
  Built tf1 = build_scan(GraphBuilder::Style::tf1, false);
  Built tf2 = build_scan(GraphBuilder::Style::tf2, true);
  const Mode m = modes()[2];
  auto s1 = make_session(tf1.g, m);
  auto s2 = make_session(tf2.g, m);
  for (const Feed& f : {Feed{0.6, -0.3, {}}, Feed{-1.2, 0.8, {}}}) {
    BOOST_TEST_CONTEXT("x " << f.x << ", y " << f.y) {
      const auto want1 = finite_differences(*s2, f, tf2.ys);
      const auto want2 = finite_differences(*s2, f, tf2.dxs);
      const auto d1 = run(*s1, f, tf1.dxs), d2 = run(*s2, f, tf2.dxs), dd2 = run(*s2, f, tf2.d2s);
      for (size_t i = 0; i < 2; ++i) {
        BOOST_TEST(close(d2[i], want1[i], 1e-6), d2[i] << " vs finite differences " << want1[i]);
        BOOST_TEST(close(d1[i], d2[i], 1e-12), "tf1 " << d1[i] << " vs tf2 " << d2[i]);
        BOOST_TEST(close(dd2[i], want2[3 * i], 1e-5), dd2[i] << " vs finite differences " << want2[3 * i]);
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
