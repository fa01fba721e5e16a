#include <boost/test/unit_test.hpp>

#include <cstdio>

#include "graph/analysis/control_flow.hpp"
#include "graph/graph_test_util.hpp"
#include "graph/io/export.hpp"
#include "graph/io/import.hpp"
#include "graph/proto/graph_def.pb.h"

using namespace tagflow;
using namespace tagflow::graph;
using namespace tagflow::graph::testing;

BOOST_AUTO_TEST_SUITE(export_)

BOOST_AUTO_TEST_CASE(every_corpus_file_round_trips_through_text_and_binary) {
  for (const std::string& file : corpus_files()) {
    Graph g = load_corpus(file);
    std::string diff;

    auto from_text = import_graph_text(graph_to_text(g), file + " (re-exported)");
    BOOST_REQUIRE_MESSAGE(from_text.ok(), from_text.status().to_string());
    BOOST_TEST(from_text->equals(g, &diff), file << " text: " << diff);

    auto from_binary = import_graph_binary(graph_to_binary(g), file + " (re-exported)");
    BOOST_REQUIRE_MESSAGE(from_binary.ok(), from_binary.status().to_string());
    BOOST_TEST(from_binary->equals(g, &diff), file << " binary: " << diff);

    // pbtxt -> pb -> pbtxt: the text written from the binary import is the
    // text written from the original.
    BOOST_TEST(graph_to_text(*from_binary) == graph_to_text(g), file);
  }
}

BOOST_AUTO_TEST_CASE(binary_export_is_deterministic) {
  Graph g = load_corpus("tfnet_kmeans_refswitch.pbtxt");
  Graph copy = g;
  BOOST_TEST(graph_to_binary(g) == graph_to_binary(copy));
}

BOOST_AUTO_TEST_CASE(exported_proto_keeps_inputs_in_tensorflow_form) {
  Graph g = load_corpus("mlir_graph_while_loop.pbtxt");
  tensorflow::GraphDef def;
  graph_to_proto(g, &def);
  BOOST_TEST(def.node_size() == g.num_nodes());
  bool saw_port = false, saw_debug = false;
  for (const auto& n : def.node()) {
    for (const auto& in : n.input()) saw_port |= in.find(":1") != std::string::npos;
    saw_debug |= n.experimental_debug_info().original_node_names_size() > 0;
  }
  BOOST_TEST(saw_port);
  BOOST_TEST(saw_debug);
  BOOST_TEST(def.versions().producer() == 27);
}

BOOST_AUTO_TEST_CASE(export_graph_file_picks_the_format_from_the_extension) {
  Graph g = load_corpus("grappler_while_loop.pbtxt");
  for (const char* ext : {".pbtxt", ".pbtext", ".txt", ".pb"}) {
    std::string path = std::string("/tmp/tagflow_export_test") + ext;
    Status s = export_graph_file(g, path);
    BOOST_REQUIRE_MESSAGE(s.ok(), s.to_string());
    std::string bytes = read_bytes(path);
    BOOST_TEST((bytes.rfind("node {", 0) == 0) == (std::string(ext) != ".pb"), ext);
    auto back = import_graph_file(path);
    std::remove(path.c_str());
    BOOST_REQUIRE_MESSAGE(back.ok(), back.status().to_string());
    BOOST_TEST(back->equals(g), ext);
  }
  std::string dot_path = "/tmp/tagflow_export_test.dot";
  BOOST_REQUIRE(export_graph_file(g, dot_path).ok());
  BOOST_TEST(read_bytes(dot_path).rfind("digraph", 0) == 0u);
  std::remove(dot_path.c_str());

  Status bad = export_graph_file(g, "/tmp/graph.json");
  BOOST_TEST(!bad.ok());
  BOOST_TEST(contains(bad.message(), "extension"));
  Status unwritable = export_graph_file(g, "/nonexistent/dir/graph.pb");
  BOOST_TEST(!unwritable.ok());
  BOOST_TEST(contains(unwritable.message(), "/nonexistent/dir/graph.pb"));
}

BOOST_AUTO_TEST_CASE(a_graph_that_import_would_refuse_is_not_written) {
  // An empty graph would be a 0-byte .pb (and a blank .pbtxt): both are
  // import errors, so writing them is one too, and no file appears.
  for (const char* name : {"/tmp/tagflow_export_test_empty.pb", "/tmp/tagflow_export_test_empty.pbtxt"}) {
    std::remove(name);
    Status s = export_graph_file(Graph(), name);
    BOOST_TEST(!s.ok(), name);
    BOOST_TEST(contains(s.message(), std::string("not writing '") + name + "': tagflow would refuse to import it"),
               s.message());
    BOOST_TEST(contains(s.message(), "empty file"), s.message());
    std::FILE* f = std::fopen(name, "rb");
    BOOST_TEST(f == nullptr, name << " was written");
    if (f != nullptr) std::fclose(f);
  }
}

BOOST_AUTO_TEST_CASE(dot_has_nested_clusters_back_edges_and_dashed_control_edges) {
  Graph g = load_corpus("grappler_loops_and_resource_vars.pbtxt");
  auto cf = analyze_control_flow(g);
  BOOST_REQUIRE_MESSAGE(cf.ok(), cf.status().to_string());
  std::string dot = graph_to_dot(g, *cf);
  BOOST_TEST(dot.rfind("digraph", 0) == 0u);
  FrameId outer = cf->find_frame("while/while_context");
  FrameId inner = cf->find_frame("while/while/while_context");
  std::string outer_cluster = "subgraph cluster_" + std::to_string(outer) + " {";
  std::string inner_cluster = "subgraph cluster_" + std::to_string(inner) + " {";
  size_t o = dot.find(outer_cluster), i = dot.find(inner_cluster);
  BOOST_REQUIRE(o != std::string::npos);
  BOOST_REQUIRE(i != std::string::npos);
  BOOST_TEST(o < i);  // the inner cluster is written inside the outer one
  BOOST_TEST(contains(dot, "frame while/while/while_context"));
  BOOST_TEST(contains(dot, "pivot while/while/LoopCond"));
  BOOST_TEST(contains(dot, "label=\"while/Merge\\nMerge\""));
  BOOST_TEST(contains(dot, "style=dashed"));
  BOOST_TEST(contains(dot, "constraint=false"));
  // Exactly one back edge per NextIteration.
  size_t back_edges = 0;
  for (size_t at = dot.find("back edge"); at != std::string::npos; at = dot.find("back edge", at + 1))
    ++back_edges;
  BOOST_TEST(back_edges == static_cast<size_t>(count_op(g, "NextIteration")));
  // Balanced braces: every cluster is closed.
  BOOST_TEST(std::count(dot.begin(), dot.end(), '{') == std::count(dot.begin(), dot.end(), '}'));
}

BOOST_AUTO_TEST_CASE(dot_escapes_names) {
  auto g = import_graph_text("node { name: \"a\" op: \"NoOp\" device: \"x\" }");
  BOOST_REQUIRE(g.ok());
  Node& n = g->mutable_node(0);
  n.op = "Weird\"Op\\";
  auto cf = analyze_control_flow(*g);
  BOOST_REQUIRE(cf.ok());
  BOOST_TEST(contains(graph_to_dot(*g, *cf), "Weird\\\"Op\\\\"));
}

BOOST_AUTO_TEST_SUITE_END()
