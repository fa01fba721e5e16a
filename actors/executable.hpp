// Executable: what is analysed once about one partition's graph and then
// shared, read-only, by every step and every actor that runs it — each
// node's kernel, kind, frame and out edges, and per static frame the layout
// of an iteration's state (local node order, input slots, initial pending
// counts, Exits, number of Enters). Immutable after build(); thread-safe.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/analysis/control_flow.hpp"
#include "graph/graph.hpp"
#include "ops/kernel.hpp"
#include "trace/names.hpp"

namespace tagflow::actors {

using graph::FrameId;
using graph::NodeId;
using ops::Expected;
using ops::Status;

// How the executor treats a node (DESIGN.md §3).
enum class NodeKind : uint8_t {
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
  // The source's kernel keeps the value (ops::Kernel::holds_outputs): the
  // destination's slot borrows it, counting no reference.
  bool borrow = false;
  // The destination as its frame's iteration state sees it, resolved once
  // so that delivering a value touches only the destination's counters and
  // input slot, never its NodeItem (the per-node hot path).
  bool dst_merge = false;
  bool dst_expensive = false;
  int dst_local = 0;   // dst's local id
  int dst_input = -1;  // dst's input slot; -1 for a control edge
};

// A read-only list in one of an Executable's arrays: a node's out edges and
// its dereferenced inputs all live in one array each, not one allocation
// per node (docs/performance.md, "A graph of 10⁶ nodes").
template <class T>
class ItemList {
 public:
  ItemList() = default;
  ItemList(const T* data, size_t size) : data_(data), size_(static_cast<uint32_t>(size)) {}
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  const T* data_ = nullptr;
  uint32_t size_ = 0;
};

// Fields ordered by size: an Executable holds one per node.
struct NodeItem {
  const graph::Node* node = nullptr;  // owned by the Executable's graph
  std::unique_ptr<ops::Kernel> kernel;  // ordinary nodes only
  const std::string* transfer_key = nullptr;  // _Send/_Recv: tensor_name
  ItemList<EdgeOut> out_edges;  // data edges by port, then control edges
  // Inputs fed by a ref output (a variable's handle) that the node takes
  // as a plain value: the executor reads the variable when the node runs.
  ItemList<int> deref_inputs;
  NodeId node_id = graph::kNoNode;
  FrameId frame = graph::kRootFrame;  // the static frame of this node
  int local_id = 0;       // index among its frame's nodes
  int input_start = 0;    // first input slot in its frame's iteration state
  int num_inputs = 0;     // data inputs
  int num_control_inputs = 0;
  int num_outputs = 0;
  // Enter: the frame it enters (and, below, whether its value is a loop
  // invariant).
  FrameId enter_frame = graph::kRootFrame;
  // Merge: data inputs that come from NextIteration (back edges) and the
  // others; iteration 0 waits only for the others, later iterations only
  // for these.
  int merge_forward_inputs = 0;
  int merge_back_inputs = 0;
  int index = 0;  // _Arg / _Retval index
  // _Send/_Recv: the transfer key, transfer_hash("tensor_name;send_device;
  // recv_device"), by which a transfer finds its _Recv in any process.
  uint64_t transfer_hash = 0;
  // _Send: the partition its value goes to (an index into the step's
  // partitions); set by build_partitions / build_partition.
  int transfer_partition = -1;
  NodeKind kind = NodeKind::ordinary;
  bool expensive = false;  // worth handing to a worker (MatMul and the like)
  bool may_block = false;  // its kernel may wait for another step (queue ops)
  bool is_constant = false;  // Enter
  bool merge_index_used = false;  // some edge reads its value_index output
  // A Merge the partitioner made to learn whether any input is live: it
  // takes the first live input even under strict-merge.
  bool merge_first_live = false;
  // A functional op run as written (actors/function_runtime.hpp): its
  // kernel's errors already say where they happened.
  bool calls_function = false;
};

// Makes the kernels of the functional nodes (If, While, calls, ...) that
// run as written instead of being lowered (actors/function_runtime.hpp).
class FunctionKernels {
 public:
  virtual ~FunctionKernels() = default;
  // Whether `n` is a functional node this maker runs.
  virtual bool runs(const graph::Node& n) const = 0;
  virtual Expected<std::unique_ptr<ops::Kernel>> make(const graph::Node& n) const = 0;
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
  // No node of the frame enters a child frame, and each expensive node of
  // it depends on its own instance in the iteration before (so its
  // instances cannot overlap): the frame's iterations run inside the frame
  // actor, with no iteration actors and no messages between frame and
  // iteration (docs/protocol.md, "Frames that run their iterations").
  bool runs_iterations = false;
  std::vector<int> sources;     // items ready as soon as an iteration starts
  // Loop-variable (not is_constant) Enters into the frame that feed nodes
  // other than Merges, or Merges through a control edge: those inputs
  // arrive dead in iterations >= 1.
  std::vector<int> enters_beyond_merges;
  std::vector<NodeState> initial_state;  // by local id
};

class Executable {
 public:
  Executable() = default;
  // Its items point into its own arrays.
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  // Makes every kernel and lays out every frame. The graph must be
  // validated; errors (a kernel that cannot be made, an unsupported op)
  // name the node. `partition` names the partition in error messages.
  // Functional nodes get their kernels from `functions` (when it runs
  // them); without it they must have been lowered.
  static Expected<std::shared_ptr<const Executable>> build(graph::Graph g,
                                                           std::string partition = "local",
                                                           const FunctionKernels* functions = nullptr);
  // The partitions of one graph, built together so that every `_Send` knows
  // the partition and `_Recv` its value goes to: a Send and a Recv match when
  // their tensor_name, send_device and recv_device agree. A Send or Recv
  // without exactly one partner is an error naming its key.
  static Expected<std::vector<std::shared_ptr<const Executable>>> build_partitions(
      std::vector<graph::Graph> graphs, std::vector<std::string> names,
      const FunctionKernels* functions = nullptr);
  // One partition of a step built alone (in the process that runs it): its
  // `_Send`s find their partition by recv_device among `devices`, the full
  // device names of the step's partitions in order; this one is `index`.
  // A recv_device that is not another partition's device is an error.
  static Expected<std::shared_ptr<const Executable>> build_partition(
      graph::Graph g, std::string name, const std::vector<std::string>& devices, int index);

  // The tensor_name of the _Recv of `key` here, else the key in hex.
  std::string transfer_name(uint64_t key) const;
  // The _Recv item that takes transfers of `key`, or -1.
  int recv_item(uint64_t key) const {
    auto it = recv_by_key_.find(key);
    return it == recv_by_key_.end() ? -1 : it->second;
  }

  const graph::Graph& graph() const { return graph_; }
  const graph::ControlFlowInfo& control_flow() const { return control_flow_; }
  const std::vector<NodeItem>& items() const { return items_; }
  const NodeItem& item(int i) const { return items_[static_cast<size_t>(i)]; }
  const FrameLayout& frame(FrameId f) const { return frames_[static_cast<size_t>(f)]; }
  int num_frames() const { return static_cast<int>(frames_.size()); }
  const std::string& partition() const { return partition_; }
  int num_args() const { return num_args_; }
  int num_retvals() const { return num_retvals_; }
  const std::vector<int>& retvals() const { return retvals_; }  // _Retval items
  // Nodes worth handing to a kernel worker (NodeItem::expensive).
  int num_expensive() const { return num_expensive_; }
  // Nodes whose kernels may wait for another step (Kernel::may_block).
  int num_blocking() const { return num_blocking_; }
  bool has_control_flow() const { return frames_.size() > 1; }
  bool has_recvs() const { return num_recvs_ > 0; }
  // Bytes of what the Executable adds to its graph: items, edge and input
  // arrays, frame layouts, control-flow info; an account from sizes and
  // capacities that counts a kernel as a pointer-sized object (tests and
  // benchmarks bound the bytes per node with it).
  size_t memory_bytes() const;
  // What the numbers of this partition's events stand for; made on first
  // use (only when events are recorded). Thread-safe.
  std::shared_ptr<const trace::PartitionNames> trace_names() const;

 private:
  Status init(const FunctionKernels* functions = nullptr);
  void find_skippable_frames();
  void find_frames_that_run_iterations();

  graph::Graph graph_;
  graph::ControlFlowInfo control_flow_;
  std::vector<NodeItem> items_;  // indexed by NodeId
  std::vector<EdgeOut> edges_;   // every item's out_edges, item after item
  std::vector<int> deref_;       // every item's deref_inputs
  std::vector<FrameLayout> frames_;
  std::string partition_;
  int num_args_ = 0;
  int num_retvals_ = 0;
  std::vector<int> retvals_;
  int num_expensive_ = 0;
  int num_blocking_ = 0;
  int num_recvs_ = 0;
  std::unordered_map<uint64_t, int> recv_by_key_;
  mutable std::once_flag names_once_;
  mutable std::shared_ptr<const trace::PartitionNames> names_;
};

// The 64-bit FNV-1a hash of a transfer's "tensor_name;send_device;
// recv_device": the same in every process.
uint64_t transfer_hash(const std::string& match_key);

}  // namespace tagflow::actors
