// What the passes of graph/optimize/ share: a Rewriter that edits a copy of
// a validated graph — nodes added, inputs redirected, nodes removed — with
// the consumers of every node kept current, and turns it back into a
// compact, validated Graph; and the facts about nodes every pass asks
// (kept, stateful, a known constant, deadness-preserving control inputs).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "graph/analysis/control_flow.hpp"
#include "graph/graph.hpp"
#include "graph/optimize/optimizer.hpp"
#include "ops/tensor.hpp"

namespace tagflow::graph::optimize {

class Rewriter {
 public:
  // `g` must be validated. The frames are those of `g` (analysed once).
  static Expected<Rewriter> make(const Graph& g, const OptimizeOptions& options, std::string pass);

  const Graph& graph() const { return g_; }
  const Node& node(NodeId id) const { return g_.node(id); }
  int num_nodes() const { return g_.num_nodes(); }
  // The frame of a node of the input graph, or of an added node (given
  // when it was added).
  FrameId frame_of(NodeId id) const { return frame_of_[static_cast<size_t>(id)]; }
  const ControlFlowInfo& frames() const { return cf_; }

  // A node whose name and value must survive (OptimizeOptions::keep, _Arg,
  // _Retval, a sink when keep_sinks); it is never removed or replaced.
  bool kept(NodeId id) const { return kept_[static_cast<size_t>(id)]; }
  bool removed(NodeId id) const { return removed_[static_cast<size_t>(id)]; }
  // The current consumers of a node, in (consumer, input) order (removed
  // nodes' edges included until finish()). Valid until the next change.
  const std::vector<OutEdge>& consumers(NodeId id) const;
  bool has_consumers(NodeId id) const;

  // A name no node has: `base`, else `base_1`, `base_2`, ...
  std::string unique_name(const std::string& base);
  // Adds a node (inputs must exist; def may be null: finish() resolves it).
  NodeId add(Node n, FrameId frame);
  // Input `i` of `dst` reads `src`.
  void set_input(NodeId dst, int i, Endpoint src);
  void set_control_inputs(NodeId dst, std::vector<NodeId> controls);
  // Every data input that reads `from` reads `to`; with `controls`, every
  // control input on from.node is on `to_control` instead (kNoNode: dropped).
  void replace_uses(Endpoint from, Endpoint to);
  void replace_control_uses(NodeId from, NodeId to_control);
  // Turns `id` into another op in place (same name and device): inputs,
  // control inputs and attrs replaced, resolved again by finish().
  void rewrite(NodeId id, const std::string& op, std::vector<Endpoint> inputs, std::vector<NodeId> controls,
               ops::AttrMap attrs);
  void remove(NodeId id) { removed_[static_cast<size_t>(id)] = true; }

  void record(NodeId id, std::string action, std::string detail = "");
  int num_changes() const { return changes_; }

  // The graph without removed nodes (control inputs on them dropped; a
  // data input reading one is an internal error naming both), validated.
  Expected<Graph> finish();

 private:
  Rewriter() = default;
  Graph g_;
  ControlFlowInfo cf_;
  std::vector<FrameId> frame_of_;
  std::vector<bool> kept_, removed_;
  mutable std::vector<std::vector<OutEdge>> consumers_;  // may hold dropped edges: see consumers()
  const OptimizeOptions* options_ = nullptr;
  std::string pass_;
  int changes_ = 0;

  void add_consumer(Endpoint src, NodeId dst, int dst_input);
  void drop_consumer(Endpoint src, NodeId dst, int dst_input);
};

// An op that must run exactly as often as written: stateful, blocking,
// random, a control-flow or transfer primitive, a function call, or an op
// tagflow does not know.
bool is_pinned(const Node& n);
// Runs the node's own kernel on `inputs`, as a step would: every output,
// or nullopt when the kernel cannot be made, may block, fails or leaves an
// output unset or of another dtype. For passes that compute a node before
// the step (constant folding, a loop's predicate on entry).
std::optional<std::vector<ops::Tensor>> evaluate_kernel(const Node& n, std::vector<ops::Tensor> inputs);
// The value a node's output holds whatever its inputs: a Const's value
// (nullptr for anything else).
const ops::Tensor* const_value(const Node& n);
// The Const that endpoint `e` reads through a chain of (non-ref) Enters,
// and, with `identities`, Identities: the Const node, or kNoNode. *direct
// (if given) says whether `e` is the Const itself.
NodeId const_through_enters(const Rewriter& r, Endpoint e, bool identities = false, bool* direct = nullptr);
// Whether a const endpoint's value is a scalar (or any shape) whose every
// element equals `v`.
bool all_elements_equal(const ops::Tensor& t, double v);
// A Const node holding `value`.
Node make_const(const std::string& name, const ops::Tensor& value, const std::string& device,
                std::vector<NodeId> controls);
// The control inputs a replacement of node `id` needs so that it is dead
// exactly when `id` was: `id`'s own control inputs and, for each data input
// `inputs_read` that the replacement no longer reads, that input's node —
// or, for a Const, that Const's control inputs (a Const with none, in the
// root frame, is never dead). Sorted, without duplicates.
std::vector<NodeId> deadness_controls(const Rewriter& r, NodeId id, const std::vector<Endpoint>& inputs_dropped);
// Whether a data type is one whose arithmetic may be reordered without
// changing a value (the integer types: wrap-around arithmetic is a ring).
bool exact_arithmetic(DType t);

// Runs `round` until it changes nothing (at most `max_rounds` times):
// passes reach their own fixed point, so running one twice changes nothing.
// Each round gets the options with the kept nodes fixed (with_sinks_kept).
Expected<Graph> until_fixed_point(const Graph& g, const OptimizeOptions& options,
                                  const std::function<Expected<Graph>(const Graph&, const OptimizeOptions&,
                                                                      int* changes)>& round,
                                  int max_rounds = 16);
// `options` with OptimizeOptions::keep_sinks turned into names: the nodes
// of `g` that nothing reads.
OptimizeOptions with_sinks_kept(const Graph& g, const OptimizeOptions& options);

}  // namespace tagflow::graph::optimize
