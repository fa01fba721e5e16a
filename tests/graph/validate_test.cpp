#include <boost/test/unit_test.hpp>

#include "graph/io/import.hpp"
#include "graph/validate.hpp"
#include "graph_test_util.hpp"

using namespace tagflow;
using namespace tagflow::graph;
using namespace tagflow::graph::testing;
using ops::DType;
using ops::OpDef;
using ops::OpRole;

namespace {

// A small registry of the ops these tests use, independent of the built-in
// one, so that the validation logic is tested on its own.
const ops::OpRegistry& test_registry() {
  static const ops::OpRegistry* r = [] {
    auto* reg = new ops::OpRegistry;
    auto add = [&](OpDef def) {
      Status s = reg->add(std::move(def));
      if (!s.ok()) throw std::runtime_error(s.to_string());
    };
    add(OpDef("Const").output("output: dtype").attr("value", "tensor").type_attr("dtype"));
    add(OpDef("Placeholder").output("output: dtype").type_attr("dtype")
            .attr("shape", "shape", ops::PartialShape{true, {}}));
    add(OpDef("Identity").input("input: T").output("output: T").type_attr("T"));
    add(OpDef("Add").input("x: T").input("y: T").output("z: T")
            .type_attr("T", {DType::float32, DType::int32}));
    add(OpDef("Less").input("x: T").input("y: T").output("z: bool").type_attr("T"));
    add(OpDef("NoOp"));
    add(OpDef("VariableV2").output("ref: Ref(dtype)").type_attr("dtype").attr("shape", "shape"));
    add(OpDef("Assign").input("ref: Ref(T)").input("value: T").output("output_ref: Ref(T)")
            .type_attr("T"));
    add(OpDef("Enter").input("data: T").output("output: T").type_attr("T")
            .attr("frame_name", "string").attr("is_constant", "bool", false)
            .attr("parallel_iterations", "int", int64_t{10}).role(OpRole::enter));
    add(OpDef("Merge").input("inputs: N * T").output("output: T").output("value_index: int32")
            .type_attr("T").attr("N", "int", std::nullopt, 1).role(OpRole::merge));
    add(OpDef("Switch").input("data: T").input("pred: bool").output("output_false: T")
            .output("output_true: T").type_attr("T").role(OpRole::switch_op));
    add(OpDef("LoopCond").input("input: bool").output("output: bool").role(OpRole::loop_cond));
    add(OpDef("NextIteration").input("data: T").output("output: T").type_attr("T")
            .role(OpRole::next_iteration));
    add(OpDef("Exit").input("data: T").output("output: T").type_attr("T").role(OpRole::exit));
    return reg;
  }();
  return *r;
}

Graph parse(const std::string& text) {
  auto g = import_graph_text(text, "test.pbtxt");
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

Status check(const std::string& text, bool allow_unknown_ops = false) {
  Graph g = parse(text);
  ValidateOptions options;
  options.registry = &test_registry();
  options.allow_unknown_ops = allow_unknown_ops;
  return validate(g, options);
}

std::string const_node(const std::string& name, const std::string& dtype = "DT_FLOAT",
                       const std::string& extra = "") {
  return "node { name: \"" + name + "\" op: \"Const\" " + extra +
         "attr { key: \"dtype\" value { type: " + dtype + " } } "
         "attr { key: \"value\" value { tensor { dtype: " + dtype + " tensor_shape {} } } } }\n";
}

std::string typed(const std::string& name, const std::string& op, const std::string& inputs,
                  const std::string& t = "DT_FLOAT", const std::string& more = "") {
  return "node { name: \"" + name + "\" op: \"" + op + "\" " + inputs +
         " attr { key: \"T\" value { type: " + t + " } } " + more + "}\n";
}

// i = 0; while i < 10: i = i + 1, as TensorFlow writes it.
std::string while_loop() {
  return const_node("zero", "DT_INT32") +
         typed("Enter", "Enter", "input: \"zero\"", "DT_INT32",
               "attr { key: \"frame_name\" value { s: \"loop\" } }") +
         typed("Merge", "Merge", "input: \"Enter\" input: \"Next\"", "DT_INT32",
               "attr { key: \"N\" value { i: 2 } }") +
         const_node("ten", "DT_INT32", "input: \"^Merge\" ") +
         typed("Less", "Less", "input: \"Merge\" input: \"ten\"", "DT_INT32") +
         "node { name: \"LoopCond\" op: \"LoopCond\" input: \"Less\" }\n" +
         typed("Switch", "Switch", "input: \"Merge\" input: \"LoopCond\"", "DT_INT32") +
         typed("Body", "Identity", "input: \"Switch:1\"", "DT_INT32") +
         const_node("one", "DT_INT32", "input: \"^Body\" ") +
         typed("Add", "Add", "input: \"Body\" input: \"one\"", "DT_INT32") +
         typed("Next", "NextIteration", "input: \"Add\"", "DT_INT32") +
         typed("Exit", "Exit", "input: \"Switch\"", "DT_INT32");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(validate_)

BOOST_AUTO_TEST_CASE(a_valid_graph_is_completed) {
  Graph g = parse(const_node("a") + typed("b", "Identity", "input: \"a\"") +
                  "node { name: \"p\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_INT32 } } }");
  ValidateOptions options;
  options.registry = &test_registry();
  Status s = validate(g, options);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.to_string());
  const Node& b = g.node(g.find("b"));
  BOOST_TEST(b.def == test_registry().find("Identity"));
  BOOST_TEST((b.input_types == std::vector<DType>{DType::float32}));
  BOOST_TEST((b.output_types == std::vector<DType>{DType::float32}));
  const Node& p = g.node(g.find("p"));
  BOOST_TEST(p.attr<ops::PartialShape>("shape") != nullptr);  // default added
  BOOST_TEST(g.num_outputs(g.find("a")) == 1);
  BOOST_TEST(g.out_edges(g.find("a")).size() == 1u);
}

BOOST_AUTO_TEST_CASE(unknown_op) {
  Status s = check(const_node("a") + "node { name: \"x\" op: \"Foo\" input: \"a\" }");
  BOOST_TEST((s.code() == Error::not_found));
  BOOST_TEST(s.message() == "unknown op 'Foo' in node 'x'");
  // allow_unknown_ops: the unknown op is accepted, whatever ports are used of it.
  Status lenient = check(const_node("a") + "node { name: \"x\" op: \"Foo\" input: \"a\" }" +
                         typed("y", "Identity", "input: \"x:5\""), true);
  BOOST_TEST(lenient.ok(), lenient.to_string());
}

BOOST_AUTO_TEST_CASE(missing_port) {
  Status s = check(const_node("a") + typed("b", "Identity", "input: \"a:3\""));
  BOOST_TEST((s.code() == Error::invalid_graph));
  BOOST_TEST(s.message() == "node 'b' input 0 names port 'a:3' but Const 'a' has 1 output", s.message());
}

BOOST_AUTO_TEST_CASE(wrong_arity) {
  Status s = check(const_node("a") + typed("x", "Add", "input: \"a\" input: \"a\" input: \"a\""));
  BOOST_TEST((s.code() == Error::invalid_graph));
  BOOST_TEST(s.message() == "node 'x' (Add) has 3 data inputs but op Add takes 2", s.message());
  Status one = check(const_node("a") + typed("x", "Add", "input: \"a\""));
  BOOST_TEST(contains(one.message(), "has 1 data input but op Add takes 2"), one.message());
}

BOOST_AUTO_TEST_CASE(missing_attr) {
  Status s = check(const_node("a") + "node { name: \"b\" op: \"Identity\" input: \"a\" }");
  BOOST_TEST((s.code() == Error::invalid_argument));
  BOOST_TEST(contains(s.message(), "node 'b' (Identity)"), s.message());
  BOOST_TEST(contains(s.message(), "attr 'T'"), s.message());
}

BOOST_AUTO_TEST_CASE(ill_typed_attr) {
  Status s = check(const_node("a") +
                   "node { name: \"b\" op: \"Identity\" input: \"a\" attr { key: \"T\" value { i: 3 } } }");
  BOOST_TEST(contains(s.message(), "node 'b' (Identity)"), s.message());
  BOOST_TEST(contains(s.message(), "attr 'T'"), s.message());
  BOOST_TEST(contains(s.message(), "must be type, got int 3"), s.message());
  Status t = check(const_node("a", "DT_STRING") + typed("x", "Add", "input: \"a\" input: \"a\"", "DT_STRING"));
  BOOST_TEST(contains(t.message(), "node 'x' (Add)"), t.message());
  BOOST_TEST(contains(t.message(), "not one of"), t.message());
}

BOOST_AUTO_TEST_CASE(dtype_mismatch) {
  Status s = check(const_node("f") + const_node("i", "DT_INT32") +
                   typed("x", "Add", "input: \"f\" input: \"i\""));
  BOOST_TEST((s.code() == Error::invalid_argument));
  BOOST_TEST(s.message() ==
                 "node 'x' (Add) input 1 expects float32 but 'i' (Const) produces int32",
             s.message());
}

BOOST_AUTO_TEST_CASE(ref_outputs_feed_plain_inputs_but_not_the_reverse) {
  std::string var = "node { name: \"v\" op: \"VariableV2\" attr { key: \"dtype\" value { type: DT_FLOAT } } "
                    "attr { key: \"shape\" value { shape {} } } }\n";
  BOOST_TEST(check(var + typed("read", "Identity", "input: \"v\"")).ok());
  BOOST_TEST(check(var + const_node("c") + typed("set", "Assign", "input: \"v\" input: \"c\"")).ok());
  Status s = check(const_node("c") + typed("set", "Assign", "input: \"c\" input: \"c\""));
  BOOST_TEST(contains(s.message(), "expects float32_ref but 'c' (Const) produces float32"), s.message());
}

BOOST_AUTO_TEST_CASE(a_cycle_without_next_iteration) {
  Status s = check(const_node("a") + typed("m", "Add", "input: \"a\" input: \"y\"") +
                   typed("x", "Identity", "input: \"m\"") + typed("y", "Identity", "input: \"x\""));
  BOOST_TEST((s.code() == Error::invalid_graph));
  BOOST_TEST(contains(s.message(), "cycle that does not pass through a NextIteration -> Merge edge"),
             s.message());
  BOOST_TEST(contains(s.message(), "'m' -> 'x' -> 'y' -> 'm'"), s.message());
}

BOOST_AUTO_TEST_CASE(a_control_edge_cycle_is_a_cycle_too) {
  Status s = check("node { name: \"a\" op: \"NoOp\" input: \"^b\" }\n"
                   "node { name: \"b\" op: \"NoOp\" input: \"^a\" }");
  BOOST_TEST(contains(s.message(), "'a' -> 'b' -> 'a'"), s.message());
}

BOOST_AUTO_TEST_CASE(a_while_loop_is_valid) {
  Status s = check(while_loop());
  BOOST_TEST(s.ok(), s.to_string());
}

BOOST_AUTO_TEST_CASE(a_next_iteration_into_a_non_merge_does_not_excuse_a_cycle) {
  // Next feeds Identity 'x' which feeds Next: no Merge on the cycle.
  Status s = check(const_node("a") + typed("x", "Add", "input: \"a\" input: \"n\"") +
                   typed("n", "NextIteration", "input: \"x\""));
  BOOST_TEST(contains(s.message(), "cycle"), s.message());
}

BOOST_AUTO_TEST_CASE(function_calls_are_checked_against_their_signature) {
  std::string lib = R"(
    library { function { signature { name: "f" input_arg { name: "x" type: DT_FLOAT }
                                      output_arg { name: "y" type: DT_FLOAT } }
                         ret { key: "y" value: "x" } } })";
  BOOST_TEST(check(const_node("a") + "node { name: \"call\" op: \"f\" input: \"a\" }\n" +
                   typed("use", "Identity", "input: \"call\"") + lib).ok());
  Status arity = check(const_node("a") + "node { name: \"call\" op: \"f\" input: \"a\" input: \"a\" }" + lib);
  BOOST_TEST(contains(arity.message(),
                      "node 'call' calls function 'f', which takes 1 input, but has 2 data inputs"),
             arity.message());
  Status port = check(const_node("a") + "node { name: \"call\" op: \"f\" input: \"a\" }\n" +
                      typed("use", "Identity", "input: \"call:1\"") + lib);
  BOOST_TEST(contains(port.message(), "names port 'call:1' but f 'call' has 1 output"), port.message());
  Status dtype = check(const_node("a", "DT_INT32") + "node { name: \"call\" op: \"f\" input: \"a\" }" + lib);
  BOOST_TEST(contains(dtype.message(), "expects float32 but 'a' (Const) produces int32"), dtype.message());
}

BOOST_AUTO_TEST_CASE(a_failed_validation_changes_nothing) {
  Graph g = parse(const_node("a") + typed("b", "Identity", "input: \"a\"") +
                  "node { name: \"x\" op: \"Foo\" }");
  Graph before = g;
  ValidateOptions options;
  options.registry = &test_registry();
  BOOST_TEST(!validate(g, options).ok());
  BOOST_TEST(g.equals(before));
  BOOST_TEST(g.node(g.find("b")).def == nullptr);
}

BOOST_AUTO_TEST_CASE(validation_is_idempotent) {
  Graph g = parse(while_loop());
  ValidateOptions options;
  options.registry = &test_registry();
  BOOST_REQUIRE(validate(g, options).ok());
  Graph once = g;
  BOOST_REQUIRE(validate(g, options).ok());
  BOOST_TEST(g.equals(once));
  BOOST_TEST(*g.node(g.find("Enter")).attr<int64_t>("parallel_iterations") == 10);
}

BOOST_AUTO_TEST_SUITE_END()
