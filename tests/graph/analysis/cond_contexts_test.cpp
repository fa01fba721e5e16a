// The graph analyses of graph/analysis/: cond contexts recovered from the
// graph (which cond and branch each node runs under, in and around loops),
// the loop structure of Switches and Merges, the topological order without
// back edges.
#include <boost/test/unit_test.hpp>

#include <algorithm>

#include "actors/executor_graphs.hpp"
#include "graph/analysis/cond_contexts.hpp"
#include "graph/analysis/loop_structure.hpp"
#include "graph/analysis/topological.hpp"
#include "graph/validate.hpp"

using namespace tagflow;
using namespace tagflow::graph;
using namespace tagflow::testing;

namespace {

struct Analysed {
  explicit Analysed(const std::string& text) : g(parse(text)) {
    Status s = validate(g);
    if (!s.ok()) throw std::runtime_error(s.to_string());
    auto info = analyze_control_flow(g);
    if (!info.ok()) throw std::runtime_error(info.status().to_string());
    cf = std::move(info).value();
    conds = analysis::CondContexts(g, cf);
  }
  NodeId id(const std::string& name) const { return g.find(name); }
  // The conds `name` runs under, as (Switch name, branch).
  std::vector<std::pair<std::string, int>> of(const std::string& name) const {
    std::vector<std::pair<std::string, int>> out;
    for (const auto& [sw, branch] : conds.of(id(name))) out.emplace_back(g.node(sw).name, branch);
    return out;
  }
  Graph g;
  ControlFlowInfo cf;
  analysis::CondContexts conds;
};

using Conds = std::vector<std::pair<std::string, int>>;

}  // namespace

BOOST_AUTO_TEST_SUITE(graph_analysis)

BOOST_AUTO_TEST_CASE(a_cond_inside_a_loop_is_recovered_per_branch_and_closed_by_its_merge) {
  Analysed a(cond_in_loop());
  // The two Switches of one cond stand for it through the first of them.
  const NodeId first = std::min(a.id("w/c/sw_acc"), a.id("w/c/sw_i"));
  const std::string cond = a.g.node(first).name;
  BOOST_TEST(a.of("w/c/plus") == (Conds{{cond, 1}}));
  BOOST_TEST(a.of("w/c/minus") == (Conds{{cond, 0}}));
  // A control input carries the branch: w/c/one waits for sw_acc itself
  // (the node, not one of its outputs), so it is under no branch of it.
  BOOST_TEST(a.of("w/c/one").empty());
  BOOST_TEST(a.of("w/c/Merge").empty());  // the cond ends at its Merge
  BOOST_TEST(a.of("w/acc_next").empty());
  // The loop's own Switch is no cond.
  BOOST_TEST(a.of("w/acc_identity").empty());
  BOOST_TEST(analysis::is_loop_switch(a.g, a.cf, a.id("w/acc_switch")));
  BOOST_TEST(!analysis::is_loop_switch(a.g, a.cf, a.id("w/c/sw_acc")));
  BOOST_TEST(analysis::is_loop_merge(a.g, a.id("w/acc_merge")));
  BOOST_TEST(!analysis::is_loop_merge(a.g, a.id("w/c/Merge")));
}

BOOST_AUTO_TEST_CASE(a_loop_in_a_branch_is_entered_under_that_branch) {
  Analysed a(loop_in_cond());
  const FrameId w = a.cf.find_frame("c/w");
  BOOST_REQUIRE(w >= 0);
  BOOST_REQUIRE(a.conds.entering(w).size() == 1u);
  BOOST_TEST(a.g.node(a.conds.entering(w)[0].first).name == "c/start");
  BOOST_TEST(a.conds.entering(w)[0].second == 1);
  // Inside the loop's frame nothing is under a cond of the frame; its Exit
  // is under the branch the loop was entered by, and the cond's Merge
  // closes it.
  BOOST_TEST(a.of("c/w/Add").empty());
  BOOST_TEST(a.of("c/w/Exit") == (Conds{{"c/start", 1}}));
  BOOST_TEST(a.of("c/Merge").empty());
  BOOST_TEST(analysis::output_frame(a.g, a.cf, a.id("c/w/Enter")) == w);
  BOOST_TEST(analysis::output_frame(a.g, a.cf, a.id("c/w/Exit")) == kRootFrame);
}

BOOST_AUTO_TEST_CASE(a_node_added_after_the_analysis_takes_the_state_it_is_given) {
  Analysed a(cond_in_loop());
  const NodeId next = a.g.num_nodes();
  a.conds.added(next, a.conds.of(a.id("w/c/plus")));
  BOOST_TEST(a.conds.of(next).size() == 1u);
  a.conds.added(next + 3);
  BOOST_TEST(a.conds.of(next + 3).empty());
}

BOOST_AUTO_TEST_CASE(the_topological_order_puts_producers_first_and_leaves_out_back_edges) {
  Graph g = parse(cond_in_loop());
  const std::vector<NodeId> order = analysis::topological_order(g);
  BOOST_REQUIRE(order.size() == static_cast<size_t>(g.num_nodes()));
  std::vector<size_t> at(order.size());
  for (size_t i = 0; i < order.size(); ++i) at[static_cast<size_t>(order[i])] = i;
  int edges = 0;
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    const Node& n = g.node(id);
    for (const Endpoint& e : n.inputs) {
      if (node_role(g.node(e.node)) == ops::OpRole::next_iteration) continue;  // the back edge
      BOOST_TEST(at[static_cast<size_t>(e.node)] < at[static_cast<size_t>(id)], g.node(e.node).name << " -> " << n.name);
      ++edges;
    }
    for (NodeId c : n.control_inputs) BOOST_TEST(at[static_cast<size_t>(c)] < at[static_cast<size_t>(id)]);
  }
  BOOST_TEST(edges > 20);
}

BOOST_AUTO_TEST_SUITE_END()
