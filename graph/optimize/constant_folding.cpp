// Pass "constant_folding": a node whose data inputs are all known values is
// computed once, by its own kernel, and replaced by a Const of the result.
//
// Known values: a Const's value, and the value an Enter (of any frame,
// nested any depth) passes on from a known value — so a computation on loop
// invariants folds inside the loop. The folded Const keeps the node's name
// and device; it gets the control inputs that keep it in the node's frame
// and dead exactly when the node was (deadness_controls): the node's own,
// and for each input the Enter it read or the Const's control inputs.
//
// Shape, Size and Rank of a tensor whose static shape is known (graph/
// shape_inference.hpp) fold too, waiting on the tensor's node through a
// control input (the tensor is still computed; only its shape is known).
//
// Never folded: stateful, random and blocking ops, control-flow and
// transfer primitives, function calls, placeholders, ops on refs or
// resources, outputs of variant dtype (TensorLists have no Const form),
// results over OptimizeOptions::max_constant_bytes, and any node whose
// kernel fails on its constant inputs (the step reports that error at run
// time, where it always did).
#include <algorithm>
#include <limits>
#include <optional>
#include <memory>

#include <fmt/format.h>

#include "graph/analysis/topological.hpp"
#include "graph/optimize/optimizer.hpp"
#include "graph/optimize/rewrite.hpp"
#include "graph/shapes/shape_inference.hpp"
#include "ops/kernel.hpp"
#include "ops/op_def.hpp"

namespace tagflow::graph::optimize {

namespace {

// The value an endpoint always holds, or nullptr: a Const, or an Enter
// chain from one.
const ops::Tensor* known_value(const Rewriter& r, Endpoint e) {
  const NodeId c = const_through_enters(r, e);
  return c == kNoNode ? nullptr : const_value(r.node(c));
}

bool foldable_types(const Node& n) {
  if (n.output_types.empty()) return false;
  for (DType t : n.output_types)
    if (ops::base_dtype(t) == DType::variant || ops::base_dtype(t) == DType::resource || ops::is_ref(t)) return false;
  return true;
}

// The value of Shape, Size or Rank of an input whose static shape is known
// (graph/shapes/shape_inference.hpp); nullopt otherwise.
std::optional<ops::Tensor> shape_value(const Node& n, const ops::PartialShape& s) {
  if (n.op == "Rank") {
    if (s.unknown_rank) return std::nullopt;
    return ops::Tensor::scalar<int32_t>(static_cast<int32_t>(s.dims.size()));
  }
  if (!shape::fully_known(s) || n.output_types.empty()) return std::nullopt;
  const DType out = ops::base_dtype(n.output_types[0]);
  if (out != DType::int32 && out != DType::int64) return std::nullopt;
  if (n.op == "Size") {
    int64_t size = 1;
    for (int64_t d : s.dims) size *= d;
    if (out == DType::int32) {
      if (size > std::numeric_limits<int32_t>::max()) return std::nullopt;
      return ops::Tensor::scalar<int32_t>(static_cast<int32_t>(size));
    }
    return ops::Tensor::scalar<int64_t>(size);
  }
  if (n.op == "Shape") {
    if (out == DType::int64) return ops::Tensor::vector<int64_t>(s.dims);
    std::vector<int32_t> dims;
    for (int64_t d : s.dims) {
      if (d > std::numeric_limits<int32_t>::max()) return std::nullopt;
      dims.push_back(static_cast<int32_t>(d));
    }
    return ops::Tensor::vector<int32_t>(dims);
  }
  return std::nullopt;
}

Expected<Graph> fold_round(const Graph& g, const OptimizeOptions& options, int* changes) {
  TF_ASSIGN_OR_RETURN(Rewriter r, Rewriter::make(g, options, "constant_folding"));
  // Static shapes, for Shape, Size and Rank; none when the graph has no
  // such node or its shapes contradict each other.
  std::optional<ShapeMap> shapes;
  for (const Node& n : g.nodes())
    if ((n.op == "Shape" || n.op == "Size" || n.op == "Rank") && !is_pinned(n)) {
      auto inferred = infer_shapes(g);
      if (inferred.ok()) shapes = std::move(inferred).value();
      break;
    }
  for (NodeId id : analysis::topological_order(g)) {
    const Node& n = r.node(id);
    if (shapes && (n.op == "Shape" || n.op == "Size" || n.op == "Rank") && n.inputs.size() == 1 && !is_pinned(n) &&
        !n.input_types.empty() && ops::base_dtype(n.input_types[0]) != DType::variant &&
        ops::base_dtype(n.input_types[0]) != DType::resource) {
      const Endpoint in = n.inputs[0];
      if (auto v = shape_value(n, shapes->at(in).shape)) {
        std::vector<NodeId> controls = deadness_controls(r, id, {in});
        ops::AttrMap attrs;
        attrs["dtype"] = v->dtype();
        attrs["value"] = ops::AttrValue(ops::Tensor(*v));
        const std::string what = v->debug_string(8);
        r.rewrite(id, "Const", {}, std::move(controls), std::move(attrs));
        r.record(id, "folded", what + " (static shape)");
        continue;
      }
    }
    if (n.inputs.empty() || is_pinned(n) || !foldable_types(n)) continue;
    std::vector<ops::Tensor> inputs;
    bool known = true;
    for (const Endpoint& e : n.inputs) {
      const ops::Tensor* v = known_value(r, e);
      if (v == nullptr) {
        known = false;
        break;
      }
      inputs.push_back(*v);
    }
    if (!known) continue;
    auto outputs = evaluate_kernel(n, std::move(inputs));
    if (!outputs) continue;
    int64_t bytes = 0;
    for (const ops::Tensor& t : *outputs) bytes += static_cast<int64_t>(std::max(t.byte_size(), t.heap_bytes()));
    if (bytes > options.max_constant_bytes) continue;
    std::vector<Endpoint> inputs_read(n.inputs.begin(), n.inputs.end());
    std::vector<NodeId> controls = deadness_controls(r, id, inputs_read);
    const std::string device = n.device;
    if (outputs->size() == 1) {
      ops::Tensor value = (*outputs)[0];
      ops::AttrMap attrs;
      attrs["dtype"] = value.dtype();
      attrs["value"] = value;
      r.rewrite(id, "Const", {}, std::move(controls), std::move(attrs));
      r.record(id, "folded", value.debug_string(8));
      continue;
    }
    // Several outputs: one Const per output read; the node stays for its
    // control consumers (pruned if it has none).
    bool any = false;
    for (size_t port = 0; port < outputs->size(); ++port) {
      bool read = false;
      for (const OutEdge& e : r.consumers(id))
        if (e.src_port == static_cast<int>(port) && e.dst_input != kControlPort) read = true;
      if (!read) continue;
      const NodeId c = r.add(make_const(fmt::format("{}/folded_{}", r.node(id).name, port), (*outputs)[port], device,
                                        controls),
                             r.frame_of(id));
      r.replace_uses({id, static_cast<int>(port)}, {c, 0});
      any = true;
    }
    if (any) r.record(id, "folded", fmt::format("{} outputs", outputs->size()));
  }
  *changes = r.num_changes();
  if (*changes == 0) return g;
  return r.finish();
}

}  // namespace

Expected<Graph> fold_constants(const Graph& g, const OptimizeOptions& options) {
  return until_fixed_point(g, options, [&](const Graph& current, const OptimizeOptions& o, int* changes) {
    return fold_round(current, o, changes);
  }, 1);  // one round reaches the fixed point: nodes are visited producers first
}

}  // namespace tagflow::graph::optimize
