// Lowering of functional control flow: what it emits for calls, If, While
// and Case (and that the result validates and has the expected frames), and
// the errors that name the function or node.
#include <boost/test/unit_test.hpp>

#include "graph/analysis/control_flow.hpp"
#include "graph/functions/function_instantiator.hpp"
#include "graph/functions/function_library.hpp"
#include "graph/functions/lower_functional.hpp"
#include "graph/graph_test_util.hpp"
#include "graph/io/import.hpp"
#include "graph/proto/graph_def.pb.h"
#include "graph/step_graph.hpp"
#include "graph/validate.hpp"

using namespace tagflow;
using namespace tagflow::graph;
using namespace tagflow::graph::testing;

namespace {

Graph load_functional(const std::string& file) {
  auto g = import_graph_file(std::string(TAGFLOW_TEST_DATA) + "/functional/" + file);
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

Graph parse(const std::string& text) {
  auto g = import_graph_text(text, "test");
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

// Lowers and validates; fails the test on an error.
Graph lowered(Graph g) {
  Status s = lower_functional_ops(&g);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.to_string());
  BOOST_TEST(!has_functional_ops(g));
  Status v = validate(g);
  BOOST_REQUIRE_MESSAGE(v.ok(), v.to_string());
  return g;
}

const Node& node_named(const Graph& g, const std::string& name) {
  NodeId id = g.find(name);
  if (id == kNoNode) throw std::runtime_error("no node " + name);
  return g.node(id);
}

int ops_named(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.op == op;
  return n;
}

// The error of lowering `text`; fails the test if lowering succeeds.
std::string lowering_error(const std::string& text) {
  Graph g = parse(text);
  Status s = lower_functional_ops(&g);
  BOOST_REQUIRE(!s.ok());
  return s.message();
}

std::string t(const std::string& key, const std::string& dt) {
  return "attr { key: \"" + key + "\" value { type: " + dt + " } } ";
}
std::string tl(const std::string& key, const std::string& types) {
  return "attr { key: \"" + key + "\" value { list { " + types + " } } } ";
}
std::string fn(const std::string& key, const std::string& name) {
  return "attr { key: \"" + key + "\" value { func { name: \"" + name + "\" } } } ";
}
// A function of int32 args returning its first arg plus one (or `ret`).
std::string int_func(const std::string& name, int inputs, const std::string& out_type = "DT_INT32",
                     const std::string& ret = "") {
  std::string s = "function { signature { name: \"" + name + "\"";
  for (int i = 0; i < inputs; ++i) s += " input_arg { name: \"a" + std::to_string(i) + "\" type: DT_INT32 }";
  s += " output_arg { name: \"out\" type: " + out_type + " } }";
  if (out_type == "DT_INT32") {
    s += " node_def { name: \"add\" op: \"AddV2\" input: \"a0\" input: \"a0\" " + t("T", "DT_INT32") + "}";
  } else {
    s += " node_def { name: \"add\" op: \"Cast\" input: \"a0\" " + t("SrcT", "DT_INT32") +
         t("DstT", out_type) + "}";
  }
  s += " ret { key: \"out\" value: \"" + (ret.empty() ? "add:z:0" : ret) + "\" } }\n";
  if (out_type != "DT_INT32" && ret.empty()) s.replace(s.find("add:z:0"), 7, "add:y:0");
  return s;
}
const std::string kInputs =
    "node { name: \"p\" op: \"Placeholder\" " + t("dtype", "DT_BOOL") + "}\n" +
    "node { name: \"x\" op: \"Placeholder\" " + t("dtype", "DT_INT32") + "}\n";

}  // namespace

BOOST_AUTO_TEST_SUITE(lower_functional)

BOOST_AUTO_TEST_CASE(a_graph_without_functional_ops_is_unchanged) {
  Graph g = load_corpus("grappler_merge_without_loops.pbtxt");
  Graph before = g;
  BOOST_TEST(!has_functional_ops(g));
  BOOST_REQUIRE(lower_functional_ops(&g).ok());
  BOOST_TEST(g.equals(before));
}

BOOST_AUTO_TEST_CASE(a_function_call_is_inlined_under_its_name) {
  Graph g = lowered(load_corpus("grappler_function_switch.pbtxt"));
  const Node& call = node_named(g, "MyAdd_MPaeanipb7o");
  BOOST_TEST(call.op == "Identity");
  BOOST_REQUIRE(call.inputs.size() == 1u);
  const Node& add = g.node(call.inputs[0].node);
  BOOST_TEST(add.name == "MyAdd_MPaeanipb7o/Add");
  BOOST_TEST(add.op == "Add");
  // Its inputs are the call's arguments, each an Identity of the caller's input.
  BOOST_TEST(g.node(add.inputs[0].node).name == "MyAdd_MPaeanipb7o/x");
  BOOST_TEST(g.node(g.node(add.inputs[0].node).inputs[0].node).name == "case/cond/Merge");
  BOOST_TEST(g.node(add.inputs[1].node).name == "MyAdd_MPaeanipb7o/y");
}

BOOST_AUTO_TEST_CASE(out_of_order_body_nodes_and_named_outputs_resolve_to_ports) {
  // foo's body lists cond/Switch_1 before its input cond/Switch_1/Switch,
  // and reads `cond/Switch:output_true:0` (port 1) and `output_false` (port 0).
  Graph g = parse(read_bytes(corpus_path("tfg_backedge_segment_cond_in_function.pbtxt")) +
                  kInputs + "node { name: \"call\" op: \"foo\" input: \"p\" input: \"x\" }\n");
  g = lowered(std::move(g));
  const Node& switch_t = node_named(g, "call/cond/switch_t");
  BOOST_TEST(g.node(switch_t.inputs[0].node).name == "call/cond/Switch");
  BOOST_TEST(switch_t.inputs[0].port == 1);
  const Node& merge = node_named(g, "call/cond/Merge");
  BOOST_TEST(g.node(merge.inputs[1].node).name == "call/cond/Switch_1");
  BOOST_TEST(merge.inputs[1].port == 1);
  BOOST_TEST(node_named(g, "call/cond/add").inputs[0].port == 0);
  // The body constant waits for the call's inputs.
  const Node& y = node_named(g, "call/cond/add/y");
  BOOST_TEST(y.control_inputs.size() == 1u);  // its own ^cond/switch_f
}

BOOST_AUTO_TEST_CASE(an_if_becomes_switches_branches_and_merges) {
  Graph g = lowered(load_corpus("ov_injected_body_and_if_v2.pbtxt"));
  const Node& out = node_named(g, "If");
  BOOST_TEST(out.op == "Identity");
  const Node& merge = g.node(out.inputs[0].node);
  BOOST_TEST(merge.op == "Merge");
  BOOST_TEST(g.node(merge.inputs[0].node).name == "If/else");
  BOOST_TEST(g.node(merge.inputs[1].node).name == "If/then");
  // Each input is switched on the predicate; the then-branch reads port 1.
  const Node& then_add = node_named(g, "If/then/add_0");
  const Node& then_x = g.node(then_add.inputs[0].node);
  BOOST_TEST(then_x.op == "Identity");
  const Node& sw = g.node(then_x.inputs[0].node);
  BOOST_TEST(sw.op == "Switch");
  BOOST_TEST(then_x.inputs[0].port == 1);
  BOOST_TEST(g.node(sw.inputs[0].node).name == "x");
  // The else branch's own call is inlined too; its constant depends on the
  // call's inputs, so it stays on its branch.
  const Node& pow_y = node_named(g, "If/else/aux_func_GmpkxbsU4WI/pow/y");
  BOOST_REQUIRE(pow_y.control_inputs.size() == 1u);
  BOOST_TEST(g.node(pow_y.control_inputs[0]).op == "NoOp");
  // The branch calls wait for their pivots.
  const Node& then_control = node_named(g, "If/then/input_control");
  BOOST_TEST(then_control.control_inputs.size() == 2u);  // both arguments
  BOOST_TEST(node_named(g, "If/then/x").control_inputs.size() == 1u);
  BOOST_TEST(g.node(node_named(g, "If/then/x").control_inputs[0]).name == "If/pivot_t");
}

BOOST_AUTO_TEST_CASE(a_while_becomes_a_frame_named_after_it) {
  Graph g = load_functional("while_sum.pbtxt");
  g.mutable_node(g.find("While")).attrs["parallel_iterations"] = int64_t{3};
  g = lowered(std::move(g));
  BOOST_TEST(node_named(g, "While").op == "IdentityN");
  BOOST_TEST(ops_named(g, "Enter") == 3);
  BOOST_TEST(ops_named(g, "Exit") == 3);
  BOOST_TEST(ops_named(g, "NextIteration") == 3);
  BOOST_TEST(ops_named(g, "LoopCond") == 1);
  const Node& enter = node_named(g, "While/enter_0");
  BOOST_TEST(*enter.attr<std::string>("frame_name") == "While");
  BOOST_TEST(*enter.attr<int64_t>("parallel_iterations") == 3);
  const Node& merge = node_named(g, "While/merge_0");
  BOOST_TEST(g.node(merge.inputs[1].node).op == "NextIteration");
  auto cf = analyze_control_flow(g);
  BOOST_REQUIRE_MESSAGE(cf.ok(), cf.status().to_string());
  FrameId frame = cf->find_frame("While");
  BOOST_REQUIRE(frame >= 0);
  BOOST_TEST(g.node(cf->frames[static_cast<size_t>(frame)].pivot).name == "While/loop_cond");
  // The body's constant runs in the loop's frame, once per iteration.
  BOOST_TEST(cf->frame_of[static_cast<size_t>(g.find("While/body/one"))] == frame);
}

BOOST_AUTO_TEST_CASE(nested_whiles_give_nested_frames) {
  Graph g = lowered(load_functional("nested_while.pbtxt"));
  auto cf = analyze_control_flow(g);
  BOOST_REQUIRE_MESSAGE(cf.ok(), cf.status().to_string());
  FrameId outer = cf->find_frame("While");
  FrameId inner = cf->find_frame("While/body/inner");
  BOOST_REQUIRE(outer >= 0);
  BOOST_REQUIRE(inner >= 0);
  BOOST_TEST(cf->frames[static_cast<size_t>(inner)].parent == outer);
}

BOOST_AUTO_TEST_CASE(a_case_switches_every_input_on_the_clamped_index) {
  Graph g = lowered(load_functional("case.pbtxt"));
  BOOST_TEST(ops_named(g, "_SwitchN") == 2);  // the pivot and x
  const Node& sw = node_named(g, "Case/switch_0");
  BOOST_TEST(*sw.attr<int64_t>("num_outs") == 3);
  BOOST_TEST(node_named(g, "Case/merge_0").inputs.size() == 3u);
  const Node& c = node_named(g, "Case/branch_2/c");
  BOOST_REQUIRE(c.control_inputs.size() == 1u);
}

BOOST_AUTO_TEST_CASE(attr_placeholders_and_list_arguments_are_resolved) {
  std::string text = kInputs +
      "node { name: \"call\" op: \"twice\" input: \"x\" input: \"x\" " + t("T", "DT_INT32") +
      "attr { key: \"N\" value { i: 2 } } }\n"
      "library { function { signature { name: \"twice\" input_arg { name: \"xs\" type_attr: \"T\" "
      "number_attr: \"N\" } output_arg { name: \"out\" type_attr: \"T\" number_attr: \"N\" } "
      "attr { name: \"T\" type: \"type\" } attr { name: \"N\" type: \"int\" } }"
      " node_def { name: \"id\" op: \"IdentityN\" input: \"xs\" attr { key: \"T\" value { list { "
      "type: DT_INT32 type: DT_INT32 } } } }"
      " node_def { name: \"sum\" op: \"AddV2\" input: \"id:output:0\" input: \"xs:1\" "
      "attr { key: \"T\" value { placeholder: \"T\" } } }"
      " ret { key: \"out\" value: \"id:output\" } } }\n";
  Graph g = lowered(parse(text));
  const Node& sum = node_named(g, "call/sum");
  BOOST_TEST((*sum.attr<ops::DType>("T") == ops::DType::int32));
  BOOST_TEST(node_named(g, "call").op == "IdentityN");
  BOOST_TEST(node_named(g, "call").inputs.size() == 2u);
  BOOST_TEST(node_named(g, "call").inputs[1].port == 1);
}

BOOST_AUTO_TEST_CASE(error_if_branches_with_different_signatures) {
  std::string text = kInputs + "node { name: \"If\" op: \"If\" input: \"p\" input: \"x\" " +
                     t("Tcond", "DT_BOOL") + tl("Tin", "type: DT_INT32") + tl("Tout", "type: DT_INT32") +
                     fn("then_branch", "good") + fn("else_branch", "bad") + "}\nlibrary { " +
                     int_func("good", 1) + int_func("bad", 1, "DT_FLOAT") + "}";
  std::string m = lowering_error(text);
  BOOST_TEST(m.find("If 'If': else_branch 'bad' returns (float32) but then_branch 'good' returns (int32)") !=
             std::string::npos, m);
  // Both agree, but not with Tout.
  std::string text2 = text;
  text2.replace(text2.find("\"bad\" } } }"), 5, "\"good\"");
  text2.replace(text2.find("type: DT_INT32 } } } attr { key: \"then"), 14, "type: DT_INT64");
  m = lowering_error(text2);
  BOOST_TEST(m.find("then_branch 'good' returns (int32) but Tout is (int64)") != std::string::npos, m);
  // A branch taking another number of inputs than Tin.
  std::string text3 = kInputs + "node { name: \"If\" op: \"If\" input: \"p\" input: \"x\" " +
                      t("Tcond", "DT_BOOL") + tl("Tin", "type: DT_INT32") + tl("Tout", "type: DT_INT32") +
                      fn("then_branch", "two") + fn("else_branch", "two") + "}\nlibrary { " +
                      int_func("two", 2) + "}";
  m = lowering_error(text3);
  BOOST_TEST(m.find("then_branch 'two' takes (int32, int32) but Tin is (int32)") != std::string::npos, m);
}

std::string while_text(const std::string& cond, const std::string& body, const std::string& lib) {
  return kInputs + "node { name: \"loop\" op: \"While\" input: \"x\" input: \"x\" " +
         tl("T", "type: DT_INT32 type: DT_INT32") + fn("cond", cond) + fn("body", body) +
         "}\nlibrary { " + lib + "}";
}

std::string two_var_body(const std::string& name, const std::string& second_type) {
  return "function { signature { name: \"" + name + "\" input_arg { name: \"a\" type: DT_INT32 } "
         "input_arg { name: \"b\" type: DT_INT32 } output_arg { name: \"a1\" type: DT_INT32 } "
         "output_arg { name: \"b1\" type: " + second_type + " } } node_def { name: \"c\" op: \"Cast\" "
         "input: \"b\" " + t("SrcT", "DT_INT32") + t("DstT", second_type) + "} ret { key: \"a1\" "
         "value: \"a\" } ret { key: \"b1\" value: \"c:y:0\" } }\n";
}

std::string less_cond(const std::string& name, int inputs) {
  std::string s = "function { signature { name: \"" + name + "\"";
  for (int i = 0; i < inputs; ++i) s += " input_arg { name: \"a" + std::to_string(i) + "\" type: DT_INT32 }";
  return s + " output_arg { name: \"p\" type: DT_BOOL } } node_def { name: \"lt\" op: \"Less\" "
             "input: \"a0\" input: \"a0\" " + t("T", "DT_INT32") + "} ret { key: \"p\" value: \"lt:z:0\" } }\n";
}

BOOST_AUTO_TEST_CASE(error_wrong_number_of_loop_variables) {
  std::string m = lowering_error(
      while_text("c3", "b", less_cond("c3", 3) + two_var_body("b", "DT_INT32")));
  BOOST_TEST(m.find("While 'loop': cond 'c3' takes inputs: 3 but the While has 2 loop variables (T)") !=
             std::string::npos, m);
  m = lowering_error(while_text("c2", "b1", less_cond("c2", 2) + int_func("b1", 2)));
  BOOST_TEST(m.find("While 'loop': body 'b1' returns outputs: 1 but the While has 2 loop variables (T)") !=
             std::string::npos, m);
}

BOOST_AUTO_TEST_CASE(error_a_body_that_changes_a_loop_variable_dtype) {
  std::string m = lowering_error(
      while_text("c2", "b", less_cond("c2", 2) + two_var_body("b", "DT_FLOAT")));
  BOOST_TEST(m.find("While 'loop': body 'b' changes the dtype of loop variable 1 from int32 to float32") !=
             std::string::npos, m);
}

BOOST_AUTO_TEST_CASE(error_recursion_in_the_function_library) {
  std::string text = kInputs + "node { name: \"call\" op: \"f\" input: \"x\" }\nlibrary { "
      "function { signature { name: \"f\" input_arg { name: \"a\" type: DT_INT32 } output_arg { name: \"o\" type: DT_INT32 } }"
      " node_def { name: \"g_call\" op: \"g\" input: \"a\" } ret { key: \"o\" value: \"g_call:o:0\" } }"
      "function { signature { name: \"g\" input_arg { name: \"a\" type: DT_INT32 } output_arg { name: \"o\" type: DT_INT32 } }"
      " node_def { name: \"f_call\" op: \"f\" input: \"a\" } ret { key: \"o\" value: \"f_call:o:0\" } } }";
  std::string m = lowering_error(text);
  BOOST_TEST(m.find("recursion in the function library: 'f' -> 'g' -> 'f' (through node 'call' → function 'f' → "
                    "node 'g_call' → function 'g' → node 'f_call')") !=
             std::string::npos, m);
}

BOOST_AUTO_TEST_CASE(error_a_call_to_a_missing_function) {
  std::string text = kInputs + "node { name: \"If\" op: \"If\" input: \"p\" input: \"x\" " +
                     t("Tcond", "DT_BOOL") + tl("Tin", "type: DT_INT32") + tl("Tout", "type: DT_INT32") +
                     fn("then_branch", "f") + fn("else_branch", "nope") + "}\nlibrary { " + int_func("f", 1) + "}";
  std::string m = lowering_error(text);
  BOOST_TEST(m.find("If 'If': else_branch 'nope', which is not in the function library") != std::string::npos, m);
  std::string call = kInputs + "node { name: \"pc\" op: \"PartitionedCall\" input: \"x\" " +
                     tl("Tin", "type: DT_INT32") + tl("Tout", "type: DT_INT32") + fn("f", "missing") +
                     "}\nlibrary { " + int_func("f", 1) + "}";
  m = lowering_error(call);
  BOOST_TEST(m.find("PartitionedCall 'pc': calls function 'missing', which is not in the function library") !=
             std::string::npos, m);
}

BOOST_AUTO_TEST_CASE(error_a_body_reference_that_names_nothing) {
  std::string base = kInputs + "node { name: \"call\" op: \"f\" input: \"x\" }\nlibrary { ";
  std::string m = lowering_error(base + int_func("f", 1, "DT_INT32", "add:w:0") + "}");
  BOOST_TEST(m.find("node 'call' → function 'f' → ret 'out' 'add:w:0' names no output 'w' of 'add' (AddV2 has outputs: z)") !=
             std::string::npos, m);
  m = lowering_error(base + int_func("f", 1, "DT_INT32", "add:z:1") + "}");
  BOOST_TEST(m.find("names index 1 of output 'z' of 'add', which has 1 tensor") != std::string::npos, m);
  m = lowering_error(base + int_func("f", 1, "DT_INT32", "sub:z:0") + "}");
  BOOST_TEST(m.find("'sub:z:0' names no node or argument 'sub'") != std::string::npos, m);
}

BOOST_AUTO_TEST_CASE(error_a_call_with_the_wrong_number_of_inputs) {
  std::string m = lowering_error(kInputs + "node { name: \"call\" op: \"f\" input: \"x\" input: \"x\" }\n"
                                 "library { " + int_func("f", 1) + "}");
  BOOST_TEST(m.find("f 'call': calls function 'f' with 2 inputs but it takes 1") != std::string::npos, m);
}

// f0 calls f1 twice, f1 calls f2 twice, ...: a few hundred bytes of
// library that inline to 2^24 calls. Lowering stops at the node limit.
BOOST_AUTO_TEST_CASE(nested_calls_that_multiply_the_graph_stop_at_the_node_limit) {
  const int levels = 24;
  std::string lib;
  for (int i = 0; i < levels; ++i) {
    const std::string f = "f" + std::to_string(i), g = "f" + std::to_string(i + 1);
    lib += "function { signature { name: \"" + f + "\" input_arg { name: \"a\" type: DT_INT32 } "
           "output_arg { name: \"o\" type: DT_INT32 } } "
           "node_def { name: \"l\" op: \"" + g + "\" input: \"a\" } "
           "node_def { name: \"r\" op: \"" + g + "\" input: \"a\" } "
           "node_def { name: \"s\" op: \"AddV2\" input: \"l:o:0\" input: \"r:o:0\" " + t("T", "DT_INT32") + "} "
           "ret { key: \"o\" value: \"s:z:0\" } }\n";
  }
  lib += int_func("f" + std::to_string(levels), 1, "DT_INT32", "add:z:0");
  lib.replace(lib.rfind("name: \"out\""), 12, "name: \"o\"");
  lib.replace(lib.rfind("key: \"out\""), 11, "key: \"o\"");
  Graph g = parse(kInputs + "node { name: \"call\" op: \"f0\" input: \"x\" }\nlibrary { " + lib + "}");
  Graph small = g;
  Status s = lower_functional_ops(&g, 5000);
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST((s.code() == Error::resource_exhausted));
  BOOST_TEST(s.message().find("takes the graph past the limit of 5000 nodes (--max-nodes, [tagflow] max-nodes)") !=
                 std::string::npos,
             s.message());
  // A graph within the limit lowers as before.
  Graph two = parse(kInputs + "node { name: \"call\" op: \"f" + std::to_string(levels - 2) +
                    "\" input: \"x\" }\nlibrary { " + lib + "}");
  BOOST_TEST(lower_functional_ops(&two, 5000).ok());
}

// A function whose body reads a named output of a node of an op tagflow
// does not know: instantiating it is an error (the output cannot be named).
std::string unknown_op_func(const std::string& name) {
  return "function { signature { name: \"" + name + "\" input_arg { name: \"a0\" type: DT_INT32 } "
         "output_arg { name: \"out\" type: DT_INT32 } } "
         "node_def { name: \"odd\" op: \"NoSuchOp\" input: \"a0\" } "
         "ret { key: \"out\" value: \"odd:output:0\" } }\n";
}

// A graph as a session holds it: validated, unknown ops allowed.
Graph session_graph(const std::string& text) {
  Graph g = parse(text);
  ValidateOptions v;
  v.allow_unknown_ops = true;
  Status s = validate(g, v);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.to_string());
  return g;
}

std::string step_error(const Graph& g, FunctionInstantiator& functions, const std::string& fetch) {
  auto step = make_step_graph(g, {"x"}, {fetch}, {}, &functions);
  BOOST_REQUIRE(!step.ok());
  return step.status().message();
}

BOOST_AUTO_TEST_CASE(only_the_functions_a_step_calls_are_instantiated) {
  const std::string text = kInputs +
      "node { name: \"used\" op: \"f\" input: \"x\" }\n"
      "node { name: \"unused\" op: \"bad\" input: \"x\" }\n"
      "node { name: \"stray\" op: \"AlsoUnknown\" input: \"x\" }\n"
      "library { " + int_func("f", 1) + unknown_op_func("bad") + "}";
  Graph g = session_graph(text);
  // The whole graph cannot be lowered: 'bad' cannot be instantiated.
  Graph whole = g;
  BOOST_TEST(!lower_functional_ops(&whole).ok());
  FunctionInstantiator functions(g);
  auto step = make_step_graph(g, {"x"}, {"used"}, {}, &functions);
  BOOST_REQUIRE_MESSAGE(step.ok(), step.status().to_string());
  BOOST_TEST(!has_functional_ops(step->graph));
  BOOST_TEST(node_named(step->graph, "used").op == "Identity");
  BOOST_TEST(node_named(step->graph, "used/add").op == "AddV2");
  BOOST_TEST(step->graph.find("unused") == kNoNode);
  BOOST_TEST(step->graph.find("stray") == kNoNode);
  // The called one is an error naming the call chain, only when a step needs it.
  std::string m = step_error(g, functions, "unused");
  BOOST_TEST(m.find("node 'unused' → function 'bad' → ret 'out' 'odd:output:0' names an output of 'odd', "
                    "whose op 'NoSuchOp' is not known") != std::string::npos, m);
  m = step_error(g, functions, "stray");
  BOOST_TEST(m.find("unknown op 'AlsoUnknown' in node 'stray'") != std::string::npos, m);
}

BOOST_AUTO_TEST_CASE(a_lowered_node_has_the_same_name_in_every_step) {
  // The call's body node "add" would be "c/add" — but the graph already
  // has a node of that name, which the first step does not keep.
  const std::string text = kInputs +
      "node { name: \"c\" op: \"f\" input: \"x\" }\n"
      "node { name: \"c/add\" op: \"Identity\" input: \"x\" " + t("T", "DT_INT32") + "}\n"
      "node { name: \"both\" op: \"AddV2\" input: \"c\" input: \"c/add\" " + t("T", "DT_INT32") + "}\n"
      "library { " + int_func("f", 1) + "}";
  Graph g = session_graph(text);
  FunctionInstantiator functions(g);
  auto first = make_step_graph(g, {"x"}, {"c"}, {}, &functions);
  BOOST_REQUIRE_MESSAGE(first.ok(), first.status().to_string());
  auto second = make_step_graph(g, {"x"}, {"both"}, {}, &functions);
  BOOST_REQUIRE_MESSAGE(second.ok(), second.status().to_string());
  BOOST_TEST(node_named(first->graph, "c/add_1").op == "AddV2");
  BOOST_TEST(node_named(second->graph, "c/add_1").op == "AddV2");
  BOOST_TEST(node_named(second->graph, "c/add").op == "Identity");
}

BOOST_AUTO_TEST_CASE(errors_in_nested_function_bodies_name_the_call_chain) {
  // loop (While) → body 'b' → node 'inner' (a call of h) → node 'm', whose
  // op tagflow does not know.
  const std::string h =
      "function { signature { name: \"h\" input_arg { name: \"a0\" type: DT_INT32 } "
      "output_arg { name: \"out\" type: DT_INT32 } control_output: \"m\" } "
      "node_def { name: \"m\" op: \"Mystery\" input: \"a0\" } ret { key: \"out\" value: \"a0\" } "
      "control_ret { key: \"m\" value: \"m\" } }\n";
  const std::string body =
      "function { signature { name: \"b\" input_arg { name: \"a0\" type: DT_INT32 } "
      "input_arg { name: \"a1\" type: DT_INT32 } output_arg { name: \"o0\" type: DT_INT32 } "
      "output_arg { name: \"o1\" type: DT_INT32 } } "
      "node_def { name: \"inner\" op: \"h\" input: \"a0\" } "
      "ret { key: \"o0\" value: \"inner:out:0\" } ret { key: \"o1\" value: \"a1\" } }\n";
  Graph g = session_graph(while_text("c2", "b", less_cond("c2", 2) + body + h));
  FunctionInstantiator functions(g);
  std::string m = step_error(g, functions, "loop");
  BOOST_TEST(m.find("unknown op 'Mystery' in node 'loop' → body 'b' → node 'inner' → function 'h' → node 'm'") !=
             std::string::npos, m);
  // Bad arity in a body: AddV2 with one input.
  const std::string one_input =
      "function { signature { name: \"f\" input_arg { name: \"a0\" type: DT_INT32 } "
      "output_arg { name: \"out\" type: DT_INT32 } } "
      "node_def { name: \"add\" op: \"AddV2\" input: \"a0\" " + t("T", "DT_INT32") + "} "
      "ret { key: \"out\" value: \"add:0\" } }\n";
  Graph call = session_graph(kInputs + "node { name: \"call\" op: \"f\" input: \"x\" }\nlibrary { " +
                             one_input + "}");
  FunctionInstantiator call_functions(call);
  m = step_error(call, call_functions, "call");
  BOOST_TEST(m.find("node 'call' → function 'f' → node 'add' (AddV2) has 1 data input") != std::string::npos, m);
  // A bad attr in a body, found by lowering a nested If.
  const std::string bad_if =
      "function { signature { name: \"g\" input_arg { name: \"a0\" type: DT_INT32 } "
      "output_arg { name: \"out\" type: DT_INT32 } } "
      "node_def { name: \"cond\" op: \"If\" input: \"a0\" input: \"a0\" " + t("Tcond", "DT_INT32") +
      tl("Tout", "type: DT_INT32") + fn("then_branch", "f") + fn("else_branch", "f") + "} "
      "ret { key: \"out\" value: \"cond:output:0\" } }\n";
  Graph nested = session_graph(kInputs + "node { name: \"call\" op: \"g\" input: \"x\" }\nlibrary { " +
                               bad_if + int_func("f", 1) + "}");
  FunctionInstantiator nested_functions(nested);
  m = step_error(nested, nested_functions, "call");
  BOOST_TEST(m.find("node 'call' → function 'g' → node 'cond' (If): attr 'Tin' is missing or not a list(type)") !=
             std::string::npos, m);
}

BOOST_AUTO_TEST_SUITE_END()
