// The one view of a functional node (graph/functions/functional_op.hpp): the kind,
// the callees in their roles and the inputs the op reads itself, for every
// functional op of the corpus and for hand-made nodes; a missing function
// attr is one error that names the node, its op and the attr.
#include <boost/test/unit_test.hpp>

#include "graph/functions/function_library.hpp"
#include "graph/functions/functional_op.hpp"
#include "graph/graph_test_util.hpp"
#include "graph/io/import.hpp"
#include "graph/proto/graph_def.pb.h"

using namespace tagflow;
using namespace tagflow::graph;
using namespace tagflow::graph::testing;

namespace {

ops::NameAttrList func(const std::string& name) {
  ops::NameAttrList f;
  f.name = name;
  return f;
}

Node node(const std::string& op, ops::AttrMap attrs) {
  Node n;
  n.name = "n";
  n.op = op;
  n.attrs = std::move(attrs);
  return n;
}

Graph load_functional(const std::string& file) {
  auto g = import_graph_file(std::string(TAGFLOW_TEST_DATA) + "/functional/" + file);
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

std::vector<std::string> roles(const FunctionalOp& op) {
  std::vector<std::string> out;
  for (const FunctionalCallee& c : op.callees) out.push_back(c.role);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(functional_op)

BOOST_AUTO_TEST_CASE(each_kind_reads_its_callees_in_their_roles) {
  auto if_op = read_functional_op(
      node("StatelessIf", {{"then_branch", func("t")}, {"else_branch", func("e")}}), FunctionalKind::if_op);
  BOOST_REQUIRE(if_op.ok());
  BOOST_TEST(roles(*if_op) == (std::vector<std::string>{"then_branch", "else_branch"}));
  BOOST_TEST(if_op->leading_inputs == 1);
  BOOST_TEST(if_op->is_branch());
  // A taken branch: 1 is the predicate true.
  BOOST_TEST(if_op->branch(1).func.name == "t");
  BOOST_TEST(if_op->branch(0).func.name == "e");

  ops::AttrList branches;
  branches.func = {func("b0"), func("b1"), func("b2")};
  auto case_op = read_functional_op(node("Case", {{"branches", branches}}), FunctionalKind::case_op);
  BOOST_REQUIRE(case_op.ok());
  BOOST_TEST(roles(*case_op) == (std::vector<std::string>{"branch 0", "branch 1", "branch 2"}));
  BOOST_TEST(case_op->branch(2).func.name == "b2");
  BOOST_TEST(case_op->leading_inputs == 1);

  auto while_op =
      read_functional_op(node("While", {{"cond", func("c")}, {"body", func("b")}}), FunctionalKind::while_op);
  BOOST_REQUIRE(while_op.ok());
  BOOST_TEST(roles(*while_op) == (std::vector<std::string>{"cond", "body"}));
  BOOST_TEST(while_op->callee("body")->func.name == "b");
  BOOST_TEST(while_op->callee("then_branch") == nullptr);
  BOOST_TEST(while_op->leading_inputs == 0);
  BOOST_TEST(while_op->is_loop());

  auto for_op = read_functional_op(node("For", {{"body", func("b")}}), FunctionalKind::for_op);
  BOOST_REQUIRE(for_op.ok());
  BOOST_TEST(for_op->leading_inputs == 3);

  auto call = read_functional_op(node("PartitionedCall", {{"f", func("g")}}), FunctionalKind::partitioned_call);
  BOOST_REQUIRE(call.ok());
  BOOST_TEST(roles(*call) == (std::vector<std::string>{"function"}));
  BOOST_TEST(call->callees[0].func.name == "g");

  // A call of a library function: the function is its op, called with its attrs.
  auto direct = read_functional_op(node("my_fn", {{"T", ops::DType::float32}}), FunctionalKind::call);
  BOOST_REQUIRE(direct.ok());
  BOOST_TEST(direct->callees[0].func.name == "my_fn");
  BOOST_TEST(direct->callees[0].func.attr.count("T") == 1u);

  auto none = read_functional_op(node("Add", {}), FunctionalKind::none);
  BOOST_REQUIRE(none.ok());
  BOOST_TEST(none->callees.empty());
}

BOOST_AUTO_TEST_CASE(a_missing_function_attr_names_the_node_op_and_attr) {
  auto s = read_functional_op(node("If", {{"then_branch", func("t")}}), FunctionalKind::if_op);
  BOOST_REQUIRE(!s.ok());
  BOOST_TEST(s.status().code() == Error::invalid_graph);
  BOOST_TEST(s.status().message() == "If 'n': attr 'else_branch' is missing or not a func");

  auto c = read_functional_op(node("Case", {{"branches", ops::AttrList{}}}), FunctionalKind::case_op);
  BOOST_REQUIRE(!c.ok());
  BOOST_TEST(contains(c.status().message(), "'branches' is missing or not a non-empty list(func)"));

  // A func attr of the wrong type is as good as missing.
  auto w = read_functional_op(node("While", {{"cond", func("c")}, {"body", int64_t{3}}}), FunctionalKind::while_op);
  BOOST_REQUIRE(!w.ok());
  BOOST_TEST(contains(w.status().message(), "While 'n': attr 'body'"));
}

BOOST_AUTO_TEST_CASE(every_functional_node_of_the_test_graphs_reads_and_its_callees_are_in_the_library) {
  int seen = 0;
  for (const char* file : {"case.pbtxt", "for.pbtxt", "if_float.pbtxt", "if_in_while.pbtxt", "nested_while.pbtxt",
                           "while_in_if.pbtxt", "while_sum.pbtxt", "variable_in_call.pbtxt"}) {
    Graph g = load_functional(file);
    FunctionLibrary lib(g.library());
    for (const Node& n : g.nodes()) {
      const FunctionalKind kind = functional_kind(n, lib);
      BOOST_TEST(is_functional(n, lib) == (kind != FunctionalKind::none));
      if (kind == FunctionalKind::none) continue;
      auto op = read_functional_op(n, lib);
      BOOST_REQUIRE_MESSAGE(op.ok(), file << ": " << op.status().to_string());
      BOOST_TEST((op->kind == kind));
      BOOST_TEST(!op->callees.empty());
      for (const FunctionalCallee& c : op->callees)
        BOOST_TEST(lib.find(c.func.name) != nullptr, file << ": " << n.name << " " << c.role << " " << c.func.name);
      ++seen;
    }
  }
  BOOST_TEST(seen >= 8);
}

BOOST_AUTO_TEST_SUITE_END()
