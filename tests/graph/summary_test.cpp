// What `tagflow inspect` says of a graph's library functions: the ops with
// no kernel in each body, and whether the graph's nodes, or given fetches,
// reach the function — through calls, branches and bodies of other
// functions, after implementation selection.
#include <boost/test/unit_test.hpp>

#include "graph/analysis/control_flow.hpp"
#include "graph/io/import.hpp"
#include "graph/summary.hpp"
#include "graph/validate.hpp"

using namespace tagflow;
using namespace tagflow::graph;

namespace {

std::string function(const std::string& name, const std::string& body_op, const std::string& attrs = "") {
  return "function { signature { name: '" + name + "' input_arg { name: 'a' type: DT_INT32 } "
         "output_arg { name: 'out' type: DT_INT32 } } " + attrs +
         " node_def { name: 'n' op: '" + body_op + "' input: 'a' } ret { key: 'out' value: 'a' } }\n";
}

std::string call(const std::string& name, const std::string& f, const std::string& input = "x") {
  return "node { name: '" + name + "' op: 'PartitionedCall' input: '" + input + "' "
         "attr { key: 'Tin' value { list { type: DT_INT32 } } } "
         "attr { key: 'Tout' value { list { type: DT_INT32 } } } "
         "attr { key: 'f' value { func { name: '" + f + "' } } } }\n";
}

GraphSummary summary_of(const std::string& text, const std::vector<std::string>& fetches) {
  auto g = import_graph_text(text, "<summary test>");
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  ValidateOptions v;
  v.allow_unknown_ops = true;
  Status s = validate(*g, v);
  if (!s.ok()) throw std::runtime_error(s.to_string());
  auto cf = analyze_control_flow(*g);
  if (!cf.ok()) throw std::runtime_error(cf.status().to_string());
  auto summary = summarize(*g, *cf, fetches);
  if (!summary.ok()) throw std::runtime_error(summary.status().to_string());
  return std::move(summary).value();
}

const FunctionSummary* find(const GraphSummary& s, const std::string& name) {
  for (const FunctionSummary& f : s.functions_without_kernels)
    if (f.name == name) return &f;
  return nullptr;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(summary)

BOOST_AUTO_TEST_CASE(functions_list_their_ops_without_kernels_and_who_reaches_them) {
  // serve → outer → (If) then 'branch' (Unknown1); save → saver (NoKernelSave,
  // twice); 'orphan' (Unknown2) is called by nobody; 'neg' has kernels.
  const std::string outer =
      "function { signature { name: 'outer' input_arg { name: 'a' type: DT_INT32 } "
      "output_arg { name: 'out' type: DT_INT32 } } "
      "node_def { name: 'p' op: 'Const' attr { key: 'dtype' value { type: DT_BOOL } } "
      "attr { key: 'value' value { tensor { dtype: DT_BOOL tensor_shape {} bool_val: true } } } } "
      "node_def { name: 'if' op: 'If' input: 'p:output:0' input: 'a' "
      "attr { key: 'Tcond' value { type: DT_BOOL } } attr { key: 'Tin' value { list { type: DT_INT32 } } } "
      "attr { key: 'Tout' value { list { type: DT_INT32 } } } "
      "attr { key: 'then_branch' value { func { name: 'branch' } } } "
      "attr { key: 'else_branch' value { func { name: 'neg' } } } } "
      "ret { key: 'out' value: 'if:output:0' } }\n";
  const std::string saver =
      "function { signature { name: 'saver' input_arg { name: 'a' type: DT_INT32 } "
      "output_arg { name: 'out' type: DT_INT32 } } "
      "node_def { name: 's1' op: 'NoKernelSave' input: 'a' } node_def { name: 's2' op: 'NoKernelSave' input: 'a' } "
      "ret { key: 'out' value: 'a' } }\n";
  const std::string text = "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } }\n" +
                           call("serve", "outer") + call("save", "saver") + "library { " + outer + saver +
                           function("branch", "Unknown1") + function("orphan", "Unknown2") +
                           function("neg", "Neg") + "}";
  GraphSummary all = summary_of(text, {});
  BOOST_TEST(all.num_functions == 5);
  BOOST_TEST(all.num_reachable_functions == 4);  // all but orphan
  BOOST_REQUIRE(all.functions_without_kernels.size() == 3u);
  BOOST_TEST(find(all, "neg") == nullptr);
  BOOST_REQUIRE(find(all, "saver") != nullptr);
  BOOST_TEST(find(all, "saver")->ops_without_kernel == std::vector<std::string>{"NoKernelSave (2)"});
  BOOST_TEST(find(all, "saver")->reachable);
  BOOST_TEST(find(all, "branch")->reachable);
  BOOST_TEST(!find(all, "orphan")->reachable);
  BOOST_TEST(to_text(all).find("orphan (not reachable): Unknown2 (1)") != std::string::npos, to_text(all));

  GraphSummary served = summary_of(text, {"serve:0"});
  BOOST_TEST(served.num_reachable_from_fetches == 3);  // outer, branch, neg
  BOOST_TEST(find(served, "branch")->reachable_from_fetches);
  BOOST_TEST(!find(served, "saver")->reachable_from_fetches);
  BOOST_TEST(to_text(served).find("saver (reachable, not from the fetches): NoKernelSave (2)") != std::string::npos,
             to_text(served));
  BOOST_CHECK_THROW(summary_of(text, {"nope"}), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(a_gpu_implementation_the_selection_replaces_is_not_reached) {
  const std::string text =
      "node { name: 'x' op: 'Placeholder' attr { key: 'dtype' value { type: DT_INT32 } } }\n" + call("layer", "gpu") +
      "library { " +
      function("gpu", "CudnnRNN",
               "attr { key: 'api_implements' value { s: 'lstm_1' } } "
               "attr { key: 'api_preferred_device' value { s: 'GPU' } }") +
      function("cpu", "Unknown3",
               "attr { key: 'api_implements' value { s: 'lstm_1' } } "
               "attr { key: 'api_preferred_device' value { s: 'CPU' } }") + "}";
  GraphSummary s = summary_of(text, {});
  BOOST_TEST(!find(s, "gpu")->reachable);
  BOOST_TEST(find(s, "cpu")->reachable);
}

BOOST_AUTO_TEST_SUITE_END()
