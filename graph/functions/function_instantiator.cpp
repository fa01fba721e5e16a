#include "graph/functions/function_instantiator.hpp"

#include <unordered_map>
#include <unordered_set>

#include "graph/functions/lowering.hpp"
#include "graph/functions/run_as_written.hpp"
#include "graph/proto/graph_def.pb.h"

namespace tagflow::graph {
inline namespace functions {

namespace {

// Stands for data input k of the functional node an expansion was made
// for: the step graph's input replaces it.
const char* const kCallInput = "\x01" "call input";

}  // namespace

struct FunctionInstantiator::State {
  explicit State(const Graph& whole) : library(whole.library()), lib(library) {}
  tensorflow::FunctionDefLibrary library;  // the whole graph's, which `lib` indexes
  FunctionLibrary lib;
  std::unordered_set<std::string> names;  // the whole graph's and every lowered node's
  ChainMap chains;
  // By functional node: its expansion, the node's data inputs as kCallInput.
  std::unordered_map<std::string, std::vector<Item>> expansions;
  int64_t max_nodes = 0;
};

FunctionInstantiator::FunctionInstantiator(const Graph& whole, int64_t max_nodes)
    : state_(std::make_unique<State>(whole)) {
  state_->max_nodes = max_nodes;
  state_->names.reserve(static_cast<size_t>(whole.num_nodes()));
  for (const Node& n : whole.nodes()) state_->names.insert(n.name);
}

FunctionInstantiator::~FunctionInstantiator() = default;

Expected<bool> FunctionInstantiator::lower(Graph* step) {
  State& st = *state_;
  const Graph& g = *step;
  bool any = false;
  auto lowers = [&](const Node& n) { return is_functional(n, st.lib) && !marked_run_as_written(n); };
  for (const Node& n : g.nodes()) any = any || lowers(n);
  if (!any) return false;
  std::vector<Item> items;
  items.reserve(static_cast<size_t>(g.num_nodes()));
  for (const Node& n : g.nodes()) {
    Item item = item_of(g, n);
    if (!lowers(n)) {
      st.names.insert(n.name);  // a step's own nodes (_feed/0) are names too
      items.push_back(std::move(item));
      continue;
    }
    auto cached = st.expansions.find(n.name);
    if (cached == st.expansions.end()) {
      Item call = item;
      for (size_t k = 0; k < call.spec.inputs.size(); ++k) call.spec.inputs[k] = {kCallInput, static_cast<int>(k)};
      std::vector<Item> one;
      one.push_back(std::move(call));
      TF_ASSIGN_OR_RETURN(std::vector<Item> expansion,
                          expand_functional(st.lib, std::move(one), &st.names, &st.chains, st.max_nodes,
                                            g.num_nodes() - 1));
      cached = st.expansions.emplace(n.name, std::move(expansion)).first;
    }
    for (const Item& lowered : cached->second) {
      items.push_back(lowered);
      for (NamedEndpoint& e : items.back().spec.inputs)
        if (e.node == kCallInput) e = item.spec.inputs[static_cast<size_t>(e.port)];
    }
  }
  if (st.max_nodes > 0 && static_cast<int64_t>(items.size()) > st.max_nodes)
    return Status(Error::resource_exhausted,
                  "lowering functional ops: the step's graph has " + std::to_string(items.size()) +
                      " nodes with its functions inlined, over the limit of " + std::to_string(st.max_nodes) +
                      " nodes (--max-nodes, [tagflow] max-nodes)");
  TF_ASSIGN_OR_RETURN(Graph lowered, build_graph(items, g));
  *step = std::move(lowered);
  return true;
}

Status FunctionInstantiator::with_call_chain(const Status& s) const {
  if (s.ok() || state_->chains.empty()) return s;
  return Status(s.code(), with_chain(state_->chains, s.message()));
}

}  // namespace functions
}  // namespace tagflow::graph
