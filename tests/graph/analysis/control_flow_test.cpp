#include <boost/test/unit_test.hpp>

#include "graph/analysis/control_flow.hpp"
#include "graph/graph_test_util.hpp"
#include "graph/io/import.hpp"

using namespace tagflow;
using namespace tagflow::graph;
using namespace tagflow::graph::testing;

namespace {

Graph parse(const std::string& text) {
  auto g = import_graph_text(text, "test.pbtxt");
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

std::string analysis_error(const std::string& text) {
  auto cf = analyze_control_flow(parse(text));
  return cf.ok() ? std::string("<no error>") : cf.status().to_string();
}

FrameId frame_of(const Graph& g, const ControlFlowInfo& cf, const std::string& node) {
  NodeId id = g.find(node);
  if (id == kNoNode) throw std::runtime_error("no node " + node);
  return cf.frame_of[static_cast<size_t>(id)];
}

std::string node(const std::string& name, const std::string& op, const std::string& rest = "") {
  return "node { name: \"" + name + "\" op: \"" + op + "\" " + rest + " }\n";
}

std::string enter(const std::string& name, const std::string& input, const std::string& frame) {
  return node(name, "Enter",
              "input: \"" + input + "\" attr { key: \"frame_name\" value { s: \"" + frame + "\" } }");
}

// A well-formed loop over frame `frame`, its nodes prefixed with `p`, fed
// by `input`.
std::string loop(const std::string& p, const std::string& input, const std::string& frame) {
  return enter(p + "Enter", input, frame) +
         node(p + "Merge", "Merge", "input: \"" + p + "Enter\" input: \"" + p + "Next\"") +
         node(p + "Cond", "Less", "input: \"" + p + "Merge\" input: \"" + p + "Merge\"") +
         node(p + "LoopCond", "LoopCond", "input: \"" + p + "Cond\"") +
         node(p + "Switch", "Switch", "input: \"" + p + "Merge\" input: \"" + p + "LoopCond\"") +
         node(p + "Body", "Identity", "input: \"" + p + "Switch:1\"") +
         node(p + "Next", "NextIteration", "input: \"" + p + "Body\"") +
         node(p + "Exit", "Exit", "input: \"" + p + "Switch\"");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(control_flow)

BOOST_AUTO_TEST_CASE(a_graph_without_loops_has_only_the_root_frame) {
  Graph g = load_corpus("tfnet_cond_test.pbtxt");
  auto cf = analyze_control_flow(g);
  BOOST_REQUIRE_MESSAGE(cf.ok(), cf.status().to_string());
  BOOST_TEST(cf->frames.size() == 1u);
  BOOST_TEST(cf->frames[0].nodes.size() == static_cast<size_t>(g.num_nodes()));
  BOOST_TEST(cf->frames[0].parent == -1);
  BOOST_TEST(cf->find_frame("") == kRootFrame);
}

BOOST_AUTO_TEST_CASE(a_simple_while_loop) {
  Graph g = load_corpus("mlir_graph_while_loop.pbtxt");
  auto cf = analyze_control_flow(g);
  BOOST_REQUIRE_MESSAGE(cf.ok(), cf.status().to_string());
  BOOST_REQUIRE(cf->frames.size() == 2u);
  FrameId f = cf->find_frame("while/while_context");
  BOOST_REQUIRE(f == 1);
  const FrameInfo& loop = cf->frames[1];
  BOOST_TEST(loop.parent == kRootFrame);
  BOOST_TEST(loop.depth == 1);
  BOOST_TEST(loop.parallel_iterations == 10);
  BOOST_TEST(g.node(loop.pivot).name == "while/LoopCond");
  BOOST_TEST(loop.enters.size() == 1u);
  BOOST_TEST(loop.exits.size() == 1u);
  BOOST_TEST((cf->frames[0].children == std::vector<FrameId>{f}));
  // TensorFlow's convention: an Enter is in the outer frame, an Exit in the inner one.
  BOOST_TEST(frame_of(g, *cf, "while/Enter") == kRootFrame);
  BOOST_TEST(frame_of(g, *cf, "while/Merge") == f);
  BOOST_TEST(frame_of(g, *cf, "while/NextIteration") == f);
  BOOST_TEST(frame_of(g, *cf, "while/Exit") == f);
  size_t total = 0;
  for (const FrameInfo& fr : cf->frames) total += fr.nodes.size();
  BOOST_TEST(total == static_cast<size_t>(g.num_nodes()));
}

BOOST_AUTO_TEST_CASE(nested_loops) {
  Graph g = load_corpus("grappler_loops_and_resource_vars.pbtxt");
  auto cf = analyze_control_flow(g);
  BOOST_REQUIRE_MESSAGE(cf.ok(), cf.status().to_string());
  BOOST_REQUIRE(cf->frames.size() == 3u);
  FrameId outer = cf->find_frame("while/while_context");
  FrameId inner = cf->find_frame("while/while/while_context");
  BOOST_REQUIRE(outer > 0);
  BOOST_REQUIRE(inner > 0);
  BOOST_TEST(cf->frames[static_cast<size_t>(outer)].parent == kRootFrame);
  BOOST_TEST(cf->frames[static_cast<size_t>(inner)].parent == outer);
  BOOST_TEST(cf->frames[static_cast<size_t>(inner)].depth == 2);
  BOOST_TEST(g.node(cf->frames[static_cast<size_t>(outer)].pivot).name == "while/LoopCond");
  BOOST_TEST(g.node(cf->frames[static_cast<size_t>(inner)].pivot).name == "while/while/LoopCond");
  BOOST_TEST(frame_of(g, *cf, "while/while/Enter") == outer);
  BOOST_TEST(frame_of(g, *cf, "while/while/Exit") == inner);
  // The variable Enter (is_constant, T=resource) opens the outer frame from the root.
  BOOST_TEST(frame_of(g, *cf, "while/while/ReadVariableOp/Enter") == kRootFrame);
  BOOST_TEST(frame_of(g, *cf, "while/while/ReadVariableOp") == outer);
}

BOOST_AUTO_TEST_CASE(a_node_reached_in_two_frames_is_an_error) {
  // 'bad' consumes the loop body and also a root Const without an Enter.
  std::string text = node("c", "Const") + loop("", "c", "f") +
                     node("bad", "Add", "input: \"Body\" input: \"c\"");
  std::string e = analysis_error(text);
  BOOST_TEST(contains(e, "invalid_graph: node 'bad' is reached in two frames: "
                         "the root frame (from 'c') and frame 'f' (from 'Body')"),
             e);
}

BOOST_AUTO_TEST_CASE(an_exit_without_an_enter_is_an_error) {
  std::string e = analysis_error(node("c", "Const") + node("x", "Exit", "input: \"c\""));
  BOOST_TEST(contains(e, "Exit 'x' is in the root frame (no Enter leads to it)"), e);
}

BOOST_AUTO_TEST_CASE(enters_of_one_frame_under_two_parents_are_an_error) {
  // Frame 'inner' is entered from the root and from inside frame 'outer'.
  std::string text = node("c", "Const") + loop("o/", "c", "outer") + enter("bad", "c", "inner") +
                     enter("good", "o/Body", "inner") +
                     node("use", "Add", "input: \"bad\" input: \"good\"");
  std::string e = analysis_error(text);
  BOOST_TEST(contains(e, "of frame 'inner' is in"), e);
  BOOST_TEST(contains(e, "Enter 'bad'"), e);
  BOOST_TEST(contains(e, "Enter 'good'"), e);
}

BOOST_AUTO_TEST_CASE(two_loop_conds_in_a_frame_are_an_error) {
  std::string text = node("c", "Const") + loop("", "c", "f") +
                     node("LoopCond2", "LoopCond", "input: \"Cond\"");
  std::string e = analysis_error(text);
  BOOST_TEST(contains(e, "frame 'f' has two LoopConds: 'LoopCond' and 'LoopCond2'"), e);
}

BOOST_AUTO_TEST_CASE(a_next_iteration_needs_a_loop_cond) {
  std::string text = node("c", "Const") + enter("e", "c", "f") +
                     node("m", "Merge", "input: \"e\" input: \"n\"") +
                     node("n", "NextIteration", "input: \"m\"");
  BOOST_TEST(contains(analysis_error(text), "frame 'f' has NextIteration 'n' but no LoopCond"));
  std::string root = node("c", "Const") + node("n", "NextIteration", "input: \"c\"");
  BOOST_TEST(contains(analysis_error(root), "NextIteration 'n' is in the root frame"));
}

BOOST_AUTO_TEST_CASE(a_loop_without_a_way_in_is_an_error) {
  std::string text = node("m", "Merge", "input: \"n\"") + node("n", "NextIteration", "input: \"m\"");
  std::string e = analysis_error(text);
  BOOST_TEST(contains(e, "node 'm' cannot be reached from any node without inputs"), e);
}

BOOST_AUTO_TEST_CASE(an_enter_needs_a_frame_name) {
  std::string e = analysis_error(node("c", "Const") + node("e", "Enter", "input: \"c\"") +
                                 node("x", "Identity", "input: \"e\""));
  BOOST_TEST(contains(e, "Enter 'e' has no frame_name attr"), e);
}

BOOST_AUTO_TEST_CASE(parallel_iterations_come_from_the_enters) {
  std::string text = node("c", "Const") + loop("", "c", "f");
  text.replace(text.find("attr { key: \"frame_name\""), 0,
               "attr { key: \"parallel_iterations\" value { i: 32 } } ");
  auto cf = analyze_control_flow(parse(text));
  BOOST_REQUIRE_MESSAGE(cf.ok(), cf.status().to_string());
  BOOST_TEST(cf->frames[1].parallel_iterations == 32);
}

BOOST_AUTO_TEST_SUITE_END()
