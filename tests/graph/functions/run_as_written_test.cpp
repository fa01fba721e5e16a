// The pass that decides which functional nodes run as written and writes
// it on them (graph/functions/run_as_written.hpp): what a body may hold, through
// calls and branches, and the mark the step compiler's lowering reads.
#include <boost/test/unit_test.hpp>

#include "graph/functions/function_instantiator.hpp"
#include "graph/functions/run_as_written.hpp"
#include "graph/io/import.hpp"
#include "ops/op_def.hpp"

using namespace tagflow;
using namespace tagflow::graph;

namespace {

const char* kT = "attr { key: \"T\" value { type: DT_INT32 } }";

// int32 -> int32 through one body node `n` of `op`.
std::string one_node_function(const std::string& name, const std::string& op, const std::string& attrs) {
  return "function { signature { name: \"" + name + "\" input_arg { name: \"a\" type: DT_INT32 } "
         "output_arg { name: \"out\" type: DT_INT32 } } node_def { name: \"n\" op: \"" + op +
         "\" input: \"a\" " + attrs + "} ret { key: \"out\" value: \"n:0\" } }\n";
}

std::string call_of(const std::string& name, const std::string& f) {
  return "node { name: \"" + name + "\" op: \"StatefulPartitionedCall\" input: \"x\" "
         "attr { key: \"Tin\" value { list { type: DT_INT32 } } } "
         "attr { key: \"Tout\" value { list { type: DT_INT32 } } } "
         "attr { key: \"f\" value { func { name: \"" + f + "\" } } } }\n";
}

Graph graph_of(const std::string& nodes, const std::string& functions) {
  auto g = import_graph_text("node { name: \"x\" op: \"Placeholder\" attr { key: \"dtype\" value { type: DT_INT32 } } }\n" +
                                 nodes + "library { " + functions + "}",
                             "test");
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

bool may(const Graph& g, const std::string& node, bool several_devices = false) {
  RunAsWrittenOptions o;
  o.several_devices = several_devices;
  return may_run_as_written(g.node(g.find(node)), g, o);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(run_as_written)

BOOST_AUTO_TEST_CASE(what_a_body_may_hold_to_run_as_written) {
  const std::string fns =
      one_node_function("neg", "Neg", kT) +
      one_node_function("enter", "Enter", std::string(kT) + " attr { key: \"frame_name\" value { s: \"f\" } } ") +
      one_node_function("exit", "Exit", kT) + one_node_function("unknown", "NoSuchOp", kT) +
      // a call of a library function, and one that calls itself
      "function { signature { name: \"calls_neg\" input_arg { name: \"a\" type: DT_INT32 } "
      "output_arg { name: \"out\" type: DT_INT32 } } node_def { name: \"c\" op: \"neg\" input: \"a\" } "
      "ret { key: \"out\" value: \"c:out:0\" } }\n"
      "function { signature { name: \"self\" input_arg { name: \"a\" type: DT_INT32 } "
      "output_arg { name: \"out\" type: DT_INT32 } } node_def { name: \"c\" op: \"self\" input: \"a\" } "
      "ret { key: \"out\" value: \"c:out:0\" } }\n";
  Graph g = graph_of(call_of("neg", "neg") + call_of("enter", "enter") + call_of("exit", "exit") +
                         call_of("unknown", "unknown") + call_of("calls_neg", "calls_neg") + call_of("self", "self") +
                         call_of("missing", "not_in_the_library"),
                     fns);
  BOOST_TEST(may(g, "neg"));
  BOOST_TEST(may(g, "calls_neg"));
  BOOST_TEST(!may(g, "enter"));    // a TF 1 loop
  BOOST_TEST(!may(g, "exit"));
  BOOST_TEST(!may(g, "unknown"));  // lowering says what is wrong
  BOOST_TEST(!may(g, "self"));     // recursion
  BOOST_TEST(!may(g, "missing"));
  BOOST_TEST(!may(g, "x"));        // not a functional node
}

BOOST_AUTO_TEST_CASE(a_body_with_a_kernel_that_may_block_is_lowered) {
  for (const char* op : {"QueueEnqueueV2", "QueueEnqueueManyV2", "QueueDequeueV2", "QueueDequeueManyV2"}) {
    const ops::OpDef* def = ops::OpRegistry::global().find(op);
    BOOST_REQUIRE(def != nullptr);
    BOOST_TEST(def->is_blocking(), op);
  }
  BOOST_TEST(!ops::OpRegistry::global().find("QueueCloseV2")->is_blocking());
  const std::string dequeue =
      "function { signature { name: \"deq\" input_arg { name: \"q\" type: DT_RESOURCE } "
      "output_arg { name: \"out\" type: DT_INT32 } } node_def { name: \"d\" op: \"QueueDequeueV2\" input: \"q\" "
      "attr { key: \"component_types\" value { list { type: DT_INT32 } } } } "
      "ret { key: \"out\" value: \"d:components:0\" } }\n";
  Graph g = graph_of("node { name: \"q\" op: \"FIFOQueueV2\" attr { key: \"component_types\" value { list { type: "
                     "DT_INT32 } } } }\n"
                     "node { name: \"call\" op: \"StatefulPartitionedCall\" input: \"q\" "
                     "attr { key: \"Tin\" value { list { type: DT_RESOURCE } } } "
                     "attr { key: \"Tout\" value { list { type: DT_INT32 } } } "
                     "attr { key: \"f\" value { func { name: \"deq\" } } } }\n",
                     dequeue);
  BOOST_TEST(!may(g, "call"));
}

BOOST_AUTO_TEST_CASE(a_body_node_with_a_device_of_its_own_is_lowered_on_several_devices) {
  const std::string fn = "function { signature { name: \"placed\" input_arg { name: \"a\" type: DT_INT32 } "
                         "output_arg { name: \"out\" type: DT_INT32 } } node_def { name: \"n\" op: \"Neg\" "
                         "input: \"a\" device: \"/job:localhost/replica:0/task:0/device:CPU:1\" " +
                         std::string(kT) + "} ret { key: \"out\" value: \"n:0\" } }\n";
  Graph g = graph_of(call_of("call", "placed"), fn);
  BOOST_TEST(may(g, "call", false));
  BOOST_TEST(!may(g, "call", true));
}

BOOST_AUTO_TEST_CASE(the_mark_is_what_the_step_compiler_s_lowering_reads) {
  Graph g = graph_of(call_of("neg", "neg") + call_of("enter", "enter"),
                     one_node_function("neg", "Neg", kT) +
                         one_node_function("enter", "Enter",
                                           std::string(kT) + " attr { key: \"frame_name\" value { s: \"f\" } } "));
  BOOST_TEST(mark_run_as_written(&g, {}) == 1);
  BOOST_TEST(marked_run_as_written(g.node(g.find("neg"))));
  BOOST_TEST(!marked_run_as_written(g.node(g.find("enter"))));
  // The marked node stays; the other is lowered (its name now an Identity).
  FunctionInstantiator functions(g);
  Graph step = g;
  auto lowered = functions.lower(&step);
  BOOST_REQUIRE(lowered.ok());
  BOOST_TEST(*lowered);
  BOOST_TEST(step.node(step.find("neg")).op == "StatefulPartitionedCall");
  BOOST_TEST(step.node(step.find("enter")).op != "StatefulPartitionedCall");
  // A mark that no longer holds is cleared.
  g.mutable_node(g.find("enter")).attrs[kRunAsWrittenAttr] = true;
  BOOST_TEST(mark_run_as_written(&g, {}) == 1);
  BOOST_TEST(!marked_run_as_written(g.node(g.find("enter"))));
}

BOOST_AUTO_TEST_SUITE_END()
