// Pass "common_subexpressions": two nodes with the same op, device,
// attrs, data inputs (in order; either order for commutative ops) and
// control inputs compute the same value in the same frame, iteration and
// deadness: the later one's consumers read the earlier one, and it is
// removed. Consts with equal dtype and value merge the same way.
//
// Never merged: stateful and random ops, control-flow and transfer
// primitives, function calls, ops on refs or resources (is_pinned), and a
// node that is kept (fetched or fed): it stays, and only later twins merge
// into the first one that is not kept.
#include <algorithm>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "graph/analysis/topological.hpp"
#include "graph/optimize/optimizer.hpp"
#include "graph/optimize/rewrite.hpp"

namespace tagflow::graph::optimize {

namespace {

bool commutative(const std::string& op) {
  return op == "Add" || op == "AddV2" || op == "Mul" || op == "Maximum" || op == "Minimum" || op == "LogicalAnd" ||
         op == "LogicalOr" || op == "Equal" || op == "NotEqual" || op == "BitwiseAnd" || op == "BitwiseOr" ||
         op == "BitwiseXor";
}

std::vector<Endpoint> canonical_inputs(const Node& n) {
  std::vector<Endpoint> in(n.inputs.begin(), n.inputs.end());
  if (commutative(n.op) && in.size() == 2) {
    auto key = [](const Endpoint& e) { return std::make_pair(e.node, e.port); };
    if (key(in[1]) < key(in[0])) std::swap(in[0], in[1]);
  }
  return in;
}

std::vector<NodeId> sorted_controls(const Node& n) {
  std::vector<NodeId> c = n.control_inputs;
  std::sort(c.begin(), c.end());
  c.erase(std::unique(c.begin(), c.end()), c.end());
  return c;
}

size_t signature(const Node& n) {
  size_t h = std::hash<std::string>{}(n.op) * 31 + std::hash<std::string>{}(n.device);
  for (const Endpoint& e : canonical_inputs(n)) h = h * 1000003u + static_cast<size_t>(e.node) * 17u + static_cast<size_t>(e.port + 1);
  for (NodeId c : sorted_controls(n)) h = h * 7919u + static_cast<size_t>(c);
  if (const ops::Tensor* v = const_value(n)) {
    // The value's first bytes: Consts that differ rarely share a bucket.
    h = h * 31 + static_cast<size_t>(v->num_elements()) * 7 + static_cast<size_t>(v->dtype());
    if (!ops::dtype_is_object(v->dtype()) && v->raw_data() != nullptr) {
      const size_t n_bytes = std::min<size_t>(v->byte_size(), 256);
      h = h * 1000003u + std::hash<std::string_view>{}(
                             std::string_view(static_cast<const char*>(v->raw_data()), n_bytes));
    }
  }
  return h;
}

bool same(const Node& a, const Node& b) {
  if (a.op != b.op || a.device != b.device || canonical_inputs(a) != canonical_inputs(b) ||
      sorted_controls(a) != sorted_controls(b) || a.output_types != b.output_types)
    return false;
  if (a.op == "Const") {
    const ops::Tensor* x = const_value(a);
    const ops::Tensor* y = const_value(b);
    return x != nullptr && y != nullptr && x->dtype() == y->dtype() && x->shape() == y->shape() && x->equals(*y);
  }
  return a.attrs == b.attrs;
}

bool mergeable(const Node& n) { return n.op == "Const" || !is_pinned(n); }

Expected<Graph> cse_round(const Graph& g, const OptimizeOptions& options, int* changes) {
  TF_ASSIGN_OR_RETURN(Rewriter r, Rewriter::make(g, options, "common_subexpressions"));
  std::unordered_multimap<size_t, NodeId> seen;
  for (NodeId id : analysis::topological_order(g)) {
    const Node& n = r.node(id);
    if (!mergeable(n) || n.output_types.empty()) continue;
    const size_t h = signature(n);
    NodeId twin = kNoNode;
    auto range = seen.equal_range(h);
    for (auto it = range.first; it != range.second; ++it)
      if (same(r.node(it->second), n)) {
        twin = it->second;
        break;
      }
    if (twin == kNoNode) {
      seen.emplace(h, id);
      continue;
    }
    // A kept node stays itself (it keeps its name and its readers).
    if (r.kept(id)) continue;
    const NodeId keep = twin, drop = id;
    const int outputs = r.graph().num_outputs(drop);
    for (int p = 0; p < outputs; ++p) r.replace_uses({drop, p}, {keep, p});
    r.replace_control_uses(drop, keep);
    r.remove(drop);
    r.record(drop, "merged", fmt::format("into '{}'", r.node(keep).name));
  }
  *changes = r.num_changes();
  if (*changes == 0) return g;
  return r.finish();
}

}  // namespace

Expected<Graph> eliminate_common_subexpressions(const Graph& g, const OptimizeOptions& options) {
  return until_fixed_point(g, options, [&](const Graph& current, const OptimizeOptions& o, int* changes) {
    return cse_round(current, o, changes);
  }, 1);  // one round reaches the fixed point: nodes are visited producers first
}

}  // namespace tagflow::graph::optimize
