#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cstdio>

#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/unknown_field_set.h>

#include "graph/analysis/control_flow.hpp"
#include "graph/graph_test_util.hpp"
#include "graph/io/export.hpp"
#include "graph/io/import.hpp"
#include "graph/proto/graph_def.pb.h"
#include "graph/validate.hpp"

using namespace tagflow;
using namespace tagflow::graph;
using namespace tagflow::graph::testing;

namespace {

std::string import_error(const std::string& text) {
  auto g = import_graph_text(text, "bad.pbtxt");
  return g.ok() ? std::string("<no error>") : g.status().to_string();
}

std::string binary_error(const std::string& bytes) {
  auto g = import_graph_bytes(bytes, "bad.pb");
  return g.ok() ? std::string("<no error>") : g.status().to_string();
}

const char* kTwoNodes = R"(
node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 2 } } } }
node { name: "b" op: "Identity" input: "a" input: "^a"
       attr { key: "T" value { type: DT_FLOAT } } }
versions { producer: 27 }
)";

}  // namespace

BOOST_AUTO_TEST_SUITE(import)

BOOST_AUTO_TEST_CASE(text_nodes_inputs_attrs_and_versions) {
  auto g = import_graph_text(kTwoNodes);
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  BOOST_TEST(g->num_nodes() == 2);
  NodeId b = g->find("b");
  BOOST_REQUIRE(b != kNoNode);
  const Node& n = g->node(b);
  BOOST_TEST(n.inputs.size() == 1u);
  BOOST_TEST(g->endpoint_name(n.inputs[0]) == "a");
  BOOST_TEST(n.control_inputs.size() == 1u);
  BOOST_TEST(g->node(n.control_inputs[0]).name == "a");
  BOOST_TEST((*n.attr<ops::DType>("T") == ops::DType::float32));
  BOOST_TEST(g->node(g->find("a")).attr<ops::Tensor>("value")->scalar_value<float>() == 2.0f);
  BOOST_TEST(g->versions().producer == 27);
}

BOOST_AUTO_TEST_CASE(inputs_may_name_later_nodes_and_ports) {
  auto g = import_graph_text(R"(
    node { name: "m" op: "Merge" input: "e" input: "n:0" }
    node { name: "s" op: "Switch" input: "m:1" input: "m" }
    node { name: "n" op: "NextIteration" input: "s:1" }
    node { name: "e" op: "Enter" input: "c" }
    node { name: "c" op: "Const" })");
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  const Node& s = g->node(g->find("s"));
  BOOST_TEST(g->endpoint_name(s.inputs[0]) == "m:1");
  BOOST_TEST(s.inputs[1].port == 0);
  BOOST_TEST(g->endpoint_name(g->node(g->find("m")).inputs[1]) == "n");
}

BOOST_AUTO_TEST_CASE(malformed_text_reports_file_line_and_column) {
  std::string e = import_error("node {\n  name: \"a\"\n  op: \"Const\"\n  inputt: \"x\"\n}\n");
  BOOST_TEST(contains(e, "parse_error"), e);
  BOOST_TEST(contains(e, "bad.pbtxt:4:"), e);
  BOOST_TEST(contains(e, "inputt"), e);
  std::string e2 = import_error("node {\n  name: \"a\"\n  op: \"Const\"\n");
  BOOST_TEST(contains(e2, "bad.pbtxt:4:1:"), e2);
}

BOOST_AUTO_TEST_CASE(an_input_naming_a_missing_node_is_an_error) {
  std::string e = import_error("node { name: \"b\" op: \"Identity\" input: \"nope:1\" }");
  BOOST_TEST(contains(e, "bad.pbtxt: node 'b' input 0 'nope:1' names a missing node 'nope'"), e);
  std::string c = import_error("node { name: \"b\" op: \"NoOp\" input: \"^gone\" }");
  BOOST_TEST(contains(c, "names a missing node 'gone'"), c);
}

BOOST_AUTO_TEST_CASE(malformed_inputs_are_errors) {
  const char* cases[][2] = {
      {"a:x", "is malformed"}, {"a:", "is malformed"}, {":1", "has no node name"},
      {"a:-1", "negative port"}, {"^", "has no node name"}, {"^a:1", "control input with a port"},
      {"a:1:2", "is malformed"}, {"a:99999999999", "is malformed"},
  };
  for (auto& [input, message] : cases) {
    std::string e = import_error(std::string("node { name: \"a\" op: \"NoOp\" }\n") +
                                 "node { name: \"b\" op: \"NoOp\" input: \"" + input + "\" }");
    BOOST_TEST(contains(e, "node 'b' input 0"), e);
    BOOST_TEST(contains(e, message), input << " -> " << e);
  }
}

BOOST_AUTO_TEST_CASE(a_data_input_after_a_control_input_is_an_error) {
  std::string e = import_error(
      "node { name: \"a\" op: \"NoOp\" }\n"
      "node { name: \"b\" op: \"Identity\" input: \"^a\" input: \"a\" }");
  BOOST_TEST(contains(e, "node 'b' input 1 'a' is a data input after a control input"), e);
}

BOOST_AUTO_TEST_CASE(duplicate_and_nameless_nodes_are_errors) {
  std::string e = import_error("node { name: \"a\" op: \"NoOp\" }\nnode { name: \"a\" op: \"NoOp\" }");
  BOOST_TEST(contains(e, "node 'a' is defined twice"), e);
  BOOST_TEST(contains(import_error("node { op: \"NoOp\" }"), "node #0 has no name"));
  BOOST_TEST(contains(import_error("node { name: \"x\" }"), "node 'x' has no op"));
  BOOST_TEST(contains(import_error("node { name: \"x:1\" op: \"NoOp\" }"), "contains ':'"));
}

BOOST_AUTO_TEST_CASE(a_bad_tensor_attr_names_node_and_attr) {
  std::string e = import_error(
      "node { name: \"c\" op: \"Const\" attr { key: \"value\" value { tensor {\n"
      "  dtype: DT_FLOAT tensor_shape { dim { size: 2 } } tensor_content: \"abc\" } } } }");
  BOOST_TEST(contains(e, "node 'c' attr 'value': TensorProto tensor_content has 3 bytes"), e);
}

BOOST_AUTO_TEST_CASE(an_empty_file_is_an_error) {
  std::string path = "/tmp/tagflow_graph_test_empty.pb";
  { std::FILE* f = std::fopen(path.c_str(), "wb"); std::fclose(f); }
  auto g = import_graph_file(path);
  std::remove(path.c_str());
  BOOST_REQUIRE(!g.ok());
  BOOST_TEST((g.status().code() == Error::parse_error));
  BOOST_TEST(contains(g.status().message(), path + ": empty file"), g.status().message());
  BOOST_TEST(contains(binary_error(""), "empty file"));
}

BOOST_AUTO_TEST_CASE(a_blank_or_one_byte_file_is_an_error_not_an_empty_graph) {
  for (const char* text : {"\n", " ", "\t", "# a comment\n", "versions { producer: 27 }"}) {
    std::string e = binary_error(text);
    BOOST_TEST(contains(e, "parse_error: bad.pb: text GraphDef has no nodes and no functions"), e);
  }
  for (const char* one : {"x", "{", "\x08", "\x12", "\x01"}) {
    auto g = import_graph_bytes(one, "one.pb");
    BOOST_TEST(!g.ok(), "'" << one << "' imported");
    if (!g.ok()) BOOST_TEST((g.status().code() == Error::parse_error), g.status().to_string());
  }
  // A graph of functions only is a graph.
  BOOST_TEST(import_graph_text("library { function { signature { name: \"f\" } } }").ok());
}

BOOST_AUTO_TEST_CASE(constants_declaring_more_than_the_limit_are_refused_before_they_are_allocated) {
  // 1.7 KB declaring eight float32 constants of 1 GiB each.
  const std::string path = std::string(TAGFLOW_TEST_DATA) + "/bad/eight_gib_constants.pbtxt";
  ImportOptions limits;
  limits.max_constant_bytes = int64_t{4} << 30;
  auto g = import_graph_file(path, limits);
  BOOST_REQUIRE(!g.ok());
  BOOST_TEST((g.status().code() == Error::resource_exhausted));
  BOOST_TEST(g.status().message() ==
                 path + ": node 'c4' (Const) attr 'value' declares a float32 tensor of shape [268435456]: "
                        "1.0 GiB (1073741824 bytes); the graph's constants would take 5.0 GiB, over the limit "
                        "of 4.0 GiB (--memory-limit, [tagflow] memory-limit)",
             g.status().message());
  // Whatever the machine, the default refuses what no memory holds.
  std::string absurd = "node { name: \"c\" op: \"Const\" attr { key: \"value\" value { tensor { dtype: DT_DOUBLE "
                       "tensor_shape { dim { size: 4294967296 } dim { size: 4294967296 } } } } } }";
  std::string e = import_error(absurd);
  BOOST_TEST(contains(e, "resource_exhausted: bad.pbtxt: node 'c' (Const) attr 'value' declares a float64 tensor "
                         "of shape [4294967296,4294967296]"), e);
  // Constants of the function library count too.
  std::string in_function =
      "library { function { signature { name: \"f\" output_arg { name: \"o\" type: DT_FLOAT } } "
      "node_def { name: \"k\" op: \"Const\" attr { key: \"value\" value { tensor { dtype: DT_FLOAT "
      "tensor_shape { dim { size: 1048576 } } float_val: 1 } } } } ret { key: \"o\" value: \"k:output:0\" } } }";
  limits.max_constant_bytes = int64_t{1} << 20;
  auto f = import_graph_text(in_function, "f.pbtxt", limits);
  BOOST_REQUIRE(!f.ok());
  BOOST_TEST(contains(f.status().message(), "f.pbtxt: function 'f': node 'k' (Const) attr 'value' declares a float32 "
                                            "tensor of shape [1048576]: 4.0 MiB"),
             f.status().message());
  limits.max_constant_bytes = int64_t{4} << 20;
  BOOST_TEST(import_graph_text(in_function, "f.pbtxt", limits).ok());
}

BOOST_AUTO_TEST_CASE(a_graph_with_more_nodes_than_the_limit_is_refused) {
  ImportOptions limits;
  limits.max_nodes = 1;
  auto g = import_graph_text(kTwoNodes, "two.pbtxt", limits);
  BOOST_REQUIRE(!g.ok());
  BOOST_TEST(g.status().to_string() ==
             "resource_exhausted: two.pbtxt: the graph has 2 nodes, over the limit of 1 (--max-nodes, [tagflow] max-nodes)");
  limits.max_nodes = 2;
  BOOST_TEST(import_graph_text(kTwoNodes, "two.pbtxt", limits).ok());
}

BOOST_AUTO_TEST_CASE(a_missing_file_is_not_found) {
  auto g = import_graph_file("/nonexistent/graph.pbtxt");
  BOOST_REQUIRE(!g.ok());
  BOOST_TEST((g.status().code() == Error::not_found));
  BOOST_TEST(contains(g.status().message(), "/nonexistent/graph.pbtxt"));
}

BOOST_AUTO_TEST_CASE(a_truncated_pb_is_a_parse_error) {
  std::string bytes = read_bytes(corpus_path("grappler_while_loop.pb"));
  BOOST_REQUIRE(bytes.size() > 100);
  for (size_t cut : {bytes.size() / 2, bytes.size() - 1, size_t{40}}) {
    std::string e = binary_error(bytes.substr(0, cut));
    BOOST_TEST(contains(e, "parse_error: bad.pb: "), cut << ": " << e);
    BOOST_TEST(contains(e, "truncated or corrupt"), cut << ": " << e);
  }
}

BOOST_AUTO_TEST_CASE(garbage_is_a_parse_error) {
  std::string garbage;
  uint32_t x = 12345;
  for (int i = 0; i < 4096; ++i) {
    x = x * 1103515245u + 12345u;
    garbage += static_cast<char>(x >> 24);
  }
  std::string e = binary_error(garbage);
  BOOST_TEST(contains(e, "parse_error: bad.pb: "), e);
  // Bytes that happen to decode but hold no graph are not a silent empty graph.
  std::string e2 = binary_error(std::string("\x18\x05", 2));  // only GraphDef.version = 5
  BOOST_TEST(contains(e2, "no nodes and no functions"), e2);
  std::string e3 = binary_error(std::string("\x0d\x01\x02\x03\x04", 5));  // node as fixed32
  BOOST_TEST(contains(e3, "wrong wire type"), e3);
}

BOOST_AUTO_TEST_CASE(cut_or_corrupted_binaries_never_crash) {
  // protobuf logs invalid UTF-8 in string fields; keep the test output clean.
  google::protobuf::LogHandler* previous = google::protobuf::SetLogHandler(nullptr);
  uint32_t x = 2024;
  auto next = [&] { return x = x * 1664525u + 1013904223u; };
  int imported = 0, refused = 0;
  for (const std::string& pb : corpus_files(".pb")) {
    const std::string bytes = read_bytes(corpus_path(pb));
    for (size_t cut = 1; cut < bytes.size(); cut += 7) {
      auto g = import_graph_bytes(bytes.substr(0, cut), pb);
      (g.ok() ? imported : refused) += 1;
      if (!g.ok())
        BOOST_TEST((g.status().code() == Error::parse_error ||
                    g.status().code() == Error::invalid_graph),
                   g.status().to_string());
    }
    for (int round = 0; round < 300; ++round) {
      std::string corrupt = bytes;
      for (int flips = 1 + next() % 4; flips > 0; --flips)
        corrupt[next() % corrupt.size()] = static_cast<char>(next() >> 24);
      auto g = import_graph_bytes(corrupt, pb);
      if (!g.ok()) {
        ++refused;
        continue;
      }
      ++imported;
      ops::OpRegistry nothing;
      ValidateOptions lenient;
      lenient.allow_unknown_ops = true;
      lenient.registry = &nothing;
      (void)validate(*g, lenient);
      (void)analyze_control_flow(*g);
      (void)graph_to_text(*g);
    }
  }
  google::protobuf::SetLogHandler(previous);
  BOOST_TEST_MESSAGE("corrupted binaries: " << imported << " imported, " << refused << " refused");
  BOOST_TEST(refused > 0);
}

BOOST_AUTO_TEST_CASE(binary_twins_equal_their_text) {
  auto twins = corpus_files(".pb");
  BOOST_TEST(twins.size() >= 5u);
  for (const std::string& pb : twins) {
    std::string stem = pb.substr(0, pb.size() - 3);
    Graph binary = load_corpus(pb);
    Graph text = load_corpus(stem + ".pbtxt");
    std::string diff;
    BOOST_TEST(binary.equals(text, &diff), pb << ": " << diff);
  }
}

BOOST_AUTO_TEST_CASE(meta_graph_and_saved_model_containers_yield_their_graph) {
  Graph g = load_corpus("tfnet_cond_test.pbtxt");
  tensorflow::MetaGraphDef meta;
  graph_to_proto(g, meta.mutable_graph_def());
  // meta_info_def (field 1) and saver_def (field 3), unknown to tagflow's schema.
  std::string meta_bytes = std::string("\x0a\x04\x0a\x02v1", 6) + meta.SerializeAsString() +
                           std::string("\x1a\x02\x08\x01", 4);
  auto from_meta = import_graph_bytes(meta_bytes, "x.meta");
  BOOST_REQUIRE_MESSAGE(from_meta.ok(), from_meta.status().to_string());
  BOOST_TEST(from_meta->equals(g));

  tensorflow::SavedModel model;
  model.set_saved_model_schema_version(1);
  *model.add_meta_graphs() = meta;
  model.add_meta_graphs();
  auto from_model = import_graph_bytes(model.SerializeAsString(), "saved_model.pb");
  BOOST_REQUIRE_MESSAGE(from_model.ok(), from_model.status().to_string());
  BOOST_TEST(from_model->equals(g));
}

BOOST_AUTO_TEST_CASE(text_and_binary_are_told_apart_by_content) {
  Graph g = load_corpus("mlir_graph_while_loop.pbtxt");
  std::string path = "/tmp/tagflow_graph_test_detect.pbtxt";  // binary despite the name
  { std::FILE* f = std::fopen(path.c_str(), "wb");
    std::string bytes = graph_to_binary(g);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f); }
  auto back = import_graph_file(path);
  std::remove(path.c_str());
  BOOST_REQUIRE_MESSAGE(back.ok(), back.status().to_string());
  BOOST_TEST(back->equals(g));
  // A text file with a stray control byte still gets a text error.
  std::string text;
  for (int i = 0; i < 20; ++i) text += "node {\n  name: \"n" + std::to_string(i) + "\"\n  op: \"NoOp\"\n}\n";
  text.insert(text.find("n7") + 3, "\x01");
  std::string e = binary_error(text);
  BOOST_TEST(contains(e, "bad.pb:30:"), e);
}

BOOST_AUTO_TEST_CASE(crlf_comments_and_bom_are_accepted) {
  auto g = import_graph_text("\xEF\xBB\xBF# leading comment\r\nnode {\r\n  name: \"a\" # inside\r\n"
                             "  op: \"NoOp\"\r\n}\r\n# trailing");
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  BOOST_TEST(g->num_nodes() == 1);
}

BOOST_AUTO_TEST_CASE(debug_info_and_library_are_kept) {
  Graph g = load_corpus("mlir_graph_while_loop.pbtxt");
  const Node& next = g.node(g.find("while/NextIteration"));
  BOOST_TEST((next.debug_info != nullptr && !next.debug_info->original_node_names.empty()));
  Graph f = load_corpus("grappler_function_switch.pbtxt");
  BOOST_TEST(f.library().function_size() == 1);
  BOOST_TEST(f.has_function("MyAdd_MPaeanipb7o"));
  BOOST_TEST(f.versions().producer == 26);
  BOOST_TEST(f.versions().min_consumer == 12);
}

// Found by fuzz/import_text: protobuf's text parser takes any bytes into a
// proto3 string field (raw, or escaped as "\327"), the binary decoder does
// not; such a graph imported from text could not be written as a .pb that
// imports again.
BOOST_AUTO_TEST_CASE(invalid_utf8_in_a_text_string_field_is_refused) {
  const std::string raw = "node { name: \"x\" op: \"NoOp\" device: \"/job:a/\xd7" "eplica:0\" }";
  BOOST_TEST(import_error(raw) == "parse_error: bad.pbtxt: string field node[0].device is not valid UTF-8");
  const std::string escaped = "node { name: \"x\" op: \"No\\377Op\" }";
  BOOST_TEST(import_error(escaped) == "parse_error: bad.pbtxt: string field node[0].op is not valid UTF-8");
  const std::string in_library =
      "node { name: \"x\" op: \"NoOp\" }\n"
      "library { function { signature { name: \"f\\xff\" } } }";
  BOOST_TEST(import_error(in_library) ==
             "parse_error: bad.pbtxt: string field library.function[0].signature.name is not valid UTF-8");
  // UTF-8 itself is fine, in any string field.
  BOOST_TEST(import_error("node { name: \"\xc3\xa9t\xc3\xa9\" op: \"NoOp\" device: \"\xe2\x82\xac\" }") ==
             "<no error>");
  // Attr strings are bytes, not UTF-8.
  BOOST_TEST(import_error("node { name: \"x\" op: \"NoOp\" attr { key: \"s\" value { s: \"\\377\" } } }") ==
             "<no error>");
}

// Found by fuzz/import_binary: a binary library's unknown fields were kept,
// and the text export printed them as `14: 0x54010a07`, which no text
// parser reads back.
BOOST_AUTO_TEST_CASE(unknown_fields_of_a_binary_library_do_not_reach_the_text_export) {
  tensorflow::GraphDef def;
  tensorflow::NodeDef* n = def.add_node();
  n->set_name("x");
  n->set_op("NoOp");
  tensorflow::FunctionDef* f = def.mutable_library()->add_function();
  f->mutable_signature()->set_name("f");
  tensorflow::NodeDef* body = f->add_node_def();
  body->set_name("y");
  body->set_op("NoOp");
  body->GetReflection()->MutableUnknownFields(body)->AddFixed32(14, 0x54010a07);
  auto g = import_graph_binary(def.SerializeAsString(), "unknown.pb");
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  BOOST_TEST(g->library().function(0).node_def(0).name() == "y");
  auto again = import_graph_text(graph_to_text(*g), "exported.pbtxt");
  BOOST_REQUIRE_MESSAGE(again.ok(), again.status().to_string());
  std::string difference;
  BOOST_TEST(again->equals(*g, &difference), difference);
}

BOOST_AUTO_TEST_CASE(the_large_lstm_graph_imports_quickly) {
  auto start = std::chrono::steady_clock::now();
  Graph g = load_corpus("tfnet_lstm_crf_ner_train.pbtxt");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  BOOST_TEST(g.num_nodes() == 3337);
  BOOST_TEST_MESSAGE("LSTM pbtxt (2 MB) imported in " << seconds << " s");
  BOOST_TEST(seconds < 5.0);  // well under 1 s optimised; generous for sanitizer builds
}

BOOST_AUTO_TEST_SUITE_END()
