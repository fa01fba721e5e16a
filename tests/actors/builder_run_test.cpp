// Graphs built with GraphBuilder, run through a Session at every thread
// mode: conds, loops, their nesting, case, map_fn/scan, maximum_iterations.
// Expected values come from the same computation as a plain C++ loop.
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <functional>

#include "graph/builder/builder.hpp"
#include "graph/io/export.hpp"
#include "graph/io/import.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using graph::GraphBuilder;
using graph::Output;
using graph::Outputs;
using graph::WhileOptions;
using ops::DType;
using ops::Tensor;
using Vars = std::vector<Output>;

namespace {

graph::Graph finish(GraphBuilder& b) {
  auto g = b.finish();
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

int32_t fetch_int(actors::Session& s, const actors::Feeds& feeds, const Output& out) {
  auto r = must_run(s, feeds, {out.name()});
  BOOST_REQUIRE(r[0].dtype() == DType::int32);
  return r[0].scalar_value<int32_t>();
}

std::vector<float> floats(const Tensor& t) {
  BOOST_REQUIRE(t.dtype() == DType::float32);
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

// while i < n: i += 1 (an int32 loop), as a builder helper.
Output count_to(GraphBuilder& b, Output start, Output n, int step) {
  return b.while_loop([&](const Vars& v) { return v[0] < n; },
                      [&](const Vars& v) { return Vars{v[0] + double(step)}; }, {start})[0];
}

}  // namespace

BOOST_AUTO_TEST_SUITE(builder_run)

BOOST_AUTO_TEST_CASE(cond_with_disjoint_and_with_shared_inputs) {
  GraphBuilder b;
  Output p = b.placeholder(DType::boolean, {}, "p");
  Output x = b.placeholder(DType::int32, {}, "x");
  Output y = b.placeholder(DType::int32, {}, "y");
  Output disjoint = b.cond(p, [&] { return Vars{x * 2.0}; }, [&] { return Vars{y + 10.0}; })[0];
  Outputs shared = b.cond(p, [&] { return Vars{x + y, x}; }, [&] { return Vars{x * y, y}; });
  graph::Graph g = finish(b);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(g, m);
      for (bool pv : {true, false}) {
        const int32_t xv = 7, yv = -3;
        actors::Feeds f{{"p", Tensor::scalar(pv)}, {"x", Tensor::scalar(xv)}, {"y", Tensor::scalar(yv)}};
        BOOST_TEST(fetch_int(*s, f, disjoint) == (pv ? xv * 2 : yv + 10));
        auto r = must_run(*s, f, {shared[0].name(), shared[1].name()});
        BOOST_TEST(r[0].scalar_value<int32_t>() == (pv ? xv + yv : xv * yv));
        BOOST_TEST(r[1].scalar_value<int32_t>() == (pv ? xv : yv));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(cond_returning_constants_and_nothing) {
  GraphBuilder b;
  Output p = b.placeholder(DType::boolean, {}, "p");
  Output c = b.cond(p, [&] { return Vars{b.scalar(1.5f)}; }, [&] { return Vars{b.scalar(-2.5f)}; })[0];
  Outputs nothing = b.cond(p, [&] { b.scalar(1); return Vars{}; }, [&] { return Vars{}; });
  Output after = b.group({nothing.control()}, "after");
  graph::Graph g = finish(b);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(g, m);
      for (bool pv : {true, false}) {
        actors::Feeds f{{"p", Tensor::scalar(pv)}};
        auto r = must_run(*s, f, {c.name()}, {after.name()});
        BOOST_TEST(r[0].scalar_value<float>() == (pv ? 1.5f : -2.5f));
        must_run(*s, f, {}, {nothing.control().name()});
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(while_with_three_loop_variables_and_invariants) {
  // i, a, b = 0, 1, 0; while i < n: a = a * k % 1000 + i; b = b + a - i; i += 1
  GraphBuilder b;
  Output n = b.placeholder(DType::int32, {}, "n");
  Output k = b.placeholder(DType::int32, {}, "k");
  Outputs r = b.while_loop(
      [&](const Vars& v) { return v[0] < n; },
      [&](const Vars& v) {
        Output a = b.floor_mod(v[1] * k, b.scalar(1000)) + v[0];
        return Vars{v[0] + 1.0, a, v[2] + a - v[0]};
      },
      {b.scalar(0), b.scalar(1), b.scalar(0)});
  graph::Graph g = finish(b);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(g, m);
      for (int32_t nv : {0, 1, 5, 40}) {
        int32_t i = 0, a = 1, c = 0;
        const int32_t kv = 7;
        while (i < nv) {
          a = a * kv % 1000 + i;
          c = c + a - i;
          i += 1;
        }
        auto out = must_run(*s, {{"n", Tensor::scalar(nv)}, {"k", Tensor::scalar(kv)}},
                            {r[0].name(), r[1].name(), r[2].name()});
        BOOST_TEST(out[0].scalar_value<int32_t>() == i);
        BOOST_TEST(out[1].scalar_value<int32_t>() == a);
        BOOST_TEST(out[2].scalar_value<int32_t>() == c);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(while_nested_three_deep) {
  // total = sum over i < n1, j < n2, l < n3 of (i * j + l + bias)
  GraphBuilder b;
  Output n1 = b.scalar(3), n2 = b.scalar(4), n3 = b.scalar(5), bias = b.scalar(2);
  Output total = b.while_loop(
      [&](const Vars& v) { return v[0] < n1; },
      [&](const Vars& v) {
        Output i = v[0];
        Output t = b.while_loop(
            [&](const Vars& w) { return w[0] < n2; },
            [&](const Vars& w) {
              Output j = w[0];
              Output t2 = b.while_loop(
                  [&](const Vars& u) { return u[0] < n3; },
                  [&](const Vars& u) { return Vars{u[0] + 1.0, u[1] + i * j + u[0] + bias}; },
                  {b.scalar(0), w[1]})[1];
              return Vars{j + 1.0, t2};
            },
            {b.scalar(0), v[1]})[1];
        return Vars{i + 1.0, t};
      },
      {b.scalar(0), b.scalar(0)})[1];
  graph::Graph g = finish(b);
  int32_t expected = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      for (int l = 0; l < 5; ++l) expected += i * j + l + 2;
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(g, m);
      BOOST_TEST(fetch_int(*s, {}, total) == expected);
    }
  }
}

BOOST_AUTO_TEST_CASE(while_in_cond_taken_and_untaken_and_cond_in_while) {
  GraphBuilder b;
  Output p = b.placeholder(DType::boolean, {}, "p");
  Output n = b.placeholder(DType::int32, {}, "n");
  Output loop_in_cond =
      b.cond(p, [&] { return Vars{count_to(b, b.scalar(0), n, 2)}; }, [&] { return Vars{b.scalar(100)}; })[0];
  // acc = 0; for i < n: acc = i even ? acc + i : acc - 1
  Output cond_in_loop = b.while_loop(
      [&](const Vars& v) { return v[0] < n; },
      [&](const Vars& v) {
        Output even = b.equal(b.floor_mod(v[0], b.scalar(2)), b.scalar(0));
        Output acc = b.cond(even, [&] { return Vars{v[1] + v[0]}; }, [&] { return Vars{v[1] - 1.0}; })[0];
        return Vars{v[0] + 1.0, acc};
      },
      {b.scalar(0), b.scalar(0)})[1];
  graph::Graph g = finish(b);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(g, m);
      for (int32_t nv : {0, 7}) {
        int32_t counted = 0;
        while (counted < nv) counted += 2;
        int32_t acc = 0;
        for (int32_t i = 0; i < nv; ++i) acc = i % 2 == 0 ? acc + i : acc - 1;
        for (bool pv : {true, false}) {
          actors::Feeds f{{"p", Tensor::scalar(pv)}, {"n", Tensor::scalar(nv)}};
          BOOST_TEST(fetch_int(*s, f, loop_in_cond) == (pv ? counted : 100));
          BOOST_TEST(fetch_int(*s, f, cond_in_loop) == acc);
        }
      }
      BOOST_TEST(no_step_actor_left(*s));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_loop_that_runs_zero_times_returns_its_start) {
  GraphBuilder b;
  Output x = b.scalar(2.5f);
  Outputs r = b.while_loop([&](const Vars& v) { return v[0] > 10.0; },
                           [&](const Vars& v) { return Vars{v[0] * x, v[1] + 1.0}; },
                           {b.scalar(1.0f), b.scalar(0)});
  graph::Graph g = finish(b);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(g, m);
      auto out = must_run(*s, {}, {r[0].name(), r[1].name()});
      BOOST_TEST(out[0].scalar_value<float>() == 1.0f);
      BOOST_TEST(out[1].scalar_value<int32_t>() == 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(case_in_range_and_out_of_range) {
  GraphBuilder b;
  Output i = b.placeholder(DType::int32, {}, "i");
  Output x = b.placeholder(DType::int32, {}, "x");
  std::vector<graph::BranchFn> branches;
  for (int k = 0; k < 4; ++k)
    branches.push_back([&x, k] { return Vars{x * double(k + 1) + double(k)}; });
  Output r = b.case_(i, branches)[0];
  graph::Graph g = finish(b);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(g, m);
      const int32_t xv = 5;
      for (int32_t iv : {0, 1, 2, 3, 4, 17, -1}) {
        const int32_t k = iv >= 0 && iv < 4 ? iv : 3;  // out of range: the last branch
        BOOST_TEST(fetch_int(*s, {{"i", Tensor::scalar(iv)}, {"x", Tensor::scalar(xv)}}, r) ==
                   xv * (k + 1) + k);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(map_and_scan_stack_their_results) {
  GraphBuilder b;
  const std::vector<float> xs_v{1, 2, 3, 4, 5};
  const std::vector<float> ws_v{0.5f, -1, 2, 0, 3};
  Output xs = b.vector<float>(xs_v);
  Output ws = b.vector<float>(ws_v);
  Output k = b.scalar(3.0f);
  Outputs mapped = b.map_fn([&](const Vars& s) { return Vars{s[0] * s[1] + k, b.cast(s[0], DType::int32)}; },
                            {xs, ws}, {DType::float32, DType::int32});
  Outputs scanned = b.scan([&](const Vars& acc, const Vars& s) { return Vars{acc[0] * 0.5 + s[0], acc[1] + s[1]}; },
                           {xs, ws}, {b.scalar(1.0f), b.scalar(0.0f)});
  graph::Graph g = finish(b);
  std::vector<float> map0, scan0, scan1;
  std::vector<int32_t> map1;
  float a0 = 1, a1 = 0;
  for (size_t i = 0; i < xs_v.size(); ++i) {
    map0.push_back(xs_v[i] * ws_v[i] + 3.0f);
    map1.push_back(static_cast<int32_t>(xs_v[i]));
    a0 = a0 * 0.5f + xs_v[i];
    a1 = a1 + ws_v[i];
    scan0.push_back(a0);
    scan1.push_back(a1);
  }
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(g, m);
      auto out = must_run(*s, {}, {mapped[0].name(), mapped[1].name(), scanned[0].name(), scanned[1].name()});
      BOOST_TEST(floats(out[0]) == map0, boost::test_tools::per_element());
      BOOST_TEST(std::vector<int32_t>(out[1].data<int32_t>(), out[1].data<int32_t>() + 5) == map1,
                 boost::test_tools::per_element());
      BOOST_TEST(floats(out[2]) == scan0, boost::test_tools::per_element());
      BOOST_TEST(floats(out[3]) == scan1, boost::test_tools::per_element());
    }
  }
}

BOOST_AUTO_TEST_CASE(maximum_iterations_stops_a_loop) {
  GraphBuilder b;
  Output n = b.placeholder(DType::int32, {}, "n");
  Output limit = b.placeholder(DType::int32, {}, "limit");
  WhileOptions o;
  o.maximum_iterations = limit;
  Outputs r = b.while_loop([&](const Vars& v) { return v[0] < n; },
                           [&](const Vars& v) { return Vars{v[0] + 1.0, v[1] * 2.0}; },
                           {b.scalar(0), b.scalar(1)}, o);
  WhileOptions fixed;
  fixed.maximum_iterations = int64_t{4};
  fixed.parallel_iterations = 1;
  Output four = b.while_loop([&](const Vars& v) { return v[0] < 1000.0; },
                             [&](const Vars& v) { return Vars{v[0] + 3.0}; }, {b.scalar(0)}, fixed)[0];
  graph::Graph g = finish(b);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(g, m);
      for (auto [nv, lv] : std::vector<std::pair<int32_t, int32_t>>{{10, 3}, {2, 5}, {6, 0}}) {
        int32_t i = 0, p = 1;
        for (int32_t it = 0; it < lv && i < nv; ++it) i += 1, p *= 2;
        auto out = must_run(*s, {{"n", Tensor::scalar(nv)}, {"limit", Tensor::scalar(lv)}},
                            {r[0].name(), r[1].name()});
        BOOST_TEST(out[0].scalar_value<int32_t>() == i);
        BOOST_TEST(out[1].scalar_value<int32_t>() == p);
      }
      BOOST_TEST(fetch_int(*s, {}, four) == 12);
    }
  }
}

BOOST_AUTO_TEST_CASE(outer_control_dependencies_and_shared_invariants_in_loops) {
  // A body constant that must run after an outer node, and one outer tensor
  // used by a loop, a cond inside it and a loop inside that cond.
  GraphBuilder b;
  Output n = b.placeholder(DType::int32, {}, "n");
  Output init = b.group({}, "init");
  Output r = b.while_loop(
      [&](const Vars& v) { return v[0] < n; },
      [&](const Vars& v) {
        graph::NodeOptions o;
        o.control_inputs = {init};
        Output one = b.scalar(1, o);
        Output step = b.cond(v[0] < 2.0, [&] { return Vars{count_to(b, b.scalar(0), n, 1)}; },
                             [&] { return Vars{one}; })[0];
        return Vars{v[0] + one, v[1] + step};
      },
      {b.scalar(0), b.scalar(0)})[1];
  graph::Graph g = finish(b);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(g, m);
      for (int32_t nv : {0, 1, 5}) {
        int32_t acc = 0;
        for (int32_t i = 0; i < nv; ++i) acc += i < 2 ? nv : 1;
        BOOST_TEST(fetch_int(*s, {{"n", Tensor::scalar(nv)}}, r) == acc);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(an_exported_graph_reimports_and_runs_to_the_same_values) {
  GraphBuilder b;
  Output p = b.placeholder(DType::boolean, {}, "p");
  Output n = b.placeholder(DType::int32, {}, "n");
  Output r = b.cond(p, [&] { return Vars{count_to(b, b.scalar(1), n, 3)}; },
                    [&] {
                      return Vars{b.case_(n, {[&] { return Vars{n * 10.0}; },
                                              [&] { return Vars{n * 20.0}; }})[0]};
                    })[0];
  Output s = b.scan([&](const Vars& acc, const Vars& x) { return Vars{acc[0] * x[0]}; },
                    {b.range(b.scalar(1), n + 1.0, b.scalar(1))}, {b.scalar(1)})[0];
  graph::Graph g = finish(b);
  auto text = graph::graph_to_text(g);
  auto back = graph::import_graph_text(text, "built.pbtxt");
  BOOST_REQUIRE_MESSAGE(back.ok(), back.status().to_string());
  BOOST_TEST(g.equals(*back));
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto original = make_session(g, m);
      auto reimported = make_session(*back, m);
      for (int32_t nv : {0, 1, 4}) {
        for (bool pv : {true, false}) {
          actors::Feeds f{{"p", Tensor::scalar(pv)}, {"n", Tensor::scalar(nv)}};
          int32_t counted = 1;
          while (counted < nv) counted += 3;
          BOOST_TEST(fetch_int(*original, f, r) == (pv ? counted : nv == 0 ? 0 : nv * 20));
          BOOST_TEST(fetch_int(*reimported, f, r) == fetch_int(*original, f, r));
        }
        if (nv == 0) continue;  // an empty scan has no element shape to stack
        actors::Feeds f{{"n", Tensor::scalar(nv)}};
        auto a = must_run(*original, f, {s.name()});
        auto c = must_run(*reimported, f, {s.name()});
        std::vector<int32_t> factorials;
        for (int32_t i = 1, acc = 1; i <= nv; ++i) factorials.push_back(acc *= i);
        BOOST_TEST(std::vector<int32_t>(a[0].data<int32_t>(), a[0].data<int32_t>() + nv) == factorials,
                   boost::test_tools::per_element());
        BOOST_TEST(a[0].equals(c[0]));
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
