// Gradients with respect to resource variables read inside functions
// (GradientOptions::functional): a variable handle passed to a call, an If
// or a While, read there by ReadVariableOp, gets the gradient of what was
// read, as TensorFlow 2's tape gives a trainable variable's. Checked
// against central finite differences in float64 (the variable assigned
// value ± h), against TensorFlow 1's gradient of the lowered graph, and run
// as written and lowered; second order through the variable too.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "gradient_check.hpp"
#include "graph/autodiff/gradients.hpp"
#include "graph/builder/builder.hpp"
#include "graph/functions/lower_functional.hpp"
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

Output read(GraphBuilder& f, Output handle) { return f.op1("ReadVariableOp", {handle}, {{"dtype", DType::float64}}); }
Output tanh(GraphBuilder& f, Output x) { return f.op1("Tanh", {x}); }

// y(x, v, w, p) where v and w are float64 variables, assigned from the
// feeds v_value and w_value by the targets assign_v and assign_w:
//   f(x, v, w) = tanh(v) x + inner(x, w), inner(a, k) = a k   (nested calls)
//   p ? x v² : exp(x) w                                       (an If)
//   acc = x; 3 times: acc = tanh(acc) v + acc / 2             (a While)
//   a call of g(x, w): acc = x w; 2 times: acc = sigmoid(acc) w + x (a While
//   in a function)
//   For i in 0..2: acc = acc / 2 + tanh(acc) w + 0.1 i, from acc = x
//   acc = x v², then times v again, read through the handle the While
//   returns
// y is their sum. `which` picks the parts: 1 call, 2 If, 4 While, 8 the
// While in a call, 16 For, 32 the read of the returned handle.
struct Program {
  graph::Graph g;
};

Program program(int which) {
  GraphBuilder b;
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output p = b.placeholder(DType::boolean, kScalar, "p");
  std::vector<Output> handles;
  for (const char* name : {"v", "w"}) {
    Output value = b.placeholder(DType::float64, kScalar, std::string(name) + "_value");
    Output h = b.op1("VarHandleOp", {},
                     {{"dtype", DType::float64}, {"shape", kScalar}, {"shared_name", std::string(name)}}, name);
    b.op("AssignVariableOp", {h, value}, {}, std::string("assign_") + name);
    handles.push_back(h);
  }
  const Output v = handles[0], w = handles[1];
  const std::vector<DType> args{DType::float64, DType::resource, DType::resource};
  std::vector<Output> parts;
  if (which & 1) {
    const std::vector<DType> inner_args{DType::float64, DType::resource};
    const std::string inner = b.function("inner", inner_args, [](GraphBuilder& f, const Vars& a) {
      return Vars{f.mul(a[0], read(f, a[1]))};
    });
    const std::string fn = b.function("f", args, [&](GraphBuilder& f, const Vars& a) {
      return Vars{f.add(f.mul(tanh(f, read(f, a[1])), a[0]), f.call(inner, {a[0], a[2]})[0])};
    });
    parts.push_back(b.call(fn, {x, v, w}, {"call"})[0]);
  }
  if (which & 2) {
    const std::string t = b.function("then", args, [](GraphBuilder& f, const Vars& a) {
      Output r = read(f, a[1]);
      return Vars{f.mul(f.mul(a[0], r), r)};
    });
    const std::string e = b.function("else", args, [](GraphBuilder& f, const Vars& a) {
      return Vars{f.mul(f.op1("Exp", {a[0]}), read(f, a[2]))};
    });
    parts.push_back(b.functional_if(p, t, e, {x, v, w}, {"if"})[0]);
  }
  if (which & 4) {
    const std::vector<DType> loop{DType::int32, DType::float64, DType::resource};
    const std::string cond = b.function("cond", loop, [](GraphBuilder& f, const Vars& a) {
      return Vars{f.op1("Less", {a[0], f.scalar<int32_t>(3)})};
    });
    const std::string body = b.function("body", loop, [](GraphBuilder& f, const Vars& a) {
      Output next = f.add(f.mul(tanh(f, a[1]), read(f, a[2])), f.div(a[1], f.scalar<double>(2.0)));
      return Vars{f.add(a[0], f.scalar<int32_t>(1)), next, a[2]};
    });
    parts.push_back(b.functional_while(cond, body, {b.scalar<int32_t>(0), x, v}, 10, {"while"})[1]);
  }
  if (which & 8) {
    // A call whose body holds a While reading k: g(a, k) runs
    // acc = sigmoid(acc) * k + a twice from acc = a * k.
    const std::vector<DType> loop{DType::int32, DType::float64, DType::float64, DType::resource};
    const std::vector<DType> call_args{DType::float64, DType::resource};
    const std::string fn = b.function("loop_in_call", call_args, [&](GraphBuilder& f, const Vars& a) {
      const std::string cond = f.function("inner_cond", loop, [](GraphBuilder& c, const Vars& v) {
        return Vars{c.op1("Less", {v[0], c.scalar<int32_t>(2)})};
      });
      const std::string body = f.function("inner_body", loop, [](GraphBuilder& c, const Vars& v) {
        Output next = c.add(c.mul(c.op1("Sigmoid", {v[1]}), read(c, v[3])), v[2]);
        return Vars{c.add(v[0], c.scalar<int32_t>(1)), next, v[2], v[3]};
      });
      return Vars{f.functional_while(cond, body, {f.scalar<int32_t>(0), f.mul(a[0], read(f, a[1])), a[0], a[1]})[1]};
    });
    parts.push_back(b.call(fn, {x, w}, {"loop_call"})[0]);
  }
  if (which & 16) {
    // For i in 0, 1, 2: acc = acc / 2 + tanh(acc) w + 0.1 i.
    const std::vector<DType> vars{DType::int32, DType::float64, DType::resource};
    const std::string body = b.function("for_body", vars, [](GraphBuilder& f, const Vars& a) {
      Output i = f.op1("Cast", {a[0]}, {{"DstT", DType::float64}});
      Output next = f.add(f.add(f.div(a[1], f.scalar(2.0)), f.mul(tanh(f, a[1]), read(f, a[2]))),
                          f.mul(i, f.scalar(0.1)));
      return Vars{next, a[2]};
    });
    parts.push_back(b.for_loop(b.scalar<int32_t>(0), b.scalar<int32_t>(3), b.scalar<int32_t>(1), body, {x, w},
                               {"for"})[0]);
  }
  if (which & 32) {
    // acc = x; 2 times: acc = acc * v; then v read again through the handle
    // the While returns: acc * v' (a gradient reaching the While's resource
    // output).
    const std::vector<DType> loop{DType::int32, DType::float64, DType::resource};
    const std::string cond = b.function("cond2", loop, [](GraphBuilder& f, const Vars& a) {
      return Vars{f.op1("Less", {a[0], f.scalar<int32_t>(2)})};
    });
    const std::string body = b.function("body2", loop, [](GraphBuilder& f, const Vars& a) {
      return Vars{f.add(a[0], f.scalar<int32_t>(1)), f.mul(a[1], read(f, a[2])), a[2]};
    });
    graph::Outputs out = b.functional_while(cond, body, {b.scalar<int32_t>(0), x, v}, 10, {"while_handle"});
    parts.push_back(b.mul(out[1], read(b, out[2])));
  }
  Output y = parts[0];
  for (size_t k = 1; k < parts.size(); ++k) y = b.add(y, parts[k]);
  b.op1("Identity", {y}, {}, "y");
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  return {std::move(g).value()};
}

const std::vector<std::string> kXs{"x", "v", "w"};

// The graph with d y / d (x, v, w); the gradients' names.
std::vector<std::string> differentiate(graph::Graph& g, const std::string& y, bool functional) {
  std::vector<Endpoint> xs;
  for (const std::string& x : kXs) xs.push_back({g.find(x), 0});
  graph::GradientOptions o;
  o.functional = functional;
  o.unconnected = graph::GradientOptions::Unconnected::zeros;
  auto r = graph::gradients(g, {{g.find(y), 0}}, xs, {}, o);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  std::vector<std::string> names;
  for (const Endpoint& d : r->dxs) names.push_back(g.endpoint_name(d));
  return names;
}

// Values of x, v, w and p.
struct Point {
  double x, v, w;
  bool p;
};

// Assigns v and w, then fetches `fetches` at x and p.
std::vector<Tensor> run_at(actors::Session& s, const Point& at, const std::vector<std::string>& fetches) {
  must_run(s, {{"v_value", Tensor::scalar<double>(at.v)}, {"w_value", Tensor::scalar<double>(at.w)}}, {},
           {"assign_v", "assign_w"});
  return must_run(s, {{"x", Tensor::scalar<double>(at.x)}, {"p", Tensor::scalar<bool>(at.p)}}, fetches);
}

double scalar_of(const Tensor& t) { return t.scalar_value<double>(); }

// Central differences of fetch `name` along x, v and w.
std::vector<double> finite_differences(actors::Session& s, const Point& at, const std::string& name) {
  const double h = 1e-6;
  std::vector<double> d;
  for (int k = 0; k < 3; ++k) {
    Point up = at, down = at;
    (k == 0 ? up.x : k == 1 ? up.v : up.w) += h;
    (k == 0 ? down.x : k == 1 ? down.v : down.w) -= h;
    d.push_back((scalar_of(run_at(s, up, {name})[0]) - scalar_of(run_at(s, down, {name})[0])) / (2 * h));
  }
  return d;
}

// The gradient is functional: `gradient_ops` in it, no Switch, Merge or
// Enter. It agrees with finite differences, run as written and lowered,
// and, when `compare_tf1`, with TensorFlow 1's gradient of the lowered
// graph.
void check(int which, const std::vector<std::string>& gradient_ops, bool compare_tf1 = true) {
  const Program prog = program(which);
  graph::Graph tf2 = prog.g;
  const std::vector<std::string> dxs = differentiate(tf2, "y", true);
  BOOST_TEST(count_ops(tf2, "gradients/", gradient_ops) >= 1, "no " << gradient_ops[0] << " in the gradient");
  BOOST_TEST(count_ops(tf2, "gradients/", {"Switch", "Merge", "Enter"}) == 0);
  graph::Graph tf1 = lowered(prog.g);
  const std::vector<std::string> tf1_dxs = differentiate(tf1, "y", false);
  for (const Point& at : {Point{0.4, 0.8, -1.3, true}, Point{-0.9, -0.6, 0.7, false}}) {
    BOOST_TEST_CONTEXT("x " << at.x << ", v " << at.v << ", w " << at.w << ", p " << at.p) {
      for (const Mode& m : {modes()[0], modes()[2]}) {
        BOOST_TEST_CONTEXT(m.name) {
          auto forward = make_session(prog.g, m);
          const std::vector<double> want = finite_differences(*forward, at, "y");
          auto s1 = make_session(tf1, m);
          const std::vector<Tensor> reference = run_at(*s1, at, tf1_dxs);
          for (bool lower : {false, true}) {
            actors::SessionOptions o;
            o.lower_functional = lower;
            auto s2 = make_session(tf2, m, o);
            const std::vector<Tensor> got = run_at(*s2, at, dxs);
            for (size_t k = 0; k < kXs.size(); ++k) {
              BOOST_TEST(close(scalar_of(got[k]), want[k], 1e-6),
                         (lower ? "lowered" : "as written") << ": d/d" << kXs[k] << " = " << scalar_of(got[k])
                                                            << ", finite differences " << want[k]);
              if (compare_tf1)
                BOOST_TEST(std::abs(scalar_of(got[k]) - scalar_of(reference[k])) < 1e-12,
                         "d/d" << kXs[k] << ": TensorFlow 1's gradient of the lowered graph gives "
                               << scalar_of(reference[k]));
            }
          }
        }
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(resource_gradients)

BOOST_AUTO_TEST_CASE(variables_read_in_nested_calls) { check(1, {"PartitionedCall", "StatefulPartitionedCall"}); }

BOOST_AUTO_TEST_CASE(variables_read_in_one_branch_of_an_if_each) { check(2, {"If", "StatelessIf"}); }

BOOST_AUTO_TEST_CASE(a_variable_read_in_every_iteration_of_a_while) { check(4, {"While", "StatelessWhile"}); }

BOOST_AUTO_TEST_CASE(a_variable_read_in_a_while_in_a_call) { check(8, {"PartitionedCall", "StatefulPartitionedCall"}); }

BOOST_AUTO_TEST_CASE(a_variable_read_in_every_iteration_of_a_for) { check(16, {"While", "StatelessWhile"}); }

// TensorFlow 1's gradient of the lowered graph does not follow a handle
// out of a loop (docs/gradients.md), so only finite differences are the
// reference here.
BOOST_AUTO_TEST_CASE(a_variable_read_through_the_handle_a_while_returns) {
  check(32, {"While", "StatelessWhile"}, false);
}

BOOST_AUTO_TEST_CASE(all_together) { check(31, {"While", "StatelessWhile"}); }

// d/dv of d y / d x and d/dx of d y / d v: the gradient ops read the
// variables again, and are differentiated with respect to them.
BOOST_AUTO_TEST_CASE(second_derivatives_through_the_variables) {
  const Program prog = program(63);
  graph::Graph g = prog.g;
  const std::vector<std::string> first = differentiate(g, "y", true);
  graph::Graph second = g;
  std::vector<std::vector<std::string>> dd;  // dd[k]: d (dy/d xs[k]) / d xs
  for (size_t k = 0; k < first.size(); ++k) {
    const size_t colon = first[k].find(':');
    const std::string node = first[k].substr(0, colon);
    const int port = colon == std::string::npos ? 0 : std::stoi(first[k].substr(colon + 1));
    std::vector<Endpoint> xs;
    for (const std::string& x : kXs) xs.push_back({second.find(x), 0});
    graph::GradientOptions o;
    o.functional = true;
    o.unconnected = graph::GradientOptions::Unconnected::zeros;
    auto r = graph::gradients(second, {{second.find(node), port}}, xs, {}, o);
    BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
    dd.emplace_back();
    for (const Endpoint& d : r->dxs) dd.back().push_back(second.endpoint_name(d));
  }
  const Point at{0.3, 0.5, -0.8, true};
  for (const Mode& m : {modes()[0], modes()[3]}) {
    BOOST_TEST_CONTEXT(m.name) {
      auto first_session = make_session(g, m);
      auto s = make_session(second, m);
      for (size_t k = 0; k < first.size(); ++k) {
        const std::vector<double> want = finite_differences(*first_session, at, first[k]);
        const std::vector<Tensor> got = run_at(*s, at, dd[k]);
        for (size_t j = 0; j < kXs.size(); ++j)
          BOOST_TEST(close(scalar_of(got[j]), want[j], 1e-5),
                     "d/d" << kXs[j] << " of d/d" << kXs[k] << " = " << scalar_of(got[j])
                           << ", finite differences " << want[j]);
      }
    }
  }
}

// Asking only for d/dx leaves the variables' reads without gradient work:
// the call's gradient returns one gradient, not three.
BOOST_AUTO_TEST_CASE(resources_get_gradients_only_when_asked_for) {
  for (const std::vector<std::string>& xs : {std::vector<std::string>{"x"}, kXs}) {
    const Program prog = program(1);
    graph::Graph g = prog.g;
    std::vector<Endpoint> x_endpoints;
    for (const std::string& x : xs) x_endpoints.push_back({g.find(x), 0});
    graph::GradientOptions o;
    o.functional = true;
    auto r = graph::gradients(g, {{g.find("y"), 0}}, x_endpoints, {}, o);
    BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
    int calls = 0;
    for (const graph::Node& n : g.nodes()) {
      if (n.name.compare(0, r->scope.size(), r->scope) != 0) continue;
      if (n.op != "PartitionedCall" && n.op != "StatefulPartitionedCall") continue;
      ++calls;
      BOOST_TEST(n.output_types.size() == xs.size(), n.name << " returns " << n.output_types.size() << " gradients");
    }
    BOOST_TEST(calls == 1);
  }
}

// A call that returns the handle it is given, read after the call: that
// read's gradient cannot be passed back through the call, so gradients()
// says so instead of leaving it out.
BOOST_AUTO_TEST_CASE(a_handle_a_call_returns_and_that_is_read_after_it_is_an_error) {
  GraphBuilder b;
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output v = b.op1("VarHandleOp", {}, {{"dtype", DType::float64}, {"shape", kScalar}, {"shared_name", std::string("v")}},
                   "v");
  const std::string fn = b.function("pass", {DType::float64, DType::resource}, [](GraphBuilder& f, const Vars& a) {
    return Vars{f.mul(a[0], read(f, a[1])), a[1]};
  });
  graph::Outputs out = b.call(fn, {x, v}, {"call"});
  b.op1("Identity", {b.mul(out[0], read(b, out[1]))}, {}, "y");
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  graph::GradientOptions o;
  o.functional = true;
  auto r = graph::gradients(*g, {{g->find("y"), 0}}, {{g->find("v"), 0}}, {}, o);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message().find("output 1 is a variable handle the function returns") != std::string::npos,
             r.status().to_string());
  BOOST_TEST(r.status().message().find("'call'") != std::string::npos, r.status().to_string());
}

BOOST_AUTO_TEST_SUITE_END()
