// Executable: what is analysed once about one partition's graph and then
// shared, read-only, by every step and every actor that runs it — each
// node's kernel, kind, frame and out edges, and per static frame the layout
// of an iteration's state (local node order, input slots, initial pending
// counts, Exits, number of Enters). Immutable after build(); thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/control_flow.hpp"
#include "graph/graph.hpp"
#include "ops/kernel.hpp"

namespace tagflow::actors {

using graph::FrameId;
using graph::NodeId;
using ops::Expected;
using ops::Status;

// How the executor treats a node (DESIGN.md §3).
enum class NodeKind {
  ordinary,
  switch_op,
  switch_n,
  merge,
  enter,
  exit,
  next_iteration,
  loop_cond,
  control_trigger,
  arg,     // a fed value: `_Arg` with attr index into the step's feeds
  retval,  // a fetched value: `_Retval` with attr index into the fetches
  send,    // `_Send`: its value and dead bit leave for the matching `_Recv`
  recv,    // `_Recv`: fires when its transfer (and its control inputs) arrived
};

const char* to_string(NodeKind k);

struct EdgeOut {
  int src_port;   // kControlPort for a control edge
  int dst;        // item index
  int dst_slot;   // input index at dst; kControlPort for a control edge
  bool last_use = false;  // the last data edge of src_port: the value moves
  // The destination as its frame's iteration state sees it, resolved once
  // so that delivering a value touches only the destination's counters and
  // input slot, never its NodeItem (the per-node hot path).
  bool dst_merge = false;
  bool dst_expensive = false;
  int dst_local = 0;   // dst's local id
  int dst_input = -1;  // dst's input slot; -1 for a control edge
};

struct NodeItem {
  NodeId node_id = graph::kNoNode;
  const graph::Node* node = nullptr;  // owned by the Executable's graph
  NodeKind kind = NodeKind::ordinary;
  std::unique_ptr<ops::Kernel> kernel;  // ordinary nodes only
  bool expensive = false;  // worth handing to a worker (MatMul and the like)
  FrameId frame = graph::kRootFrame;  // the static frame of this node
  int local_id = 0;       // index among its frame's nodes
  int input_start = 0;    // first input slot in its frame's iteration state
  int num_inputs = 0;     // data inputs
  int num_control_inputs = 0;
  int num_outputs = 0;
  std::vector<EdgeOut> out_edges;  // data edges by port, then control edges
  // Enter: the frame it enters, and whether its value is a loop invariant.
  FrameId enter_frame = graph::kRootFrame;
  bool is_constant = false;
  // Merge: data inputs that come from NextIteration (back edges); iteration
  // 0 waits only for the others, later iterations only for these.
  std::vector<bool> merge_back_edge;
  int merge_forward_inputs = 0;
  int merge_back_inputs = 0;
  bool merge_index_used = false;  // some edge reads its value_index output
  // A Merge the partitioner made to learn whether any input is live: it
  // takes the first live input even under strict-merge.
  bool merge_first_live = false;
  int index = 0;  // _Arg / _Retval index
  // _Send: the partition (index into the partitions built together) and the
  // _Recv item its value goes to; set by Executable::build_partitions.
  int transfer_partition = -1;
  int transfer_item = -1;
  const std::string* transfer_key = nullptr;  // _Send/_Recv: tensor_name
  // Inputs fed by a ref output (a variable's handle) that the node takes
  // as a plain value: the executor reads the variable when the node runs.
  std::vector<int> deref_inputs;
};

// The per-iteration counters of one node instance (DESIGN.md §3).
struct NodeState {
  int pending;         // inputs still to arrive (Merges: control inputs)
  int dead_count;      // inputs that arrived dead
  int merge_live = 0;  // Merge: index + 1 of its live input, 0 if none yet
};

struct FrameLayout {
  std::string name;
  FrameId parent = -1;
  int64_t parallel_iterations = 1;
  std::vector<int> items;       // item indices of the frame's nodes, by local id
  int num_input_slots = 0;
  int num_enters = 0;           // Enters (of any parent iteration) that enter it
  int num_recvs = 0;            // _Recvs: each takes one transfer per iteration
  std::vector<int> exits;       // item indices of its Exits
  // An instance whose Enters all arrive dead computes nothing but dead
  // Exits: no _Send, _Recv or ControlTrigger in the frame or a frame nested
  // in it, and no Enter of it depends on its own Exits. Such an instance is
  // not started at all (docs/protocol.md, "Dead frame instances").
  bool skip_dead_instances = false;
  std::vector<int> sources;     // items ready as soon as an iteration starts
  // Loop-variable (not is_constant) Enters into the frame that feed nodes
  // other than Merges, or Merges through a control edge: those inputs
  // arrive dead in iterations >= 1.
  std::vector<int> enters_beyond_merges;
  std::vector<NodeState> initial_state;  // by local id
};

class Executable {
 public:
  // Makes every kernel and lays out every frame. The graph must be
  // validated; errors (a kernel that cannot be made, an unsupported op)
  // name the node. `partition` names the partition in error messages.
  static Expected<std::shared_ptr<const Executable>> build(graph::Graph g,
                                                           std::string partition = "local");
  // The partitions of one graph, built together so that every `_Send` knows
  // the partition and `_Recv` its value goes to: a Send and a Recv match when
  // their tensor_name, send_device and recv_device agree. A Send or Recv
  // without exactly one partner is an error naming its key.
  static Expected<std::vector<std::shared_ptr<const Executable>>> build_partitions(
      std::vector<graph::Graph> graphs, std::vector<std::string> names);

  const graph::Graph& graph() const { return graph_; }
  const graph::ControlFlowInfo& control_flow() const { return control_flow_; }
  const std::vector<NodeItem>& items() const { return items_; }
  const NodeItem& item(int i) const { return items_[static_cast<size_t>(i)]; }
  const FrameLayout& frame(FrameId f) const { return frames_[static_cast<size_t>(f)]; }
  int num_frames() const { return static_cast<int>(frames_.size()); }
  const std::string& partition() const { return partition_; }
  int num_args() const { return num_args_; }
  int num_retvals() const { return num_retvals_; }
  bool has_control_flow() const { return frames_.size() > 1; }
  bool has_recvs() const { return num_recvs_ > 0; }

 private:
  Status init();
  void find_skippable_frames();

  graph::Graph graph_;
  graph::ControlFlowInfo control_flow_;
  std::vector<NodeItem> items_;  // indexed by NodeId
  std::vector<FrameLayout> frames_;
  std::string partition_;
  int num_args_ = 0;
  int num_retvals_ = 0;
  int num_recvs_ = 0;
};

}  // namespace tagflow::actors
