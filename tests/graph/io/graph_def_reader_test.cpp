// The node-at-a-time GraphDef readers must accept and refuse exactly what
// parsing the whole GraphDef does, with the same graph or the same error.
#include <boost/test/unit_test.hpp>

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include "graph/graph_test_util.hpp"
#include "graph/io/import.hpp"
#include "graph/large_graphs.hpp"
#include "graph/proto/graph_def.pb.h"

using namespace tagflow;
using namespace tagflow::graph;
using namespace tagflow::graph::testing;

namespace {

namespace pb = google::protobuf;

// The whole text parsed at once by protobuf: the GraphDef, or the first
// error as FILE:LINE:COL (what import reported before it read by runs).
struct WholeParse {
  bool ok = false;
  tensorflow::GraphDef def;
  std::string error;
};

WholeParse parse_whole(const std::string& text, const std::string& source) {
  struct Collector : pb::io::ErrorCollector {
    std::string first, source;
    void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
      if (first.empty())
        first = source + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message;
    }
  } errors;
  errors.source = source;
  WholeParse out;
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  out.ok = parser.Parse(&input, &out.def);
  out.error = errors.first;
  return out;
}

// Import by runs agrees with the whole parse: same graph, or same error.
void check_same_as_whole(const std::string& text) {
  WholeParse whole = parse_whole(text, "t.pbtxt");
  auto g = import_graph_text(text, "t.pbtxt");
  if (!whole.ok) {
    BOOST_REQUIRE(!g.ok());
    BOOST_TEST(g.status().message() == whole.error);
    return;
  }
  auto expected = graph_from_proto(whole.def, "t.pbtxt");
  BOOST_REQUIRE_EQUAL(g.ok(), expected.ok());
  if (!g.ok()) {
    BOOST_TEST(g.status().message() == expected.status().message());
    return;
  }
  std::string difference;
  BOOST_TEST(g->equals(*expected, &difference), difference);
}

std::string noop(const std::string& name, const std::string& inputs = "") {
  return "node {\n  name: \"" + name + "\"\n  op: \"NoOp\"\n" + inputs + "}\n";
}

// Enough nodes for several runs of the text reader (256 KB each).
std::string many_noops(const std::string& prefix, int n) {
  std::string text;
  for (int i = 0; i < n; ++i) text += noop(prefix + std::to_string(i));
  return text;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(graph_def_reader)

BOOST_AUTO_TEST_CASE(every_corpus_graph_reads_as_the_whole_parse_does) {
  for (const std::string& file : corpus_files(".pbtxt")) {
    BOOST_TEST_CONTEXT(file) {
      const std::string text = read_bytes(corpus_path(file));
      check_same_as_whole(text);
      // And the binary twin of the same GraphDef, read field by field.
      WholeParse whole = parse_whole(text, file);
      BOOST_REQUIRE(whole.ok);
      auto binary = import_graph_binary(whole.def.SerializeAsString(), file);
      auto expected = graph_from_proto(whole.def, file);
      BOOST_REQUIRE(binary.ok() == expected.ok());
      std::string difference;
      if (binary.ok()) BOOST_TEST(binary->equals(*expected, &difference), difference);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_syntax_error_in_a_late_run_keeps_its_line_and_column) {
  std::string text = many_noops("a", 20000);  // ~900 KB: four runs
  text += "node {\n  name: \"bad\"\n  op: \"NoOp\"\n  oops: 1\n}\n";
  check_same_as_whole(text);
  auto g = import_graph_text(text, "t.pbtxt");
  BOOST_REQUIRE(!g.ok());
  BOOST_TEST(contains(g.status().message(), "t.pbtxt:80004:7: Message type \"tensorflow.NodeDef\" has no field named \"oops\""),
             g.status().message());
  // An unclosed node at the very end.
  check_same_as_whole(many_noops("b", 8000) + "node {\n  name: \"open\"\n");
}

BOOST_AUTO_TEST_CASE(fields_between_runs_are_read_in_order) {
  const std::string library =
      "library {\n  function {\n    signature {\n      name: \"f\"\n      deprecation {\n"
      "version: 3\n"  // a nested field at column 0 is no cut
      "      }\n    }\n  }\n}\n";
  check_same_as_whole(many_noops("a", 7000) + "versions {\n  producer: 27\n}\n" + library +
                      many_noops("b", 7000) + "version: 5\n" + many_noops("c", 10));
  // A singular field given twice with runs of nodes between: the error of
  // the whole parse.
  check_same_as_whole("versions { producer: 1 }\n" + many_noops("a", 7000) +
                      "versions { producer: 2 }\n" + many_noops("b", 10));
  check_same_as_whole("version: 4\n" + many_noops("a", 7000) + "version: 0\n");
}

BOOST_AUTO_TEST_CASE(unusual_layouts_read_like_the_whole_text) {
  // Nodes that do not start at column 0, several on one line, comments,
  // `node:` and `node <...>` spellings, CR-only line ends.
  check_same_as_whole("  node { name: \"a\" op: \"NoOp\" }\n" + noop("b"));
  check_same_as_whole("node { name: \"a\" op: \"NoOp\" } node { name: \"b\" op: \"NoOp\" } versions { producer: 3 }\n");
  check_same_as_whole("# comment\nnode: { name: \"a\" op: \"NoOp\" }  # trailing\nnode < name: \"b\" op: \"NoOp\" >\n");
  check_same_as_whole("node { name: \"a\" op: \"NoOp\" }\rnode { name: \"b\" op: \"NoOp\" }\r");
  check_same_as_whole("nodes { }\n" + noop("a"));  // an unknown field that starts like one
  check_same_as_whole(noop("a") + "node {\n  name: \"x\" node { }\n}\n");
}

BOOST_AUTO_TEST_CASE(errors_of_nodes_and_inputs_keep_their_precedence) {
  // A node error anywhere wins over an input error before it.
  check_same_as_whole(noop("a", "  input: \"nowhere\"\n") + many_noops("m", 7000) + noop("a"));
  // Of two input errors the first in node order wins, even when it names
  // a node that might still come (it does not) and the later one is
  // malformed at once.
  check_same_as_whole(noop("a", "  input: \"later\"\n") + many_noops("m", 7000) +
                      noop("b", "  input: \"a:x\"\n"));
  check_same_as_whole(noop("a", "  input: \"^m1\"\n  input: \"later\"\n") + many_noops("m", 7000) +
                      noop("later"));
  // Back edges: inputs that name later nodes resolve.
  check_same_as_whole(noop("a", "  input: \"^z\"\n") + many_noops("m", 7000) + noop("z", "  input: \"^a\"\n"));
}

BOOST_AUTO_TEST_CASE(a_binary_graph_def_is_read_field_by_field) {
  tensorflow::GraphDef def = chain_graph_def(5000);
  *def.mutable_library()->add_function()->mutable_signature()->mutable_name() = "f";
  std::string bytes = def.SerializeAsString();
  auto g = import_graph_binary(bytes, "chain.pb");
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  auto expected = graph_from_proto(def, "chain.pb");
  std::string difference;
  BOOST_TEST(g->equals(*expected, &difference), difference);
  BOOST_TEST(g->versions().producer == 27);
  // Cut inside a node: refused as the whole parse refuses it.
  auto cut = import_graph_binary(bytes.substr(0, bytes.size() / 2 + 3), "cut.pb");
  BOOST_REQUIRE(!cut.ok());
  BOOST_TEST(contains(cut.status().message(), "cut.pb: not a valid binary"), cut.status().message());
}

BOOST_AUTO_TEST_SUITE_END()
