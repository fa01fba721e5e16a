// The one builder of a function body as a graph of its own
// (graph/functions/body_graph.hpp): the default form a body run as written takes
// (_Arg and _Retval nodes, pruned by the one rule, validated) and the
// forms shape inference and functional gradients choose.
#include <boost/test/unit_test.hpp>

#include "graph/functions/body_graph.hpp"
#include "graph/io/import.hpp"

using namespace tagflow;
using namespace tagflow::graph;

namespace {

// f(a) = Neg(a); an unused Square of a; an Assert-free stateful node
// (a VarHandleOp) outside control_ret, which the one rule keeps.
const char* kGraph =
    "node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_INT32 } } }\n"
    "library { function { signature { name: \"f\" input_arg { name: \"a\" type: DT_INT32 } "
    "output_arg { name: \"out\" type: DT_INT32 } is_stateful: true } "
    "node_def { name: \"n\" op: \"Neg\" input: \"a\" attr { key: \"T\" value { type: DT_INT32 } } } "
    "node_def { name: \"unused\" op: \"Square\" input: \"a\" attr { key: \"T\" value { type: DT_INT32 } } } "
    "node_def { name: \"v\" op: \"VarHandleOp\" attr { key: \"dtype\" value { type: DT_INT32 } } "
    "attr { key: \"shape\" value { shape { } } } } "
    "ret { key: \"out\" value: \"n:y:0\" } } }";

Graph load() {
  auto g = import_graph_text(kGraph, "test");
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

ops::NameAttrList func(const std::string& name) {
  ops::NameAttrList f;
  f.name = name;
  return f;
}

bool has(const Graph& g, const std::string& name) { return g.find(name) != kNoNode; }

}  // namespace

BOOST_AUTO_TEST_SUITE(body_graph_builder)

BOOST_AUTO_TEST_CASE(the_default_form_is_args_retvals_and_the_one_pruning_rule) {
  Graph g = load();
  FunctionLibrary lib(g.library());
  auto b = body_graph(lib, func("f"), g);
  BOOST_REQUIRE_MESSAGE(b.ok(), b.status().to_string());
  BOOST_TEST(b->num_args == 1);
  BOOST_TEST(b->num_rets == 1);
  BOOST_TEST(b->stateful);
  BOOST_TEST(b->graph.node(b->args[0]).op == "_Arg");
  BOOST_TEST(has(b->graph, "_ret/0"));
  BOOST_TEST(b->graph.node(b->rets[0].node).name == "n");
  BOOST_TEST(!has(b->graph, "unused"));  // nothing needs it
  BOOST_TEST(has(b->graph, "v"));        // stateful: run for its effect
}

BOOST_AUTO_TEST_CASE(other_readers_choose_their_arguments_and_keep_every_node) {
  Graph g = load();
  FunctionLibrary lib(g.library());
  BodyGraphOptions o;
  o.make_arg = [](size_t i, DType t) {
    Node n;
    n.name = "a";  // collides with nothing in the body, but the argument's name there
    n.op = "Placeholder";
    n.attrs = {{"dtype", t}};
    (void)i;
    return n;
  };
  o.retvals = false;
  o.prune = false;
  auto b = body_graph(lib, func("f"), g, o);
  BOOST_REQUIRE_MESSAGE(b.ok(), b.status().to_string());
  BOOST_TEST(b->graph.node(b->args[0]).op == "Placeholder");
  BOOST_TEST(has(b->graph, "unused"));
  BOOST_TEST(!has(b->graph, "_ret/0"));
  BOOST_TEST(b->graph.node(b->rets[0].node).name == "n");
  // A name that a body node has is made unique.
  o.make_arg = [](size_t, DType t) {
    Node n;
    n.name = "n";
    n.op = "Placeholder";
    n.attrs = {{"dtype", t}};
    return n;
  };
  auto c = body_graph(lib, func("f"), g, o);
  BOOST_REQUIRE_MESSAGE(c.ok(), c.status().to_string());
  BOOST_TEST(c->graph.node(c->args[0]).name == "n_");
}

BOOST_AUTO_TEST_CASE(a_function_not_in_the_library_is_not_found) {
  Graph g = load();
  FunctionLibrary lib(g.library());
  auto b = body_graph(lib, func("nope"), g);
  BOOST_REQUIRE(!b.ok());
  BOOST_TEST(b.status().code() == Error::not_found);
  BOOST_TEST(b.status().message().find("'nope'") != std::string::npos);
}

BOOST_AUTO_TEST_SUITE_END()
