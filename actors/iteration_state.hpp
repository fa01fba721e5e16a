// IterationState: the node instances of one (frame instance, iteration) and
// the inline scheduler that runs them (DESIGN.md §3). It keeps, per node,
// how many inputs are still pending and how many arrived dead, the input
// values, and a local ready queue; run() executes ready nodes one after the
// other with no message per node. Values that leave the iteration — into a
// child frame (Enter), to the next iteration (NextIteration), to the parent
// (Exit), to the caller (_Retval) — are collected in an Outbox for the
// owning actor to send. Owned by exactly one actor; not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "actors/events.hpp"
#include "actors/executable.hpp"
#include "actors/tag.hpp"
#include "ops/tensor.hpp"

namespace tagflow::actors {

// A value leaving an iteration: the output of `item` (an Enter, Exit or
// NextIteration node), or a fetched value (`item` is the _Retval).
struct OutValue {
  int item;
  ops::Tensor value;
  bool dead;
};

// An expensive kernel call handed to a worker so that the iteration goes
// on with other ready nodes; the worker fills outputs and status.
struct KernelJob {
  const NodeItem* item = nullptr;
  std::vector<ops::Tensor> inputs;
  std::vector<ops::Tensor> outputs;
  ops::ResourceManager* resources = nullptr;
  uint64_t step_id = 0;
  Status status;
  EventSink* events = nullptr;  // when set, compute() times the kernel
  int64_t start_ns = 0;
  int64_t end_ns = 0;

  void compute();  // runs the kernel (on the worker)
};

struct Outbox {
  std::vector<std::shared_ptr<KernelJob>> jobs;  // to hand to workers
  std::vector<OutValue> enters;
  std::vector<OutValue> exits;
  std::vector<OutValue> next_iterations;  // live ones only: a dead one stops
  std::vector<OutValue> fetches;

  bool empty() const {
    return jobs.empty() && enters.empty() && exits.empty() && next_iterations.empty() &&
           fetches.empty();
  }
  void clear() {
    jobs.clear();
    enters.clear();
    exits.clear();
    next_iterations.clear();
    fetches.clear();
  }
};

// What every iteration of a step shares: read-only for the step's length.
struct StepContext {
  uint64_t step_id = 0;
  const std::vector<ops::Tensor>* feeds = nullptr;  // by _Arg index
  ops::ResourceManager* resources = nullptr;
  EventSink* events = nullptr;  // nullptr: nobody listens
  bool use_workers = false;     // hand expensive nodes to workers
};

class IterationState {
 public:
  // Prepares the state for `iteration` of a frame instance of `frame`;
  // reuses the memory of an earlier use. Sources become ready.
  void reset(const Executable& exec, FrameId frame, Tag tag);

  // Delivers the output of `src_item` — an Enter into this frame, the
  // previous iteration's NextIteration, a child frame's Exit — to its
  // consumers in this iteration.
  Status deliver(int src_item, const ops::Tensor& value, bool dead);

  // Runs ready nodes, cheap ones before expensive ones; values leaving the
  // iteration go to `out`. Returns early, with nodes still ready, right
  // after a NextIteration when other nodes are still ready, so that the next
  // iteration can start while this one works on (parallel iterations). With
  // ctx.use_workers, an expensive node is handed to a worker (out.jobs)
  // while another expensive node is ready too. The first error stops the
  // run and is returned, naming node, tag and partition.
  Status run(const StepContext& ctx, Outbox& out);

  // Finishes a node whose kernel ran on a worker.
  Status complete(KernelJob& job);

  bool has_ready() const { return !ready_.empty() || !ready_expensive_.empty(); }
  int outstanding_jobs() const { return outstanding_jobs_; }
  const Tag& tag() const { return tag_; }
  int64_t iteration() const { return tag_.iteration(); }
  FrameId frame() const { return frame_; }
  int64_t nodes_run() const { return nodes_run_; }

 private:
  Status activate_merge(const EdgeOut& e, ops::Tensor* value, bool dead);
  Status propagate(const NodeItem& item, ops::Tensor* outputs, bool node_dead);
  Status execute(const StepContext& ctx, const NodeItem& item, Outbox& out);
  Status node_error(const NodeItem& item, const Status& s) const;
  int merge_expected_inputs(const NodeItem& item) const;

  const Executable* exec_ = nullptr;
  FrameId frame_ = graph::kRootFrame;
  Tag tag_;
  std::vector<NodeState> nodes_;     // by local id
  std::vector<ops::Tensor> inputs_;  // input slots of the frame's nodes; a
                                     // node's slots are emptied when it runs
  void make_ready(int item);

  // Ready nodes, cheap ones first: they may carry a NextIteration value that
  // lets the next iteration start while this one runs its expensive nodes.
  std::vector<int> ready_;            // item indices
  std::vector<int> ready_expensive_;  // item indices
  std::vector<ops::Tensor> outputs_;  // scratch for one node's outputs
  int64_t nodes_run_ = 0;
  int outstanding_jobs_ = 0;
};

}  // namespace tagflow::actors
