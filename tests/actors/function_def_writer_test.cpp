// graph/function_def_writer: a graph written as a library function and
// called from another graph computes what the graph computes; the body's
// references are TensorFlow's ("arg", "node:out_arg:index").
#include <boost/test/unit_test.hpp>

#include "graph/builder/builder.hpp"
#include "graph/functions/function_def_writer.hpp"
#include "graph/io/tensor_proto.hpp"
#include "graph/proto/graph_def.pb.h"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using graph::Output;
using ops::DType;
using ops::Tensor;

namespace {

struct Body {
  graph::Graph g;
  graph::FunctionDefSpec spec;
};

// sum = split(a)[1] + split(a)[0]; idx = Unique(b).idx; same = a.
Body body() {
  graph::GraphBuilder b;
  Output a = b.placeholder(DType::float32, {false, {4}}, "a");
  Output x = b.placeholder(DType::float32, {false, {}}, "x");
  auto halves = b.op("Split", {b.scalar<int32_t>(0), a}, {{"num_split", int64_t{2}}}, "halves");
  Output sum = b.add(halves[1], halves[0], "sum");
  b.op("Unique", {x}, {}, "unique");
  b.mul(sum, x, "scaled");
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  Body out{std::move(g).value(), {}};
  out.spec.name = "body_fn";
  out.spec.args = {out.g.find("a"), out.g.find("x")};
  out.spec.arg_names = {"a", "x"};
  out.spec.rets = {{out.g.find("scaled"), 0}, {out.g.find("halves"), 1}, {out.g.find("a"), 0}};
  out.spec.ret_names = {"scaled", "second_half", "same"};
  return out;
}

tensorflow::NodeDef* const_node(tensorflow::GraphDef& def, const std::string& name, const Tensor& value) {
  auto* n = def.add_node();
  n->set_name(name);
  n->set_op("Const");
  (*n->mutable_attr())["dtype"].set_type(static_cast<tensorflow::DataType>(static_cast<int>(value.dtype())));
  graph::tensor_to_proto(value, (*n->mutable_attr())["value"].mutable_tensor());
  return n;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(function_def_writer)

BOOST_AUTO_TEST_CASE(a_written_function_computes_what_its_graph_computes) {
  Body b = body();
  auto f = graph::function_def_from_graph(b.g, b.spec);
  BOOST_REQUIRE_MESSAGE(f.ok(), f.status().to_string());
  // References as TensorFlow writes them.
  BOOST_TEST(f->ret().at("second_half") == "halves:output:1");
  BOOST_TEST(f->ret().at("same") == "a");
  BOOST_TEST(f->ret().at("scaled") == "scaled:z:0");
  bool saw_unique = false;
  for (const auto& n : f->node_def()) {
    BOOST_TEST(n.name() != "a");  // arguments are not nodes
    if (n.name() == "unique") {
      saw_unique = true;
      BOOST_TEST(n.input(0) == "x");
    }
    if (n.name() == "sum") {
      BOOST_TEST(n.input(0) == "halves:output:1");
      BOOST_TEST(n.input(1) == "halves:output:0");
    }
  }
  BOOST_TEST(saw_unique);

  // Called from another graph, through the library.
  tensorflow::GraphDef caller;
  const Tensor a = Tensor::vector<float>({1, 2, 3, 4});
  const Tensor x = Tensor::scalar<float>(0.5f);
  const_node(caller, "in_a", a);
  const_node(caller, "in_x", x);
  auto* call = caller.add_node();
  call->set_name("call");
  call->set_op("body_fn");
  call->add_input("in_a");
  call->add_input("in_x");
  *caller.mutable_library()->add_function() = *f;
  auto g = graph::graph_from_proto(caller);
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  for (const Mode& m : {modes()[0], modes()[3]}) {
    BOOST_TEST_CONTEXT(m.name) {
      auto called = make_session(*g, m);
      auto got = must_run(*called, {}, {"call:0", "call:1", "call:2"});
      auto direct = make_session(b.g, m);
      auto want = must_run(*direct, {{"a", a}, {"x", x}}, {"scaled", "halves:1", "a"});
      for (size_t i = 0; i < 3; ++i) BOOST_TEST(got[i].equals(want[i]), got[i].debug_string());
      BOOST_TEST(got[0].equals(Tensor::vector<float>({2.0f, 3.0f})));  // (3+1)/2, (4+2)/2
    }
  }
}

BOOST_AUTO_TEST_CASE(what_a_function_cannot_say_is_an_error_naming_it) {
  Body b = body();
  auto error = [&](const graph::FunctionDefSpec& spec) {
    auto f = graph::function_def_from_graph(b.g, spec);
    BOOST_REQUIRE(!f.ok());
    return f.status().to_string();
  };
  graph::FunctionDefSpec s = b.spec;
  s.arg_names = {"a", "Bad"};
  BOOST_TEST(error(s).find("argument name 'Bad'") != std::string::npos, error(s));
  s = b.spec;
  s.ret_names = {"a", "y", "z"};  // "a" is taken by an argument
  BOOST_TEST(error(s).find("result name 'a'") != std::string::npos, error(s));
  s = b.spec;
  s.args = {b.g.find("sum")};
  s.arg_names = {};
  BOOST_TEST(error(s).find("argument node 'sum' has inputs") != std::string::npos, error(s));
  s = b.spec;
  s.rets = {{b.g.find("halves"), 7}, {b.g.find("sum"), 0}, {b.g.find("a"), 0}};
  BOOST_TEST(error(s).find("'halves:7'") != std::string::npos, error(s));
}

BOOST_AUTO_TEST_SUITE_END()
