// What gradients() adds to a graph — a gradient loop per forward loop, with
// its counter and stacks — and every error it reports. Values are checked
// by tests/actors/gradients_test.cpp.
#include <boost/test/unit_test.hpp>

#include "graph/analysis/control_flow.hpp"
#include "graph/autodiff/gradients.hpp"
#include "graph/builder/builder.hpp"
#include "graph/io/import.hpp"
#include "graph/validate.hpp"

using namespace tagflow;
using namespace tagflow::graph;
using ops::DType;
using Vars = std::vector<Output>;

namespace {

Graph must_finish(GraphBuilder& b) {
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  return std::move(g).value();
}

int count_op(const Graph& g, const std::string& op, const std::string& prefix = "") {
  int n = 0;
  for (const Node& node : g.nodes())
    if (node.op == op && node.name.compare(0, prefix.size(), prefix) == 0) ++n;
  return n;
}

// x ** n by a while loop of n iterations: v = v * x.
Output power_loop(GraphBuilder& b, Output x, int n) {
  return b.while_loop([&](const Vars& v) { return v[0] < double(n); },
                      [&](const Vars& v) { return Vars{v[0] + 1.0, v[1] * x}; },
                      {b.scalar<int32_t>(0), b.scalar(1.0f)})[1];
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

BOOST_AUTO_TEST_SUITE(gradient_graphs)

BOOST_AUTO_TEST_CASE(a_while_loop_gets_a_gradient_loop_with_a_counter_and_stacks) {
  GraphBuilder b;
  Output x = b.placeholder(DType::float32, {}, "x");
  Output y = power_loop(b, x, 3);
  Graph g = must_finish(b);
  auto r = graph::gradients(g, {y.endpoint()}, {x.endpoint()});
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_TEST(r->scope == "gradients");
  BOOST_REQUIRE_EQUAL(r->loops.size(), 1u);
  BOOST_TEST(r->loops[0].forward_frame == "while/while_context");
  BOOST_TEST(r->loops[0].gradient_frame == "gradients/while/while_context");
  BOOST_REQUIRE(r->dxs.size() == 1u);
  BOOST_TEST(r->dxs[0].node != kNoNode);
  // The gradient loop is a frame of its own, nested like the forward one.
  auto cf = analyze_control_flow(g);
  BOOST_REQUIRE_MESSAGE(cf.ok(), cf.status().to_string());
  const FrameId gf = cf->find_frame("gradients/while/while_context");
  BOOST_REQUIRE(gf > 0);
  BOOST_TEST(cf->frames[static_cast<size_t>(gf)].parent == kRootFrame);
  BOOST_TEST(cf->frames[static_cast<size_t>(gf)].pivot != kNoNode);
  // v * x needs v and x in the gradient: v is pushed (x is a loop invariant,
  // entered). One stack, one push, one pop; a forward counter.
  BOOST_TEST(count_op(g, "StackV2") == 1);
  BOOST_TEST(count_op(g, "StackPushV2") == 1);
  BOOST_TEST(count_op(g, "StackPopV2") == 1);
  BOOST_TEST(count_op(g, "LoopCond") == 2);
  BOOST_TEST(count_op(g, "ControlTrigger") == 2);
  BOOST_TEST(validate(g).ok());
}

BOOST_AUTO_TEST_CASE(nested_loops_nest_their_gradient_loops_and_push_the_inner_count) {
  GraphBuilder b;
  Output x = b.placeholder(DType::float32, {}, "x");
  Output y = b.while_loop([&](const Vars& v) { return v[0] < 2.0; },
                          [&](const Vars& v) { return Vars{v[0] + 1.0, power_loop(b, v[1] * x, 2)}; },
                          {b.scalar<int32_t>(0), x})[1];
  Graph g = must_finish(b);
  auto r = graph::gradients(g, {y.endpoint()}, {x.endpoint()});
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_REQUIRE_EQUAL(r->loops.size(), 2u);
  auto cf = analyze_control_flow(g);
  BOOST_REQUIRE(cf.ok());
  const FrameId outer = cf->find_frame(r->loops[0].gradient_frame);
  const FrameId inner = cf->find_frame(r->loops[1].gradient_frame);
  BOOST_REQUIRE(outer > 0);
  BOOST_REQUIRE(inner > 0);
  BOOST_TEST(cf->frames[static_cast<size_t>(inner)].parent == outer);
  // The inner loop's count is a value of the outer loop: pushed there.
  bool count_pushed = false;
  for (const Node& n : g.nodes())
    if (n.op == "StackPushV2" && contains(g.node(n.inputs[1].node).name, "f_count_exit")) count_pushed = true;
  BOOST_TEST(count_pushed);
}

BOOST_AUTO_TEST_CASE(a_cond_gradient_is_a_merge_of_switches) {
  GraphBuilder b;
  Output x = b.placeholder(DType::float32, {}, "x");
  Output p = b.placeholder(DType::boolean, {}, "p");
  Output y = b.cond(p, [&] { return Vars{x * x}; }, [&] { return Vars{b.scalar(2.0f)}; })[0];
  Graph g = must_finish(b);
  const int merges = count_op(g, "Merge");
  auto r = graph::gradients(g, {y.endpoint()}, {x.endpoint()});
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  // The Merge's gradient switches on which input it forwarded; the
  // Switch's gradient merges the branches' gradients.
  BOOST_TEST(count_op(g, "Switch", "gradients/") >= 1);
  BOOST_TEST(count_op(g, "Merge") == merges + 1);
  BOOST_TEST(count_op(g, "StackV2") == 0);
}

BOOST_AUTO_TEST_CASE(unconnected_xs_get_none_or_zeros_and_stop_gradients_cut) {
  GraphBuilder b;
  Output x = b.placeholder(DType::float32, {}, "x");
  Output z = b.placeholder(DType::float32, {}, "z");
  Output s = b.op1("StopGradient", {x * 3.0f});
  Output y = x * x + s;
  Graph g = must_finish(b);
  Graph g2 = g;
  auto r = graph::gradients(g, {y.endpoint()}, {x.endpoint(), z.endpoint()});
  BOOST_REQUIRE(r.ok());
  BOOST_TEST(r->dxs[0].node != kNoNode);
  BOOST_TEST(r->dxs[1].node == kNoNode);
  GradientOptions zeros;
  zeros.unconnected = GradientOptions::Unconnected::zeros;
  auto r2 = graph::gradients(g, {y.endpoint()}, {z.endpoint()}, {}, zeros);
  BOOST_REQUIRE(r2.ok());
  BOOST_TEST(r2->scope == "gradients_1");
  BOOST_TEST(g.node(r2->dxs[0].node).op == "ZerosLike");
  // Stopping x*x's input: no gradient reaches x any more.
  GradientOptions stop;
  stop.stop_gradients = {x.endpoint()};
  auto r3 = graph::gradients(g2, {y.endpoint()}, {x.endpoint()}, {}, stop);
  BOOST_REQUIRE(r3.ok());
  BOOST_TEST(r3->dxs[0].node == kNoNode);
}

BOOST_AUTO_TEST_CASE(errors_name_what_is_wrong_and_leave_the_graph_as_it_was) {
  GraphBuilder b;
  Output x = b.placeholder(DType::float32, {}, "x");
  Output i = b.placeholder(DType::int32, {}, "i");
  Output prevented = b.op1("PreventGradient", {x * 2.0f}, {{"message", "not here"}}, "guard");
  Output y = b.op1("Exp", {prevented}, {}, "y");
  Graph g = must_finish(b);
  const int before = g.num_nodes();
  auto r = graph::gradients(g, {y.endpoint()}, {x.endpoint()});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(contains(r.status().to_string(), "gradient explicitly prevented on node 'guard': not here"),
             r.status().to_string());
  BOOST_TEST(g.num_nodes() == before);

  auto not_float = graph::gradients(g, {y.endpoint()}, {i.endpoint()});
  BOOST_TEST(not_float.status().to_string() ==
             "invalid_argument: gradients: x 'i' is int32, not a float tensor: no gradient flows through it");
  auto no_ys = graph::gradients(g, {}, {x.endpoint()});
  BOOST_TEST(no_ys.status().to_string() == "invalid_argument: gradients: no ys");
  auto bad_grad_ys = graph::gradients(g, {y.endpoint()}, {x.endpoint()}, {i.endpoint()});
  BOOST_TEST(contains(bad_grad_ys.status().to_string(), "grad_y 'i' is int32 but y 'y' is float32"));
}

BOOST_AUTO_TEST_CASE(an_op_without_gradient_is_named_with_its_path) {
  ops::OpRegistry registry;
  // A registry with every built-in op but one gradient registry that lacks Exp.
  GradientRegistry grads;
  BOOST_REQUIRE(grads.add("Mul", [](GradContext& c) -> Status {
                       auto d = c.dy(0);
                       if (d) c.set(0, *d);
                       return ok_status();
                     }).ok());
  GraphBuilder b;
  Output x = b.placeholder(DType::float32, {}, "x");
  Output e = b.op1("Exp", {x}, {}, "e");
  Output y = b.mul(e, e, "y");
  Graph g = must_finish(b);
  GradientOptions o;
  o.registry = &grads;
  auto r = graph::gradients(g, {y.endpoint()}, {x.endpoint()}, {}, o);
  BOOST_TEST(r.status().to_string() ==
             "unimplemented: no gradient is defined for op Exp (node 'e'), on the path y <- e <- x");
  BOOST_TEST(!grads.add("Mul", nullptr).ok());
}

BOOST_AUTO_TEST_CASE(ys_and_xs_inside_a_loop_are_refused) {
  GraphBuilder b;
  Output x = b.placeholder(DType::float32, {}, "x");
  Output y = power_loop(b, x, 2);
  Graph g = must_finish(b);
  NodeId inner = kNoNode;
  for (NodeId id = 0; id < g.num_nodes(); ++id)
    if (g.node(id).op == "Mul") inner = id;
  BOOST_REQUIRE(inner != kNoNode);
  auto r = graph::gradients(g, {Endpoint{inner, 0}}, {x.endpoint()});
  BOOST_TEST(r.status().to_string() ==
             "invalid_argument: gradients: y '" + g.node(inner).name +
                 "' is inside a loop; ys and xs must be outside every loop");
  (void)y;
}

BOOST_AUTO_TEST_CASE(imported_graphs_differentiate_like_built_ones) {
  auto g = import_graph_file(std::string(TAGFLOW_TEST_DATA) + "/corpus/grappler_while_loop.pbtxt");
  BOOST_REQUIRE(g.ok());
  BOOST_REQUIRE(validate(*g).ok());
  const NodeId exit = g->find("while/Exit_1");
  const NodeId ones = g->find("ones");
  auto r = graph::gradients(*g, {{exit, 0}}, {{ones, 0}});
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_REQUIRE_EQUAL(r->loops.size(), 1u);
  BOOST_TEST(r->loops[0].forward_frame == "while/while/");
  BOOST_TEST(r->loops[0].gradient_frame == "gradients/while/while/");
  // ConcatV2's gradient slices by ConcatOffset: both halves of m, each pass.
  BOOST_TEST(count_op(*g, "ConcatOffset") == 1);
  BOOST_TEST(analyze_control_flow(*g).ok());
}

// The corpus LSTM training graph has ops tagflow has no definition of
// (ApplyAdam, GatherNd, ...), none on the path from its char LSTM to its
// kernel: validated with allow_unknown_ops, it differentiates.
BOOST_AUTO_TEST_CASE(unknown_ops_off_the_paths_do_not_matter) {
  auto g = import_graph_file(std::string(TAGFLOW_TEST_DATA) + "/corpus/tfnet_lstm_crf_ner_train.pbtxt");
  BOOST_REQUIRE(g.ok());
  ValidateOptions vo;
  vo.allow_unknown_ops = true;
  BOOST_REQUIRE(validate(*g, vo).ok());
  const NodeId y = g->find("chars/bidirectional_rnn/fw/fw/while/Exit_4");
  const NodeId x = g->find("chars/bidirectional_rnn/fw/lstm_cell/kernel");
  BOOST_REQUIRE(y != kNoNode);
  BOOST_REQUIRE(x != kNoNode);
  auto r = graph::gradients(*g, {{y, 0}}, {{x, 0}});
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  BOOST_TEST(r->dxs[0].node != kNoNode);
  BOOST_REQUIRE_EQUAL(r->loops.size(), 1u);
  BOOST_TEST(r->loops[0].forward_frame == "chars/bidirectional_rnn/fw/fw/while/while_context");
  // Not validated at all: refused.
  auto raw = import_graph_file(std::string(TAGFLOW_TEST_DATA) + "/corpus/grappler_while_loop.pbtxt");
  BOOST_REQUIRE(raw.ok());
  auto refused = graph::gradients(*raw, {{raw->find("while/Exit_1"), 0}}, {{raw->find("ones"), 0}});
  BOOST_TEST(contains(refused.status().to_string(), "the graph is not validated"), refused.status().to_string());
}

BOOST_AUTO_TEST_CASE(the_builder_adds_gradients_to_what_it_builds) {
  GraphBuilder b;
  Output x = b.placeholder(DType::float32, {}, "x");
  Output y = power_loop(b, x, 3);
  Vars d = b.gradients({y}, {x});
  BOOST_REQUIRE_EQUAL(d.size(), 1u);
  BOOST_TEST(d[0].valid());
  BOOST_TEST((d[0].dtype == DType::float32));
  Output twice = d[0] * 2.0f;  // usable like any output
  Graph g = must_finish(b);
  BOOST_TEST(g.find(twice.node_name()) != kNoNode);
  // Inside a loop body it is refused with the builder's usual error.
  GraphBuilder c;
  Output cx = c.placeholder(DType::float32, {}, "x");
  c.while_loop([&](const Vars& v) { return v[0] < 2.0; },
               [&](const Vars& v) {
                 c.gradients({v[1]}, {cx});
                 return Vars{v[0] + 1.0, v[1]};
               },
               {c.scalar<int32_t>(0), cx});
  BOOST_TEST(!c.ok());
  BOOST_TEST(contains(c.status().to_string(), "gradients() called while"), c.status().to_string());
}

BOOST_AUTO_TEST_SUITE_END()
