// Pass "fusion": MatMul or Conv2D, then BiasAdd, then optionally an
// activation (Relu, Relu6, Elu, Tanh, Sigmoid), each read only by the next,
// become one _FusedMatMul or _FusedConv2D node (ops/fused_ops.cpp) with the
// last node's name: one kernel call where there were two or three, no
// intermediate tensor handed between nodes. The fused kernel runs the same
// kernels in the same order, so values are bitwise those of the separate
// nodes. The fused node gets the control inputs of every node it replaces.
//
// Not fused: float types other than float32/float64; nodes on different
// devices; an intermediate that is fetched, read twice or read through a
// control edge; a Conv2D and BiasAdd with different data formats.
#include <algorithm>

#include <fmt/format.h>

#include "graph/analysis/topological.hpp"
#include "graph/optimize/optimizer.hpp"
#include "graph/optimize/rewrite.hpp"
#include "ops/fused_ops.hpp"

namespace tagflow::graph::optimize {

namespace {

using ops::is_fusable_activation;

// The single data consumer of `id`, or kNoNode (read twice, by a control
// edge, or kept).
NodeId only_reader(const Rewriter& r, NodeId id) {
  if (r.kept(id)) return kNoNode;
  NodeId reader = kNoNode;
  for (const OutEdge& e : r.consumers(id)) {
    if (r.removed(e.dst)) continue;
    if (e.dst_input == kControlPort || reader != kNoNode) return kNoNode;
    reader = e.dst;
  }
  return reader;
}

std::string format_of(const Node& n) {
  const std::string* f = n.attr<std::string>("data_format");
  return f == nullptr ? "NHWC" : *f;
}

bool fuse_from(Rewriter& r, NodeId head) {
  const Node& h = r.node(head);
  const bool matmul = h.op == "MatMul";
  if ((!matmul && h.op != "Conv2D") || h.output_types.empty()) return false;
  const DType t = ops::base_dtype(h.output_types[0]);
  if (t != DType::float32 && t != DType::float64) return false;
  const NodeId bias = only_reader(r, head);
  if (bias == kNoNode) return false;
  const Node& b = r.node(bias);
  if (b.op != "BiasAdd" || b.inputs[0].node != head || b.device != h.device) return false;
  if (matmul ? format_of(b) != "NHWC" : format_of(b) != format_of(h)) return false;
  NodeId last = bias;
  std::string activation;
  const NodeId act = only_reader(r, bias);
  if (act != kNoNode && is_fusable_activation(r.node(act).op) && r.node(act).device == h.device) {
    last = act;
    activation = r.node(act).op;
  }
  ops::AttrMap attrs = h.attrs;
  attrs["T"] = t;
  attrs["num_args"] = int64_t{1};
  ops::AttrList ops_list;
  ops_list.s.push_back("BiasAdd");
  if (!activation.empty()) ops_list.s.push_back(activation);
  attrs["fused_ops"] = ops::AttrValue(ops_list);
  attrs["epsilon"] = 0.0001f;
  attrs["leakyrelu_alpha"] = 0.2f;
  std::vector<Endpoint> inputs = {h.inputs[0], h.inputs[1], b.inputs[1]};
  std::vector<NodeId> controls = h.control_inputs;
  controls.insert(controls.end(), b.control_inputs.begin(), b.control_inputs.end());
  if (last == act) {
    const auto& c = r.node(act).control_inputs;
    controls.insert(controls.end(), c.begin(), c.end());
  }
  controls.erase(std::remove_if(controls.begin(), controls.end(),
                                [&](NodeId c) { return c == head || c == bias || c == last; }),
                 controls.end());
  r.rewrite(last, matmul ? "_FusedMatMul" : "_FusedConv2D", inputs, std::move(controls), std::move(attrs));
  if (last != bias) r.remove(bias);
  r.remove(head);
  r.record(last, "rewritten",
           fmt::format("{} + BiasAdd{} fused", matmul ? "MatMul" : "Conv2D", activation.empty() ? "" : " + " + activation));
  return true;
}

}  // namespace

Expected<Graph> fuse_ops(const Graph& g, const OptimizeOptions& options) {
  return until_fixed_point(g, options, [&](const Graph& current, const OptimizeOptions& o, int* changes) -> Expected<Graph> {
    TF_ASSIGN_OR_RETURN(Rewriter r, Rewriter::make(current, o, "fusion"));
    for (NodeId id : analysis::topological_order(current))
      if (!r.removed(id)) fuse_from(r, id);
    *changes = r.num_changes();
    if (*changes == 0) return current;
    return r.finish();
  });
}

}  // namespace tagflow::graph::optimize
