// Each pass of graph/optimize/ on a small graph: what it changes, what it
// must leave alone, and that kept names survive. (That no pass changes a
// value is tests/actors/optimizer_equivalence_test.cpp.)
#include <boost/test/unit_test.hpp>

#include "graph/analysis/control_flow.hpp"
#include "graph/builder/builder.hpp"
#include "graph/optimize/optimizer.hpp"

using namespace tagflow;
using namespace tagflow::graph;
using Vars = std::vector<Output>;

namespace {

Graph finish(GraphBuilder& b) {
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  return std::move(g).value();
}

Graph run_pass(const Graph& g, const std::string& pass, std::set<std::string> keep,
               std::vector<optimize::Change>* changes = nullptr) {
  optimize::OptimizeOptions o;
  o.keep = std::move(keep);
  o.changes = changes;
  auto passes = optimize::parse_pass_list(pass);
  BOOST_REQUIRE_MESSAGE(passes.ok(), passes.status().to_string());
  auto out = optimize::run_passes(g, *passes, o);
  BOOST_REQUIRE_MESSAGE(out.ok(), out.status().to_string());
  return std::move(out).value();
}

int count_op(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

// The node whose name is `name` or ends in "/name" (builder scopes).
NodeId find(const Graph& g, const std::string& name) {
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    const std::string& n = g.node(id).name;
    if (n == name || (n.size() > name.size() && n.compare(n.size() - name.size() - 1, std::string::npos, "/" + name) == 0))
      return id;
  }
  return kNoNode;
}

const Node& node(const Graph& g, const std::string& name) {
  const NodeId id = find(g, name);
  BOOST_REQUIRE_MESSAGE(id != kNoNode, "no node " << name);
  return g.node(id);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(optimizer)

BOOST_AUTO_TEST_CASE(an_unknown_pass_is_an_error_listing_the_known_ones) {
  auto p = optimize::parse_pass_list("constant_folding,nope");
  BOOST_REQUIRE(!p.ok());
  BOOST_TEST(p.status().message().find("'nope'") != std::string::npos);
  BOOST_TEST(p.status().message().find("loop_invariants") != std::string::npos);
  BOOST_TEST(optimize::parse_pass_list("none")->empty());
  BOOST_TEST(optimize::parse_pass_list("default")->size() == optimize::all_passes().size());
}

BOOST_AUTO_TEST_CASE(constants_fold_inside_a_loop_and_keep_their_frame) {
  GraphBuilder b;
  auto out = b.while_loop([&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(5)); },
                          [&](const Vars& v) {
                            Output k = b.mul(b.scalar<int32_t>(6), b.scalar<int32_t>(7), "k");
                            return Vars{b.add(v[0], b.scalar<int32_t>(1)), b.add(v[1], k)};
                          },
                          {b.scalar<int32_t>(0), b.scalar<int32_t>(0)}, {10, std::nullopt, "w"});
  b.identity(out[1], "result");
  Graph g = finish(b);
  Graph f = run_pass(g, "constant_folding", {"result"});
  const Node& k = node(f, "k");
  BOOST_TEST(k.op == "Const");
  BOOST_TEST(k.attr<ops::Tensor>("value")->scalar_value<int32_t>() == 42);
  // Still in the loop's frame, through a control input.
  auto cf = analyze_control_flow(f);
  BOOST_REQUIRE(cf.ok());
  BOOST_TEST(cf->frame_of[static_cast<size_t>(find(f, "k"))] != kRootFrame);
  BOOST_TEST(!k.control_inputs.empty());
}

BOOST_AUTO_TEST_CASE(stateful_and_random_ops_never_fold) {
  GraphBuilder b;
  Output r = b.op1("RandomUniform", {b.vector<int32_t>({2})}, {{"dtype", ops::DType::float32}}, "r");
  b.identity(r, "out");
  Graph g = finish(b);
  Graph f = run_pass(g, "default", {"out"});
  BOOST_TEST(node(f, "r").op == "RandomUniform");
}

BOOST_AUTO_TEST_CASE(a_switch_on_a_constant_loses_its_untaken_branch) {
  GraphBuilder b;
  Output x = b.placeholder(ops::DType::int32, {false, {}}, "x");
  Output y = b.cond(b.scalar<bool>(true, "pred"), [&] { return Vars{b.add(x, b.scalar<int32_t>(1), "then_add")}; },
                    [&] { return Vars{b.neg(x, "else_neg")}; }, "c")[0];
  b.identity(y, "out");
  Graph g = finish(b);
  std::vector<optimize::Change> changes;
  Graph f = run_pass(g, "dead_branches", {"x", "out"}, &changes);
  BOOST_TEST(find(f, "else_neg") == kNoNode);
  BOOST_TEST(find(f, "then_add") != kNoNode);
  BOOST_TEST(count_op(f, "Switch") == 0);
  BOOST_TEST(count_op(f, "Merge") == 0);
  BOOST_TEST(!changes.empty());
  // With the predicate fed instead, nothing is known.
  GraphBuilder b2;
  Output x2 = b2.placeholder(ops::DType::int32, {false, {}}, "x");
  Output p2 = b2.placeholder(ops::DType::boolean, {false, {}}, "p");
  Output y2 = b2.cond(p2, [&] { return Vars{b2.neg(x2)}; }, [&] { return Vars{b2.identity(x2)}; })[0];
  b2.identity(y2, "out");
  Graph g2 = finish(b2);
  Graph f2 = run_pass(g2, "dead_branches", {"x", "p", "out"});
  BOOST_TEST(f2.num_nodes() == g2.num_nodes());
}

BOOST_AUTO_TEST_CASE(a_loop_false_on_entry_is_removed) {
  GraphBuilder b;
  Output x = b.placeholder(ops::DType::int32, {false, {}}, "x");
  auto out = b.while_loop([&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(3)); },
                          [&](const Vars& v) { return Vars{b.add(v[0], b.scalar<int32_t>(1)), b.mul(v[1], v[1])}; },
                          {b.scalar<int32_t>(5), x});
  b.identity(out[1], "out");
  Graph g = finish(b);
  Graph f = run_pass(g, "dead_branches", {"x", "out"});
  BOOST_TEST(count_op(f, "Enter") == 0);
  BOOST_TEST(count_op(f, "LoopCond") == 0);
  // A loop whose predicate is true on entry stays.
  GraphBuilder b2;
  auto out2 = b2.while_loop([&](const Vars& v) { return b2.less(v[0], b2.scalar<int32_t>(3)); },
                            [&](const Vars& v) { return Vars{b2.add(v[0], b2.scalar<int32_t>(1))}; },
                            {b2.scalar<int32_t>(0)});
  b2.identity(out2[0], "out");
  Graph g2 = finish(b2);
  BOOST_TEST(count_op(run_pass(g2, "dead_branches", {"out"}), "LoopCond") == 1);
}

BOOST_AUTO_TEST_CASE(a_loop_invariant_matmul_moves_out_of_its_loop) {
  GraphBuilder b;
  Output a = b.placeholder(ops::DType::float32, {false, {2, 2}}, "a");
  auto out = b.while_loop([&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(3)); },
                          [&](const Vars& v) {
                            Output m = b.matmul(a, a, false, false, "mm");
                            return Vars{b.add(v[0], b.scalar<int32_t>(1)), b.add(v[1], m)};
                          },
                          {b.scalar<int32_t>(0), b.fill(b.vector<int32_t>({2, 2}), b.scalar<float>(0.0f))},
                          {10, std::nullopt, "w"});
  b.identity(out[1], "out");
  Graph g = finish(b);
  Graph f = run_pass(g, "loop_invariants", {"a", "out"});
  auto cf = analyze_control_flow(f);
  BOOST_REQUIRE(cf.ok());
  // The MatMul now runs in the root frame; the loop reads an Identity of
  // a constant Enter under the old name.
  NodeId moved = kNoNode;
  for (NodeId id = 0; id < f.num_nodes(); ++id)
    if (f.node(id).op == "MatMul") moved = id;
  BOOST_REQUIRE(moved != kNoNode);
  BOOST_TEST(cf->frame_of[static_cast<size_t>(moved)] == kRootFrame);
  BOOST_TEST(node(f, "mm").op == "Identity");
  const Node& enter = f.node(node(f, "mm").inputs[0].node);
  BOOST_TEST(enter.op == "Enter");
  BOOST_TEST(*enter.attr<bool>("is_constant"));
}

BOOST_AUTO_TEST_CASE(duplicates_merge_and_identities_simplify) {
  GraphBuilder b;
  Output x = b.placeholder(ops::DType::int32, {false, {}}, "x");
  Output y = b.placeholder(ops::DType::int32, {false, {}}, "y");
  Output s1 = b.add(x, y, "s1"), s2 = b.add(y, x, "s2");  // commutative: the same
  b.identity(b.sub(s1, s2), "diff");
  b.identity(b.mul(x, b.scalar<int32_t>(1), "times_one"), "one");
  Output xf = b.placeholder(ops::DType::float32, {false, {}}, "xf");
  b.identity(b.add(xf, b.scalar<float>(0.0f), "plus_zero"), "pz");  // -0 + 0 is +0: stays
  Graph g = finish(b);
  Graph f = run_pass(g, "common_subexpressions", {"x", "y", "xf", "diff", "one", "pz"});
  BOOST_TEST((find(f, "s1") == kNoNode) != (find(f, "s2") == kNoNode));
  Graph a = run_pass(g, "arithmetic", {"x", "y", "xf", "diff", "one", "pz"});
  BOOST_TEST(node(a, "times_one").op == "Identity");
  BOOST_TEST(node(a, "plus_zero").op == "AddV2");
}

BOOST_AUTO_TEST_CASE(matmul_bias_add_relu_fuse_under_the_last_name) {
  GraphBuilder b;
  Output x = b.placeholder(ops::DType::float32, {false, {1, 2}}, "x");
  Output w = b.constant(ops::Tensor::from_vector<float>(ops::Shape({2, 2}), {1, 2, 3, 4}));
  Output bias = b.constant(ops::Tensor::vector<float>({0.5f, -0.5f}));
  Output r = b.op1("Relu", {b.op1("BiasAdd", {b.matmul(x, w), bias})}, {}, "dense");
  b.identity(r, "out");
  Graph g = finish(b);
  Graph f = run_pass(g, "fusion", {"x", "out"});
  BOOST_TEST(node(f, "dense").op == "_FusedMatMul");
  BOOST_TEST(count_op(f, "MatMul") == 0);
  BOOST_TEST(count_op(f, "BiasAdd") == 0);
  // A BiasAdd read twice keeps the nodes apart.
  GraphBuilder b2;
  Output x2 = b2.placeholder(ops::DType::float32, {false, {1, 2}}, "x");
  Output ba = b2.op1("BiasAdd", {b2.matmul(x2, x2, false, true), b2.constant(ops::Tensor::vector<float>({1.0f}))});
  b2.identity(b2.op1("Relu", {ba}), "out1");
  b2.identity(ba, "out2");
  Graph g2 = finish(b2);
  Graph f2 = run_pass(g2, "fusion", {"x", "out1", "out2"});
  BOOST_TEST(count_op(f2, "_FusedMatMul") == 1);  // MatMul + BiasAdd only
  BOOST_TEST(count_op(f2, "Relu") == 1);
}

BOOST_AUTO_TEST_CASE(static_shapes_fold_and_make_chains_of_adds_one_addn) {
  GraphBuilder b;
  Output x = b.placeholder(ops::DType::float32, {false, {2, 3}}, "x");
  Output y = b.placeholder(ops::DType::float32, {false, {2, 3}}, "y");
  Output u = b.placeholder(ops::DType::float32, {true, {}}, "u");  // shape unknown
  b.identity(b.shape(x, "sx"), "shape_x");
  b.identity(b.op1("Size", {x}, {}, "nx"), "size_x");
  b.identity(b.shape(u, "su"), "shape_u");
  b.identity(b.add(b.add(x, y, "a1"), x, "a2"), "sum");
  b.identity(b.add(b.add(x, u, "b1"), y, "b2"), "sum_u");  // u may broadcast: stays
  Graph g = finish(b);
  const std::set<std::string> keep = {"x", "y", "u", "shape_x", "size_x", "shape_u", "sum", "sum_u"};
  Graph f = run_pass(g, "constant_folding", keep);
  BOOST_TEST(node(f, "sx").op == "Const");
  BOOST_TEST(node(f, "sx").attr<ops::Tensor>("value")->values_string() == ops::Tensor::vector<int32_t>({2, 3}).values_string());
  BOOST_TEST(node(f, "nx").attr<ops::Tensor>("value")->scalar_value<int32_t>() == 6);
  BOOST_TEST(node(f, "su").op == "Shape");
  // x stays a dependency: the folded Shape waits on it.
  BOOST_TEST(node(f, "sx").control_inputs.size() == 1u);
  Graph a = run_pass(g, "arithmetic", keep);
  BOOST_TEST(node(a, "a2").op == "AddN");
  BOOST_TEST(node(a, "a2").inputs.size() == 3u);
  BOOST_TEST(find(a, "a1") == kNoNode);
  BOOST_TEST(node(a, "b2").op == "AddV2");
}

BOOST_AUTO_TEST_CASE(kept_nodes_survive_and_unneeded_ones_go) {
  GraphBuilder b;
  Output x = b.placeholder(ops::DType::int32, {false, {}}, "x");
  Output a = b.identity(b.neg(x, "n"), "a");
  b.neg(b.neg(x), "unused");
  Graph g = finish(b);
  Graph f = run_pass(g, "prune", {"x", "a"});
  BOOST_TEST(f.find("a") != kNoNode);
  BOOST_TEST(f.find("unused") == kNoNode);
  BOOST_TEST(f.find("x") != kNoNode);
  (void)a;
}

BOOST_AUTO_TEST_CASE(every_pass_is_idempotent_on_a_graph_with_loops_and_conds) {
  GraphBuilder b;
  Output x = b.placeholder(ops::DType::int32, {false, {}}, "x");
  auto out = b.while_loop(
      [&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(4)); },
      [&](const Vars& v) {
        Output c = b.cond(b.scalar<bool>(false), [&] { return Vars{b.neg(v[1])}; },
                          [&] { return Vars{b.add(b.mul(v[1], b.scalar<int32_t>(1)), b.add(x, x))}; })[0];
        return Vars{b.add(v[0], b.scalar<int32_t>(1)), c};
      },
      {b.scalar<int32_t>(0), x});
  b.identity(out[1], "out");
  Graph g = finish(b);
  for (const auto& pass : optimize::all_passes()) {
    Graph once = run_pass(g, pass.name, {"x", "out"});
    Graph twice = run_pass(once, pass.name, {"x", "out"});
    std::string difference;
    BOOST_TEST(once.equals(twice, &difference), pass.name << ": " << difference);
  }
}

BOOST_AUTO_TEST_SUITE_END()
