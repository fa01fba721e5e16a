// Helpers for the placement and partition suites: the executor suite's
// GraphDef-text builders (tests/actors/test_graphs.hpp), validated graphs,
// and device look-ups.
#pragma once

#include <set>
#include <stdexcept>
#include <string>

#include "../actors/test_graphs.hpp"
#include "graph/graph.hpp"
#include "graph/validate.hpp"

namespace tagflow::graph::testing {

using tagflow::testing::binary;
using tagflow::testing::counting_loop;
using tagflow::testing::enter;
using tagflow::testing::int_const;
using tagflow::testing::merge;
using tagflow::testing::node;
using tagflow::testing::type_attr;
using tagflow::testing::unary;

inline Graph validated(const std::string& text) {
  Graph g = tagflow::testing::parse(text);
  Status s = validate(g);
  if (!s.ok()) throw std::runtime_error(s.to_string());
  return g;
}

inline std::string device_of(const Graph& g, const std::string& name) {
  NodeId id = g.find(name);
  if (id == kNoNode) throw std::runtime_error("no node " + name);
  return g.node(id).device;
}

inline std::set<std::string> devices_used(const Graph& g) {
  std::set<std::string> out;
  for (const Node& n : g.nodes()) out.insert(n.device);
  return out;
}

inline std::string with_device(const std::string& device) {
  return "device: \"" + device + "\"";
}

}  // namespace tagflow::graph::testing
