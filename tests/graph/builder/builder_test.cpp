// GraphBuilder: what it emits (ops, attrs, edges, names, frames) and every
// error it reports. Values are checked by tests/actors/builder_run_test.cpp.
#include <boost/test/unit_test.hpp>

#include "graph/analysis/control_flow.hpp"
#include "graph/builder/builder.hpp"
#include "graph/graph_test_util.hpp"
#include "graph/io/export.hpp"
#include "graph/io/import.hpp"
#include "graph/validate.hpp"

using namespace tagflow;
using namespace tagflow::graph;
using namespace tagflow::graph::testing;
using ops::DType;

namespace {

Graph must_finish(GraphBuilder& b) {
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  return std::move(g).value();
}

const Node& node_named(const Graph& g, const std::string& name) {
  NodeId id = g.find(name);
  if (id == kNoNode) throw std::runtime_error("no node " + name);
  return g.node(id);
}

std::vector<std::string> input_names(const Graph& g, const Node& n) {
  std::vector<std::string> out;
  for (const Endpoint& e : n.inputs) out.push_back(g.endpoint_name(e));
  for (NodeId c : n.control_inputs) out.push_back("^" + g.node(c).name);
  return out;
}

// The error the builder recorded (finish() must fail with it).
std::string error_of(GraphBuilder& b) {
  auto g = b.finish();
  BOOST_REQUIRE(!g.ok());
  BOOST_TEST(g.status().to_string() == b.status().to_string());
  return g.status().to_string();
}

void check_round_trip(const Graph& g) {
  auto back = import_graph_text(graph_to_text(g), "built.pbtxt");
  BOOST_REQUIRE_MESSAGE(back.ok(), back.status().to_string());
  std::string diff;
  BOOST_TEST(g.equals(*back, &diff), diff);
  Graph v = std::move(back).value();
  BOOST_TEST(validate(v).ok());
}

}  // namespace

BOOST_AUTO_TEST_SUITE(builder)

// --- ops, attrs and names -----------------------------------------------------------

BOOST_AUTO_TEST_CASE(op_infers_type_attrs_and_names_nodes_uniquely) {
  GraphBuilder b;
  Output x = b.scalar(1.5f);
  Output y = b.scalar(2.5f);
  Output s = b.add(x, y);
  Output s2 = x + y;
  Output c = b.concat({b.vector<int32_t>({1, 2}), b.vector<int32_t>({3})}, b.scalar(int32_t{0}));
  Output sum = b.reduce_sum(b.vector<float>({1, 2}), b.vector<int64_t>({0}));
  Outputs id = b.op("IdentityN", {x, c});
  BOOST_TEST((s.dtype == DType::float32));
  BOOST_TEST((c.dtype == DType::int32));
  BOOST_TEST(id.size() == 2u);
  BOOST_TEST((id[1].dtype == DType::int32));
  BOOST_TEST(!id[7].valid());  // past the end: invalid, not a crash
  Graph g = must_finish(b);
  BOOST_TEST(s.name() == "AddV2");
  BOOST_TEST(s2.name() == "AddV2_1");
  BOOST_TEST(x.name() == "Const");
  BOOST_TEST(y.name() == "Const_1");
  BOOST_TEST(id[1].name() == "IdentityN:1");
  const Node& add = node_named(g, "AddV2");
  BOOST_TEST(add.attr<DType>("T") != nullptr);
  BOOST_TEST((*add.attr<DType>("T") == DType::float32));
  const Node& concat = node_named(g, c.node_name());
  BOOST_TEST(*concat.attr<int64_t>("N") == 2);
  BOOST_TEST((*concat.attr<DType>("Tidx") == DType::int32));
  BOOST_TEST((*node_named(g, sum.node_name()).attr<DType>("Tidx") == DType::int64));
  const Node& idn = node_named(g, "IdentityN");
  BOOST_TEST((idn.attr<ops::AttrList>("T")->type == std::vector<DType>{DType::float32, DType::int32}));
  const Node& k = node_named(g, "Const");
  BOOST_TEST((*k.attr<DType>("dtype") == DType::float32));
  BOOST_TEST(k.attr<ops::Tensor>("value")->equals(ops::Tensor::scalar(1.5f)));
  BOOST_TEST(g.versions().producer == 27);
  check_round_trip(g);
}

BOOST_AUTO_TEST_CASE(explicit_names_and_name_scopes) {
  GraphBuilder b;
  Output a = b.scalar(1, "a");
  {
    auto scope = b.name_scope("layer");
    Output c = b.scalar(2);
    Output d = b.add(a, c, "sum");
    BOOST_TEST(c.name() == "layer/Const");
    BOOST_TEST(d.name() == "layer/sum");
  }
  {
    auto scope = b.name_scope("layer");
    BOOST_TEST(b.scalar(3).name() == "layer_1/Const");
  }
  BOOST_TEST(a.name() == "a");
  NodeOptions o("after");
  o.control_inputs = {a};
  o.device = "/cpu:0";
  Output n = b.group({}, o);
  Graph g = must_finish(b);
  BOOST_TEST(n.name() == "after");
  BOOST_TEST((input_names(g, node_named(g, "after")) == std::vector<std::string>{"^a"}));
  BOOST_TEST(node_named(g, "after").device == "/cpu:0");
}

BOOST_AUTO_TEST_CASE(op_errors_name_the_node_and_the_op) {
  {
    GraphBuilder b;
    b.op("NoSuchOp", {}, {}, "x");
    BOOST_TEST(contains(error_of(b), "unknown op 'NoSuchOp' (building node 'x')"));
  }
  {
    GraphBuilder b;
    Output f = b.scalar(1.0f);
    Output i = b.scalar(int32_t{1});
    Output bad = b.add(f, i, "mixed");
    BOOST_TEST(!bad.valid());
    BOOST_TEST(contains(error_of(b), "AddV2 'mixed': input 1 ('Const_1') is int32 but AddV2 expects float32"));
  }
  {
    GraphBuilder b;
    b.op("AddV2", {b.scalar(1)}, {}, "short");
    BOOST_TEST(contains(error_of(b), "AddV2 'short' takes 2 inputs but was given 1"));
  }
  {
    GraphBuilder b;
    b.scalar(1, "k");
    b.scalar(2, "k");
    BOOST_TEST(contains(error_of(b), "cannot name a Const node 'k': the name is taken"));
  }
  {
    GraphBuilder b;
    b.identity(Output{}, "id");
    BOOST_TEST(contains(error_of(b), "Identity 'id' input 0 was given an invalid Output"));
  }
  {
    GraphBuilder b, other;
    b.identity(other.scalar(1), "id");
    BOOST_TEST(contains(error_of(b), "an Output of another GraphBuilder"));
  }
  {
    // the first error is kept; later calls do nothing and return invalid handles
    GraphBuilder b;
    b.op("Nope", {});
    Output later = b.scalar(1);
    BOOST_TEST(!later.valid());
    BOOST_TEST(contains(error_of(b), "'Nope'"));
    BOOST_TEST(b.graph().num_nodes() == 0);
  }
}

// --- cond ------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(cond_emits_switches_pivots_and_merges_like_tf_cond) {
  GraphBuilder b;
  Output p = b.placeholder(DType::boolean, {}, "p");
  Output x = b.placeholder(DType::int32, {}, "x");
  Output y = b.placeholder(DType::int32, {}, "y");
  Outputs r = b.cond(
      p, [&] { return std::vector<Output>{b.add(x, x), b.scalar(7)}; },
      [&] { return std::vector<Output>{b.mul(x, y), y}; });
  BOOST_REQUIRE(r.size() == 2u);
  BOOST_TEST((r[0].dtype == DType::int32));
  Graph g = must_finish(b);
  BOOST_TEST((input_names(g, node_named(g, "cond/Switch")) == std::vector<std::string>{"p", "p"}));
  BOOST_TEST((input_names(g, node_named(g, "cond/switch_t")) == std::vector<std::string>{"cond/Switch:1"}));
  BOOST_TEST((input_names(g, node_named(g, "cond/switch_f")) == std::vector<std::string>{"cond/Switch"}));
  BOOST_TEST((input_names(g, node_named(g, "cond/pred_id")) == std::vector<std::string>{"p"}));
  // One Switch per captured tensor per branch: x in the true branch (used
  // twice, switched once), x and y in the false branch (y also returned).
  BOOST_TEST((input_names(g, node_named(g, "cond/Switch_1")) == std::vector<std::string>{"x", "cond/pred_id"}));
  BOOST_TEST((input_names(g, node_named(g, "cond/AddV2")) ==
              std::vector<std::string>{"cond/Switch_1:1", "cond/Switch_1:1"}));
  BOOST_TEST((input_names(g, node_named(g, "cond/Mul")) ==
              std::vector<std::string>{"cond/Switch_2", "cond/Switch_3"}));
  BOOST_TEST(count_op(g, "Switch") == 4);
  // The branch constant lives on its branch through the pivot.
  BOOST_TEST((input_names(g, node_named(g, "cond/Const")) == std::vector<std::string>{"^cond/switch_t"}));
  // Merge(false, true) per output.
  const Node& m0 = node_named(g, "cond/Merge");
  BOOST_TEST((input_names(g, m0) == std::vector<std::string>{"cond/Mul", "cond/AddV2"}));
  BOOST_TEST(*m0.attr<int64_t>("N") == 2);
  BOOST_TEST((*m0.attr<DType>("T") == DType::int32));
  BOOST_TEST((input_names(g, node_named(g, "cond/Merge_1")) ==
              std::vector<std::string>{"cond/Switch_3", "cond/Const"}));
  BOOST_TEST(r[0].name() == "cond/Merge");
  BOOST_TEST(r.control().name() == "cond/Merge");
  check_round_trip(g);
}

BOOST_AUTO_TEST_CASE(cond_returning_nothing_is_a_control_handle) {
  GraphBuilder b;
  Output p = b.placeholder(DType::boolean, {}, "p");
  Outputs r = b.cond(p, [&] { b.group({}, "t_work"); return std::vector<Output>{}; },
                     [&] { return std::vector<Output>{}; });
  BOOST_TEST(r.empty());
  BOOST_REQUIRE(r.control().valid());
  Output after = b.group({r.control()}, "after");
  Graph g = must_finish(b);
  BOOST_TEST(r.control().name() == "cond/Merge");
  BOOST_TEST((input_names(g, node_named(g, "cond/t_work")) == std::vector<std::string>{"^cond/switch_t"}));
  BOOST_TEST((input_names(g, node_named(g, "cond/Identity")) ==
              std::vector<std::string>{"cond/switch_t", "^cond/t_work"}));
  BOOST_TEST((input_names(g, node_named(g, "cond/Identity_1")) == std::vector<std::string>{"cond/switch_f"}));
  BOOST_TEST((input_names(g, node_named(g, "after")) == std::vector<std::string>{"^cond/Merge"}));
  (void)after;
  check_round_trip(g);
}

BOOST_AUTO_TEST_CASE(nested_conds_switch_outer_tensors_at_every_level) {
  GraphBuilder b;
  Output p = b.placeholder(DType::boolean, {}, "p");
  Output q = b.placeholder(DType::boolean, {}, "q");
  Output x = b.placeholder(DType::float32, {}, "x");
  Outputs r = b.cond(p, [&] {
    return b.cond(q, [&] { return std::vector<Output>{x * 2.0}; },
                  [&] { return std::vector<Output>{x}; }).vector();
  }, [&] { return std::vector<Output>{x}; });
  Graph g = must_finish(b);
  // x reaches the inner true branch through the outer Switch, then the inner.
  const Node& mul = node_named(g, "cond/cond/Mul");
  const Node& inner = g.node(mul.inputs[0].node);
  BOOST_TEST(inner.op == "Switch");
  BOOST_TEST(inner.name.rfind("cond/cond/Switch", 0) == 0);
  BOOST_TEST(g.endpoint_name(inner.inputs[1]) == "cond/cond/pred_id");
  const Node& outer = g.node(inner.inputs[0].node);
  BOOST_TEST(outer.op == "Switch");
  BOOST_TEST(g.endpoint_name(inner.inputs[0]) == outer.name + ":1");
  BOOST_TEST(g.endpoint_name(outer.inputs[0]) == "x");
  BOOST_TEST(g.endpoint_name(outer.inputs[1]) == "cond/pred_id");
  // the inner predicate q is itself switched into the outer true branch
  const Node& inner_sw = node_named(g, "cond/cond/Switch");
  BOOST_TEST(g.node(inner_sw.inputs[0].node).op == "Switch");
  BOOST_TEST(r.size() == 1u);
  check_round_trip(g);
}

BOOST_AUTO_TEST_CASE(cond_errors_name_the_cond) {
  {
    GraphBuilder b;
    Output p = b.placeholder(DType::boolean);
    b.cond(p, [&] { return std::vector<Output>{b.scalar(1)}; },
           [&] { return std::vector<Output>{b.scalar(1), b.scalar(2)}; }, "pick");
    BOOST_TEST(contains(error_of(b), "cond 'pick': the true branch returns 1 tensors but the false branch 2"));
  }
  {
    GraphBuilder b;
    Output p = b.placeholder(DType::boolean);
    b.cond(p, [&] { return std::vector<Output>{b.scalar(1)}; },
           [&] { return std::vector<Output>{b.scalar(1.0f)}; });
    BOOST_TEST(contains(error_of(b), "cond 'cond': the branches return different dtypes: true (int32), false (float32)"));
  }
  {
    GraphBuilder b;
    Output p = b.placeholder(DType::boolean);
    b.cond(p, [&] { return std::vector<Output>{}; }, [&] { return std::vector<Output>{b.scalar(1)}; });
    BOOST_TEST(contains(error_of(b), "the true branch returns 0 tensors but the false branch 1"));
  }
  {
    GraphBuilder b;
    b.cond(b.scalar(1), [&] { return std::vector<Output>{}; }, [&] { return std::vector<Output>{}; });
    BOOST_TEST(contains(error_of(b), "cond 'cond': the predicate 'Const' is int32, not bool"));
  }
  {
    // a tensor of one branch used after the cond
    GraphBuilder b;
    Output p = b.placeholder(DType::boolean);
    Output inside;
    b.cond(p, [&] { inside = b.scalar(1); return std::vector<Output>{inside}; },
           [&] { return std::vector<Output>{b.scalar(2)}; });
    b.identity(inside, "outside");
    BOOST_TEST(contains(error_of(b), "Identity 'outside' uses 'cond/Const', which was made in the true branch "
                                     "of cond 'cond' and is not visible in the top level"));
  }
  {
    // ... or in the other branch
    GraphBuilder b;
    Output p = b.placeholder(DType::boolean);
    Output inside;
    b.cond(p, [&] { inside = b.scalar(1); return std::vector<Output>{inside}; },
           [&] { return std::vector<Output>{b.identity(inside)}; });
    BOOST_TEST(contains(error_of(b), "is not visible in the false branch of cond 'cond'"));
  }
  {
    // an error inside a branch names the node being built
    GraphBuilder b;
    Output p = b.placeholder(DType::boolean);
    b.cond(p, [&] { return std::vector<Output>{b.op1("Bogus", {}, {}, "inner")}; },
           [&] { return std::vector<Output>{b.scalar(2)}; });
    BOOST_TEST(contains(error_of(b), "unknown op 'Bogus' (building node 'cond/inner')"));
  }
}

// --- while_loop ----------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(while_loop_emits_the_tf_while_loop_pattern) {
  GraphBuilder b;
  Output n = b.placeholder(DType::int32, {}, "n");
  Output i0 = b.scalar(0, "i0");
  Output a0 = b.scalar(1.0f, "a0");
  WhileOptions opts;
  opts.parallel_iterations = 4;
  Outputs r = b.while_loop([&](const std::vector<Output>& v) { return v[0] < n; },
                           [&](const std::vector<Output>& v) {
                             return std::vector<Output>{v[0] + 1.0, v[1] * 2.0};
                           },
                           {i0, a0}, opts);
  BOOST_REQUIRE(r.size() == 2u);
  BOOST_TEST((r[1].dtype == DType::float32));
  Graph g = must_finish(b);
  const Node& e = node_named(g, "while/Enter");
  BOOST_TEST((input_names(g, e) == std::vector<std::string>{"i0"}));
  BOOST_TEST(*e.attr<std::string>("frame_name") == "while/while_context");
  BOOST_TEST(*e.attr<bool>("is_constant") == false);
  BOOST_TEST(*e.attr<int64_t>("parallel_iterations") == 4);
  BOOST_TEST((*e.attr<DType>("T") == DType::int32));
  BOOST_TEST((input_names(g, node_named(g, "while/Merge")) ==
              std::vector<std::string>{"while/Enter", "while/NextIteration"}));
  BOOST_TEST((input_names(g, node_named(g, "while/Merge_1")) ==
              std::vector<std::string>{"while/Enter_1", "while/NextIteration_1"}));
  // the invariant n enters as a constant
  const Node& inv = node_named(g, "while/Enter_2");
  BOOST_TEST((input_names(g, inv) == std::vector<std::string>{"n"}));
  BOOST_TEST(*inv.attr<bool>("is_constant") == true);
  BOOST_TEST((input_names(g, node_named(g, "while/Less")) ==
              std::vector<std::string>{"while/Merge", "while/Enter_2"}));
  BOOST_TEST((input_names(g, node_named(g, "while/LoopCond")) == std::vector<std::string>{"while/Less"}));
  BOOST_TEST((input_names(g, node_named(g, "while/Switch_1")) ==
              std::vector<std::string>{"while/Merge_1", "while/LoopCond"}));
  BOOST_TEST((input_names(g, node_named(g, "while/Identity")) == std::vector<std::string>{"while/Switch:1"}));
  // body constants hang on the body pivot (the first Identity)
  BOOST_TEST((input_names(g, node_named(g, "while/Const")) == std::vector<std::string>{"^while/Identity"}));
  BOOST_TEST((input_names(g, node_named(g, "while/NextIteration")) == std::vector<std::string>{"while/AddV2"}));
  BOOST_TEST((input_names(g, node_named(g, "while/Exit_1")) == std::vector<std::string>{"while/Switch_1"}));
  BOOST_TEST(r[0].name() == "while/Exit");
  auto cf = analyze_control_flow(g);
  BOOST_REQUIRE_MESSAGE(cf.ok(), cf.status().to_string());
  FrameId f = cf->find_frame("while/while_context");
  BOOST_REQUIRE(f > 0);
  BOOST_TEST(cf->frames[static_cast<size_t>(f)].pivot == g.find("while/LoopCond"));
  BOOST_TEST(cf->frames[static_cast<size_t>(f)].parallel_iterations == 4);
  BOOST_TEST(cf->frames[static_cast<size_t>(f)].enters.size() == 3u);
  BOOST_TEST(cf->frames[static_cast<size_t>(f)].exits.size() == 2u);
  check_round_trip(g);
}

BOOST_AUTO_TEST_CASE(invariants_enter_through_three_levels_of_nesting) {
  GraphBuilder b;
  Output k = b.placeholder(DType::int32, {}, "k");
  auto loop = [&](Output start, const std::function<Output(Output)>& inner, const std::string& name) {
    WhileOptions o;
    o.name = name;
    return b.while_loop([&](const std::vector<Output>& v) { return v[0] < k; },
                        [&](const std::vector<Output>& v) { return std::vector<Output>{inner(v[0])}; },
                        {start}, o)[0];
  };
  Output r = loop(b.scalar(0), [&](Output) {
    return loop(b.scalar(0), [&](Output) {
      return loop(b.scalar(0), [&](Output z) { return z + k; }, "");  // k from two levels out
    }, "");
  }, "outer");
  Graph g = must_finish(b);
  (void)r;
  // frame names follow the name scopes
  auto cf = analyze_control_flow(g);
  BOOST_REQUIRE_MESSAGE(cf.ok(), cf.status().to_string());
  BOOST_REQUIRE(cf->frames.size() == 4u);
  FrameId f1 = cf->find_frame("outer/while_context");
  FrameId f2 = cf->find_frame("outer/while/while_context");
  FrameId f3 = cf->find_frame("outer/while/while/while_context");
  BOOST_REQUIRE(f1 > 0);
  BOOST_REQUIRE(f2 > 0);
  BOOST_REQUIRE(f3 > 0);
  BOOST_TEST(cf->frames[static_cast<size_t>(f2)].parent == f1);
  BOOST_TEST(cf->frames[static_cast<size_t>(f3)].parent == f2);
  // the innermost Add reads k through Enter(f3) <- Enter(f2) <- Enter(f1) <- k
  const Node& add = node_named(g, "outer/while/while/AddV2");
  Endpoint e = add.inputs[1];
  for (const std::string frame : {"outer/while/while/while_context", "outer/while/while_context",
                                  "outer/while_context"}) {
    const Node& enter = g.node(e.node);
    BOOST_TEST(enter.op == "Enter");
    BOOST_TEST(*enter.attr<std::string>("frame_name") == frame);
    BOOST_TEST(*enter.attr<bool>("is_constant") == true);
    e = enter.inputs[0];
  }
  BOOST_TEST(g.node(e.node).name == "k");
  // one Enter per tensor per frame: the k each loop's cond uses is reused
  int k_enters = 0;
  for (const Node& n : g.nodes())
    if (n.op == "Enter" && g.endpoint_name(n.inputs[0]) == "k") ++k_enters;
  BOOST_TEST(k_enters == 1);
  check_round_trip(g);
}

BOOST_AUTO_TEST_CASE(frame_names_are_unique_and_loops_mix_with_conds) {
  GraphBuilder b;
  Output p = b.placeholder(DType::boolean, {}, "p");
  auto count_to = [&](int n) {
    return b.while_loop([&](const std::vector<Output>& v) { return v[0] < double(n); },
                        [&](const std::vector<Output>& v) { return std::vector<Output>{v[0] + 1.0}; },
                        {b.scalar(0)})[0];
  };
  Output a = count_to(3);
  Output c = count_to(4);
  Outputs in_cond = b.cond(p, [&] { return std::vector<Output>{count_to(5)}; },
                           [&] { return std::vector<Output>{b.scalar(0)}; });
  Outputs cond_in_loop = b.while_loop(
      [&](const std::vector<Output>& v) { return v[0] < 10.0; },
      [&](const std::vector<Output>& v) {
        return b.cond(v[0] < 5.0, [&] { return std::vector<Output>{v[0] + 1.0}; },
                      [&] { return std::vector<Output>{v[0] + 2.0}; }).vector();
      },
      {b.scalar(0)});
  Graph g = must_finish(b);
  (void)a, (void)c;
  auto cf = analyze_control_flow(g);
  BOOST_REQUIRE_MESSAGE(cf.ok(), cf.status().to_string());
  for (const char* f : {"while/while_context", "while_1/while_context", "cond/while/while_context",
                        "while_2/while_context"})
    BOOST_TEST(cf->find_frame(f) > 0, f);
  // the cond in the loop lives in the loop's frame
  FrameId w2 = cf->find_frame("while_2/while_context");
  BOOST_TEST(cf->frame_of[static_cast<size_t>(g.find("while_2/cond/Merge"))] == w2);
  BOOST_TEST(cf->frame_of[static_cast<size_t>(g.find("while_2/cond/switch_t"))] == w2);
  // the loop in the cond starts from a branch constant, on the branch's pivot
  const Node& enter = node_named(g, "cond/while/Enter");
  BOOST_TEST((input_names(g, g.node(enter.inputs[0].node)) == std::vector<std::string>{"^cond/switch_t"}));
  BOOST_TEST(in_cond.size() == 1u);
  BOOST_TEST(cond_in_loop.size() == 1u);
  check_round_trip(g);
}

BOOST_AUTO_TEST_CASE(maximum_iterations_adds_a_counter_loop_variable) {
  GraphBuilder b;
  WhileOptions o;
  o.maximum_iterations = int64_t{3};
  Outputs r = b.while_loop([&](const std::vector<Output>& v) { return v[0] < 100.0; },
                           [&](const std::vector<Output>& v) { return std::vector<Output>{v[0] + 1.0}; },
                           {b.scalar(0)}, o);
  BOOST_TEST(r.size() == 1u);
  Graph g = must_finish(b);
  BOOST_TEST(count_op(g, "Exit") == 2);
  BOOST_TEST(r[0].name() == "while/Exit_1");
  BOOST_TEST((input_names(g, node_named(g, "while/Enter")) == std::vector<std::string>{"while/iteration_counter"}));
  BOOST_TEST(node_named(g, "while/maximum_iterations").op == "Const");
  BOOST_TEST(node_named(g, "while/LogicalAnd").op == "LogicalAnd");
  check_round_trip(g);
}

BOOST_AUTO_TEST_CASE(control_inputs_from_outside_a_loop_enter_as_values) {
  GraphBuilder b;
  Output init = b.group({}, "init");
  Outputs r = b.while_loop([&](const std::vector<Output>& v) { return v[0] < 3.0; },
                           [&](const std::vector<Output>& v) {
                             NodeOptions o("after_init");
                             o.control_inputs = {init};
                             return std::vector<Output>{b.add(v[0], b.scalar(1, o))};
                           },
                           {b.scalar(0)});
  Graph g = must_finish(b);
  const Node& k = node_named(g, "while/after_init");
  BOOST_REQUIRE(k.control_inputs.size() == 2u);
  const Node& carrier = g.node(k.control_inputs[0]);
  BOOST_TEST(carrier.op == "Enter");
  BOOST_TEST(*carrier.attr<bool>("is_constant"));
  BOOST_TEST((input_names(g, g.node(carrier.inputs[0].node)) == std::vector<std::string>{"^init"}));
  BOOST_TEST(g.node(k.control_inputs[1]).name == "while/Identity");
  BOOST_TEST(r.size() == 1u);
  check_round_trip(g);
}

BOOST_AUTO_TEST_CASE(while_errors_name_the_loop) {
  auto body_error = [](const LoopBodyFn& body, int vars) {
    GraphBuilder b;
    std::vector<Output> v;
    for (int i = 0; i < vars; ++i) v.push_back(b.scalar(i));
    WhileOptions o;
    o.name = "loop";
    b.while_loop([&](const std::vector<Output>& x) { return x[0] < 3.0; }, body, v, o);
    return error_of(b);
  };
  BOOST_TEST(contains(body_error([](const std::vector<Output>& v) { return std::vector<Output>{v[0]}; }, 2),
                      "while loop 'loop': the body returns 1 tensors for 2 loop variables"));
  BOOST_TEST(contains(body_error([&](const std::vector<Output>& v) {
                        return std::vector<Output>{v[0].builder->cast(v[0], DType::float32)};
                      }, 1),
                      "while loop 'loop': the body changes loop variable 0 from int32 to float32"));
  {
    GraphBuilder b;
    b.while_loop([&](const std::vector<Output>& v) { return v[0]; },
                 [&](const std::vector<Output>& v) { return v; }, {b.scalar(1)});
    BOOST_TEST(contains(error_of(b), "while loop 'while': the condition returns int32, not bool"));
  }
  {
    GraphBuilder b;
    b.while_loop([&](const std::vector<Output>& v) { return v[0] < 1.0; },
                 [&](const std::vector<Output>& v) { return v; }, {});
    BOOST_TEST(contains(error_of(b), "while loop 'while' needs at least one loop variable"));
  }
  {
    // a body tensor used after the loop
    GraphBuilder b;
    Output inside;
    b.while_loop([&](const std::vector<Output>& v) { return v[0] < 3.0; },
                 [&](const std::vector<Output>& v) {
                   inside = v[0] + 1.0;
                   return std::vector<Output>{inside};
                 }, {b.scalar(0)});
    b.identity(inside, "leak");
    BOOST_TEST(contains(error_of(b), "Identity 'leak' uses 'while/AddV2', which was made in while loop "
                                     "'while' and is not visible in the top level"));
  }
  {
    GraphBuilder b;
    WhileOptions o;
    o.maximum_iterations = b.scalar(2.0f);
    b.while_loop([&](const std::vector<Output>& v) { return v[0] < 3.0; },
                 [&](const std::vector<Output>& v) { return v; }, {b.scalar(0)}, o);
    BOOST_TEST(contains(error_of(b), "while loop 'while': maximum_iterations must be int32, not float32"));
  }
  {
    GraphBuilder b;
    WhileOptions o;
    o.parallel_iterations = 0;
    b.while_loop([&](const std::vector<Output>& v) { return v[0] < 3.0; },
                 [&](const std::vector<Output>& v) { return v; }, {b.scalar(0)}, o);
    BOOST_TEST(contains(error_of(b), "parallel_iterations must be at least 1, not 0"));
  }
}

// --- case, map_fn, scan ----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(case_is_a_chain_of_conds) {
  GraphBuilder b;
  Output i = b.placeholder(DType::int32, {}, "i");
  Output x = b.placeholder(DType::int32, {}, "x");
  Outputs r = b.case_(i, {[&] { return std::vector<Output>{x + 1.0}; },
                          [&] { return std::vector<Output>{x + 2.0}; },
                          [&] { return std::vector<Output>{x + 3.0}; }});
  BOOST_TEST(r.size() == 1u);
  Graph g = must_finish(b);
  BOOST_TEST(count_op(g, "Merge") == 2);
  BOOST_TEST(count_op(g, "Equal") == 2);
  BOOST_TEST(r[0].name() == "case/cond/Merge");
  BOOST_TEST((input_names(g, node_named(g, "case/Equal")) == std::vector<std::string>{"i", "case/Const"}));
  check_round_trip(g);
  GraphBuilder bad;
  bad.case_(bad.scalar(1.0f), {[] { return std::vector<Output>{}; }}, "pick");
  BOOST_TEST(contains(error_of(bad), "case 'pick': the branch index 'Const' is float32, not int32"));
  GraphBuilder none;
  none.case_(none.scalar(1), {});
  BOOST_TEST(contains(error_of(none), "case 'case' needs at least one branch"));
}

BOOST_AUTO_TEST_CASE(map_and_scan_collect_results_in_tensor_arrays) {
  GraphBuilder b;
  Output xs = b.vector<float>({1, 2, 3});
  Outputs m = b.map_fn([&](const std::vector<Output>& s) { return std::vector<Output>{s[0] * s[0]}; }, {xs});
  Outputs s = b.scan([&](const std::vector<Output>& acc, const std::vector<Output>& x) {
    return std::vector<Output>{acc[0] + x[0]};
  }, {xs}, {b.scalar(0.0f)});
  BOOST_TEST(m.size() == 1u);
  BOOST_TEST(s.size() == 1u);
  Graph g = must_finish(b);
  BOOST_TEST(count_op(g, "TensorArrayV3") == 4);
  BOOST_TEST(count_op(g, "TensorArrayScatterV3") == 2);
  BOOST_TEST(count_op(g, "TensorArrayReadV3") == 2);
  BOOST_TEST(count_op(g, "TensorArrayWriteV3") == 2);
  BOOST_TEST(count_op(g, "TensorArrayGatherV3") == 2);
  BOOST_TEST(m[0].name() == "map/TensorArrayGather");
  auto cf = analyze_control_flow(g);
  BOOST_REQUIRE_MESSAGE(cf.ok(), cf.status().to_string());
  BOOST_TEST(cf->find_frame("map/while/while_context") > 0);
  BOOST_TEST(cf->find_frame("scan/while/while_context") > 0);
  // the TensorArray handles are loop invariants
  BOOST_TEST(g.node(node_named(g, "map/while/TensorArrayWrite").inputs[0].node).op == "Enter");
  check_round_trip(g);
  GraphBuilder bad;
  Output ys = bad.vector<int32_t>({1});
  bad.map_fn([&](const std::vector<Output>& v) { return std::vector<Output>{bad.cast(v[0], DType::float32)}; },
             {ys}, {}, "m");
  BOOST_TEST(contains(error_of(bad), "map 'm': fn result 0 is float32 but int32 was expected"));
}

BOOST_AUTO_TEST_CASE(finish_can_be_called_again_and_the_export_has_standard_attrs) {
  GraphBuilder b;
  Output p = b.placeholder(DType::boolean, {}, "p");
  b.cond(p, [&] { return std::vector<Output>{b.scalar(1)}; }, [&] { return std::vector<Output>{b.scalar(2)}; });
  Graph g1 = must_finish(b);
  b.scalar(3, "more");
  Graph g2 = must_finish(b);
  BOOST_TEST(g2.num_nodes() == g1.num_nodes() + 1);
  const std::string text = graph_to_text(g1);
  BOOST_TEST(contains(text, "key: \"T\""));
  BOOST_TEST(contains(text, "producer: 27"));
  BOOST_TEST(!contains(text, "_step_io"));
}

BOOST_AUTO_TEST_SUITE_END()
