// TensorFlow 2's functional ops run as written (actors/function_runtime.hpp)
// against the same graphs lowered: every functional graph of
// tests/data/functional and the corpus graphs with functions, at every
// executor mode and on 1 to 3 devices, give the same values; the events of
// calls and loop iterations; errors naming the call chain; the iteration
// limit; one instance per function; the bodies that are lowered anyway.
#include <boost/test/unit_test.hpp>

#include "graph/functions/run_as_written.hpp"

#include <fstream>
#include <sstream>

#include "actors/function_runtime.hpp"
#include "graph/builder/builder.hpp"
#include "ops/truth_value.hpp"
#include "session_test_util.hpp"
#include "test_graphs.hpp"
#include "trace/sink.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

namespace {

graph::Graph load(const std::string& path) {
  auto g = graph::import_graph_file(std::string(TAGFLOW_TEST_DATA) + "/" + path);
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

Tensor i32(int32_t v) { return Tensor::scalar<int32_t>(v); }
Tensor f32(float v) { return Tensor::scalar<float>(v); }

struct Case {
  std::string file;
  actors::Feeds feeds;
  std::vector<std::string> fetches;
};

Tensor matrix() {
  std::vector<float> v(16 * 16);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 0.001f * static_cast<float>(i % 7);
  return Tensor::from_vector<float>(ops::Shape{16, 16}, v);
}

std::vector<Case> cases() {
  return {
      {"functional/case.pbtxt", {{"index", i32(0)}, {"x", i32(3)}}, {"Case"}},
      {"functional/case.pbtxt", {{"index", i32(1)}, {"x", i32(3)}}, {"Case"}},
      {"functional/case.pbtxt", {{"index", i32(7)}, {"x", i32(3)}}, {"Case"}},
      {"functional/case.pbtxt", {{"index", i32(-1)}, {"x", i32(3)}}, {"Case"}},
      {"functional/for.pbtxt", {{"start", i32(0)}, {"limit", i32(5)}, {"delta", i32(1)}}, {"For:0", "For:1"}},
      {"functional/for.pbtxt", {{"start", i32(10)}, {"limit", i32(0)}, {"delta", i32(-3)}}, {"For:0", "For:1"}},
      {"functional/for.pbtxt", {{"start", i32(3)}, {"limit", i32(3)}, {"delta", i32(1)}}, {"For:0", "For:1"}},
      {"functional/for.pbtxt", {{"start", i32(0)}, {"limit", i32(4)}, {"delta", i32(1)}}, {"Outer:0", "Outer:1"}},
      {"functional/if_float.pbtxt", {{"x", f32(1.5f)}, {"p", Tensor::scalar<bool>(true)}}, {"If"}},
      {"functional/if_float.pbtxt", {{"x", f32(1.5f)}, {"p", Tensor::scalar<bool>(false)}}, {"If"}},
      {"functional/if_in_while.pbtxt", {{"n", i32(5)}}, {"While:1"}},
      {"functional/if_in_while.pbtxt", {{"n", i32(0)}}, {"While:1"}},
      {"functional/nested_while.pbtxt", {{"n", i32(6)}}, {"While:0", "While:2"}},
      {"functional/nested_while.pbtxt", {{"n", i32(0)}}, {"While:2"}},
      {"functional/while_in_if.pbtxt", {{"pred", Tensor::scalar<bool>(true)}, {"x", i32(3)}}, {"If"}},
      {"functional/while_in_if.pbtxt", {{"pred", Tensor::scalar<bool>(false)}, {"x", i32(3)}}, {"If"}},
      {"functional/while_matmul.pbtxt", {{"n", i32(5)}, {"m", matrix()}}, {"While:0", "While:3"}},
      {"functional/while_sum.pbtxt", {{"start", i32(2)}, {"limit", i32(9)}}, {"While:0", "While:2"}},
      {"functional/while_sum.pbtxt", {{"start", i32(9)}, {"limit", i32(2)}}, {"While:0", "While:2"}},
      {"corpus/ov_injected_body_and_if_v2.pbtxt",
       {{"x", Tensor::vector<int32_t>({1, 20})}, {"y", Tensor::vector<int32_t>({3})}},
       {"If:0"}},
      {"corpus/ov_injected_body_and_if_v2.pbtxt",
       {{"x", Tensor::vector<int32_t>({1, 20})}, {"y", Tensor::vector<int32_t>({3})},
        {"Greater", Tensor::scalar<bool>(false)}},
       {"If"}},
      {"corpus/grappler_function_switch.pbtxt", {}, {"case/cond/Merge", "MyAdd_MPaeanipb7o"}},
  };
}

std::unique_ptr<actors::Session> session(graph::Graph g, const Mode& m, bool lower, int devices) {
  actors::SessionOptions o;
  o.lower_functional = lower;
  o.num_devices = devices;
  return make_session(std::move(g), m, o);
}

std::string run_error(actors::Session& s, const actors::Feeds& feeds, const std::string& fetch) {
  auto r = s.run(feeds, {fetch});
  BOOST_REQUIRE_MESSAGE(!r.ok(), "fetching " + fetch + " succeeded");
  return r.status().message();
}

// Counts of the events of one kind in a step.
int count(const trace::Trace& t, trace::Kind k) {
  int n = 0;
  for (const trace::Event& e : t.events()) n += e.kind == k;
  return n;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(functional_as_written)

BOOST_AUTO_TEST_CASE(every_functional_graph_gives_the_lowered_values) {
  for (const Case& c : cases()) {
    for (int devices : {1, 2, 3}) {
      for (const Mode& m : modes()) {
        BOOST_TEST_CONTEXT(c.file << " " << c.fetches[0] << ", " << devices << " devices, " << m.name) {
          auto lowered = session(load(c.file), m, true, devices);
          auto written = session(load(c.file), m, false, devices);
          auto want = must_run(*lowered, c.feeds, c.fetches);
          auto got = must_run(*written, c.feeds, c.fetches);
          for (size_t i = 0; i < want.size(); ++i) BOOST_TEST(got[i].debug_string() == want[i].debug_string());
        }
      }
    }
  }
}

// The If run as written tests its predicate by the rule of the lowered
// If's ToBool (ops::truth_value, TensorFlow's): for every dtype TensorFlow
// takes, scalar or not, both take the same branch.
BOOST_AUTO_TEST_CASE(an_if_takes_the_same_branch_as_written_and_lowered_for_every_predicate_dtype) {
  const std::vector<Tensor> preds = {
      Tensor::scalar<bool>(true),           Tensor::scalar<bool>(false),        Tensor::scalar<uint8_t>(0),
      Tensor::scalar<uint8_t>(7),           Tensor::scalar<int8_t>(-1),         Tensor::scalar<int16_t>(0),
      Tensor::scalar<uint16_t>(2),          Tensor::scalar<uint32_t>(0),        Tensor::scalar<uint64_t>(9),
      Tensor::scalar<Eigen::half>(Eigen::half(0.5f)), Tensor::scalar<Eigen::bfloat16>(Eigen::bfloat16(0.0f)),
      Tensor::scalar<float>(0.0f),          Tensor::scalar<double>(-2.5),       Tensor::scalar<int32_t>(0),
      Tensor::scalar<int64_t>(3),           Tensor::string_scalar(""),          Tensor::string_scalar("x"),
      Tensor::vector<int32_t>({0}),         Tensor::vector<float>({}),
  };
  for (const Tensor& pred : preds) {
    graph::GraphBuilder b(graph::GraphBuilder::Style::tf2);
    graph::Output p = b.placeholder(pred.dtype(), ops::PartialShape{false, pred.shape().dims()}, "p");
    graph::Output x = b.placeholder(ops::DType::int32, ops::PartialShape{false, {}}, "x");
    const std::string up = b.function("up", {ops::DType::int32}, [](graph::GraphBuilder& f, const std::vector<graph::Output>& a) {
      return std::vector<graph::Output>{f.add(a[0], f.scalar<int32_t>(1))};
    });
    const std::string down = b.function("down", {ops::DType::int32}, [](graph::GraphBuilder& f, const std::vector<graph::Output>& a) {
      return std::vector<graph::Output>{f.sub(a[0], f.scalar<int32_t>(1))};
    });
    b.identity(b.functional_if(p, up, down, {x})[0], "out");
    auto g = b.finish();
    BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
    const int32_t want = *ops::truth_value(pred) ? 11 : 9;
    for (bool lower : {false, true})
      for (const Mode& m : {modes()[0], modes()[2]}) {
        BOOST_TEST_CONTEXT(pred.debug_string() << (lower ? ", lowered" : ", as written") << ", " << m.name) {
          auto s = session(*g, m, lower, 1);
          auto out = must_run(*s, {{"p", pred}, {"x", i32(10)}}, {"out"});
          BOOST_TEST(out[0].scalar_value<int32_t>() == want);
        }
      }
  }
}

// A stateful body node that no result and no control_ret needs runs
// whenever its body does, as TensorFlow's PruneFunctionBody has it, as
// written and lowered alike (graph::nodes_run_for_effect).
BOOST_AUTO_TEST_CASE(a_stateful_body_node_outside_control_ret_runs_as_written_and_lowered) {
  for (bool lower : {false, true})
    for (int devices : {1, 2})
      for (const Mode& m : modes()) {
        BOOST_TEST_CONTEXT((lower ? "lowered, " : "as written, ") << devices << " devices, " << m.name) {
          auto s = session(load("functional/stateful_outside_control_ret.pbtxt"), m, lower, devices);
          must_run(*s, {}, {}, {"init"});
          for (int32_t step = 1; step <= 2; ++step) {
            auto out = must_run(*s, {{"x", i32(3)}}, {"call", "read"});
            BOOST_TEST(out[0].scalar_value<int32_t>() == 4);
            BOOST_TEST(out[1].scalar_value<int32_t>() == 5 * step);
          }
        }
      }
}

BOOST_AUTO_TEST_CASE(a_while_run_as_written_has_no_frames_and_reports_its_calls_and_iterations) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      trace::MemorySink sink;
      actors::SessionOptions o;
      o.events = &sink;
      o.lower_functional = false;
      auto s = make_session(load("functional/while_sum.pbtxt"), m, o);
      auto out = must_run(*s, {{"start", i32(0)}, {"limit", i32(7)}}, {"While:2"});
      BOOST_TEST(out[0].scalar_value<int32_t>() == 21);
      s.reset();
      const trace::Trace t = sink.trace();
      // The root frame only.
      for (const trace::Event& e : t.events())
        if (e.kind == trace::Kind::frame_created) BOOST_TEST(e.node == graph::kRootFrame);
      BOOST_TEST(count(t, trace::Kind::call_started) == 1);
      BOOST_TEST(count(t, trace::Kind::call_done) == 1);
      // Seven iterations run the body; the eighth only its cond.
      BOOST_TEST(count(t, trace::Kind::function_iteration_started) == 8);
      BOOST_TEST(count(t, trace::Kind::function_iteration_done) == 8);
      int64_t last = -1;
      for (const trace::Event& e : t.events())
        if (e.kind == trace::Kind::function_iteration_started) {
          BOOST_TEST(static_cast<int64_t>(e.key) == last + 1);
          last = static_cast<int64_t>(e.key);
        }
    }
  }
}

BOOST_AUTO_TEST_CASE(an_if_reports_the_branch_it_took) {
  for (bool p : {true, false}) {
    trace::MemorySink sink;
    actors::SessionOptions o;
    o.events = &sink;
    o.lower_functional = false;
    auto s = make_session(load("functional/if_float.pbtxt"), modes()[1], o);
    must_run(*s, {{"x", f32(2)}, {"p", Tensor::scalar<bool>(p)}}, {"If"});
    s.reset();
    int branch = -2;
    const trace::Trace t = sink.trace();
    for (const trace::Event& e : t.events())
      if (e.kind == trace::Kind::call_started) branch = e.port;
    BOOST_TEST(branch == (p ? 1 : 0));
  }
}

BOOST_AUTO_TEST_CASE(an_error_in_a_body_names_the_call_chain_and_the_iteration) {
  // while i < n: i += 1; acc = Reshape(acc, [2]) — acc is a scalar.
  const std::string cond = "function { signature { name: \"c\" input_arg { name: \"i\" type: DT_INT32 } "
                           "input_arg { name: \"a\" type: DT_INT32 } output_arg { name: \"p\" type: DT_BOOL } } "
                           "node_def { name: \"k\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } } "
                           "attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 3 } } } } "
                           "node_def { name: \"lt\" op: \"Less\" input: \"i\" input: \"k:output:0\" "
                           "attr { key: \"T\" value { type: DT_INT32 } } } ret { key: \"p\" value: \"lt:z:0\" } }";
  const std::string body =
      "function { signature { name: \"b\" input_arg { name: \"i\" type: DT_INT32 } "
      "input_arg { name: \"a\" type: DT_INT32 } output_arg { name: \"i1\" type: DT_INT32 } "
      "output_arg { name: \"a1\" type: DT_INT32 } } "
      "node_def { name: \"one\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } } "
      "attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } } } "
      "node_def { name: \"next\" op: \"AddV2\" input: \"i\" input: \"one:output:0\" attr { key: \"T\" value { type: DT_INT32 } } } "
      "node_def { name: \"shape\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } } "
      "attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 2 } } } } "
      "node_def { name: \"bad\" op: \"Reshape\" input: \"a\" input: \"shape:output:0\" "
      "attr { key: \"T\" value { type: DT_INT32 } } attr { key: \"Tshape\" value { type: DT_INT32 } } } "
      "node_def { name: \"back\" op: \"Reshape\" input: \"bad:output:0\" input: \"shape:output:0\" "
      "attr { key: \"T\" value { type: DT_INT32 } } attr { key: \"Tshape\" value { type: DT_INT32 } } } "
      "ret { key: \"i1\" value: \"next:z:0\" } ret { key: \"a1\" value: \"back:output:0\" } }";
  const std::string text = int_const("zero", 0) +
                           "node { name: \"loop\" op: \"While\" input: \"zero\" input: \"zero\" "
                           "attr { key: \"T\" value { list { type: DT_INT32 type: DT_INT32 } } } "
                           "attr { key: \"cond\" value { func { name: \"c\" } } } "
                           "attr { key: \"body\" value { func { name: \"b\" } } } }\n"
                           "library { " + cond + body + " }";
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      actors::SessionOptions o;
      o.lower_functional = false;
      auto s = make_session(parse(text), m, o);
      const std::string e = run_error(*s, {}, "loop:1");
      BOOST_TEST(e.find("Reshape 'bad' (node 'loop' → body 'b' (iteration 0) → node 'bad') at tag / on partition CPU:0: "
                        "Input to Reshape is a tensor with 1 values") != std::string::npos,
                 e);
      // The session stays usable.
      BOOST_TEST(must_run(*s, {}, {"zero"})[0].scalar_value<int32_t>() == 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_iteration_limit_ends_a_while_run_as_written) {
  actors::SessionOptions o;
  o.lower_functional = false;
  o.max_iterations = 4;
  auto s = make_session(load("functional/while_sum.pbtxt"), modes()[1], o);
  BOOST_TEST(must_run(*s, {{"start", i32(0)}, {"limit", i32(3)}}, {"While:2"})[0].scalar_value<int32_t>() == 3);
  const std::string e = run_error(*s, {{"start", i32(0)}, {"limit", i32(100)}}, "While:2");
  BOOST_TEST(e.find("While 'While' at tag / on partition CPU:0: the loop exceeded the limit of 4 iterations (--max-iterations") !=
                 std::string::npos,
             e);
}

BOOST_AUTO_TEST_CASE(a_function_is_instantiated_once_and_shared) {
  graph::Graph g = load("functional/nested_while.pbtxt");
  actors::FunctionRuntime runtime(g, {});
  const graph::Node& loop = g.node(g.find("While"));
  BOOST_TEST(graph::may_run_as_written(loop, g, {}));
  const ops::NameAttrList* body = loop.attr<ops::NameAttrList>("body");
  BOOST_REQUIRE(body != nullptr);
  auto a = runtime.body(*body);
  auto b = runtime.body(*body);
  BOOST_REQUIRE(a.ok());
  BOOST_REQUIRE(b.ok());
  BOOST_TEST(a->get() == b->get());
  BOOST_TEST(!(*a)->exec->has_control_flow());
  // Not a functional node.
  BOOST_TEST(!graph::may_run_as_written(g.node(g.find("n")), g, {}));
}

// int32 -> int32 through one body node of `op`, with `attrs` and `device`.
std::string one_node_function(const std::string& name, const std::string& op, const std::string& attrs,
                              const std::string& device = "") {
  return "function { signature { name: \"" + name + "\" input_arg { name: \"a\" type: DT_INT32 } "
         "output_arg { name: \"out\" type: DT_INT32 } } node_def { name: \"n\" op: \"" + op +
         "\" input: \"a\" device: \"" + device + "\" " + attrs + "} ret { key: \"out\" value: \"n:0\" } }\n";
}

std::string call_of(const std::string& name, const std::string& f) {
  return node(name, "StatefulPartitionedCall", {"x"},
              "attr { key: \"Tin\" value { list { type: DT_INT32 } } } "
              "attr { key: \"Tout\" value { list { type: DT_INT32 } } } "
              "attr { key: \"f\" value { func { name: \"" + f + "\" } } } ");
}

BOOST_AUTO_TEST_CASE(bodies_with_v1_frames_or_other_devices_are_lowered_and_still_run) {
  const std::string t = type_attr("T", "DT_INT32");
  const std::string text =
      node("x", "Placeholder", {}, type_attr("dtype", "DT_INT32")) + call_of("plain", "neg") +
      call_of("framed", "enter") + call_of("placed", "on_cpu1") + call_of("outer", "calls_enter") +
      "library { " + one_node_function("neg", "Neg", t) +
      one_node_function("enter", "Enter", t + " attr { key: \"frame_name\" value { s: \"f\" } } ") +
      one_node_function("on_cpu1", "Neg", t, "/job:localhost/replica:0/task:0/device:CPU:1") +
      "function { signature { name: \"calls_enter\" input_arg { name: \"a\" type: DT_INT32 } "
      "output_arg { name: \"out\" type: DT_INT32 } } node_def { name: \"c\" op: \"enter\" input: \"a\" } "
      "ret { key: \"out\" value: \"c:out:0\" } } }";
  graph::Graph g = parse(text);
  graph::RunAsWrittenOptions one_device;
  graph::RunAsWrittenOptions two_devices;
  two_devices.several_devices = true;
  BOOST_TEST(graph::may_run_as_written(g.node(g.find("plain")), g, one_device));
  BOOST_TEST(!graph::may_run_as_written(g.node(g.find("framed")), g, one_device));
  BOOST_TEST(!graph::may_run_as_written(g.node(g.find("outer")), g, one_device));  // through a call
  BOOST_TEST(graph::may_run_as_written(g.node(g.find("placed")), g, one_device));
  BOOST_TEST(!graph::may_run_as_written(g.node(g.find("placed")), g, two_devices));
  // The mark: written on the nodes that run as written, nowhere else.
  graph::Graph marked = g;
  BOOST_TEST(graph::mark_run_as_written(&marked, one_device) == 2);
  BOOST_TEST(graph::marked_run_as_written(marked.node(marked.find("plain"))));
  BOOST_TEST(!graph::marked_run_as_written(marked.node(marked.find("framed"))));
  BOOST_TEST(graph::mark_run_as_written(&marked, two_devices) == 1);
  BOOST_TEST(!graph::marked_run_as_written(marked.node(marked.find("placed"))));
  // Either way a session runs them all.
  for (int devices : {1, 2}) {
    BOOST_TEST_CONTEXT(devices << " devices") {
      auto s = session(parse(text), modes()[2], false, devices);
      auto out = must_run(*s, {{"x", i32(4)}}, {"plain", "placed"});
      BOOST_TEST(out[0].scalar_value<int32_t>() == -4);
      BOOST_TEST(out[1].scalar_value<int32_t>() == -4);
      // On two devices the body's node runs on the device it names.
      BOOST_TEST(s->last_partitions().size() == static_cast<size_t>(devices));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
