// The corpus of real TensorFlow GraphDefs (tests/data/corpus, see its
// INDEX-derived ATTRIBUTION.md): every file imports, analyses and matches
// the structure the corpus index describes.
#include <boost/test/unit_test.hpp>

#include <set>

#include "graph/analysis/control_flow.hpp"
#include "graph/validate.hpp"
#include "graph_test_util.hpp"

using namespace tagflow;
using namespace tagflow::graph;
using namespace tagflow::graph::testing;

BOOST_AUTO_TEST_SUITE(corpus)

BOOST_AUTO_TEST_CASE(every_file_imports_and_its_frames_analyse) {
  auto files = corpus_files();
  BOOST_TEST(files.size() == 17u);
  for (const std::string& file : files) {
    auto g = import_graph_file(corpus_path(file));
    BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
    auto cf = analyze_control_flow(*g);
    BOOST_TEST(cf.ok(), file << ": " << cf.status().to_string());
    BOOST_TEST(check_cycles(*g).ok(), file);
    ops::OpRegistry nothing;  // no op known: only the structure is checked
    ValidateOptions lenient;
    lenient.allow_unknown_ops = true;
    lenient.registry = &nothing;
    Status s = validate(*g, lenient);
    BOOST_TEST(s.ok(), file << ": " << s.to_string());
  }
}

BOOST_AUTO_TEST_CASE(small_files_have_the_nodes_the_index_lists) {
  Graph w = load_corpus("grappler_while_loop.pbtxt");
  for (const char* op : {"Enter", "Merge", "Switch", "Identity", "NextIteration", "Exit"})
    BOOST_TEST(count_op(w, op) == 2, op);
  BOOST_TEST(count_op(w, "LoopCond") == 1);
  const Node& ones = w.node(w.find("ones"));
  BOOST_TEST(ones.attr<ops::Tensor>("value")->debug_string() == "float32[2,2] [[1,1],[1,1]]");

  Graph m4 = load_corpus("tflite_merge4_placeholders.pbtxt");
  BOOST_TEST(count_op(m4, "Placeholder") == 4);
  BOOST_TEST(m4.node(m4.find(m4.nodes().back().name)).inputs.size() == 4u);

  Graph tpu = load_corpus("mlir_partition_send_tpu.pbtxt");
  bool saw_128 = false;
  for (const Node& n : tpu.nodes())
    if (const ops::Tensor* t = n.attr<ops::Tensor>("value"))
      saw_128 |= t->values_string() == "[128,128]";
  BOOST_TEST(saw_128);  // tensor_content "\200\000\000\000\200\000\000\000"

  Graph only_library = load_corpus("tfg_backedge_segment_cond_in_function.pbtxt");
  BOOST_TEST(only_library.num_nodes() == 0);
  BOOST_TEST(only_library.has_function("foo"));

  Graph call = load_corpus("grappler_function_switch.pbtxt");
  BOOST_REQUIRE(call.find("MyAdd_MPaeanipb7o") != kNoNode);
  BOOST_TEST(call.node(call.find("MyAdd_MPaeanipb7o")).attrs.empty());
}

BOOST_AUTO_TEST_CASE(the_lstm_graph_has_the_counts_of_the_index) {
  Graph g = load_corpus("tfnet_lstm_crf_ner_train.pbtxt");
  BOOST_TEST(g.num_nodes() == 3337);
  BOOST_TEST(count_op(g, "Enter") == 320);
  BOOST_TEST(count_op(g, "Exit") == 59);
  BOOST_TEST(count_op(g, "NextIteration") == 59);
  BOOST_TEST(count_op(g, "Merge") == 68);
  BOOST_TEST(count_op(g, "Switch") == 113);
  BOOST_TEST(count_op(g, "LoopCond") == 10);
  BOOST_TEST(count_op(g, "ControlTrigger") == 5);
  for (const char* op : {"StackV2", "StackPushV2", "StackPopV2"}) BOOST_TEST(count_op(g, op) == 95, op);
  BOOST_TEST(g.versions().producer == 29);
}

BOOST_AUTO_TEST_CASE(the_lstm_graph_has_the_frames_of_the_index) {
  Graph g = load_corpus("tfnet_lstm_crf_ner_train.pbtxt");
  auto cf = analyze_control_flow(g);
  BOOST_REQUIRE_MESSAGE(cf.ok(), cf.status().to_string());
  BOOST_TEST(cf->frames.size() == 11u);  // 10 loops and the root
  int gradient_frames = 0;
  for (size_t f = 1; f < cf->frames.size(); ++f) {
    const FrameInfo& frame = cf->frames[f];
    gradient_frames += frame.name.find("gradients") != std::string::npos;
    BOOST_TEST(frame.pivot != kNoNode, frame.name);
    BOOST_TEST(g.node(frame.pivot).op == "LoopCond");
    BOOST_TEST(frame.parent == kRootFrame, frame.name);  // no nested loops in this graph
    BOOST_TEST(!frame.enters.empty());
    BOOST_TEST(!frame.exits.empty());
  }
  BOOST_TEST(gradient_frames == 5);
  size_t enters = 0, exits = 0;
  for (const FrameInfo& frame : cf->frames) {
    enters += frame.enters.size();
    exits += frame.exits.size();
  }
  BOOST_TEST(enters == 320u);
  BOOST_TEST(exits == 59u);

  // The while loop inside a cond: its frame's parent is the root, yet its
  // Enters are fed from the cond's side of a Switch.
  FrameId in_cond = cf->find_frame("cond_1/rnn/while/while_context");
  BOOST_REQUIRE(in_cond > 0);
  const FrameInfo& frame = cf->frames[static_cast<size_t>(in_cond)];
  BOOST_TEST(frame.parent == kRootFrame);
  bool fed_by_switch = false;
  for (NodeId e : frame.enters) {
    const Node& enter = g.node(e);
    BOOST_TEST(cf->frame_of[static_cast<size_t>(e)] == kRootFrame);
    const Node& src = g.node(enter.inputs.at(0).node);
    fed_by_switch |= src.op == "Switch";
  }
  BOOST_TEST(fed_by_switch);
  BOOST_TEST(cf->find_frame("train_step/gradients/cond_1/rnn/while/while_context") > 0);
}

// With tagflow's built-in op registry: every op of every file has a kernel,
// the contrib NearestNeighbors, ApplyAdam and the gradient ops, and Empty of
// the TPU partition included.
BOOST_AUTO_TEST_CASE(every_file_validates_against_the_builtin_ops) {
  for (const std::string& file : corpus_files()) {
    if (file == "grappler_while_loop_var_handle_op_compact.pbtxt") continue;  // below
    Graph g = load_corpus(file);
    Status s = validate(g);
    BOOST_TEST(s.ok(), file << ": " << s.to_string());
  }
}

BOOST_AUTO_TEST_CASE(the_index_says_which_file_is_not_type_correct) {
  // "while/Less compares the DT_RESOURCE Merge output with an int".
  Graph g = load_corpus("grappler_while_loop_var_handle_op_compact.pbtxt");
  Status s = validate(g);
  BOOST_TEST((s.code() == Error::invalid_argument));
  BOOST_TEST(s.message() ==
                 "node 'while/Less' (Less) input 0 expects int32 but 'while/Merge' (Merge) "
                 "produces resource",
             s.message());
}

BOOST_AUTO_TEST_CASE(validated_graphs_know_their_types) {
  Graph g = load_corpus("grappler_while_loop.pbtxt");
  Status s = validate(g);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.to_string());
  const Node& merge = g.node(g.find("while/Merge_1"));
  BOOST_REQUIRE(merge.def != nullptr);
  BOOST_TEST((merge.output_types == std::vector<ops::DType>{ops::DType::float32, ops::DType::int32}));
  BOOST_TEST(g.num_outputs(g.find("while/Switch")) == 2);
  auto cf = analyze_control_flow(g);
  BOOST_REQUIRE(cf.ok());
  BOOST_TEST(cf->frames.size() == 2u);
}

BOOST_AUTO_TEST_SUITE_END()
