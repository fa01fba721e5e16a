// IterationState: the node instances of one (frame instance, iteration) and
// the inline scheduler that runs them (DESIGN.md §3). It keeps, per node,
// how many inputs are still pending and how many arrived dead, the input
// values, and a local ready queue; run() executes ready nodes one after the
// other with no message per node. Values that leave the iteration — into a
// child frame (Enter), to the next iteration (NextIteration), to the parent
// (Exit), to the caller (_Retval) — are collected in an Outbox for the
// owning actor to send. Owned by exactly one actor; not thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "actors/executable.hpp"
#include "actors/step_guard.hpp"
#include "actors/tag.hpp"
#include "actors/transfer.hpp"
#include "ops/cancellation.hpp"
#include "ops/tensor.hpp"
#include "trace/sink.hpp"

namespace tagflow::actors {

// A value leaving an iteration: the output of `item` (an Enter, Exit or
// NextIteration node), or a fetched value (`item` is the _Retval).
struct OutValue {
  int item;
  ops::Tensor value;
  bool dead;
};

// One expensive kernel call of a KernelBatch.
struct KernelJob {
  const NodeItem* item = nullptr;
  std::vector<ops::Tensor> inputs;  // emptied by the call
  std::vector<ops::Tensor> outputs;
  Status status;
  int64_t start_ns = 0;  // timed when the batch has an event sink
  int64_t end_ns = 0;
};

// The expensive kernels of one iteration that were ready at the same time.
// The iteration hands the batch to the kernel workers and then computes
// jobs of it itself: each job is claimed exactly once, so a worker that
// starts late (its core busy or asleep) finds the batch drained and costs
// nothing, and the iteration never waits for a core it does not get.
// Shared by the iteration and the workers: claim() is thread-safe and a
// job is touched only by whoever claimed it; the iteration reads a job's
// results after computing it itself or after the worker's `computed` reply.
class KernelBatch {
 public:
  KernelBatch(ops::ResourceManager* resources, uint64_t step_id, trace::Sink* events,
              ops::MemoryBudget* memory)
      : resources_(resources), step_id_(step_id), events_(events), memory_(memory) {}

  // The index of the next unclaimed job, or -1 when all are claimed.
  int claim() {
    size_t i = next_.fetch_add(1, std::memory_order_relaxed);
    return i < jobs.size() ? static_cast<int>(i) : -1;
  }
  bool drained() const { return next_.load(std::memory_order_relaxed) >= jobs.size(); }
  void compute(KernelJob& job) const;  // runs a claimed job's kernel
  uint64_t step_id() const { return step_id_; }
  trace::Sink* events() const { return events_; }

  std::vector<KernelJob> jobs;  // filled before the batch is shared
  int64_t iteration = 0;         // of the state that made it
  // A batch of one kernel that may block (Kernel::may_block) and would
  // have: it runs off the scheduler threads, where it may wait as `waiting`
  // allows (docs/protocol.md, "Kernels that block").
  const ops::Waiting* waiting = nullptr;
  bool blocking() const { return waiting != nullptr; }

 private:
  std::atomic<size_t> next_{0};
  ops::ResourceManager* resources_;
  uint64_t step_id_;
  trace::Sink* events_;
  ops::MemoryBudget* memory_;
};

struct Outbox {
  std::vector<std::shared_ptr<KernelBatch>> batches;  // to hand to workers
  std::vector<OutValue> enters;
  std::vector<OutValue> exits;
  std::vector<OutValue> next_iterations;  // live and dead
  std::vector<OutValue> fetches;
  std::vector<OutValue> sends;  // `item` is the _Send

  bool empty() const {
    return batches.empty() && enters.empty() && exits.empty() && next_iterations.empty() &&
           fetches.empty() && sends.empty();
  }
  void clear() {
    sends.clear();
    batches.clear();
    enters.clear();
    exits.clear();
    next_iterations.clear();
    fetches.clear();
  }
};

// What a driver of an iteration (actors/execution_plan.hpp) does with what
// one run produced — kernel batches to hand out, transfers to send, Enter,
// NextIteration, Exit and fetch values to deliver: a sink's
// `Status drain(Outbox&)` takes it all out of the outbox, leaving it empty
// (an error it returns ends the run), and `bool stopped() const` says the
// driver must not run again now (its actor is ending). A driver's sink
// derives from this and defines drain; the routine calls them directly
// (no virtual call on a loop's hot path).
struct OutboxSink {
  bool stopped() const { return false; }
};

struct CallChain;  // actors/function_runtime.hpp

// What every iteration of a step shares: read-only for the step's length.
struct StepContext {
  uint64_t step_id = 0;
  const std::vector<ops::Tensor>* feeds = nullptr;  // by _Arg index
  ops::ResourceManager* resources = nullptr;
  trace::Sink* events = nullptr;  // nullptr: nobody listens
  int32_t partition = -1;         // this partition's index in the step (events)
  bool use_workers = false;     // hand expensive nodes to workers
  ops::MemoryBudget* memory = nullptr;  // the step's tensor bytes; nullptr: unlimited
  // A second live input of a Merge is an error instead of being ignored.
  bool strict_merge = false;
  // How long a kernel that would block may wait, off the scheduler
  // threads; nullptr: such a kernel fails instead (a deterministic session).
  const ops::Waiting* waiting = nullptr;
  // The step's limits (deadline, cancellation, iterations); nullptr: none.
  const StepGuard* guard = nullptr;
  // A function body run as written (actors/function_runtime.hpp): where the
  // body is called from, which errors of its nodes name; nullptr at the top.
  const CallChain* chain = nullptr;
  // A function body's arguments, which its _Args take (move) instead of
  // copying `feeds`, so that a TensorList a loop passes on stays unshared
  // and its push stays in place; nullptr: they copy.
  std::vector<ops::Tensor>* owned_feeds = nullptr;
};

class IterationState {
 public:
  // Prepares the state for `iteration` of a frame instance of `frame`;
  // reuses the memory of an earlier use. Sources become ready; from
  // iteration 1 on, the consumers of the frame's loop-variable Enters other
  // than Merges get a dead input (the Enter's value belongs to iteration 0).
  // `ctx` must outlive the iteration.
  void reset(const Executable& exec, FrameId frame, Tag tag, const StepContext& ctx);

  // Delivers the output of `src_item` — an Enter into this frame, the
  // previous iteration's NextIteration, a child frame's Exit — to its
  // consumers in this iteration.
  Status deliver(int src_item, const ops::Tensor& value, bool dead);
  // Delivers the transfer a `_Recv` of this iteration waits for; a second
  // one for the same Recv is an error naming its key.
  Status deliver_transfer(uint64_t key, ops::Tensor value, bool dead);
  // Takes a transfer whole or in parts: the value of a part is delivered
  // once every part has come (a fragment's bytes are copied into the tensor
  // allocated, within the step's memory budget, at its first part).
  Status receive_transfer(TransferValue& v);
  // _Recvs of this iteration whose transfer has not arrived: the iteration
  // is not done while one is missing.
  int transfers_missing() const { return transfers_missing_; }

  // Runs ready nodes, cheap ones before expensive ones; values leaving the
  // iteration go to `out`. Returns early, with nodes still ready, right
  // after a NextIteration when other nodes are still ready, so that the next
  // iteration can start while this one works on (parallel iterations). With
  // ctx.use_workers, two or more ready expensive nodes become a KernelBatch
  // (out.batches): run() returns at once so that the owner hands it to the
  // workers, and the next run() computes the jobs no worker has claimed.
  // A kernel that may block and would (a dequeue from an empty queue)
  // becomes a blocking KernelBatch of its own in out.batches, which the
  // owner runs off the scheduler threads; its consumers wait for its
  // `computed` reply, the rest of the iteration runs on.
  // The first error stops the run and is returned, naming node, tag and
  // partition.
  Status run(const StepContext& ctx, Outbox& out);
  // The one "run while ready, then drain" routine of every driver but a
  // frame that runs its iterations (which runs each queued iteration once a
  // turn, so that the next iteration starts as soon as this one hands on
  // its NextIteration values): run(), then `sink` drains the outbox, until
  // nothing is ready, the sink stops, or an error (the outbox then emptied).
  template <class Sink>
  Status run_until_idle(const StepContext& ctx, Outbox& out, Sink& sink) {
    do {
      if (sink.stopped()) return ops::ok_status();
      Status s = run(ctx, out);
      if (s.ok()) s = sink.drain(out);
      if (!s.ok()) {
        out.clear();
        return s;
      }
    } while (has_ready());
    return ops::ok_status();
  }

  // Finishes the jobs of `batch` (made by this state) that a worker computed.
  Status complete(KernelBatch& batch, const std::vector<int>& done);

  // Nodes ready, or jobs of the current batch that nobody has claimed.
  bool has_ready() const {
    return !ready_.empty() || !ready_expensive_.empty() || (batch_ && !batch_->drained());
  }
  int outstanding_jobs() const { return outstanding_jobs_; }
  const Tag& tag() const { return tag_; }
  int64_t iteration() const { return tag_.iteration(); }
  FrameId frame() const { return frame_; }
  int64_t nodes_run() const { return nodes_run_; }
  const Executable& executable() const { return *exec_; }
  // Where this iteration is, for events.
  trace::At at() const;

 private:
  Status activate_merge(const EdgeOut& e, ops::Tensor* value, bool dead);
  Status ignore_merge_input(const EdgeOut& e, int first);
  void deliver_dead_beyond_merges(const NodeItem& enter);
  Status propagate(const NodeItem& item, ops::Tensor* outputs, bool node_dead);
  Status execute(const StepContext& ctx, const NodeItem& item, Outbox& out);
  Status read_refs(const StepContext& ctx, const NodeItem& item, ops::Tensor* in) const;
  Status make_batch(const StepContext& ctx, Outbox& out);
  Status defer_blocking(const StepContext& ctx, const NodeItem& item, ops::Tensor* in, Outbox& out);
  bool batch_ready() const;
  Status finish_job(const KernelBatch& batch, KernelJob& job);
  Status node_error(const NodeItem& item, const Status& s) const;
  void trace_dead(const NodeItem& item, const ops::Tensor* in) const;
  int merge_expected_inputs(const NodeItem& item) const;

  const Executable* exec_ = nullptr;
  const StepContext* ctx_ = nullptr;
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
  std::shared_ptr<KernelBatch> batch_;  // the batch this state still claims from
  int64_t nodes_run_ = 0;
  int outstanding_jobs_ = 0;  // batch jobs not finished
  int transfers_missing_ = 0;
  int32_t live_port_ = -1;  // of the Switch that ran last (events)
  bool deferred_ = false;   // the node execute() ran last went to a blocking batch
  // Transfers that have come in part (rarely more than one at a time).
  struct PartialTransfer {
    uint64_t key = 0;
    ops::Tensor whole;
    std::vector<bool> seen;  // by part
    uint32_t left = 0;
  };
  std::vector<PartialTransfer> partial_;
  Status receive_part(TransferValue& v);
};

}  // namespace tagflow::actors
