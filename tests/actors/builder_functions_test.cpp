// GraphBuilder's TensorFlow 2 form (graph/builder/builder_functions.cpp): library
// functions built in builders of their own, called by PartitionedCall,
// StatelessIf, StatelessWhile and For — the same values as the TF 1
// constructions of the same builder, in every mode, before and after an
// export and re-import.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "graph/builder/builder.hpp"
#include "graph/io/export.hpp"
#include "graph/io/import.hpp"
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

// x, n placeholders; TF 2 and TF 1 forms of: a call, a cond, a while loop
// (acc += i * x over i < n) and a cond inside the loop.
struct Built {
  graph::Graph g;
  std::vector<std::string> tf2, tf1;  // fetches, pairwise equal
  bool has_switch = false;
};

Built build() {
  GraphBuilder b;
  Output x = b.placeholder(DType::float32, {false, {}}, "x");
  Output n = b.placeholder(DType::int32, {false, {}}, "n");
  Output p = b.placeholder(DType::boolean, {false, {}}, "p");
  Built out;

  // A call: f(x) = x * x + x.
  const std::string square_plus = b.function("square_plus", {DType::float32}, [](GraphBuilder& f, const Vars& a) {
    return Vars{f.add(f.mul(a[0], a[0]), a[0])};
  });
  out.tf2.push_back(b.call(square_plus, {x})[0].name());
  out.tf1.push_back(b.add(b.mul(x, x), x).name());

  // A cond: p ? tanh(x) * 2 : exp(x) - 1, with x captured as an argument.
  const std::string then_fn = b.function("then", {DType::float32}, [](GraphBuilder& f, const Vars& a) {
    return Vars{f.mul(f.op1("Tanh", {a[0]}), f.scalar<float>(2.0f))};
  });
  const std::string else_fn = b.function("else", {DType::float32}, [](GraphBuilder& f, const Vars& a) {
    return Vars{f.sub(f.op1("Exp", {a[0]}), f.scalar<float>(1.0f))};
  });
  out.tf2.push_back(b.functional_if(p, then_fn, else_fn, {x})[0].name());
  out.tf1.push_back(b.cond(p, [&] { return Vars{b.mul(b.op1("Tanh", {x}), b.scalar<float>(2.0f))}; },
                           [&] { return Vars{b.sub(b.op1("Exp", {x}), b.scalar<float>(1.0f))}; })[0]
                        .name());

  // A loop with a cond inside: acc += (i odd ? i * x : x) over i < n.
  const std::string cond_fn =
      b.function("loop_cond", {DType::int32, DType::int32, DType::float32, DType::float32},
                 [](GraphBuilder& f, const Vars& a) { return Vars{f.less(a[0], a[1])}; });
  const std::string body_fn = b.function(
      "loop_body", {DType::int32, DType::int32, DType::float32, DType::float32}, [&](GraphBuilder& f, const Vars& a) {
        // The body defines and calls its own branch functions.
        const std::string odd = f.function("odd", {DType::int32, DType::float32}, [](GraphBuilder& g, const Vars& v) {
          return Vars{g.mul(g.cast(v[0], DType::float32), v[1])};
        });
        const std::string even = f.function("even", {DType::int32, DType::float32},
                                            [](GraphBuilder&, const Vars& v) { return Vars{v[1]}; });
        Output is_odd = f.not_equal(f.floor_mod(a[0], f.scalar<int32_t>(2)), f.scalar<int32_t>(0));
        Output term = f.functional_if(is_odd, odd, even, {a[0], a[3]})[0];
        return Vars{f.add(a[0], f.scalar<int32_t>(1)), a[1], f.add(a[2], term), a[3]};
      });
  // x is captured as TensorFlow 2 captures: an extra loop variable.
  auto loop2 = b.functional_while(cond_fn, body_fn, {b.scalar<int32_t>(0), n, b.scalar<float>(0.0f), x});
  out.tf2.push_back(loop2[2].name());
  auto loop1 = b.while_loop([&](const Vars& v) { return b.less(v[0], n); },
                            [&](const Vars& v) {
                              Output is_odd = b.not_equal(b.floor_mod(v[0], b.scalar<int32_t>(2)), b.scalar<int32_t>(0));
                              Output term = b.cond(is_odd, [&] { return Vars{b.mul(b.cast(v[0], DType::float32), x)}; },
                                                   [&] { return Vars{b.identity(x)}; })[0];
                              return Vars{b.add(v[0], b.scalar<int32_t>(1)), b.add(v[1], term)};
                            },
                            {b.scalar<int32_t>(0), b.scalar<float>(0.0f)});
  out.tf1.push_back(loop1[1].name());
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  out.g = std::move(g).value();
  return out;
}

std::vector<std::string> concat(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(builder_functions)

BOOST_AUTO_TEST_CASE(tf2_forms_compute_what_the_tf1_forms_compute) {
  Built built = build();
  // The TF 2 half holds functional ops and the library its functions.
  int functional = 0;
  for (graph::NodeId id = 0; id < built.g.num_nodes(); ++id) {
    const std::string& op = built.g.node(id).op;
    functional += op == "PartitionedCall" || op == "StatelessIf" || op == "StatelessWhile";
  }
  BOOST_TEST(functional == 3);
  BOOST_TEST(built.g.library().function_size() == 7);
  // Exported and imported again, it computes the same.
  auto again = graph::import_graph_text(graph::graph_to_text(built.g));
  BOOST_REQUIRE_MESSAGE(again.ok(), again.status().to_string());
  for (const Mode& m : {modes()[0], modes()[2], modes()[4]}) {
    for (const graph::Graph* g : {&built.g, &*again}) {
      BOOST_TEST_CONTEXT(m.name << (g == &built.g ? "" : ", re-imported")) {
        auto s = make_session(*g, m);
        for (float x : {0.5f, -1.25f}) {
          for (bool p : {true, false}) {
            for (int n : {0, 1, 6}) {
              BOOST_TEST_CONTEXT("x " << x << ", p " << p << ", n " << n) {
                auto out = must_run(*s,
                                    {{"x", Tensor::scalar<float>(x)},
                                     {"p", Tensor::scalar<bool>(p)},
                                     {"n", Tensor::scalar<int32_t>(n)}},
                                    concat(built.tf2, built.tf1));
                const size_t k = built.tf2.size();
                BOOST_TEST(out[0].scalar_value<float>() == x * x + x, boost::test_tools::tolerance(1e-6f));
                BOOST_TEST(out[1].scalar_value<float>() ==
                               (p ? std::tanh(x) * 2.0f : std::exp(x) - 1.0f),
                           boost::test_tools::tolerance(1e-6f));
                for (size_t i = 0; i < k; ++i)
                  BOOST_TEST(out[i].scalar_value<float>() == out[k + i].scalar_value<float>(),
                             boost::test_tools::tolerance(1e-6f));
                float acc = 0;
                for (int i = 0; i < n; ++i) acc += (i % 2 != 0) ? static_cast<float>(i) * x : x;
                BOOST_TEST(out[2].scalar_value<float>() == acc, boost::test_tools::tolerance(1e-5f));
              }
            }
          }
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_for_loop_and_what_cannot_be_built) {
  GraphBuilder b;
  Output n = b.placeholder(DType::int32, {false, {}}, "n");
  const std::string body = b.function("cube_sum", {DType::int32, DType::int64}, [](GraphBuilder& f, const Vars& a) {
    Output i = f.cast(a[0], DType::int64);
    return Vars{f.add(a[1], f.mul(f.mul(i, i), i))};
  });
  Output sum = b.for_loop(n, b.scalar<int32_t>(-1), b.scalar<int32_t>(-2), body, {b.scalar<int64_t>(0)})[0];
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  auto s = make_session(*g, modes()[2]);
  for (int start : {-3, 0, 7, 10}) {
    int64_t want = 0;
    for (int64_t i = start; i > -1; i -= 2) want += i * i * i;
    auto out = must_run(*s, {{"n", Tensor::scalar<int32_t>(start)}}, {sum.name()});
    BOOST_TEST(out[0].scalar_value<int64_t>() == want);
  }

  // A Case over three branches; an index out of range takes the last.
  {
    GraphBuilder c;
    Output index = c.placeholder(DType::int32, {false, {}}, "index");
    Output x = c.placeholder(DType::float32, {false, {}}, "x");
    std::vector<std::string> fns;
    for (int k = 0; k < 3; ++k)
      fns.push_back(c.function("branch", {DType::float32}, [k](GraphBuilder& f, const Vars& a) {
        return Vars{f.add(f.mul(a[0], f.scalar<float>(static_cast<float>(k + 1))), f.scalar<float>(10.0f * k))};
      }));
    BOOST_TEST((fns == std::vector<std::string>{"branch", "branch_1", "branch_2"}));
    Output y = c.functional_case(index, fns, {x})[0];
    auto cg = c.finish();
    BOOST_REQUIRE_MESSAGE(cg.ok(), cg.status().to_string());
    auto cs = make_session(*cg, modes()[0]);
    for (int i : {0, 1, 2, 3, -1}) {
      const int k = (i < 0 || i > 2) ? 2 : i;
      auto out = must_run(*cs, {{"index", Tensor::scalar<int32_t>(i)}, {"x", Tensor::scalar<float>(1.5f)}}, {y.name()});
      BOOST_TEST(out[0].scalar_value<float>() == 1.5f * static_cast<float>(k + 1) + 10.0f * static_cast<float>(k));
    }
  }

  // Errors name the function and what is wrong, and stop the builder.
  GraphBuilder bad;
  Output x = bad.placeholder(DType::float32, {false, {}}, "x");
  bad.function("leaks", {DType::float32}, [&](GraphBuilder&, const Vars&) { return Vars{x}; });
  BOOST_TEST(!bad.ok());
  BOOST_TEST(bad.finish().status().to_string().find("function 'leaks'") != std::string::npos,
             bad.finish().status().to_string());
  GraphBuilder missing;
  missing.call("nowhere", {});
  BOOST_TEST(missing.finish().status().to_string().find("no function 'nowhere'") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
