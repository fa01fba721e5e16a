// The items lowering works on, shared by the whole-graph lowering
// (graph/functions/lower_functional.hpp) and FunctionInstantiator
// (graph/functions/function_instantiator.hpp): nodes with their inputs by name, where
// each is written (its call chain), and the expansion of functional items.
// Internal to graph/; plain values and pure functions.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/functions/function_library.hpp"
#include "graph/functions/functional_op.hpp"

namespace tagflow::graph {
inline namespace functions {

// One step of a call chain: node `node` (as written where it is) calls
// function `function` as its `role` (function, then_branch, body, ...).
struct Link {
  std::string node;
  std::string role;
  std::string function;
};

struct Item {
  NodeSpec spec;
  std::vector<Link> chain;  // the calls whose bodies hold this node, outermost first
  std::string original;     // its name where it is written (a body, or the graph)
  // A branch, cond or body call made by lowering: the link it adds is the
  // functional node's, in that role.
  std::optional<Link> call_as;
};

// Where an item is written: "node 'while' → body 'b' → node 'mul'".
std::string location(const std::vector<Link>& chain, const std::string& original);

// Where each node lowered from a function body is written, by its name in
// the lowered graph: what errors about it say instead of that name.
struct ChainEntry {
  std::string location;  // "node 'while' → body 'b' → node 'mul'"
  bool helper = false;   // made by lowering that node, not written in a body
};
using ChainMap = std::unordered_map<std::string, ChainEntry>;

// `message` with the first quoted node name `chains` knows named by where
// that node is written: "node 'x'" becomes its location, any other "'x'"
// gains it in parentheses.
std::string with_chain(const ChainMap& chains, const std::string& message);

// The graph's node as an item: inputs by name.
Item item_of(const Graph& g, const Node& n);

// The graph of `items`, inputs resolved by name; versions and library of `g`.
Expected<Graph> build_graph(const std::vector<Item>& items, const Graph& g);

// `items` with every functional item expanded, and what expanding adds, in
// order. `names` holds every name of the graph being lowered and gets the
// new ones; `chains` gets the location of each node lowered from a body;
// `outside` nodes of the graph are not among `items` (for the node limit,
// `max_nodes`, 0: none). Errors name the call chain.
Expected<std::vector<Item>> expand_functional(const FunctionLibrary& lib, std::vector<Item> items,
                                              std::unordered_set<std::string>* names, ChainMap* chains,
                                              int64_t max_nodes, int64_t outside);

}  // namespace functions
}  // namespace tagflow::graph
