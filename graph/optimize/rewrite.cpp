#include "graph/optimize/rewrite.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "graph/proto/graph_def.pb.h"
#include "graph/validate.hpp"
#include "ops/kernel.hpp"
#include "ops/op_def.hpp"

namespace tagflow::graph::optimize {

Expected<Rewriter> Rewriter::make(const Graph& g, const OptimizeOptions& options, std::string pass) {
  Rewriter r;
  r.g_ = g;
  TF_ASSIGN_OR_RETURN(r.cf_, analyze_control_flow(g));
  r.frame_of_ = r.cf_.frame_of;
  r.options_ = &options;
  r.pass_ = std::move(pass);
  const size_t n = static_cast<size_t>(g.num_nodes());
  r.kept_.assign(n, false);
  r.removed_.assign(n, false);
  r.consumers_.resize(n);
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    for (const OutEdge& e : g.out_edges(id)) r.consumers_[static_cast<size_t>(id)].push_back(e);
  }
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    const Node& node = g.node(id);
    r.kept_[static_cast<size_t>(id)] =
        node.op == "_Arg" || node.op == "_Retval" || options.keep.count(node.name) > 0 ||
        (options.keep.empty() && options.keep_sinks && r.consumers_[static_cast<size_t>(id)].empty());
  }
  return r;
}

bool Rewriter::has_consumers(NodeId id) const {
  for (const OutEdge& e : consumers(id))
    if (!removed(e.dst)) return true;
  return false;
}

std::string Rewriter::unique_name(const std::string& base) {
  if (g_.find(base) == kNoNode) return base;
  for (int i = 1;; ++i) {
    std::string name = fmt::format("{}_{}", base, i);
    if (g_.find(name) == kNoNode) return name;
  }
}

NodeId Rewriter::add(Node n, FrameId frame) {
  std::vector<Endpoint> inputs(n.inputs.begin(), n.inputs.end());
  std::vector<NodeId> controls = std::move(n.control_inputs);
  n.inputs.clear();
  n.control_inputs.clear();
  n.name = unique_name(n.name);
  const NodeId id = g_.add_node(std::move(n)).value();  // fresh name, no inputs: cannot fail
  frame_of_.push_back(frame);
  kept_.push_back(false);
  removed_.push_back(false);
  consumers_.emplace_back();
  Node& added = g_.mutable_node(id);
  for (size_t i = 0; i < inputs.size(); ++i) {
    added.inputs.push_back(inputs[i]);
    add_consumer(inputs[i], id, static_cast<int>(i));
  }
  g_.mutable_node(id).control_inputs = controls;
  for (NodeId c : controls) add_consumer({c, kControlPort}, id, kControlPort);
  return id;
}

void Rewriter::add_consumer(Endpoint src, NodeId dst, int dst_input) {
  consumers_[static_cast<size_t>(src.node)].push_back({src.port, dst, dst_input});
}

// Edges are dropped lazily: consumers() skips those that no longer exist
// (a hub read by 10^5 nodes would make each drop a long search).
void Rewriter::drop_consumer(Endpoint, NodeId, int) {}

const std::vector<OutEdge>& Rewriter::consumers(NodeId id) const {
  std::vector<OutEdge>& list = consumers_[static_cast<size_t>(id)];
  auto exists = [&](const OutEdge& e) {
    const Node& dst = g_.node(e.dst);
    if (e.dst_input == kControlPort)
      return std::find(dst.control_inputs.begin(), dst.control_inputs.end(), id) != dst.control_inputs.end();
    return static_cast<size_t>(e.dst_input) < dst.inputs.size() &&
           dst.inputs[static_cast<size_t>(e.dst_input)] == Endpoint{id, e.src_port};
  };
  auto key = [](const OutEdge& e) { return std::make_tuple(e.dst, e.dst_input, e.src_port); };
  std::sort(list.begin(), list.end(), [&](const OutEdge& a, const OutEdge& b) { return key(a) < key(b); });
  list.erase(std::unique(list.begin(), list.end(),
                         [&](const OutEdge& a, const OutEdge& b) { return key(a) == key(b); }),
             list.end());
  list.erase(std::remove_if(list.begin(), list.end(), [&](const OutEdge& e) { return !exists(e); }), list.end());
  return list;
}

void Rewriter::set_input(NodeId dst, int i, Endpoint src) {
  Node& n = g_.mutable_node(dst);
  drop_consumer(n.inputs[static_cast<size_t>(i)], dst, i);
  n.inputs[static_cast<size_t>(i)] = src;
  add_consumer(src, dst, i);
}

void Rewriter::set_control_inputs(NodeId dst, std::vector<NodeId> controls) {
  std::sort(controls.begin(), controls.end());
  controls.erase(std::unique(controls.begin(), controls.end()), controls.end());
  Node& n = g_.mutable_node(dst);
  for (NodeId c : n.control_inputs) drop_consumer({c, kControlPort}, dst, kControlPort);
  n.control_inputs = std::move(controls);
  for (NodeId c : g_.node(dst).control_inputs) add_consumer({c, kControlPort}, dst, kControlPort);
}

void Rewriter::replace_uses(Endpoint from, Endpoint to) {
  std::vector<OutEdge> uses;
  for (const OutEdge& e : consumers(from.node))
    if (e.src_port == from.port && e.dst_input != kControlPort) uses.push_back(e);
  for (const OutEdge& e : uses) set_input(e.dst, e.dst_input, to);
}

void Rewriter::replace_control_uses(NodeId from, NodeId to_control) {
  std::vector<NodeId> users;
  for (const OutEdge& e : consumers(from))
    if (e.dst_input == kControlPort) users.push_back(e.dst);
  for (NodeId u : users) {
    std::vector<NodeId> controls;
    for (NodeId c : node(u).control_inputs)
      if (c != from) controls.push_back(c);
    if (to_control != kNoNode && to_control != u) controls.push_back(to_control);
    set_control_inputs(u, std::move(controls));
  }
}

void Rewriter::rewrite(NodeId id, const std::string& op, std::vector<Endpoint> inputs,
                       std::vector<NodeId> controls, ops::AttrMap attrs) {
  {
    Node& n = g_.mutable_node(id);
    for (size_t i = 0; i < n.inputs.size(); ++i) drop_consumer(n.inputs[i], id, static_cast<int>(i));
    n.inputs.clear();
    n.op = op;
    n.attrs = std::move(attrs);
    n.def = nullptr;
    n.input_types.clear();
    n.output_types.clear();
    for (size_t i = 0; i < inputs.size(); ++i) {
      n.inputs.push_back(inputs[i]);
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) add_consumer(inputs[i], id, static_cast<int>(i));
  set_control_inputs(id, std::move(controls));
}

void Rewriter::record(NodeId id, std::string action, std::string detail) {
  ++changes_;
  if (options_->changes != nullptr)
    options_->changes->push_back({pass_, node(id).name, std::move(action), std::move(detail)});
}

Expected<Graph> Rewriter::finish() {
  Graph out;
  std::vector<NodeId> new_id(static_cast<size_t>(g_.num_nodes()), kNoNode);
  out.reserve(g_.num_nodes());
  for (NodeId id = 0; id < g_.num_nodes(); ++id) {
    if (removed(id)) continue;
    Node n = g_.node(id);
    n.inputs.clear();
    n.control_inputs.clear();
    TF_ASSIGN_OR_RETURN(new_id[static_cast<size_t>(id)], out.add_node(std::move(n)));
  }
  for (NodeId id = 0; id < g_.num_nodes(); ++id) {
    const NodeId to = new_id[static_cast<size_t>(id)];
    if (to == kNoNode) continue;
    const Node& n = g_.node(id);
    Node& m = out.mutable_node(to);
    for (const Endpoint& e : n.inputs) {
      const NodeId src = new_id[static_cast<size_t>(e.node)];
      if (src == kNoNode)
        return Status(Error::internal, fmt::format("optimize pass '{}': node '{}' reads '{}', which the pass removed",
                                                   pass_, n.name, g_.endpoint_name(e)));
      m.inputs.push_back({src, e.port});
    }
    for (NodeId c : n.control_inputs) {
      const NodeId src = new_id[static_cast<size_t>(c)];
      if (src != kNoNode && std::find(m.control_inputs.begin(), m.control_inputs.end(), src) == m.control_inputs.end())
        m.control_inputs.push_back(src);
    }
  }
  out.set_versions(g_.versions());
  out.share_library(g_);
  ValidateOptions v;
  v.allow_unknown_ops = true;
  v.keep_resolved = true;
  Status s = validate(out, v);
  if (!s.ok())
    return Status(Error::internal, fmt::format("optimize pass '{}' made an invalid graph: {}", pass_, s.message()));
  return out;
}

std::optional<std::vector<ops::Tensor>> evaluate_kernel(const Node& n, std::vector<ops::Tensor> inputs) {
  ops::KernelInit init{n.name, n.attrs, n.input_types, n.output_types};
  auto kernel = n.def->make_kernel(init);
  if (!kernel.ok() || (*kernel)->may_block()) return std::nullopt;
  std::vector<ops::Tensor> outputs(n.output_types.size());
  ops::KernelContext ctx(inputs.data(), static_cast<int>(inputs.size()), outputs.data(),
                         static_cast<int>(outputs.size()));
  if (!(*kernel)->compute(ctx).ok() || ctx.would_block()) return std::nullopt;
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!outputs[i].valid() || outputs[i].dtype() != ops::base_dtype(n.output_types[i])) return std::nullopt;
  return outputs;
}

bool is_pinned(const Node& n) {
  if (n.def == nullptr) return true;
  if (n.def->is_stateful() || !n.def->has_kernel()) return true;
  if (node_role(n) != ops::OpRole::ordinary) return true;
  if (n.op == "_Arg" || n.op == "_Retval" || n.op == "Placeholder" || n.op == "PlaceholderWithDefault" ||
      n.op == "PlaceholderV2")
    return true;
  for (DType t : n.input_types)
    if (ops::is_ref(t) || ops::base_dtype(t) == DType::resource) return true;
  for (DType t : n.output_types)
    if (ops::is_ref(t) || ops::base_dtype(t) == DType::resource) return true;
  return false;
}

const ops::Tensor* const_value(const Node& n) {
  if (n.op != "Const") return nullptr;
  auto it = n.attrs.find("value");
  if (it == n.attrs.end()) return nullptr;
  return it->second.get_if<ops::Tensor>();
}

NodeId const_through_enters(const Rewriter& r, Endpoint e, bool identities, bool* direct) {
  if (direct != nullptr) *direct = true;
  for (int guard = 0; guard < 1024; ++guard) {
    const Node& n = r.node(e.node);
    if (e.port != 0) return kNoNode;
    if (n.op == "Const") return e.node;
    const bool passes = node_role(n) == ops::OpRole::enter || (identities && n.op == "Identity");
    if (!passes || n.inputs.size() != 1 || n.output_types.empty() || ops::is_ref(n.output_types[0])) return kNoNode;
    e = n.inputs[0];
    if (direct != nullptr) *direct = false;
  }
  return kNoNode;
}

bool all_elements_equal(const ops::Tensor& t, double v) {
  if (!t.valid() || t.num_elements() == 0) return false;
  bool ok = true;
  const bool known = ops::dispatch_real(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* d = t.data<T>();
    for (int64_t i = 0; i < t.num_elements() && ok; ++i) ok = static_cast<double>(d[i]) == v;
  });
  if (known) return ok;
  if (t.dtype() == DType::boolean) {
    const bool* d = t.data<bool>();
    for (int64_t i = 0; i < t.num_elements() && ok; ++i) ok = (d[i] ? 1.0 : 0.0) == v;
    return ok;
  }
  return false;
}

Node make_const(const std::string& name, const ops::Tensor& value, const std::string& device,
                std::vector<NodeId> controls) {
  Node n;
  n.name = name;
  n.op = "Const";
  n.device = device;
  n.attrs["dtype"] = value.dtype();
  n.attrs["value"] = ops::AttrValue(ops::Tensor(value));
  n.control_inputs = std::move(controls);
  return n;
}

std::vector<NodeId> deadness_controls(const Rewriter& r, NodeId id, const std::vector<Endpoint>& inputs_dropped) {
  std::vector<NodeId> controls = r.node(id).control_inputs;
  for (const Endpoint& e : inputs_dropped) {
    const Node& in = r.node(e.node);
    if (in.op == "Const") {
      for (NodeId c : in.control_inputs) controls.push_back(c);
    } else {
      controls.push_back(e.node);
    }
  }
  std::sort(controls.begin(), controls.end());
  controls.erase(std::unique(controls.begin(), controls.end()), controls.end());
  return controls;
}

bool exact_arithmetic(DType t) {
  switch (ops::base_dtype(t)) {
    case DType::int8:
    case DType::int16:
    case DType::int32:
    case DType::int64:
    case DType::uint8:
    case DType::uint16:
    case DType::uint32:
    case DType::uint64:
      return true;
    default:
      return false;
  }
}

OptimizeOptions with_sinks_kept(const Graph& g, const OptimizeOptions& options) {
  OptimizeOptions o = options;
  if (!o.keep.empty() || !o.keep_sinks) return o;
  for (NodeId id = 0; id < g.num_nodes(); ++id)
    if (g.out_edges(id).empty()) o.keep.insert(g.node(id).name);
  o.keep_sinks = false;
  return o;
}

Expected<Graph> until_fixed_point(const Graph& g, const OptimizeOptions& options,
                                  const std::function<Expected<Graph>(const Graph&, const OptimizeOptions&,
                                                                      int* changes)>& round,
                                  int max_rounds) {
  // The nodes kept are those of the input: a sink a round gives readers
  // stays kept in the next.
  const OptimizeOptions o = with_sinks_kept(g, options);
  Graph current = g;
  for (int i = 0; i < max_rounds; ++i) {
    int changes = 0;
    TF_ASSIGN_OR_RETURN(Graph next, round(current, o, &changes));
    current = std::move(next);
    if (changes == 0) break;
  }
  return current;
}

}  // namespace tagflow::graph::optimize
