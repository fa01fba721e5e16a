// A chain of 2·10^5 nodes run by a Session, and the bytes per node of the
// Executable built for it (docs/performance.md, "A graph of 10⁶ nodes"). No
// timing: quadratic work never finishes at this size, and per-node
// allocations that come back exceed the bound.
#include <boost/test/unit_test.hpp>

#include "actors/executable.hpp"
#include "graph/large_graphs.hpp"
#include "graph/step_graph.hpp"
#include "graph/validate.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using graph::testing::chain_end;
using graph::testing::chain_graph_def;

namespace {

constexpr int kNodes = 200000;
// NodeItem (120 bytes), two out edges (24 each: c feeds every Add), its
// frame layout and control-flow entries and a kernel: ~210 bytes now;
// ~290 with the NodeItem of 192 bytes and an edge list allocated per node.
constexpr double kExecutableBytesPerNode = 230;

graph::Graph chain(int n) {
  auto g = graph::import_graph_binary(chain_graph_def(n).SerializeAsString(), "chain.pb");
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  return std::move(g).value();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(large_graph_run)

BOOST_AUTO_TEST_CASE(a_chain_of_200000_adds_runs_twice) {
  for (const Mode& m : {modes()[0], modes()[2]}) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(chain(kNodes), m);
      for (int step = 0; step < 2; ++step) {
        auto out = must_run(*s, {}, {chain_end(kNodes)});
        BOOST_TEST(out[0].scalar_value<float>() == kNodes - 2);
      }
      // A fed start is a new signature; it prunes x0 and copies the rest.
      auto fed = must_run(*s, {{"x0", ops::Tensor::scalar<float>(10)}}, {chain_end(kNodes)});
      BOOST_TEST(fed[0].scalar_value<float>() == kNodes + 8);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_executable_of_a_chain_has_bounded_bytes_per_node) {
  graph::Graph g = chain(kNodes);
  BOOST_REQUIRE(graph::validate(g).ok());
  auto step = graph::make_step_graph(g, {}, {chain_end(kNodes)}, {});
  BOOST_REQUIRE_MESSAGE(step.ok(), step.status().to_string());
  auto exec = actors::Executable::build(std::move(step->graph));
  BOOST_REQUIRE_MESSAGE(exec.ok(), exec.status().to_string());
  const double bytes = static_cast<double>((*exec)->memory_bytes()) / kNodes;
  BOOST_TEST_MESSAGE("Executable: " << bytes << " bytes per node");
  BOOST_TEST(bytes < kExecutableBytesPerNode);
  const actors::NodeItem& last = (*exec)->item((*exec)->graph().find(chain_end(kNodes)));
  BOOST_TEST(last.out_edges.size() == 1u);  // to the _Retval
  BOOST_TEST(last.num_inputs == 2);
}

BOOST_AUTO_TEST_SUITE_END()
