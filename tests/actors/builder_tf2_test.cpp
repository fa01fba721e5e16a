// GraphBuilder's tf2 style (graph/builder_tf2.cpp): the same construction
// code built in the tf1 and the tf2 style computes the same values, in every
// mode, and against values computed here; the tf2 graph holds functional ops
// and no Switch/Merge; it survives an export and re-import; captures become
// inputs; errors name the construct.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdio>

#include "graph/autodiff/gradients.hpp"
#include "graph/builder/builder.hpp"
#include "graph/functions/lower_functional.hpp"
#include "graph/io/export.hpp"
#include "graph/io/import.hpp"
#include "graph/proto/graph_def.pb.h"
#include "graph/validate.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using graph::GraphBuilder;
using graph::Output;
using graph::Outputs;
using ops::DType;
using ops::Tensor;
using Vars = std::vector<Output>;

namespace {

// The feeds: x float, n int32, p bool, k int32.
struct Feed {
  float x;
  int n;
  bool p;
  int k;
};

// What each fetch must be, computed independently of tagflow.
std::vector<float> expected(const Feed& f) {
  const float x = f.x, c = 3.0f;
  std::vector<float> want;
  // 0: cond with a capture used in both branches.
  want.push_back(f.p ? x * 2.0f + c : x - c);
  // 1: nested conds.
  want.push_back(f.p ? (x > 0 ? x * x : -x) : (f.n > 2 ? x + static_cast<float>(f.n) : 0.0f));
  // 2: while loop acc += x + i over i < n.
  float acc = 0;
  for (int i = 0; i < f.n; ++i) acc += x + static_cast<float>(i);
  want.push_back(acc);
  // 3: a loop with a cond inside: acc += (i odd ? x * c : 1).
  acc = 0;
  for (int i = 0; i < f.n; ++i) acc += (i % 2 != 0) ? x * c : 1.0f;
  want.push_back(acc);
  // 4: a cond with a loop inside: p ? x doubled n times : x - 1.
  float d = x;
  for (int i = 0; i < f.n; ++i) d *= 2.0f;
  want.push_back(f.p ? d : x - 1.0f);
  // 5: case over 3 branches, out of range takes the last.
  const int k = (f.k < 0 || f.k > 2) ? 2 : f.k;
  want.push_back(k == 0 ? x + 1.0f : k == 1 ? x * c : x - static_cast<float>(f.n));
  // 6: while i < 100 with maximum_iterations n: the number of iterations.
  want.push_back(static_cast<float>(f.n));
  // 7: a loop whose cond uses a capture the body also uses: acc += c while acc < x * c.
  acc = 0;
  while (acc < x * c) acc += c;
  want.push_back(acc);
  return want;
}

struct Built {
  graph::Graph g;
  std::vector<std::string> fetches;
};

// The same construction code for both styles.
Built build(GraphBuilder::Style style) {
  GraphBuilder b(style);
  Output x = b.placeholder(DType::float32, {false, {}}, "x");
  Output n = b.placeholder(DType::int32, {false, {}}, "n");
  Output p = b.placeholder(DType::boolean, {false, {}}, "p");
  Output k = b.placeholder(DType::int32, {false, {}}, "k");
  Output c = b.scalar<float>(3.0f, "c");
  Output nf = b.cast(n, DType::float32);
  std::vector<Output> out;

  out.push_back(b.cond(p, [&] { return Vars{b.add(b.mul(x, b.scalar<float>(2.0f)), c)}; },
                       [&] { return Vars{b.sub(x, c)}; })[0]);

  out.push_back(b.cond(
      p,
      [&] {
        return Vars{b.cond(b.greater(x, b.scalar<float>(0.0f)), [&] { return Vars{b.mul(x, x)}; },
                           [&] { return Vars{b.neg(x)}; }, "inner")[0]};
      },
      [&] {
        return Vars{b.cond(b.greater(n, b.scalar<int32_t>(2)), [&] { return Vars{b.add(x, nf)}; },
                           [&] { return Vars{b.scalar<float>(0.0f)}; }, "inner")[0]};
      },
      "outer")[0]);

  out.push_back(b.while_loop([&](const Vars& v) { return b.less(v[0], n); },
                             [&](const Vars& v) {
                               return Vars{b.add(v[0], b.scalar<int32_t>(1)),
                                           b.add(v[1], b.add(x, b.cast(v[0], DType::float32)))};
                             },
                             {b.scalar<int32_t>(0), b.scalar<float>(0.0f)})[1]);

  out.push_back(b.while_loop(
      [&](const Vars& v) { return b.less(v[0], n); },
      [&](const Vars& v) {
        Output odd = b.not_equal(b.floor_mod(v[0], b.scalar<int32_t>(2)), b.scalar<int32_t>(0));
        Output term = b.cond(odd, [&] { return Vars{b.mul(x, c)}; }, [&] { return Vars{b.scalar<float>(1.0f)}; })[0];
        return Vars{b.add(v[0], b.scalar<int32_t>(1)), b.add(v[1], term)};
      },
      {b.scalar<int32_t>(0), b.scalar<float>(0.0f)})[1]);

  out.push_back(b.cond(
      p,
      [&] {
        return Vars{b.while_loop([&](const Vars& v) { return b.less(v[0], n); },
                                 [&](const Vars& v) {
                                   return Vars{b.add(v[0], b.scalar<int32_t>(1)), b.mul(v[1], b.scalar<float>(2.0f))};
                                 },
                                 {b.scalar<int32_t>(0), x})[1]};
      },
      [&] { return Vars{b.sub(x, b.scalar<float>(1.0f))}; })[0]);

  out.push_back(b.case_(k, {[&] { return Vars{b.add(x, b.scalar<float>(1.0f))}; },
                            [&] { return Vars{b.mul(x, c)}; }, [&] { return Vars{b.sub(x, nf)}; }})[0]);

  graph::WhileOptions limited;
  limited.maximum_iterations = n;
  limited.name = "limited";
  out.push_back(b.cast(b.while_loop([&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(100)); },
                                    [&](const Vars& v) { return Vars{b.add(v[0], b.scalar<int32_t>(1))}; },
                                    {b.scalar<int32_t>(0)}, limited)[0],
                       DType::float32));

  Output xc = b.mul(x, c);
  out.push_back(b.while_loop([&](const Vars& v) { return b.less(v[0], xc); },
                             [&](const Vars& v) { return Vars{b.add(v[0], c)}; }, {b.scalar<float>(0.0f)})[0]);

  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  Built built{std::move(g).value(), {}};
  for (const Output& o : out) built.fetches.push_back(o.name());
  return built;
}

std::map<std::string, int> op_counts(const graph::Graph& g) {
  std::map<std::string, int> counts;
  for (graph::NodeId id = 0; id < g.num_nodes(); ++id) ++counts[g.node(id).op];
  for (const auto& f : g.library().function())
    for (const auto& n : f.node_def()) ++counts[n.op()];
  return counts;
}

void check_values(const graph::Graph& g, const std::vector<std::string>& fetches, const std::string& what) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(what << ", " << m.name) {
      auto s = make_session(g, m);
      for (const Feed& f : {Feed{1.5f, 0, true, 0}, Feed{-0.5f, 1, false, 1}, Feed{2.0f, 5, true, 2},
                            Feed{-2.0f, 5, false, 7}, Feed{0.25f, 3, true, -1}}) {
        BOOST_TEST_CONTEXT("x " << f.x << ", n " << f.n << ", p " << f.p << ", k " << f.k) {
          auto out = must_run(*s,
                              {{"x", Tensor::scalar<float>(f.x)},
                               {"n", Tensor::scalar<int32_t>(f.n)},
                               {"p", Tensor::scalar<bool>(f.p)},
                               {"k", Tensor::scalar<int32_t>(f.k)}},
                              fetches);
          const std::vector<float> want = expected(f);
          BOOST_REQUIRE_EQUAL(out.size(), want.size());
          for (size_t i = 0; i < want.size(); ++i)
            BOOST_TEST_CONTEXT("fetch " << i << " " << fetches[i]) {
              BOOST_TEST(out[i].scalar_value<float>() == want[i], boost::test_tools::tolerance(1e-5f));
            }
        }
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(builder_tf2)

BOOST_AUTO_TEST_CASE(tf1_and_tf2_styles_compute_the_same) {
  Built tf1 = build(GraphBuilder::Style::tf1);
  Built tf2 = build(GraphBuilder::Style::tf2);
  auto c1 = op_counts(tf1.g), c2 = op_counts(tf2.g);
  BOOST_TEST(c1["Switch"] > 0);
  BOOST_TEST(tf1.g.library().function_size() == 0);
  // The tf2 graph: functional ops only, in the graph and in its functions.
  for (const char* prim : {"Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond"})
    BOOST_TEST(c2[prim] == 0, prim);
  // Top level: conds 0, 1 (outer), 4; loops 2, 3, 6, 7; one case. Inside
  // functions: two inner conds, a cond in loop 3's body, a loop in cond 4.
  BOOST_TEST(c2["StatelessIf"] == 3 + 2 + 1);
  BOOST_TEST(c2["StatelessWhile"] == 4 + 1);
  BOOST_TEST(c2["StatelessCase"] == 1);
  BOOST_TEST(tf2.g.library().function_size() == 2 * 6 + 2 * 5 + 3);
  std::set<std::string> names;
  for (const auto& f : tf2.g.library().function()) names.insert(f.signature().name());
  BOOST_TEST(names.size() == static_cast<size_t>(tf2.g.library().function_size()));
  BOOST_TEST(names.count("cond_true_0") == 1);
  BOOST_TEST(names.count("cond_false_1") == 1);

  check_values(tf1.g, tf1.fetches, "tf1");
  check_values(tf2.g, tf2.fetches, "tf2");

  // Exported (text and file) and imported again, it computes the same.
  auto again = graph::import_graph_text(graph::graph_to_text(tf2.g));
  BOOST_REQUIRE_MESSAGE(again.ok(), again.status().to_string());
  BOOST_TEST(again->library().function_size() == tf2.g.library().function_size());
  check_values(*again, tf2.fetches, "tf2, re-imported from text");
  const std::string path = "/tmp/tagflow_builder_tf2_test.pbtxt";
  BOOST_REQUIRE(graph::export_graph_file(tf2.g, path).ok());
  auto from_file = graph::import_graph_file(path);
  std::remove(path.c_str());
  BOOST_REQUIRE_MESSAGE(from_file.ok(), from_file.status().to_string());
  check_values(*from_file, tf2.fetches, "tf2, re-imported from a file");
}

BOOST_AUTO_TEST_CASE(captures_are_inputs_of_the_functional_op) {
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float32, {false, {}}, "x");
  Output y = b.placeholder(DType::float32, {false, {}}, "y");
  Output p = b.placeholder(DType::boolean, {false, {}}, "p");
  // x used twice in one branch and once in the other; y only in the other.
  Outputs r = b.cond(p, [&] { return Vars{b.add(b.mul(x, x), x)}; }, [&] { return Vars{b.sub(x, y)}; }, "pick");
  const graph::Node& n = b.graph().node(r[0].node);
  BOOST_TEST(n.name == "pick");
  BOOST_TEST(n.op == "StatelessIf");
  BOOST_REQUIRE(n.inputs.size() == 3u);  // pred, x, y
  BOOST_TEST(b.graph().node(n.inputs[1].node).name == "x");
  BOOST_TEST(b.graph().node(n.inputs[2].node).name == "y");
  for (const auto& f : b.graph().library().function()) BOOST_TEST(f.signature().input_arg_size() == 2);

  // A While: the capture is an extra loop variable the body passes on.
  Outputs w = b.while_loop([&](const Vars& v) { return b.less(v[0], y); },
                           [&](const Vars& v) { return Vars{b.add(v[0], x)}; }, {b.scalar<float>(0.0f)});
  const graph::Node& wn = b.graph().node(w[0].node);
  BOOST_TEST(wn.op == "StatelessWhile");
  BOOST_TEST(wn.inputs.size() == 3u);  // the variable, y, x
  BOOST_TEST(w.size() == 1u);
  BOOST_TEST(*wn.attr<int64_t>("parallel_iterations") == 10);
  BOOST_TEST(wn.output_types.size() == 3u);

  // A stateful op in a branch makes the node an If.
  Outputs checked = b.cond(
      p,
      [&] {
        Output ok = b.greater_equal(b.mul(x, x), b.scalar<float>(0.0f));
        b.op("Assert", {ok, x});
        return Vars{b.identity(x, graph::NodeOptions{"checked_x"})};
      },
      [&] { return Vars{b.neg(x)}; });
  BOOST_TEST(b.graph().node(checked[0].node).op == "If");

  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(*g, m);
      for (float xv : {0.75f, 2.0f}) {
        for (bool pv : {true, false}) {
          const float yv = 5.0f;
          auto out = must_run(*s, {{"x", Tensor::scalar(xv)}, {"y", Tensor::scalar(yv)}, {"p", Tensor::scalar(pv)}},
                              {r[0].name(), w[0].name(), checked[0].name()});
          BOOST_TEST(out[0].scalar_value<float>() == (pv ? xv * xv + xv : xv - yv));
          float acc = 0;
          while (acc < yv) acc += xv;
          BOOST_TEST(out[1].scalar_value<float>() == acc);
          BOOST_TEST(out[2].scalar_value<float>() == (pv ? xv : -xv));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(errors_name_the_construct) {
  {
    GraphBuilder b(GraphBuilder::Style::tf2);
    Output p = b.placeholder(DType::boolean, {false, {}}, "p");
    b.cond(p, [&] { return Vars{b.scalar<float>(1.0f)}; }, [&] { return Vars{b.scalar<int32_t>(1)}; }, "mixed");
    const std::string e = b.finish().status().to_string();
    BOOST_TEST(e.find("cond 'mixed'") != std::string::npos, e);
    BOOST_TEST(e.find("different dtypes") != std::string::npos, e);
  }
  {
    GraphBuilder b(GraphBuilder::Style::tf2), other;
    Output stranger = other.scalar<float>(1.0f);
    b.while_loop([&](const Vars& v) { return b.less(v[0], stranger); },
                 [&](const Vars& v) { return Vars{v[0]}; }, {b.scalar<float>(0.0f)});
    const std::string e = b.finish().status().to_string();
    BOOST_TEST(e.find("while loop 'while' (condition)") != std::string::npos, e);
    BOOST_TEST(e.find("another GraphBuilder") != std::string::npos, e);
  }
  {
    GraphBuilder b(GraphBuilder::Style::tf2);
    b.while_loop([&](const Vars& v) { return b.less(v[0], b.scalar<float>(3.0f)); },
                 [&](const Vars& v) { return Vars{v[0], v[0]}; }, {b.scalar<float>(0.0f)}, {10, {}, "bad"});
    const std::string e = b.finish().status().to_string();
    BOOST_TEST(e.find("while loop 'bad': the body returns 2 tensors for 1 loop variables") != std::string::npos, e);
  }
  {
    // A value made inside a branch does not leak out of it.
    GraphBuilder b(GraphBuilder::Style::tf2);
    Output p = b.placeholder(DType::boolean, {false, {}}, "p");
    Output inside;
    b.cond(p, [&] { return Vars{inside = b.scalar<float>(1.0f)}; }, [&] { return Vars{b.scalar<float>(2.0f)}; });
    b.add(inside, b.scalar<float>(1.0f));
    BOOST_TEST(b.finish().status().to_string().find("another GraphBuilder") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(map_fn_and_scan_in_the_tf2_style) {
  // Their loops are While nodes carrying TensorLists, as TensorFlow 2's.
  GraphBuilder b(GraphBuilder::Style::tf2);
  const std::vector<float> xs_v{1, 2, 3, 4, 5};
  Output xs = b.vector<float>(xs_v);
  Output k = b.placeholder(DType::float32, {false, {}}, "k");
  Outputs mapped = b.map_fn([&](const Vars& s) { return Vars{b.add(b.mul(s[0], s[0]), k)}; }, {xs});
  Outputs scanned = b.scan([&](const Vars& acc, const Vars& s) { return Vars{b.add(b.mul(acc[0], k), s[0])}; },
                           {xs}, {b.scalar(0.0f)});
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  auto counts = op_counts(*g);
  BOOST_TEST(counts["StatelessWhile"] + counts["While"] == 2);
  BOOST_TEST(counts["Enter"] == 0);
  BOOST_TEST(counts["TensorArrayV3"] == 0);
  BOOST_TEST(counts["TensorListSetItem"] == 2);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(*g, m);
      for (float kv : {0.5f, -2.0f}) {
        auto out = must_run(*s, {{"k", Tensor::scalar(kv)}}, {mapped[0].name(), scanned[0].name()});
        BOOST_REQUIRE_EQUAL(out[0].num_elements(), 5);
        BOOST_REQUIRE_EQUAL(out[1].num_elements(), 5);
        float acc = 0;
        for (size_t i = 0; i < xs_v.size(); ++i) {
          acc = acc * kv + xs_v[i];
          BOOST_TEST(out[0].data<float>()[i] == xs_v[i] * xs_v[i] + kv);
          BOOST_TEST(out[1].data<float>()[i] == acc);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(gradients_of_a_tf2_graph_after_lowering) {
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float32, {false, {}}, "x");
  Output p = b.placeholder(DType::boolean, {false, {}}, "p");
  b.cond(p, [&] { return Vars{b.mul(b.mul(x, x), b.scalar(3.0f))}; },
         [&] { return Vars{b.mul(x, b.scalar(5.0f))}; });
  b.while_loop([&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(3)); },
               [&](const Vars& v) { return Vars{b.add(v[0], b.scalar<int32_t>(1)), b.mul(v[1], x)}; },
               {b.scalar<int32_t>(0), b.scalar(1.0f)});
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  BOOST_REQUIRE(graph::lower_functional_ops(&*g).ok());
  BOOST_REQUIRE(graph::validate(*g).ok());
  auto r = graph::gradients(*g, {{g->find("cond"), 0}, {g->find("while"), 1}}, {{g->find("x"), 0}});
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  const std::string dx = g->endpoint_name(r->dxs[0]);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(*g, m);
      for (float xv : {0.5f, -1.5f})
        for (bool pv : {true, false}) {
          auto out = must_run(*s, {{"x", Tensor::scalar(xv)}, {"p", Tensor::scalar(pv)}}, {dx});
          // d/dx (p ? 3x² : 5x) + d/dx x³
          const float want = (pv ? 6.0f * xv : 5.0f) + 3.0f * xv * xv;
          BOOST_TEST(out[0].scalar_value<float>() == want, boost::test_tools::tolerance(1e-5f));
        }
    }
  }
}

// GraphBuilder::gradients on a tf2-style graph differentiates the
// functional ops as written (an If's gradient an If, a While's a While),
// and again: the README's example, d/dx and d2/dx2 of (p ? 3x² : 5x) + x³.
BOOST_AUTO_TEST_CASE(builder_gradients_of_tf2_control_flow_to_second_order) {
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float32, {false, {}}, "x");
  Output p = b.placeholder(DType::boolean, {false, {}}, "p");
  Output c = b.cond(p, [&] { return Vars{b.mul(b.mul(x, x), b.scalar(3.0f))}; },
                    [&] { return Vars{b.mul(x, b.scalar(5.0f))}; })[0];
  Output cube = b.while_loop([&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(3)); },
                             [&](const Vars& v) { return Vars{b.add(v[0], b.scalar<int32_t>(1)), b.mul(v[1], x)}; },
                             {b.scalar<int32_t>(0), b.scalar(1.0f)})[1];
  Output y = b.add(c, cube);
  Output dy = b.gradients({y}, {x})[0];
  Output d2y = b.gradients({dy}, {x})[0];
  BOOST_REQUIRE_MESSAGE(b.ok(), b.status().to_string());
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  for (const graph::Node& n : g->nodes()) BOOST_TEST(n.op != "Enter");  // no TF 1 loop was built
  for (bool lower : {false, true}) {
    for (const Mode& m : modes()) {
      BOOST_TEST_CONTEXT(m.name << (lower ? ", lowered" : ", as written")) {
        actors::SessionOptions o;
        o.lower_functional = lower;
        auto s = make_session(*g, m, o);
        for (float xv : {0.5f, -1.5f})
          for (bool pv : {true, false}) {
            auto out = must_run(*s, {{"x", Tensor::scalar(xv)}, {"p", Tensor::scalar(pv)}}, {dy.name(), d2y.name()});
            BOOST_TEST(out[0].scalar_value<float>() == (pv ? 6.0f * xv : 5.0f) + 3.0f * xv * xv,
                       boost::test_tools::tolerance(1e-5f));
            BOOST_TEST(out[1].scalar_value<float>() == (pv ? 6.0f : 0.0f) + 6.0f * xv,
                       boost::test_tools::tolerance(1e-5f));
          }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(branches_that_return_nothing_run_their_stateful_nodes) {
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float32, {false, {}}, "x");
  Output p = b.placeholder(DType::boolean, {false, {}}, "p");
  // p ? assert(x > 0) : assert(x < 10); the If is the handle.
  Outputs checked = b.cond(
      p, [&] { b.op("Assert", {b.greater(x, b.scalar(0.0f)), x}, {}, "positive"); return Vars{}; },
      [&] { b.op("Assert", {b.less(x, b.scalar(10.0f)), x}, {}, "small"); return Vars{}; }, "check");
  BOOST_TEST(checked.empty());
  BOOST_TEST(checked.control().node_name() == "check");
  BOOST_TEST(b.graph().node(checked.control().node).op == "If");
  // Three levels: a cond in a loop in a cond, all using x and t from the top.
  Output t = b.scalar(0.5f, "t");
  Output deep = b.cond(
      p,
      [&] {
        return Vars{b.while_loop([&](const Vars& v) { return b.less(v[0], x); },
                                 [&](const Vars& v) {
                                   Output step = b.cond(b.greater(v[0], t), [&] { return Vars{b.add(t, t)}; },
                                                        [&] { return Vars{t}; })[0];
                                   return Vars{b.add(v[0], step)};
                                 },
                                 {b.scalar(0.0f)})[0]};
      },
      [&] { return Vars{b.mul(x, t)}; })[0];
  // The outer If takes the predicate, x and t.
  BOOST_TEST(b.graph().node(deep.node).inputs.size() == 3u);
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(*g, m);
      for (float xv : {-1.0f, 5.0f, 20.0f}) {
        for (bool pv : {true, false}) {
          BOOST_TEST_CONTEXT("x " << xv << ", p " << pv) {
            const actors::Feeds feeds{{"x", Tensor::scalar(xv)}, {"p", Tensor::scalar(pv)}};
            auto r = s->run(feeds, {}, {checked.control().name()});
            const bool holds = pv ? xv > 0 : xv < 10;
            BOOST_TEST(r.ok() == holds, r.status().to_string());
            if (!holds) BOOST_TEST(r.status().code() == ops::Error::invalid_argument);
            float want = xv * 0.5f;
            if (pv) {
              want = 0;
              while (want < xv) want += want > 0.5f ? 1.0f : 0.5f;
            }
            auto out = must_run(*s, feeds, {deep.name()});
            BOOST_TEST(out[0].scalar_value<float>() == want);
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(the_example_of_docs_tf2) {
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float32, {false, {}}, "x");
  Output n = b.placeholder(DType::int32, {false, {}}, "n");
  Output p = b.placeholder(DType::boolean, {false, {}}, "p");
  // StatelessIf(p, x): cond_true_0(x) = x * 2, cond_false_1(x) = -x
  Output y = b.cond(p, [&] { return Vars{x * 2.0}; }, [&] { return Vars{-x}; })[0];
  // StatelessWhile(0, 0.0, n, x): returns 2 of its 4 outputs
  Outputs loop = b.while_loop([&](const Vars& v) { return v[0] < n; },
                              [&](const Vars& v) { return Vars{v[0] + 1.0, v[1] + x}; },
                              {b.scalar<int32_t>(0), b.scalar(0.0f)});
  const graph::Node& if_node = b.graph().node(y.node);
  const graph::Node& while_node = b.graph().node(loop[0].node);
  BOOST_TEST(if_node.op == "StatelessIf");
  BOOST_TEST(if_node.attr<ops::NameAttrList>("then_branch")->name == "cond_true_0");
  BOOST_TEST(while_node.op == "StatelessWhile");
  BOOST_TEST(while_node.inputs.size() == 4u);
  BOOST_TEST(loop.size() == 2u);
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  auto s = make_session(*g, modes()[2]);
  auto out = must_run(*s, {{"x", Tensor::scalar(1.25f)}, {"n", Tensor::scalar<int32_t>(4)}, {"p", Tensor::scalar(false)}},
                      {y.name(), loop[0].name(), loop[1].name()});
  BOOST_TEST(out[0].scalar_value<float>() == -1.25f);
  BOOST_TEST(out[1].scalar_value<int32_t>() == 4);
  BOOST_TEST(out[2].scalar_value<float>() == 4 * 1.25f);
}

BOOST_AUTO_TEST_SUITE_END()
