// gradients() with GradientOptions::functional (graph/autodiff/functional_gradients.hpp):
// calls, If and Case differentiated as functional ops, checked against
// central finite differences in float64, against the gradient of the
// lowered graph, after lowering the gradient graph itself, and a second
// order gradient through an If against finite differences of the first.
#include <boost/test/unit_test.hpp>

#include <cmath>

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

// A graph with float64 inputs `xs` (Placeholders, by name), an int32 or
// bool selector `sel` and one float64 output `y`.
struct Program {
  graph::Graph g;
  std::vector<std::string> xs;
  std::string y;
  std::string sel;  // "" when there is none
};

Program finish(GraphBuilder& b, std::vector<std::string> xs, Output y, std::string sel) {
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  return {std::move(g).value(), std::move(xs), y.name(), std::move(sel)};
}

// The program with d y / d xs added; the names of the gradients.
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

double value(const Tensor& t) { return t.scalar_value<double>(); }

actors::Feeds feeds_of(const Program& p, const std::vector<double>& x, const std::optional<Tensor>& sel) {
  actors::Feeds f;
  for (size_t i = 0; i < p.xs.size(); ++i) f.push_back({p.xs[i], Tensor::scalar<double>(x[i])});
  if (sel) f.push_back({p.sel, *sel});
  return f;
}

// Central differences of fetch `name` of session `s` along each x.
std::vector<double> finite_differences(actors::Session& s, const Program& p, const std::string& name,
                                       const std::vector<double>& x, const std::optional<Tensor>& sel) {
  const double h = 1e-6;
  std::vector<double> d;
  for (size_t i = 0; i < x.size(); ++i) {
    std::vector<double> up = x, down = x;
    up[i] += h;
    down[i] -= h;
    const double fu = value(must_run(s, feeds_of(p, up, sel), {name})[0]);
    const double fd = value(must_run(s, feeds_of(p, down, sel), {name})[0]);
    d.push_back((fu - fd) / (2 * h));
  }
  return d;
}

// The functional gradient against finite differences, against the gradient
// of the lowered program (unless `compare_lowered` is false: the lowered
// form of a Case, _SwitchN, has no gradient), and run on its own lowered
// form; for each selector value.
void check_program(const Program& p, const std::vector<double>& x, const std::vector<std::optional<Tensor>>& sels,
                   const std::string& gradient_op, bool compare_lowered = true) {
  Differentiated tf2 = differentiate(p.g, p.y, p.xs, true);
  BOOST_TEST(count_ops(tf2.g, tf2.scope + "/", {gradient_op}) >= 1, "no " << gradient_op << " in the gradient");
  BOOST_TEST(count_ops(tf2.g, tf2.scope + "/", {"Switch", "Merge", "_SwitchN"}) == 0);
  Differentiated tf1 = compare_lowered ? differentiate(lowered(p.g), p.y, p.xs, false) : tf2;
  const graph::Graph tf2_lowered = lowered(tf2.g);
  for (const Mode& m : {modes()[0], modes()[2]}) {
    BOOST_TEST_CONTEXT(m.name) {
      auto forward = make_session(p.g, m);
      auto s2 = make_session(tf2.g, m);
      auto s1 = make_session(tf1.g, m);
      auto s2l = make_session(tf2_lowered, m);
      for (const auto& sel : sels) {
        BOOST_TEST_CONTEXT("selector " << (sel ? sel->debug_string() : "none")) {
          const std::vector<double> want = finite_differences(*forward, p, p.y, x, sel);
          auto got = must_run(*s2, feeds_of(p, x, sel), tf2.dxs);
          auto lowered_got = must_run(*s1, feeds_of(p, x, sel), tf1.dxs);
          auto run_lowered = must_run(*s2l, feeds_of(p, x, sel), tf2.dxs);
          for (size_t i = 0; i < x.size(); ++i) {
            BOOST_TEST(std::abs(value(got[i]) - want[i]) < 1e-6, "d/d" << p.xs[i] << ": " << value(got[i])
                                                                       << " vs finite differences " << want[i]);
            BOOST_TEST(std::abs(value(got[i]) - value(lowered_got[i])) < 1e-12);
            BOOST_TEST(value(run_lowered[i]) == value(got[i]));
          }
        }
      }
    }
  }
}

std::vector<std::optional<Tensor>> both_branches() {
  return {Tensor::scalar<bool>(true), Tensor::scalar<bool>(false)};
}

Output tanh(GraphBuilder& f, Output x) { return f.op1("Tanh", {x}); }
Output exp(GraphBuilder& f, Output x) { return f.op1("Exp", {x}); }
Output sigmoid(GraphBuilder& f, Output x) { return f.op1("Sigmoid", {x}); }

const std::vector<DType> kTwo{DType::float64, DType::float64};

// p ? tanh(x) * y : exp(x): the branches need different intermediates.
Program if_program() {
  GraphBuilder b;
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output p = b.placeholder(DType::boolean, kScalar, "p");
  const std::string t = b.function("then", kTwo, [](GraphBuilder& f, const Vars& a) {
    return Vars{f.mul(tanh(f, a[0]), a[1])};
  });
  const std::string e = b.function("else", kTwo, [](GraphBuilder& f, const Vars& a) { return Vars{exp(f, a[0])}; });
  Output out = b.functional_if(p, t, e, {x, y})[0];
  return finish(b, {"x", "y"}, b.mul(out, y, {"out"}), "p");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(functional_gradients)

BOOST_AUTO_TEST_CASE(a_call_has_a_call_of_its_gradient_function) {
  // f(x, y) = tanh(x) * y + x * x, called by PartitionedCall and then by a
  // plain call node; out = f(x, y) * f(y, x).
  GraphBuilder b;
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  const std::string f = b.function("f", kTwo, [](GraphBuilder& fb, const Vars& a) {
    return Vars{fb.add(fb.mul(tanh(fb, a[0]), a[1]), fb.mul(a[0], a[0]))};
  });
  Output c = b.call(f, {x, y}, {"call"})[0];
  Program p = finish(b, {"x", "y"}, c, "");
  graph::Node plain;
  plain.name = "plain";
  plain.op = f;
  plain.inputs = {{p.g.find("y"), 0}, {p.g.find("x"), 0}};
  BOOST_REQUIRE(p.g.add_node(std::move(plain)).ok());
  graph::Node out;
  out.name = "out";
  out.op = "Mul";
  out.attrs = {{"T", DType::float64}};
  out.inputs = {{p.g.find("call"), 0}, {p.g.find("plain"), 0}};
  BOOST_REQUIRE(p.g.add_node(std::move(out)).ok());
  BOOST_REQUIRE(graph::validate(p.g).ok());
  p.y = "out";
  check_program(p, {0.7, -1.3}, {std::nullopt}, "PartitionedCall");

  // The forward calls return the intermediates their gradients read.
  Differentiated d = differentiate(p.g, p.y, p.xs, true);
  const graph::Node& call = d.g.node(d.g.find("call"));
  BOOST_TEST(call.output_types.size() > 1u);
  BOOST_TEST(call.attr<ops::NameAttrList>("f")->name != f);
  BOOST_TEST(d.g.node(d.g.find("plain")).op != f);
  BOOST_TEST(count_ops(d.g, d.scope + "/", {"TanhGrad"}) == 0);  // inside the gradient function
}

BOOST_AUTO_TEST_CASE(an_if_has_an_if_over_optionals_of_each_branch) {
  Program p = if_program();
  check_program(p, {0.4, 1.7}, both_branches(), "StatelessIf");
  // The forward If is rewritten once: one Optional output per intermediate
  // of either branch, both branch functions replaced.
  Differentiated d = differentiate(p.g, p.y, p.xs, true);
  graph::NodeId if_id = graph::kNoNode;
  for (graph::NodeId id = 0; id < d.g.num_nodes() && if_id == graph::kNoNode; ++id)
    if (d.g.node(id).op == "StatelessIf") if_id = id;  // the forward one comes first
  BOOST_REQUIRE(if_id != graph::kNoNode);
  const graph::Node& fwd = d.g.node(if_id);
  BOOST_TEST(fwd.output_types.size() > 1u);
  for (size_t i = 1; i < fwd.output_types.size(); ++i) BOOST_TEST((fwd.output_types[i] == DType::variant));
  BOOST_TEST(fwd.attr<ops::NameAttrList>("then_branch")->name == "then_fwd");
  BOOST_TEST(fwd.attr<ops::NameAttrList>("else_branch")->name == "else_fwd");
  int optionals = 0;
  for (const auto& f : d.g.library().function())
    for (const auto& n : f.node_def()) optionals += n.op() == "OptionalFromValue" || n.op() == "OptionalNone";
  BOOST_TEST(optionals == 2 * static_cast<int>(fwd.output_types.size() - 1));
}

BOOST_AUTO_TEST_CASE(a_nested_if) {
  // p ? (x > 0 ? x * x * y : sigmoid(y) * x) : exp(x) * y
  GraphBuilder b;
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output p = b.placeholder(DType::boolean, kScalar, "p");
  const std::string outer_then = b.function("outer_then", kTwo, [](GraphBuilder& f, const Vars& a) {
    const std::string t = f.function("inner_then", kTwo, [](GraphBuilder& g, const Vars& v) {
      return Vars{g.mul(g.mul(v[0], v[0]), v[1])};
    });
    const std::string e = f.function("inner_else", kTwo, [](GraphBuilder& g, const Vars& v) {
      return Vars{g.mul(sigmoid(g, v[1]), v[0])};
    });
    return Vars{f.functional_if(f.greater(a[0], f.scalar<double>(0.0)), t, e, {a[0], a[1]})[0]};
  });
  const std::string outer_else = b.function("outer_else", kTwo, [](GraphBuilder& f, const Vars& a) {
    return Vars{f.mul(exp(f, a[0]), a[1])};
  });
  Output out = b.functional_if(p, outer_then, outer_else, {x, y})[0];
  Program prog = finish(b, {"x", "y"}, out, "p");
  check_program(prog, {0.6, -0.8}, both_branches(), "StatelessIf");
  check_program(prog, {-0.6, 1.1}, both_branches(), "StatelessIf");
}

BOOST_AUTO_TEST_CASE(an_if_with_captured_values_used_in_several_places) {
  // c is captured by both branches, used twice in each, and outside:
  // out = If(p, x, y, c) + c * x, then: tanh(c * x) + c * y * c,
  // else: c * exp(y) + x * c.
  GraphBuilder b;
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output c = b.placeholder(DType::float64, kScalar, "c");
  Output p = b.placeholder(DType::boolean, kScalar, "p");
  const std::vector<DType> three{DType::float64, DType::float64, DType::float64};
  const std::string t = b.function("then", three, [](GraphBuilder& f, const Vars& a) {
    return Vars{f.add(tanh(f, f.mul(a[2], a[0])), f.mul(f.mul(a[2], a[1]), a[2]))};
  });
  const std::string e = b.function("else", three, [](GraphBuilder& f, const Vars& a) {
    return Vars{f.add(f.mul(a[2], exp(f, a[1])), f.mul(a[0], a[2]))};
  });
  Output r = b.functional_if(p, t, e, {x, y, c})[0];
  Program prog = finish(b, {"x", "y", "c"}, b.add(r, b.mul(c, x)), "p");
  check_program(prog, {0.3, 0.9, -1.2}, both_branches(), "StatelessIf");
}

BOOST_AUTO_TEST_CASE(a_case_with_three_branches) {
  // tanh(x) * y, exp(x) + y, x * y * y; an index out of range takes the last.
  GraphBuilder b;
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output i = b.placeholder(DType::int32, kScalar, "i");
  const std::string b0 = b.function("b0", kTwo, [](GraphBuilder& f, const Vars& a) {
    return Vars{f.mul(tanh(f, a[0]), a[1])};
  });
  const std::string b1 = b.function("b1", kTwo, [](GraphBuilder& f, const Vars& a) {
    return Vars{f.add(exp(f, a[0]), a[1])};
  });
  const std::string b2 = b.function("b2", kTwo, [](GraphBuilder& f, const Vars& a) {
    return Vars{f.mul(f.mul(a[0], a[1]), a[1])};
  });
  Output out = b.functional_case(i, {b0, b1, b2}, {x, y})[0];
  Program prog = finish(b, {"x", "y"}, b.mul(out, x), "i");
  check_program(prog, {0.5, 1.5},
                {Tensor::scalar<int32_t>(0), Tensor::scalar<int32_t>(1), Tensor::scalar<int32_t>(2),
                 Tensor::scalar<int32_t>(5)},
                "StatelessCase", false);
}

BOOST_AUTO_TEST_CASE(the_gradient_of_an_ifs_gradient) {
  // Differentiated twice, functionally: d/dx (d out / dx) against finite
  // differences of the first gradient.
  Program p = if_program();
  Differentiated first = differentiate(p.g, p.y, p.xs, true);
  Differentiated second = differentiate(first.g, first.dxs[0], p.xs, true);
  BOOST_TEST(count_ops(second.g, second.scope + "/", {"StatelessIf"}) >= 1);
  BOOST_TEST(count_ops(second.g, second.scope + "/", {"Switch", "Merge"}) == 0);
  Program first_program{first.g, p.xs, first.dxs[0], p.sel};
  const std::vector<double> x{0.4, 1.7};
  for (const Mode& m : {modes()[0], modes()[3]}) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s1 = make_session(first.g, m);
      auto s2 = make_session(second.g, m);
      for (const auto& sel : both_branches()) {
        BOOST_TEST_CONTEXT("p = " << sel->debug_string()) {
          const std::vector<double> want = finite_differences(*s1, first_program, first.dxs[0], x, sel);
          auto got = must_run(*s2, feeds_of(p, x, sel), second.dxs);
          for (size_t i = 0; i < x.size(); ++i)
            BOOST_TEST(std::abs(value(got[i]) - want[i]) < 1e-5,
                       "d2/dx d" << p.xs[i] << ": " << value(got[i]) << " vs " << want[i]);
          // By hand: out = tanh(x) y^2 (p) or exp(x) y (not p).
          const double x0 = x[0], y0 = x[1], t = std::tanh(x0);
          const double dxx = sel->scalar_value<bool>() ? -2 * t * (1 - t * t) * y0 * y0 : std::exp(x0) * y0;
          const double dxy = sel->scalar_value<bool>() ? 2 * (1 - t * t) * y0 : std::exp(x0);
          BOOST_TEST(std::abs(value(got[0]) - dxx) < 1e-12);
          BOOST_TEST(std::abs(value(got[1]) - dxy) < 1e-12);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(without_the_option_a_functional_op_has_no_gradient) {
  Program p = if_program();
  graph::Graph g = p.g;
  auto r = graph::gradients(g, {endpoint(g, p.y)}, {endpoint(g, "x")});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message().find("StatelessIf") != std::string::npos, r.status().to_string());
}

BOOST_AUTO_TEST_CASE(an_op_without_gradient_in_a_branch_is_an_error_naming_the_branch) {
  // then: x * x; else: Prod(x, axes), which has no gradient.
  GraphBuilder b;
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output p = b.placeholder(DType::boolean, kScalar, "p");
  const std::string t = b.function("then", {DType::float64}, [](GraphBuilder& f, const Vars& a) {
    return Vars{f.mul(a[0], a[0])};
  });
  const std::string e = b.function("else", {DType::float64}, [](GraphBuilder& f, const Vars& a) {
    return Vars{f.op1("Prod", {a[0], f.scalar<int32_t>(0)})};
  });
  Output out = b.functional_if(p, t, e, {x})[0];
  Program prog = finish(b, {"x"}, out, "p");
  graph::Graph g = prog.g;
  const graph::Graph before = g;
  graph::GradientOptions o;
  o.functional = true;
  auto r = graph::gradients(g, {endpoint(g, prog.y)}, {endpoint(g, "x")}, {}, o);
  BOOST_REQUIRE(!r.ok());
  const std::string m = r.status().to_string();
  BOOST_TEST(m.find("node 'StatelessIf'") != std::string::npos, m);
  BOOST_TEST(m.find("else_branch 'else'") != std::string::npos, m);
  BOOST_TEST(m.find("op Prod") != std::string::npos, m);
  BOOST_TEST(g.equals(before));  // a failure leaves the graph as it was
}

BOOST_AUTO_TEST_SUITE_END()
