// Implementation selection on a small hand-written FunctionDefLibrary in
// Keras's shape: calls of the GPU implementation of an interface — a
// PartitionedCall's `f`, a direct call, a call inside another function's
// body — are pointed at the CPU one; other calls, lone implementations and
// implementations whose signatures differ are left alone.
#include <boost/test/unit_test.hpp>

#include "graph/functions/implementation_selection.hpp"
#include "graph/io/import.hpp"
#include "graph/proto/graph_def.pb.h"

using namespace tagflow;
using namespace tagflow::graph;

namespace {

std::string attr_s(const std::string& key, const std::string& value) {
  return "attr { key: \"" + key + "\" value { s: \"" + value + "\" } } ";
}

// int32 -> int32 (or `out_type`) through an Identity.
std::string function(const std::string& name, const std::string& attrs, const std::string& out_type = "DT_INT32") {
  return "function { signature { name: \"" + name + "\" input_arg { name: \"a\" type: DT_INT32 } "
         "output_arg { name: \"out\" type: " + out_type + " } } " + attrs +
         " ret { key: \"out\" value: \"a\" } }\n";
}

std::string implements(const std::string& interface, const std::string& device) {
  return attr_s("api_implements", interface) + (device.empty() ? "" : attr_s("api_preferred_device", device));
}

const std::string kCallAttrs =
    "attr { key: \"Tin\" value { list { type: DT_INT32 } } } attr { key: \"Tout\" value { list { type: DT_INT32 } } } ";

std::string pcall(const std::string& name, const std::string& f) {
  return "node { name: \"" + name + "\" op: \"PartitionedCall\" input: \"x\" " + kCallAttrs +
         "attr { key: \"f\" value { func { name: \"" + f + "\" } } } }\n";
}

Graph parse(const std::string& text) {
  auto g = import_graph_text(text, "test");
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

std::string called(const Graph& g, const std::string& node) {
  const Node& n = g.node(g.find(node));
  if (const auto* f = n.attr<ops::NameAttrList>("f")) return f->name;
  return n.op;
}

const tensorflow::FunctionDef& function_named(const Graph& g, const std::string& name) {
  for (const auto& f : g.library().function())
    if (f.signature().name() == name) return f;
  throw std::runtime_error("no function " + name);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(implementation_selection)

BOOST_AUTO_TEST_CASE(calls_of_the_gpu_implementation_go_to_the_cpu_one) {
  const std::string wrapper =
      "function { signature { name: \"layer_call\" input_arg { name: \"a\" type: DT_INT32 } "
      "output_arg { name: \"out\" type: DT_INT32 } } "
      "node_def { name: \"inner\" op: \"PartitionedCall\" input: \"a\" " + kCallAttrs +
      "attr { key: \"f\" value { func { name: \"gpu_lstm_with_fallback\" } } } } "
      "node_def { name: \"direct\" op: \"gpu_lstm_with_fallback\" input: \"a\" } "
      "ret { key: \"out\" value: \"inner:output:0\" } }\n";
  Graph g = parse("node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_INT32 } } }\n" +
                  pcall("pc", "gpu_lstm_with_fallback") + pcall("layer", "layer_call") +
                  pcall("other", "gru_gpu") +
                  "node { name: \"direct\" op: \"gpu_lstm_with_fallback\" input: \"x\" }\n"
                  "library { " +
                  function("gpu_lstm_with_fallback", implements("lstm_7", "GPU")) +
                  function("standard_lstm", implements("lstm_7", "CPU")) +
                  // Another interface: a GPU one and one with no preference.
                  function("gru_gpu", implements("gru_3", "GPU")) + function("gru_any", implements("gru_3", "")) +
                  wrapper + "}");
  BOOST_TEST(select_implementations(&g) == 5);
  BOOST_TEST(called(g, "pc") == "standard_lstm");
  BOOST_TEST(called(g, "direct") == "standard_lstm");
  BOOST_TEST(called(g, "layer") == "layer_call");
  BOOST_TEST(called(g, "other") == "gru_any");
  const auto& body = function_named(g, "layer_call");
  BOOST_TEST(body.node_def(0).attr().at("f").func().name() == "standard_lstm");
  BOOST_TEST(body.node_def(1).op() == "standard_lstm");
  // Selection is idempotent.
  BOOST_TEST(select_implementations(&g) == 0);
}

BOOST_AUTO_TEST_CASE(lone_or_mismatched_implementations_and_forward_functions_are_left_alone) {
  Graph g = parse("node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_INT32 } } }\n" +
                  pcall("lone", "only_gpu") + pcall("mismatch", "gpu_float") + pcall("forward", "fwd_gpu") +
                  "library { " + function("only_gpu", implements("a", "GPU")) +
                  function("gpu_float", implements("b", "GPU")) +
                  function("cpu_float", implements("b", "CPU"), "DT_FLOAT") +
                  // A forward function pairs only with another forward one.
                  function("fwd_gpu", implements("c", "GPU") + attr_s("backward_function_name", "bwd")) +
                  function("inference_cpu", implements("c", "CPU")) + "}");
  BOOST_TEST(select_implementations(&g) == 0);
  BOOST_TEST(called(g, "lone") == "only_gpu");
  BOOST_TEST(called(g, "mismatch") == "gpu_float");
  BOOST_TEST(called(g, "forward") == "fwd_gpu");
}

BOOST_AUTO_TEST_SUITE_END()
