// A chain of 2·10^5 nodes through import, validation, the step graph and
// placement, with the IR's bytes per node bounded by Graph::memory_bytes()
// (docs/performance.md, "A graph of 10⁶ nodes"). No timing: a pass that is
// quadratic in the node count (4·10^10 steps here) never finishes, and one
// that copies what it should share exceeds the bounds.
#include <boost/test/unit_test.hpp>

#include "graph/device.hpp"
#include "graph/io/import.hpp"
#include "graph/placement.hpp"
#include "graph/step_graph.hpp"
#include "graph/validate.hpp"
#include "large_graphs.hpp"

using namespace tagflow;
using namespace tagflow::graph;
using namespace tagflow::graph::testing;

namespace {

constexpr int kNodes = 200000;

// The IR of a chain node (an Add with two inputs and one attr) was 731
// bytes before the IR was made smaller (docs/performance.md); now ~340.
constexpr double kIrBytesPerNode = 420;
// What a step graph that prunes nothing holds of its own: a name index,
// consumer lists and chunk pointers; ~45 bytes now, ~780 when it was a copy.
constexpr double kUnsharedStepBytesPerNode = 64;

double per_node(size_t bytes, int nodes) { return static_cast<double>(bytes) / nodes; }

Graph validated_chain(int n) {
  auto g = import_graph_binary(chain_graph_def(n).SerializeAsString(), "chain.pb");
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  ValidateOptions o;
  o.allow_unknown_ops = true;
  BOOST_REQUIRE(validate(*g, o).ok());
  return std::move(g).value();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(large_graph)

BOOST_AUTO_TEST_CASE(a_chain_imports_in_bounded_bytes_per_node_from_text_and_binary) {
  tensorflow::GraphDef def = chain_graph_def(kNodes);
  auto binary = import_graph_binary(def.SerializeAsString(), "chain.pb");
  BOOST_REQUIRE_MESSAGE(binary.ok(), binary.status().to_string());
  auto text = import_graph_text(def.DebugString(), "chain.pbtxt");
  BOOST_REQUIRE_MESSAGE(text.ok(), text.status().to_string());
  BOOST_TEST(binary->num_nodes() == kNodes);
  std::string difference;
  BOOST_TEST(binary->equals(*text, &difference), difference);
  const double bytes = per_node(binary->memory_bytes(), kNodes);
  BOOST_TEST_MESSAGE("imported chain: " << bytes << " bytes per node");
  BOOST_TEST(bytes < kIrBytesPerNode);
  BOOST_TEST(per_node(text->memory_bytes(), kNodes) < kIrBytesPerNode);
  const Node& last = binary->node(binary->find(chain_end(kNodes)));
  BOOST_TEST(last.inputs.size() == 2u);
  BOOST_TEST(binary->node(last.inputs[0].node).name == "x" + std::to_string(kNodes - 3));
}

BOOST_AUTO_TEST_CASE(validation_adds_dtypes_without_allocating_per_node) {
  Graph g = validated_chain(kNodes);
  const double bytes = per_node(g.memory_bytes(), kNodes);
  BOOST_TEST_MESSAGE("validated chain: " << bytes << " bytes per node");
  BOOST_TEST(bytes < kIrBytesPerNode);
  const Node& add = g.node(g.find("x1"));
  BOOST_TEST(add.input_types.size() == 2u);
  BOOST_TEST(!add.input_types.on_heap());
  BOOST_TEST(!add.inputs.on_heap());
}

BOOST_AUTO_TEST_CASE(the_step_graph_of_an_unpruned_graph_shares_its_nodes) {
  Graph g = validated_chain(kNodes);
  auto step = make_step_graph(g, {}, {chain_end(kNodes)}, {});
  BOOST_REQUIRE_MESSAGE(step.ok(), step.status().to_string());
  const Graph& s = step->graph;
  BOOST_TEST(s.num_nodes() == kNodes + 1);  // and the _Retval
  // The very same node objects, not copies (but for the last, partly
  // filled chunk, which the _Retval is appended to).
  BOOST_TEST(&s.node(0) == &g.node(0));
  BOOST_TEST(&s.node(kNodes - 2000) == &g.node(kNodes - 2000));
  const double own = per_node(s.memory_bytes() - s.shared_memory_bytes(), kNodes);
  BOOST_TEST_MESSAGE("step graph: " << own << " unshared bytes per node");
  BOOST_TEST(own < kUnsharedStepBytesPerNode);
  BOOST_TEST(s.shared_memory_bytes() > g.memory_bytes() / 2);
  // Placed on one device, nothing is written into the nodes.
  auto placed = assign_devices(s, local_devices(1), {});
  BOOST_REQUIRE(placed.ok());
  BOOST_TEST(placed->one_device());
  BOOST_TEST(&s.node(kNodes / 2) == &g.node(kNodes / 2));
}

BOOST_AUTO_TEST_CASE(a_step_that_prunes_copies_only_what_it_keeps) {
  Graph g = validated_chain(kNodes);
  auto step = make_step_graph(g, {}, {"x1000"}, {});
  BOOST_REQUIRE_MESSAGE(step.ok(), step.status().to_string());
  BOOST_TEST(step->graph.num_nodes() == 1003);  // c, x0..x1000, _Retval
  BOOST_TEST(step->graph.shared_memory_bytes() == 0u);
  BOOST_TEST(per_node(step->graph.memory_bytes(), 1003) < kIrBytesPerNode);
}

BOOST_AUTO_TEST_CASE(a_feed_copies_only_the_chunks_of_its_consumers) {
  Graph g = validated_chain(kNodes);
  // Feeding c rewires every Add and prunes c: the kept nodes are copied.
  auto all = make_step_graph(g, {"c"}, {chain_end(kNodes)}, {});
  BOOST_REQUIRE_MESSAGE(all.ok(), all.status().to_string());
  BOOST_TEST(all->graph.num_nodes() == kNodes + 1);  // without c, with _feed/0 and _fetch/0
  BOOST_TEST(all->graph.find("c") == kNoNode);
  BOOST_TEST(all->graph.node(all->graph.find("x7")).inputs[1].node == all->graph.find("_feed/0"));
  // Feeding x0 while running it as a target prunes nothing and rewires x1.
  auto one = make_step_graph(g, {"x0"}, {chain_end(kNodes)}, {"x0"});
  BOOST_REQUIRE_MESSAGE(one.ok(), one.status().to_string());
  const Graph& s = one->graph;
  BOOST_TEST(s.node(s.find("x1")).inputs[0].node == s.find("_feed/0"));
  BOOST_TEST(per_node(s.memory_bytes() - s.shared_memory_bytes(), kNodes) < kUnsharedStepBytesPerNode);
}

BOOST_AUTO_TEST_CASE(placement_of_a_chain_spreads_it_in_linear_work) {
  Graph g = validated_chain(kNodes);
  PlacementOptions o;
  o.strategy = PlacementOptions::Strategy::round_robin;
  auto placed = assign_devices(g, local_devices(4), o);
  BOOST_REQUIRE(placed.ok());
  BOOST_TEST(!placed->one_device());
  BOOST_TEST(placed->device_of[0] == 0);
  BOOST_TEST(placed->device_of[5] == 1);  // c, x0, x1, x2 on CPU:0 .. CPU:3, x3 on CPU:0, x4 on CPU:1
}

BOOST_AUTO_TEST_SUITE_END()
