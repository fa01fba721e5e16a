// What the gradient tests share (functional_gradients, functional_while_
// gradients, list_gradients, builder_tf2_gradients, resource_gradients):
// endpoints by name, a graph lowered, counting ops, and the tolerance of a
// comparison with finite differences.
#pragma once

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "graph/functions/lower_functional.hpp"
#include "graph/graph.hpp"
#include "graph/validate.hpp"

namespace tagflow::testing {

// "node" or "node:port" of `g`; fails the test if there is no such node.
inline graph::Endpoint endpoint(const graph::Graph& g, const std::string& name) {
  const size_t colon = name.find(':');
  const graph::NodeId id = g.find(name.substr(0, colon));
  BOOST_REQUIRE_MESSAGE(id != graph::kNoNode, "no node " + name);
  return {id, colon == std::string::npos ? 0 : std::stoi(name.substr(colon + 1))};
}

// `g` with every functional op lowered, validated.
inline graph::Graph lowered(graph::Graph g) {
  ops::Status s = graph::lower_functional_ops(&g);
  if (s.ok()) s = graph::validate(g);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.to_string());
  return g;
}

// The nodes named under `prefix` whose op is one of `ops`.
inline int count_ops(const graph::Graph& g, const std::string& prefix, const std::vector<std::string>& ops) {
  int n = 0;
  for (const graph::Node& node : g.nodes())
    n += node.name.compare(0, prefix.size(), prefix) == 0 && std::find(ops.begin(), ops.end(), node.op) != ops.end();
  return n;
}

// `got` within `tolerance` of `want`, relative to |want| when it is over 1.
inline bool close(double got, double want, double tolerance) {
  return std::abs(got - want) <= tolerance * std::max(1.0, std::abs(want));
}

}  // namespace tagflow::testing
