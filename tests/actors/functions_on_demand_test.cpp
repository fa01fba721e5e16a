// Library functions instantiated on demand: a session lowers only the
// functional nodes a step needs, so an op tagflow does not know stops only
// the steps that reach it; errors inside functions name the call chain;
// a fed output of an unknown op takes its consumers' dtype; a call of a
// function with a CPU and a GPU implementation runs the CPU one; a Case
// index must be a scalar; and the TF2 half_plus_two SavedModel, restored by
// its own saver function, serves although other functions use ops tagflow
// lacks.
#include <boost/test/unit_test.hpp>

#include "graph/graph.hpp"
#include "session_test_util.hpp"
#include "test_graphs.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

namespace {

std::string tl(const std::string& key, const std::string& types) {
  return "attr { key: \"" + key + "\" value { list { " + types + " } } } ";
}
std::string fn(const std::string& key, const std::string& name) {
  return "attr { key: \"" + key + "\" value { func { name: \"" + name + "\" } } } ";
}

// int32 -> int32 through one body node `body` (op and attrs given), with
// optional function attrs.
std::string int_function(const std::string& name, const std::string& body_op,
                         const std::string& body_attrs, const std::string& function_attrs = "") {
  return "function { signature { name: \"" + name + "\" input_arg { name: \"a\" type: DT_INT32 } "
         "output_arg { name: \"out\" type: DT_INT32 } } " + function_attrs +
         " node_def { name: \"n\" op: \"" + body_op + "\" input: \"a\" " + body_attrs + "} "
         "ret { key: \"out\" value: \"n:0\" } }\n";
}

std::string string_attr(const std::string& key, const std::string& value) {
  return "attr { key: \"" + key + "\" value { s: \"" + value + "\" } } ";
}

std::string call(const std::string& name, const std::string& f, const std::string& input) {
  return node(name, "StatefulPartitionedCall", {input},
              tl("Tin", "type: DT_INT32") + tl("Tout", "type: DT_INT32") + fn("f", f));
}

const std::string kX = node("x", "Placeholder", {}, type_attr("dtype", "DT_INT32"));

std::string run_error(actors::Session& s, const actors::Feeds& feeds, const std::string& fetch) {
  auto r = s.run(feeds, {fetch});
  BOOST_REQUIRE_MESSAGE(!r.ok(), "fetching " + fetch + " succeeded");
  return r.status().message();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(functions_on_demand)

BOOST_AUTO_TEST_CASE(unknown_ops_that_no_step_reaches_do_not_stop_it) {
  // `saver` reads a named output of an op tagflow does not know (so it
  // cannot even be instantiated), `stray` is such an op in the graph.
  const std::string saver =
      "function { signature { name: \"saver\" input_arg { name: \"a\" type: DT_INT32 } "
      "output_arg { name: \"out\" type: DT_INT32 } } "
      "node_def { name: \"m\" op: \"NoSuchRegexOp\" input: \"a\" } "
      "ret { key: \"out\" value: \"m:output:0\" } }\n";
  const std::string text = kX + call("neg_call", "negate", "x") + call("save", "saver", "x") +
                           node("stray", "NoSuchOp", {"x"}) +
                           "library { " + int_function("negate", "Neg", type_attr("T", "DT_INT32")) + saver + "}";
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(text), m);
      auto out = must_run(*s, {{"x", Tensor::scalar<int32_t>(7)}}, {"neg_call"});
      BOOST_TEST(out[0].scalar_value<int32_t>() == -7);
      std::string e = run_error(*s, {{"x", Tensor::scalar<int32_t>(7)}}, "save");
      BOOST_TEST(e.find("node 'save' → function 'saver' → ret 'out' 'm:output:0' names an output of 'm', "
                        "whose op 'NoSuchRegexOp' is not known") != std::string::npos, e);
      e = run_error(*s, {{"x", Tensor::scalar<int32_t>(7)}}, "stray");
      BOOST_TEST(e.find("unknown op 'NoSuchOp' in node 'stray'") != std::string::npos, e);
      // The session still serves the step that works.
      out = must_run(*s, {{"x", Tensor::scalar<int32_t>(2)}}, {"neg_call"});
      BOOST_TEST(out[0].scalar_value<int32_t>() == -2);
    }
  }
}

BOOST_AUTO_TEST_CASE(errors_inside_called_functions_name_the_call_chain) {
  // outer → node 'inner' (a call of `unknown`) → node 'n' of an unknown op.
  const std::string outer =
      "function { signature { name: \"outer\" input_arg { name: \"a\" type: DT_INT32 } "
      "output_arg { name: \"out\" type: DT_INT32 } } "
      "node_def { name: \"inner\" op: \"unknown\" input: \"a\" } ret { key: \"out\" value: \"inner:out:0\" } }\n";
  // A kernel error at run time: Reshape of one element to [2].
  const std::string reshape =
      "function { signature { name: \"reshape\" input_arg { name: \"a\" type: DT_INT32 } "
      "output_arg { name: \"out\" type: DT_INT32 } } "
      "node_def { name: \"shape\" op: \"Const\" " + type_attr("dtype", "DT_INT32") +
      " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } int_val: 2 } } } } "
      "node_def { name: \"r\" op: \"Reshape\" input: \"a\" input: \"shape:output:0\" " + type_attr("T", "DT_INT32") +
      " " + type_attr("Tshape", "DT_INT32") + " } ret { key: \"out\" value: \"r:output:0\" } }\n";
  const std::string text = kX + call("c", "outer", "x") + call("rc", "reshape", "x") + "library { " + outer +
                           int_function("unknown", "Mystery", "") + reshape + "}";
  auto s = make_session(parse(text), modes()[0]);
  std::string e = run_error(*s, {{"x", Tensor::scalar<int32_t>(1)}}, "c");
  BOOST_TEST(e.find("unknown op 'Mystery' in node 'c' → function 'outer' → node 'inner' → function 'unknown' → "
                    "node 'n'") != std::string::npos, e);
  e = run_error(*s, {{"x", Tensor::scalar<int32_t>(1)}}, "rc");
  // Lowered the node is 'rc/r', run as written 'r'; the chain is the same.
  BOOST_TEST(e.find("(node 'rc' → function 'reshape' → node 'r') at tag / on partition CPU:0: Input to Reshape") !=
                 std::string::npos,
             e);
}

BOOST_AUTO_TEST_CASE(a_fed_output_of_an_unknown_op_takes_its_consumers_dtype) {
  const std::string text = node("u", "UnknownSource", {}) + unary("neg", "Neg", "u", "DT_FLOAT") +
                           node("v", "OtherUnknown", {}) + node("w", "ThirdUnknown", {"v"});
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(text), m);
      auto out = must_run(*s, {{"u", Tensor::vector<float>({1.5f, -2.0f})}}, {"neg"});
      BOOST_TEST(out[0].debug_string() == Tensor::vector<float>({-1.5f, 2.0f}).debug_string());
      // Another dtype than Neg's T contradicts what the consumers say.
      std::string e = run_error(*s, {{"u", Tensor::scalar<int32_t>(1)}}, "neg");
      BOOST_TEST(e.find("feed 'u' is int32") != std::string::npos, e);
      e = run_error(*s, {{"v", Tensor::scalar<int32_t>(1)}}, "w");
      BOOST_TEST(e.find("feed 'v': the dtype of 'v' cannot be inferred: node 'v' has op 'OtherUnknown'") !=
                 std::string::npos, e);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_call_of_a_gpu_implementation_runs_the_cpu_one) {
  // Keras's shape: two implementations of one interface, the GPU one
  // (the call's target) built on an op tagflow does not have.
  const std::string gpu = string_attr("api_implements", "lstm_1234") + string_attr("api_preferred_device", "GPU");
  const std::string cpu = string_attr("api_implements", "lstm_1234") + string_attr("api_preferred_device", "CPU");
  const std::string text = kX + call("layer", "gpu_lstm", "x") + node("direct", "gpu_lstm", {"x"}) +
                           "library { " + int_function("gpu_lstm", "CudnnRNN", "", gpu) +
                           int_function("standard_lstm", "Neg", type_attr("T", "DT_INT32"), cpu) + "}";
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(text), m);
      auto out = must_run(*s, {{"x", Tensor::scalar<int32_t>(5)}}, {"layer", "direct"});
      BOOST_TEST(out[0].scalar_value<int32_t>() == -5);
      BOOST_TEST(out[1].scalar_value<int32_t>() == -5);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_case_index_that_is_not_a_scalar_is_an_error) {
  auto g = graph::import_graph_file(std::string(TAGFLOW_TEST_DATA) + "/functional/case.pbtxt");
  BOOST_REQUIRE(g.ok());
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(*g, m);
      std::string e = run_error(*s, {{"index", Tensor::vector<int32_t>({1, 2})}, {"x", Tensor::scalar<int32_t>(10)}},
                                "Case");
      BOOST_TEST(e.find("must be a scalar int32") != std::string::npos, e);
      BOOST_TEST(e.find("Case") != std::string::npos, e);
    }
  }
}

// The TF2 half_plus_two SavedModel: the serving signature calls
// __inference_signature_wrapper_predict → __inference_predict, which reads
// the resource variables a and b. Its library also holds the saver's
// functions and the tf.Example signatures' ParseExampleV2, which the
// serving path never calls.
const std::string kHalfPlusTwo = std::string(TAGFLOW_TEST_DATA) + "/savedmodels/saved_model_half_plus_two_tf2_cpu/00000123";

BOOST_AUTO_TEST_CASE(the_tf2_half_plus_two_savedmodel_serves_y_equals_half_x_plus_two) {
  auto g = graph::import_graph_file(kHalfPlusTwo + "/saved_model.pb");
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(*g, m);
      // Before the variables are restored, the error names the call chain.
      std::string e = run_error(*s, {{"serving_default_x", Tensor::vector<float>({1.0f})}},
                                "StatefulPartitionedCall_5:0");
      BOOST_TEST(e.find("node 'StatefulPartitionedCall_5' → function '__inference_signature_wrapper_predict_245' → "
                        "node 'StatefulPartitionedCall' → function '__inference_predict_235'") != std::string::npos, e);
      BOOST_TEST(e.find("is not initialized") != std::string::npos, e);
      // The saver's restore function (saver_def.restore_op_name), as
      // TensorFlow's loader runs it: the checkpoint prefix fed.
      must_run(*s, {{"saver_filename", Tensor::string_scalar(kHalfPlusTwo + "/variables/variables")}}, {},
               {"StatefulPartitionedCall_7"});
      auto out = must_run(*s, {{"serving_default_x", Tensor::vector<float>({1.0f})}}, {"StatefulPartitionedCall_5:0"});
      BOOST_TEST(out[0].debug_string() == Tensor::vector<float>({2.5f}).debug_string());  // 0.5 * 1 + 2
      out = must_run(*s, {{"serving_default_x", Tensor::vector<float>({-4.0f})}}, {"StatefulPartitionedCall_5:0"});
      BOOST_TEST(out[0].debug_string() == Tensor::vector<float>({0.0f}).debug_string());
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
