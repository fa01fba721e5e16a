// The step graph's boundary: what the graph declares where a value is fed,
// feeds and fetches inside loops, and the _Arg/_Retval nodes of functions
// converted to graphs.
#include <boost/test/unit_test.hpp>

#include "graph/step_graph.hpp"
#include "graph/validate.hpp"
#include "graph_test_util.hpp"

using namespace tagflow;
using namespace tagflow::graph;
using namespace tagflow::graph::testing;
using ops::Tensor;

namespace {

Graph validated(const std::string& text) {
  auto g = import_graph_text(text, "<step graph test>");
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  Status s = validate(*g);
  if (!s.ok()) throw std::runtime_error(s.to_string());
  return std::move(g).value();
}

std::string placeholder(const std::string& name, const std::string& shape,
                        const std::string& dtype = "DT_INT32") {
  return "node { name: \"" + name + "\" op: \"Placeholder\" attr { key: \"dtype\" value { type: " +
         dtype + " } } attr { key: \"shape\" value { shape { " + shape + " } } } }\n";
}

const char* kVersion = "versions { producer: 27 }\n";

std::string feed_error(const Graph& g, const std::string& feed, const Tensor& value, bool shapes = true) {
  auto e = parse_endpoint(g, feed);
  if (!e.ok()) return e.status().to_string();
  return check_feed(feed, declared_output(g, *e), value, shapes).to_string();
}

// examples/while_loop.pbtxt: i = Const; while i < 10: i += 1.
Graph example_loop() {
  auto g = import_graph_file(std::string(TAGFLOW_SOURCE_DIR) + "/examples/while_loop.pbtxt");
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  Status s = validate(*g);
  if (!s.ok()) throw std::runtime_error(s.to_string());
  return std::move(g).value();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(step_graph)

BOOST_AUTO_TEST_CASE(a_fed_value_must_fit_the_placeholders_dtype_and_shape) {
  Graph g = validated(std::string(kVersion) + placeholder("x", "dim { size: 2 } dim { size: -1 }") +
                      placeholder("s", "") + placeholder("any", "unknown_rank: true"));
  BOOST_TEST(feed_error(g, "x", Tensor::from_vector<int32_t>({2, 5}, std::vector<int32_t>(10))) == "ok");
  std::string e = feed_error(g, "x", Tensor::vector<int32_t>({1, 2}));
  BOOST_TEST(contains(e, "invalid_argument: feed 'x' is int32 [2] but Placeholder 'x' declares int32 [2,?]"), e);
  e = feed_error(g, "x", Tensor::from_vector<int32_t>({3, 1}, {1, 2, 3}));
  BOOST_TEST(contains(e, "feed 'x' is int32 [3,1] but Placeholder 'x' declares int32 [2,?]"), e);
  e = feed_error(g, "x", Tensor::from_vector<float>({2, 1}, {1, 2}));
  BOOST_TEST(contains(e, "feed 'x' is float32 [2,1] but Placeholder 'x' declares int32 [2,?]"), e);
  // An empty shape is a scalar; unknown rank takes anything.
  BOOST_TEST(feed_error(g, "s", Tensor::scalar<int32_t>(1)) == "ok");
  BOOST_TEST(contains(feed_error(g, "s", Tensor::vector<int32_t>({1})), "declares int32 []"));
  BOOST_TEST(feed_error(g, "any", Tensor::from_vector<int32_t>({1, 1, 1}, {4})) == "ok");
}

BOOST_AUTO_TEST_CASE(an_empty_placeholder_shape_is_unknown_in_graphs_before_version_22) {
  // TensorFlow's rule: old graphs wrote no shape as an empty one.
  Graph old = validated("versions { producer: 21 }\n" + placeholder("s", ""));
  BOOST_TEST(feed_error(old, "s", Tensor::vector<int32_t>({1, 2})) == "ok");
}

BOOST_AUTO_TEST_CASE(a_feed_replacing_a_constant_must_have_its_shape) {
  Graph g = example_loop();
  std::string e = feed_error(g, "Const", Tensor::vector<int32_t>({1, 2}));
  BOOST_TEST(contains(e, "feed 'Const' is int32 [2] but Const 'Const' declares int32 []"), e);
  BOOST_TEST(feed_error(g, "Const", Tensor::scalar<int32_t>(3)) == "ok");
}

BOOST_AUTO_TEST_CASE(output_shapes_never_constrain_a_feed) {
  // TF Serving's half_plus_three: `x` is an Identity whose _output_shapes
  // says [?,1], fed [3]. The attr is informational; the dtype still counts.
  Graph g = validated(std::string(kVersion) + placeholder("x", "unknown_rank: true") +
                      "node { name: \"n\" op: \"Identity\" input: \"x\" attr { key: \"T\" value { type: DT_INT32 } }"
                      " attr { key: \"_output_shapes\" value { list { shape { dim { size: -1 } dim { size: 1 } } } } } }\n");
  BOOST_TEST(feed_error(g, "n", Tensor::vector<int32_t>({1, 2, 5})) == "ok");
  BOOST_TEST(feed_error(g, "n", Tensor::from_vector<int32_t>({3, 1}, {1, 2, 5})) == "ok");
  std::string e = feed_error(g, "n", Tensor::vector<float>({1, 2, 5}));
  BOOST_TEST(contains(e, "feed 'n' is float32 [3] but Identity 'n' declares int32"), e);
  BOOST_TEST(!contains(e, "_output_shapes"), e);
}

BOOST_AUTO_TEST_CASE(without_the_shape_check_a_feed_is_checked_for_its_dtype_alone) {
  Graph g = validated(std::string(kVersion) + placeholder("x", "dim { size: 2 } dim { size: -1 }") +
                      placeholder("s", ""));
  // TF 2 signatures declare `float32 []` and are fed vectors (TF's C API).
  BOOST_TEST(feed_error(g, "s", Tensor::vector<int32_t>({1, 2, 3}), false) == "ok");
  BOOST_TEST(feed_error(g, "x", Tensor::vector<int32_t>({1, 2, 3}), false) == "ok");
  std::string e = feed_error(g, "x", Tensor::vector<float>({1, 2}), false);
  BOOST_TEST(contains(e, "feed 'x' is float32 [2] but Placeholder 'x' declares int32"), e);
  BOOST_TEST(!contains(e, "[2,?]"), e);
  // With it, the error says how to feed it anyway; a dtype error does not.
  e = feed_error(g, "s", Tensor::vector<int32_t>({1, 2, 3}));
  BOOST_TEST(contains(e, "declares int32 [] (--no-feed-shape-check, SessionOptions::check_feed_shapes = false"), e);
  BOOST_TEST(!contains(feed_error(g, "s", Tensor::vector<float>({1})), "--no-feed-shape-check"));
}

BOOST_AUTO_TEST_CASE(feeding_or_fetching_a_value_inside_a_loop_says_why_it_cannot) {
  Graph g = example_loop();
  for (const char* inside : {"while/Add", "while/Merge", "while/Identity", "while/Enter", "while/Less"}) {
    auto s = make_step_graph(g, {inside}, {"while/Exit"}, {});
    BOOST_REQUIRE(!s.ok());
    const std::string& msg = s.status().message();
    BOOST_TEST(contains(msg, std::string("feed '") + inside + "': "), msg);
    BOOST_TEST(contains(msg, "is inside the loop frame 'while/while_context'"), msg);
    BOOST_TEST(contains(msg, "a value in every iteration of every instance of that frame"), msg);
    BOOST_TEST(contains(msg, "one fed value cannot stand for it"), msg);
  }
  auto f = make_step_graph(g, {}, {"while/Add"}, {});
  BOOST_REQUIRE(!f.ok());
  BOOST_TEST(contains(f.status().message(), "fetch 'while/Add': Add 'while/Add' is inside the loop frame"),
             f.status().message());
  // An Exit's value and the Enter's input are outside the loop.
  BOOST_TEST(make_step_graph(g, {"while/Exit"}, {"while/Exit"}, {}).ok());
  BOOST_TEST(make_step_graph(g, {"Const"}, {"while/Exit"}, {}).ok());
}

BOOST_AUTO_TEST_CASE(a_functions_retval_is_fetched_by_name_and_its_arg_must_be_fed) {
  const std::string text = std::string(kVersion) +
      "node { name: \"a\" op: \"_Arg\" attr { key: \"T\" value { type: DT_INT32 } } attr { key: \"index\" value { i: 0 } } }\n"
      "node { name: \"neg\" op: \"Neg\" input: \"a\" attr { key: \"T\" value { type: DT_INT32 } } }\n"
      "node { name: \"ret\" op: \"_Retval\" input: \"neg\" attr { key: \"T\" value { type: DT_INT32 } } attr { key: \"index\" value { i: 0 } } }\n";
  Graph g = validated(text);
  auto s = make_step_graph(g, {"a"}, {"ret"}, {});
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().to_string());
  // The fetch reads what the _Retval returns; the function's own _Arg and
  // _Retval are not part of the step.
  BOOST_TEST(s->graph.find("ret") == kNoNode);
  BOOST_TEST(s->graph.find("a") == kNoNode);
  const Node& fetch = s->graph.node(s->graph.find("_fetch/0"));
  BOOST_TEST(s->graph.node(fetch.inputs[0].node).name == "neg");
  auto unfed = make_step_graph(g, {}, {"ret"}, {});
  BOOST_REQUIRE(!unfed.ok());
  BOOST_TEST(contains(unfed.status().message(), "_Arg 'a' must be fed"), unfed.status().message());
  // As a target, a _Retval runs what it returns.
  auto target = make_step_graph(g, {"a"}, {}, {"ret"});
  BOOST_REQUIRE_MESSAGE(target.ok(), target.status().to_string());
  BOOST_TEST(target->graph.find("neg") != kNoNode);
  BOOST_TEST(target->graph.find("ret") == kNoNode);
}

// A fetch of a fed endpoint reads the feed's _Arg. Building it once read
// the graph's per-node feed flags at the _Arg's id, past their end (found
// by fuzz/run, whose input fuzz/corpus/run/regression_fetch_of_a_feed
// catches it under ASan); the read did not change the result, checked here
// at node counts around 64 and 128, with every node kept and with nodes
// pruned.
BOOST_AUTO_TEST_CASE(fetching_a_fed_endpoint_reads_the_feed_at_every_graph_size) {
  for (int nodes : {1, 2, 63, 64, 65, 127, 128, 129}) {
    for (bool prune : {false, true}) {
      std::string text = std::string(kVersion) + placeholder("p", "");
      for (int i = 1; i < nodes; ++i)
        text += "node { name: \"c" + std::to_string(i) +
                "\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } } attr { key: \"value\" "
                "value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }\n";
      Graph g = validated(text);
      BOOST_REQUIRE(g.num_nodes() == nodes);
      std::vector<std::string> fetches = {"p:0"};
      if (!prune && nodes > 1)
        for (int i = 1; i < nodes; ++i) fetches.push_back("c" + std::to_string(i));
      auto step = make_step_graph(g, {"p:0"}, fetches, {});
      BOOST_REQUIRE_MESSAGE(step.ok(), step.status().to_string());
      const Graph& sg = step->graph;
      const NodeId ret = sg.find("_fetch/0");
      BOOST_REQUIRE(ret != kNoNode);
      BOOST_TEST(sg.node(sg.node(ret).inputs.at(0).node).name == "_feed/0", nodes);
    }
  }
}

BOOST_AUTO_TEST_CASE(names_given_by_the_user_are_shortened_in_errors) {
  Graph g = example_loop();
  const std::string huge(60000, 'n');
  auto s = make_step_graph(g, {}, {huge}, {});
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.status().message().size() < 400u, s.status().message().size());
  BOOST_TEST(contains(s.status().message(), "... (60000 bytes)"), s.status().message());
}

BOOST_AUTO_TEST_CASE(a_fed_output_of_an_unknown_op_takes_the_dtype_its_consumers_expect) {
  auto g = import_graph_text(
      "node { name: 'u' op: 'UnknownSource' }\n"
      "node { name: 'cast' op: 'Cast' input: 'u' attr { key: 'SrcT' value { type: DT_INT64 } } "
      "attr { key: 'DstT' value { type: DT_FLOAT } } }\n"
      "node { name: 'v' op: 'OtherUnknown' }\n"
      "node { name: 'w' op: 'ThirdUnknown' input: 'v' }\n", "<test>");
  BOOST_REQUIRE(g.ok());
  ValidateOptions v;
  v.allow_unknown_ops = true;
  BOOST_REQUIRE(validate(*g, v).ok());
  auto step = make_step_graph(*g, {"u"}, {"cast"}, {});
  BOOST_REQUIRE_MESSAGE(step.ok(), step.status().to_string());
  BOOST_TEST(ops::dtype_name(step->feeds[0].dtype) == "int64");  // Cast's SrcT
  BOOST_TEST(step->graph.find("u") == kNoNode);
  auto bad = make_step_graph(*g, {"v"}, {"w"}, {});
  BOOST_REQUIRE(!bad.ok());
  BOOST_TEST(bad.status().message().find("feed 'v': the dtype of 'v' cannot be inferred: node 'v' has op "
                                         "'OtherUnknown'") != std::string::npos, bad.status().message());
}

BOOST_AUTO_TEST_SUITE_END()
