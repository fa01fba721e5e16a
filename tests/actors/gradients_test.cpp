// Gradients through conds and while loops, checked against central finite
// differences in float64: each case builds y = f(xs) with GraphBuilder, adds
// gradients() and runs both the gradient and f at xs ± h through a Session
// (every thread mode, and split over devices where the case says so).
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "graph/analysis/control_flow.hpp"
#include "graph/autodiff/gradients.hpp"
#include "graph/builder/builder.hpp"
#include "ops/resource.hpp"
#include "session_test_util.hpp"
#include "trace/sink.hpp"
#include "trace/trace.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using graph::GraphBuilder;
using graph::Output;
using graph::WhileOptions;
using ops::DType;
using ops::Tensor;
using Vars = std::vector<Output>;

namespace {

struct Case {
  std::string name;
  std::vector<std::vector<int64_t>> shapes;  // one per x
  std::function<Output(GraphBuilder&, const Vars& xs)> f;
  int devices = 1;
  std::vector<double> values;  // x values, flat, all xs; empty: a fixed pattern
};

Case make_case(std::string name, std::vector<std::vector<int64_t>> shapes,
               std::function<Output(GraphBuilder&, const Vars& xs)> f, int devices = 1,
               std::vector<double> values = {}) {
  return Case{std::move(name), std::move(shapes), std::move(f), devices, std::move(values)};
}

std::vector<double> flat(const Tensor& t) {
  BOOST_REQUIRE(t.dtype() == DType::float64);
  return std::vector<double>(t.data<double>(), t.data<double>() + t.num_elements());
}

Tensor make(const std::vector<int64_t>& shape, const std::vector<double>& v) {
  return Tensor::from_vector<double>(ops::Shape::make(shape).value(), v);
}

size_t elements(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

// A case's graph with its gradients: the names to feed (one Placeholder
// per x), to fetch for y, and to fetch for each gradient.
struct BuiltCase {
  graph::Graph graph;
  std::vector<std::string> xs;
  std::string y;
  std::vector<std::string> dxs;
};

BuiltCase build(const Case& c) {
  GraphBuilder b;
  Vars xs;
  for (size_t i = 0; i < c.shapes.size(); ++i)
    xs.push_back(b.placeholder(DType::float64, ops::PartialShape{false, c.shapes[i]}, "x" + std::to_string(i)));
  Output y = c.f(b, xs);
  Vars dxs = b.gradients({y}, xs);
  auto built = b.finish();
  BOOST_REQUIRE_MESSAGE(built.ok(), c.name << ": " << built.status().to_string());
  BuiltCase r{std::move(built).value(), {}, y.name(), {}};
  for (const Output& x : xs) r.xs.push_back(x.name());
  for (const Output& d : dxs) {
    BOOST_REQUIRE_MESSAGE(d.valid(), c.name << ": an x got no gradient");
    r.dxs.push_back(d.name());
  }
  return r;
}

// Builds the case, its gradients, and checks them against central finite
// differences at every element of every x.
void check(const Case& c, const Mode& mode) {
  BuiltCase built = build(c);
  const auto& xs = built.xs;
  actors::SessionOptions o;
  if (c.devices > 1) {
    o.num_devices = c.devices;
    o.placement.strategy = graph::PlacementOptions::Strategy::round_robin;
  }
  auto session = make_session(std::move(built.graph), mode, o);

  std::vector<std::vector<double>> values;
  size_t k = 0;
  for (const auto& shape : c.shapes) {
    std::vector<double> v(elements(shape));
    for (double& e : v) {
      e = k < c.values.size() ? c.values[k] : 0.3 + 0.17 * static_cast<double>(k % 7) - 0.05 * static_cast<double>(k % 3);
      ++k;
    }
    values.push_back(v);
  }
  auto feeds_of = [&](const std::vector<std::vector<double>>& vals) {
    actors::Feeds feeds;
    for (size_t i = 0; i < xs.size(); ++i) feeds.push_back({xs[i], make(c.shapes[i], vals[i])});
    return feeds;
  };
  auto grads = must_run(*session, feeds_of(values), built.dxs);
  auto f_at = [&](const std::vector<std::vector<double>>& vals) {
    return flat(must_run(*session, feeds_of(vals), {built.y})[0])[0];
  };
  const double h = 1e-6;
  for (size_t i = 0; i < xs.size(); ++i) {
    const std::vector<double> got = flat(grads[i]);
    BOOST_REQUIRE_EQUAL(got.size(), values[i].size());
    for (size_t e = 0; e < got.size(); ++e) {
      auto plus = values, minus = values;
      plus[i][e] += h;
      minus[i][e] -= h;
      const double want = (f_at(plus) - f_at(minus)) / (2 * h);
      BOOST_TEST(std::abs(got[e] - want) <= 1e-5 * std::max(1.0, std::abs(want)),
                 c.name << " (" << mode.name << "): d y / d x" << i << "[" << e << "] = " << got[e]
                        << ", finite differences give " << want);
    }
  }
}

Output sum_all(GraphBuilder& b, Output x) {
  return b.reduce_sum(x, b.vector<int32_t>({0}));
}
Output sum_all2(GraphBuilder& b, Output x) {
  return b.reduce_sum(x, b.vector<int32_t>({0, 1}));
}

// while i < n: v = body(v) with a counter; returns the final v.
Output loop(GraphBuilder& b, int n, Output v0, const std::function<Output(Output, Output)>& body,
            int64_t parallel_iterations = 10) {
  WhileOptions o;
  o.parallel_iterations = parallel_iterations;
  auto r = b.while_loop([&](const Vars& v) { return v[0] < double(n); },
                        [&](const Vars& v) {
                          return Vars{v[0] + 1.0, body(v[1], b.cast(v[0], DType::float64))};
                        },
                        {b.scalar<int32_t>(0), v0}, o);
  return r[1];
}

std::vector<Case> cases() {
  std::vector<Case> cs;
  cs.push_back(make_case("arithmetic", {{3}, {3}}, [](GraphBuilder& b, const Vars& x) {
                  return sum_all(b, x[0] * x[1] + b.square(x[0]) / (x[1] + 2.0) - b.neg(x[1]));
                }));
  cs.push_back(make_case("broadcast_and_matmul", {{2, 3}, {3, 2}, {2}}, [](GraphBuilder& b, const Vars& x) {
                  Output m = b.matmul(x[0], x[1]);
                  return sum_all2(b, b.op1("Tanh", {m + x[2]}));
                }));
  cs.push_back(make_case("cond_true", {{2}}, [](GraphBuilder& b, const Vars& x) {
                  Output p = b.scalar(true);
                  return sum_all(b, b.cond(p, [&] { return Vars{x[0] * x[0]}; },
                                           [&] { return Vars{x[0] * 3.0}; })[0]);
                }));
  cs.push_back(make_case("cond_false_branch_constant", {{2}}, [](GraphBuilder& b, const Vars& x) {
                  Output p = sum_all(b, x[0]) > 100.0;
                  return sum_all(b, b.cond(p, [&] { return Vars{x[0] * x[0]}; },
                                           [&] { return Vars{b.fill(b.vector<int32_t>({2}), b.scalar(1.0))}; })[0] + x[0]);
                }));
  cs.push_back(make_case("nested_cond", {{}, {}}, [](GraphBuilder& b, const Vars& x) {
                  Output p = x[0] > 0.0;
                  Output q = x[1] > 1.0;
                  return b.cond(p,
                                [&] {
                                  return Vars{b.cond(q, [&] { return Vars{x[0] * x[1]}; },
                                                     [&] { return Vars{x[0] + x[1] * x[1]}; })[0]};
                                },
                                [&] { return Vars{x[1]}; })[0];
                }));
  for (int n : {0, 1, 5, 50}) {
    cs.push_back(make_case("while_" + std::to_string(n) + "_iterations", {{}, {}}, [n](GraphBuilder& b, const Vars& x) {
                    return loop(b, n, x[0], [&](Output v, Output) { return v * x[1] + 0.1; });
                  }, 1, {1.1, 0.97}));
  }
  cs.push_back(make_case("while_tanh_rnn", {{1, 3}, {3, 3}}, [](GraphBuilder& b, const Vars& x) {
                  Output h = loop(b, 6, x[0], [&](Output v, Output) { return b.op1("Tanh", {b.matmul(v, x[1])}); });
                  return sum_all2(b, h);
                }));
  cs.push_back(make_case("while_invariant_used_twice", {{}, {}}, [](GraphBuilder& b, const Vars& x) {
                  return loop(b, 4, x[0], [&](Output v, Output) { return v * x[1] + x[1] * x[1]; });
                }));
  cs.push_back(make_case("while_uses_the_counter", {{}}, [](GraphBuilder& b, const Vars& x) {
                  return loop(b, 5, x[0], [&](Output v, Output i) { return v * (i + 1.0) * 0.5 + v * v * 0.01; });
                }));
  cs.push_back(make_case("while_two_loop_variables", {{}, {}}, [](GraphBuilder& b, const Vars& x) {
                  auto r = b.while_loop([&](const Vars& v) { return v[0] < 4.0; },
                                        [&](const Vars& v) { return Vars{v[0] + 1.0, v[1] * v[2], v[2] + v[1]}; },
                                        {b.scalar<int32_t>(0), x[0], x[1]});
                  return r[1];
                }));
  cs.push_back(make_case("while_parallel_iterations_1", {{}, {}}, [](GraphBuilder& b, const Vars& x) {
                  return loop(b, 7, x[0], [&](Output v, Output) { return v * x[1]; }, 1);
                }));
  cs.push_back(make_case("while_parallel_iterations_10", {{2}, {}}, [](GraphBuilder& b, const Vars& x) {
                  return sum_all(b, loop(b, 7, x[0], [&](Output v, Output) { return b.op1("Sigmoid", {v * x[1]}); }, 10));
                }));
  cs.push_back(make_case("nested_while", {{}, {}}, [](GraphBuilder& b, const Vars& x) {
                  return loop(b, 3, x[0], [&](Output v, Output) {
                    return loop(b, 2, v, [&](Output w, Output) { return w * x[1] + 0.5; });
                  });
                }));
  cs.push_back(make_case("nested_while_inner_count_varies", {{}}, [](GraphBuilder& b, const Vars& x) {
                  auto r = b.while_loop([&](const Vars& v) { return v[0] < 4.0; },
                                        [&](const Vars& v) {
                                          Output inner = b.while_loop([&](const Vars& w) { return w[0] < v[0]; },
                                                                      [&](const Vars& w) { return Vars{w[0] + 1.0, w[1] * 1.1 + v[1] * 0.01}; },
                                                                      {b.scalar<int32_t>(0), v[1]})[1];
                                          return Vars{v[0] + 1.0, inner};
                                        },
                                        {b.scalar<int32_t>(0), x[0]});
                  return r[1];
                }));
  cs.push_back(make_case("cond_in_while", {{}, {}}, [](GraphBuilder& b, const Vars& x) {
                  return loop(b, 6, x[0], [&](Output v, Output i) {
                    Output even = b.equal(b.floor_mod(b.cast(i, DType::int32), b.scalar<int32_t>(2)), b.scalar<int32_t>(0));
                    return b.cond(even, [&] { return Vars{v * x[1]}; }, [&] { return Vars{v + x[1] * x[1]}; })[0];
                  });
                }));
  cs.push_back(make_case("cond_in_while_one_branch_constant", {{}, {}}, [](GraphBuilder& b, const Vars& x) {
                  return loop(b, 5, x[0], [&](Output v, Output i) {
                    Output p = i < 2.0;
                    Output t = b.cond(p, [&] { return Vars{x[1] * 2.0}; }, [&] { return Vars{b.scalar(0.5)}; })[0];
                    return v * t;
                  });
                }));
  cs.push_back(make_case("nested_cond_in_while", {{}, {}}, [](GraphBuilder& b, const Vars& x) {
                  return loop(b, 6, x[0], [&](Output v, Output i) {
                    return b.cond(i < 3.0,
                                  [&] {
                                    return Vars{b.cond(i < 1.0, [&] { return Vars{v * x[1]}; },
                                                       [&] { return Vars{v * v * 0.5}; })[0]};
                                  },
                                  [&] { return Vars{v + x[1]}; })[0];
                  });
                }));
  cs.push_back(make_case("while_in_cond_taken", {{}, {}}, [](GraphBuilder& b, const Vars& x) {
                  Output p = x[0] > 0.0;
                  return b.cond(p, [&] { return Vars{loop(b, 3, x[0], [&](Output v, Output) { return v * x[1]; })}; },
                                [&] { return Vars{x[1] * 2.0}; })[0];
                }));
  cs.push_back(make_case("while_in_cond_not_taken", {{}, {}}, [](GraphBuilder& b, const Vars& x) {
                  Output p = x[0] > 10.0;
                  return b.cond(p, [&] { return Vars{loop(b, 3, x[0], [&](Output v, Output) { return v * x[1]; })}; },
                                [&] { return Vars{x[1] * x[0]}; })[0];
                }));
  cs.push_back(make_case("while_in_cond_in_while", {{}, {}}, [](GraphBuilder& b, const Vars& x) {
                  return loop(b, 3, x[0], [&](Output v, Output i) {
                    return b.cond(i > 0.5,
                                  [&] { return Vars{loop(b, 2, v, [&](Output w, Output) { return w * x[1]; })}; },
                                  [&] { return Vars{v + 1.0}; })[0];
                  });
                }));
  cs.push_back(make_case("scan_cumulative", {{4}, {}}, [](GraphBuilder& b, const Vars& x) {
                  Output s = b.scan([&](const Vars& acc, const Vars& e) { return Vars{acc[0] * x[1] + e[0]}; },
                                    {x[0]}, {b.scalar(0.0)})[0];
                  return sum_all(b, s * s);
                }));
  cs.push_back(make_case("map_fn_square", {{3}}, [](GraphBuilder& b, const Vars& x) {
                  Output m = b.map_fn([&](const Vars& e) { return Vars{e[0] * e[0] + e[0]}; }, {x[0]})[0];
                  return sum_all(b, m);
                }));
  cs.push_back(make_case("reductions_and_shapes", {{2, 3}}, [](GraphBuilder& b, const Vars& x) {
                  Output t = b.reshape(x[0], b.vector<int32_t>({3, 2}));
                  Output m = b.reduce_mean(t, b.vector<int32_t>({1}));
                  Output mx = b.reduce_max(x[0], b.vector<int32_t>({0}));
                  return sum_all(b, m * m) + sum_all(b, mx);
                }));
  cs.push_back(make_case("concat_stack_gather", {{2}, {3}}, [](GraphBuilder& b, const Vars& x) {
                  Output c = b.concat({x[0], x[1]}, b.scalar<int32_t>(0));
                  Output g = b.gather(c, b.vector<int32_t>({4, 0, 0, 2}), b.scalar<int32_t>(0));
                  Output s = b.stack({g, g * 2.0}, 1);
                  return sum_all2(b, s * s);
                }));
  cs.push_back(make_case("softmax_select_slice", {{2, 3}}, [](GraphBuilder& b, const Vars& x) {
                  Output s = b.op1("Softmax", {x[0]});
                  Output sel = b.select(x[0] > 0.5, s, x[0] * 0.5);
                  Output sl = b.op1("Slice", {sel, b.vector<int32_t>({0, 1}), b.vector<int32_t>({2, 2})});
                  return sum_all2(b, sl * sl);
                }));
  cs.push_back(make_case("pad_and_reverse_sequence", {{2, 3}}, [](GraphBuilder& b, const Vars& x) {
                  Output p = b.op1("Pad", {x[0] * x[0], b.constant(Tensor::from_vector<int32_t>({2, 2}, {1, 0, 0, 2}))});
                  Output r = b.op1("ReverseSequence", {p, b.vector<int64_t>({2, 1, 3})}, {{"seq_dim", int64_t{1}}});
                  return sum_all2(b, r * b.constant(Tensor::from_vector<double>({3, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15})));
                }));
  cs.push_back(make_case("elu_softsign_reverse_and_gathers", {{2, 3}}, [](GraphBuilder& b, const Vars& x) {
                  Output e = b.op1("Elu", {x[0] - 0.7});
                  Output s = b.op1("Softsign", {x[0] * 2.0 - 1.5});
                  Output r = b.op1("ReverseV2", {e + s * e, b.vector<int32_t>({1})});
                  Output tuples = b.constant(Tensor::from_vector<int32_t>({3, 2}, {1, 2, 0, 0, 1, 2}));
                  Output nd = b.op1("GatherNd", {r, tuples});
                  Output rows = b.op1("Gather", {r, b.vector<int32_t>({1, 1, 0})});
                  return sum_all(b, nd * nd) + sum_all2(b, rows * rows);
                }));
  cs.push_back(make_case("sin_cos_relu6", {{2, 3}}, [](GraphBuilder& b, const Vars& x) {
                  Output s = b.op1("Sin", {x[0] * 1.7});
                  Output c = b.op1("Cos", {x[0] - 0.3});
                  Output r = b.op1("Relu6", {x[0] * 9.0 - 1.0});
                  return sum_all2(b, s * c + r * s);
                }));
  cs.push_back(make_case("split_over_two_devices", {{}, {}}, [](GraphBuilder& b, const Vars& x) {
                  return loop(b, 4, x[0], [&](Output v, Output) { return v * x[1] + 0.25; });
                }, 2));
  cs.push_back(make_case("cond_in_while_over_three_devices", {{}, {}}, [](GraphBuilder& b, const Vars& x) {
                  return loop(b, 5, x[0], [&](Output v, Output i) {
                    return b.cond(i < 2.0, [&] { return Vars{v * x[1]}; }, [&] { return Vars{v + x[1]}; })[0];
                  });
                }, 3));
  cs.push_back(make_case("nested_while_over_two_devices", {{}, {}}, [](GraphBuilder& b, const Vars& x) {
                  return loop(b, 2, x[0], [&](Output v, Output) {
                    return loop(b, 3, v, [&](Output w, Output) { return w * x[1]; });
                  });
                }, 2));
  return cs;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gradient_values)

BOOST_AUTO_TEST_CASE(agree_with_finite_differences) {
  const auto all = cases();
  BOOST_TEST(all.size() >= 30u);
  for (const Mode& mode : modes())
    for (const Case& c : all) {
      BOOST_TEST_CONTEXT(c.name << " (" << mode.name << ")") { check(c, mode); }
    }
}

// README.md's example: d(x^3)/dx through a loop, at x = 2.
BOOST_AUTO_TEST_CASE(the_readme_example) {
  GraphBuilder b;
  Output x = b.placeholder(DType::float32, {}, "x");
  Output y = b.while_loop([&](const Vars& v) { return v[0] < 3.0; },
                          [&](const Vars& v) { return Vars{v[0] + 1.0, v[1] * x}; },
                          {b.scalar<int32_t>(0), b.scalar(1.0f)})[1];
  Output dy_dx = b.gradients({y}, {x})[0];
  auto session = actors::Session::create(b.finish().value()).value();
  auto r = session->run({{"x", ops::Tensor::scalar(2.0f)}}, {dy_dx.name()});
  BOOST_REQUIRE(r.ok());
  BOOST_TEST((*r)[0].scalar_value<float>() == 12.0f);
}

// An x may be a ref variable (VariableV2), a resource variable (read by
// ReadVariableOp inside the loop) or a Const.
BOOST_AUTO_TEST_CASE(variables_and_constants_as_xs) {
  GraphBuilder b;
  Output ref = b.op1("VariableV2", {}, {{"dtype", DType::float32}, {"shape", ops::PartialShape{false, {}}}}, "ref");
  Output init_ref = b.op1("Assign", {ref, b.scalar(2.0f)}, {}, "init_ref");
  Output res = b.op1("VarHandleOp", {}, {{"dtype", DType::float32}, {"shape", ops::PartialShape{false, {}}}}, "res");
  Output init_res = b.op("AssignVariableOp", {res, b.scalar(3.0f)}, {}, "init_res").control();
  Output c = b.scalar(1.5f, "c");
  // y = c * ref^2 * res^2 by two iterations of v = v * ref * read(res).
  Output y = b.while_loop([&](const Vars& v) { return v[0] < 2.0; },
                          [&](const Vars& v) {
                            Output r = b.op1("ReadVariableOp", {res}, {{"dtype", DType::float32}});
                            return Vars{v[0] + 1.0, v[1] * b.identity(ref) * r};
                          },
                          {b.scalar<int32_t>(0), c})[1];
  Vars d = b.gradients({y}, {ref, res, c});
  for (const Output& o : d) BOOST_REQUIRE(o.valid());
  auto built = b.finish();
  BOOST_REQUIRE_MESSAGE(built.ok(), built.status().to_string());
  for (const Mode& mode : modes()) {
    auto session = make_session(*built, mode);
    must_run(*session, {}, {}, {init_ref.node_name(), init_res.node_name()});
    auto r = must_run(*session, {}, {y.name(), d[0].name(), d[1].name(), d[2].name()});
    BOOST_TEST(r[0].scalar_value<float>() == 1.5f * 4 * 9);
    BOOST_TEST(r[1].scalar_value<float>() == 1.5f * 2 * 2 * 9);   // d/d ref = 2 c ref res^2
    BOOST_TEST(r[2].scalar_value<float>() == 1.5f * 4 * 2 * 3);   // d/d res = 2 c ref^2 res
    BOOST_TEST(r[3].scalar_value<float>() == 4.0f * 9);           // d/d c = ref^2 res^2
  }
}

// Every while loop's gradient is a while loop that runs the forward count
// backwards: in a recorded step, the gradient frame's instances run as many
// iterations as the forward frame's instances did (as multisets: an inner
// loop runs once per outer iteration, with varying counts).
BOOST_AUTO_TEST_CASE(gradient_loops_run_the_forward_iteration_counts) {
  const std::set<std::string> names{"while_0_iterations", "while_5_iterations", "nested_while",
                                    "nested_while_inner_count_varies", "while_in_cond_taken",
                                    "while_in_cond_not_taken", "while_in_cond_in_while",
                                    "cond_in_while", "scan_cumulative"};
  int checked = 0;
  for (const Case& c : cases()) {
    if (!names.count(c.name)) continue;
    const BuiltCase built = build(c);
    for (const Mode& mode : {modes()[0], modes()[2]}) {
      trace::MemorySink sink;
      actors::SessionOptions o;
      o.events = &sink;
      auto session = make_session(built.graph, mode, o);
      actors::Feeds feeds;
      for (size_t i = 0; i < built.xs.size(); ++i) {
        std::vector<double> v(elements(c.shapes[i]), 0.9);
        feeds.push_back({built.xs[i], make(c.shapes[i], v)});
      }
      must_run(*session, feeds, built.dxs);
      const trace::Trace t = sink.trace();
      // Iterations per frame instance, by static frame name.
      std::map<uint64_t, int64_t> iterations;
      for (const trace::Event& e : t.events())
        if (e.kind == trace::Kind::iteration_started || e.kind == trace::Kind::frame_created)
          iterations[e.instance] = std::max(iterations[e.instance], e.iteration + 1);
      std::map<std::string, std::multiset<int64_t>> by_frame;
      for (const auto& [instance, n] : iterations) by_frame[t.frame_name(instance)].insert(n);
      int loops = 0;
      for (const auto& [frame, counts] : by_frame) {
        if (frame.empty() || frame.compare(0, 10, "gradients/") == 0) continue;
        auto g = by_frame.find("gradients/" + frame);
        BOOST_REQUIRE_MESSAGE(g != by_frame.end(), c.name << ": no gradient frame for " << frame);
        BOOST_TEST((g->second == counts), c.name << " (" << mode.name << "): frame " << frame);
        ++loops;
      }
      BOOST_TEST(loops > 0, c.name);
      ++checked;
    }
  }
  BOOST_TEST(checked == 2 * static_cast<int>(names.size()));
}

// 10,000 iterations of v = v * w with v of 64 floats: the gradient needs
// v of every iteration — one stack entry per iteration, no more — and the
// gradient loop pops them all (nothing is left when the step ends).
BOOST_AUTO_TEST_CASE(a_long_loop_keeps_one_stack_entry_per_iteration_per_saved_value) {
  const int n = 10000;
  GraphBuilder b;
  Output x = b.placeholder(DType::float32, ops::PartialShape{false, {64}}, "x");
  Output w = b.placeholder(DType::float32, {}, "w");
  auto r = b.while_loop([&](const Vars& v) { return v[0] < double(n); },
                        [&](const Vars& v) { return Vars{v[0] + 1.0, v[1] * w}; },
                        {b.scalar<int32_t>(0), x});
  Output y = b.reduce_sum(r[1], b.vector<int32_t>({0}));
  Output dw = b.gradients({y}, {w})[0];
  auto built = b.finish();
  BOOST_REQUIRE(built.ok());
  int saved = 0;
  for (const graph::Node& node : built->nodes()) saved += node.op == "StackPushV2";
  BOOST_TEST(saved == 1);
  for (const Mode& mode : {modes()[0], modes()[2]}) {
    auto session = make_session(*built, mode);
    std::vector<float> ones(64, 1.0f);
    auto out = must_run(*session, {{"x", Tensor::from_vector<float>({64}, ones)}, {"w", Tensor::scalar(1.0f)}},
                        {dw.name()});
    // y = sum(x) w^n: dy/dw = n w^(n-1) sum(x) = n * 64 at w = 1.
    BOOST_TEST(out[0].scalar_value<float>() == float(n) * 64.0f);
    auto resources = session->resources(session->devices()[0]);
    BOOST_REQUIRE(resources != nullptr);
    const auto stats = resources->stack_stats();
    BOOST_TEST(stats.pushes == int64_t{n} * saved);
    BOOST_TEST(stats.pops == int64_t{n} * saved);
    BOOST_TEST(stats.peak_entries == int64_t{n} * saved);
    BOOST_TEST(stats.peak_bytes == int64_t{n} * 64 * 4);
    BOOST_TEST(stats.entries == 0);
    BOOST_TEST(stats.bytes == 0);
    BOOST_TEST_MESSAGE("stacks of a " << n << "-iteration loop's gradient (" << mode.name
                                      << "): peak " << stats.peak_entries << " entries, "
                                      << stats.peak_bytes << " bytes");
  }
}

BOOST_AUTO_TEST_SUITE_END()
