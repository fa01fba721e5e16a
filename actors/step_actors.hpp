// The actors that run one step of one partition: a frame actor per frame
// instance and an iteration actor per live iteration (DESIGN.md §4,
// docs/protocol.md). Internal to actors/; includes CAF.
#pragma once

#include <caf/all.hpp>

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "actors/actor_base.hpp"
#include "actors/messages.hpp"

namespace tagflow::actors {

// The protocol's names of tagflow's actors, for events (trace::ActorRef).
inline trace::ActorRef partition_ref(int32_t partition) {
  return {trace::Role::partition, partition, 0, 0};
}
inline trace::ActorRef frame_ref(int32_t partition, FrameInstanceId instance) {
  return {trace::Role::frame, partition, instance, 0};
}
// `index`: the actor's number among its frame's iteration actors; -1 where
// the recording actor does not know it.
inline trace::ActorRef iteration_ref(int32_t partition, FrameInstanceId instance, int64_t index) {
  return {trace::Role::iteration, partition, instance, index};
}

using StepPtr = std::shared_ptr<const StepShared>;
using ExecPtr = std::shared_ptr<const Executable>;

// The entry of `peer` in a list by peer, in the order of first use (a step
// has few partitions), added empty if missing.
template <class T>
T& entry_of(std::vector<std::pair<int, T>>& by_peer, int peer) {
  for (auto& [p, entry] : by_peer)
    if (p == peer) return entry;
  return by_peer.emplace_back(peer, T()).second;
}

// Transfers a frame that runs its iterations holds until it has run what
// it could, then sends as one message per peer.
struct HeldTransfers {
  std::vector<std::pair<int, std::vector<TransferBatch>>> by_peer;
};

// One frame instance. Starts iteration 0 at once; spawns iteration n+1 on
// the first live NextIteration out of n (deferred while parallel_iterations
// are outstanding), reusing the actors of finished iterations; hands loop
// invariants to every iteration; forwards live Exit values to the parent at
// once and dead ones when the frame is done; reports frame_done and quits.
// The root frame's parent is the partition, which gets step_result.
// A frame whose layout `runs_iterations` keeps its iterations' states
// itself instead: what would be a message to an iteration actor is a call,
// and an iteration's report is taken as it runs (docs/protocol.md, "Frames
// that run their iterations").
class FrameActor : public ActorBase {
 public:
  FrameActor(caf::actor_config& cfg, ExecPtr exec, StepPtr step, FrameId frame, Tag tag,
             caf::actor parent);
  caf::behavior make_behavior() override;
  const char* name() const override { return "tagflow.frame"; }
  // Drops every actor handle: frames and iterations refer to each other,
  // and a cycle of handles would keep both alive after they quit.
  void on_exit() override;

 protected:
  // A frame that runs its iterations takes one message per resume: its
  // turns end by sending itself the next, and CAF's default lets an actor
  // keep its thread while its mailbox has messages.
  size_t messages_per_resume(size_t max_throughput) const override {
    return runs_iterations_ ? 1 : max_throughput;
  }

 private:
  struct Slot {
    caf::actor actor;
    int64_t index = 0;     // the actor's number among this frame's iteration actors
    int64_t sent = 0;      // messages sent to it for this iteration
    int64_t received = 0;  // as last reported
    bool quiescent = false;
    // A frame that runs its iterations: the iteration's state (no actor),
    // and whether it is among the iterations to run.
    std::unique_ptr<IterationState> state;
    bool queued = false;
  };

  void on_enter(ValueBatch& batch);
  void on_report(IterationReport& r);
  void on_transfer(TransferBatch& batch);
  // Both take `values` (a frame that runs its iterations delivers them and
  // leaves the vector empty, its capacity kept for the next iteration).
  void send_to(int64_t iteration, std::vector<OutValue>&& values, bool counted = false);
  bool start_iteration(int64_t iteration, std::vector<OutValue>&& values);
  void advance();
  void finish();
  // A frame that runs its iterations: hands values to one, queues it, and
  // runs queued iterations until none is left or it is time to let other
  // messages in.
  void deliver_here(int64_t iteration, const std::vector<OutValue>& values);
  void queue(int64_t iteration);
  void run_iterations();
  void fail(const Status& s);
  Slot& slot(int64_t iteration) { return active_[static_cast<size_t>(iteration - oldest_)]; }
  // Started and not yet retired.
  bool is_active(int64_t iteration) const {
    return iteration >= oldest_ && iteration < oldest_ + static_cast<int64_t>(active_.size());
  }
  trace::At at(int64_t iteration) const;
  void trace_received(trace::MessageKind kind, int64_t iteration, const std::vector<OutValue>& values,
                      const trace::ActorRef& from);

  ExecPtr exec_;
  StepPtr step_;
  FrameId frame_;
  Tag tag0_;  // the tag of iteration 0
  caf::actor parent_;
  const FrameLayout& layout_;
  int enters_arrived_ = 0;
  std::vector<OutValue> invariants_;
  std::deque<Slot> active_;    // iterations oldest_ .. oldest_ + size - 1
  int64_t oldest_ = 0;         // the oldest iteration not done
  std::optional<std::vector<OutValue>> deferred_;  // for iteration oldest_ + size
  // Dead NextIteration values for iteration oldest_ + size, which has not
  // started: they go with it if it starts (start_iteration).
  std::vector<OutValue> held_dead_;
  std::vector<std::pair<caf::actor, int64_t>> idle_;  // with their numbers
  int64_t spawned_ = 0;  // iteration actors made
  std::vector<bool> exit_live_;  // by position in layout_.exits
  std::vector<OutValue> fetches_;
  // Transfers for iterations not started yet, by iteration.
  std::map<int64_t, std::vector<TransferBatch>> early_transfers_;
  bool finished_ = false;
  // Failed or finished: quit() takes effect only after the message handler
  // returns, so what is left of the handler checks this instead.
  bool stopped_ = false;
  // A frame that runs its iterations (layout_.runs_iterations, unless the
  // step wants iteration actors).
  bool runs_iterations_ = false;
  std::vector<std::unique_ptr<IterationState>> idle_states_;
  std::deque<int64_t> runnable_;  // iterations with work, in order
  Outbox outbox_;
  IterationReport report_;        // of the last run; its vectors are reused
  HeldTransfers held_transfers_;  // of the runs of one run_iterations()
  bool running_ = false;          // inside run_iterations()
  bool resume_sent_ = false;      // a resume message to itself is on its way
};

// Computes jobs of the kernel batches that iterations hand out: claims jobs
// until the batch is drained and tells the batch's owner which ones it
// computed (nothing if it came too late to claim any). Stateless; one per
// worker thread. (A class, not a function-based actor: CAF 0.17 spawns
// argument-less function actors through a null shared_ptr, which UBSan
// reports.)
class KernelWorker : public ActorBase {
 public:
  explicit KernelWorker(caf::actor_config& cfg) : ActorBase(cfg) {}
  caf::behavior make_behavior() override;
  const char* name() const override { return "tagflow.kernel_worker"; }
};

// Hands `batch` to every kernel worker of the step, each message through
// the scheduler's shared entry (no execution context), which spreads them
// over the worker threads and wakes a sleeping one: the sender's own thread
// is busy computing jobs of the batch itself. A blocking batch goes to a
// BlockingRunner of its own instead. The owner gets `computed`.
void hand_out(const StepPtr& step, const std::shared_ptr<KernelBatch>& batch,
              const caf::actor& owner);

// Runs the one kernel of a blocking batch on a thread of its own (a
// detached actor), where it may wait for another step, tells the owner
// `computed` and quits. Its wait ends when the kernel can go on, when the
// step's Cancellation is cancelled (the step ended: error, abort, timeout,
// the session destroyed) or at the step's deadline; it holds the step's
// shared state (resources, memory budget) until then.
class BlockingRunner : public ActorBase {
 public:
  BlockingRunner(caf::actor_config& cfg, StepPtr step, std::shared_ptr<KernelBatch> batch, caf::actor owner)
      : ActorBase(cfg), step_(std::move(step)), batch_(std::move(batch)), owner_(std::move(owner)) {}
  caf::behavior make_behavior() override;
  const char* name() const override { return "tagflow.blocking_runner"; }
  void on_exit() override;

 private:
  StepPtr step_;
  std::shared_ptr<KernelBatch> batch_;
  caf::actor owner_;
};

// One message_received event per transferred value (a value in parts: at
// its last part), recorded by `to` for the iteration at `at`.
void trace_transfers(const StepShared& step, const Executable& exec, const trace::At& at,
                     const trace::ActorRef& to, const TransferBatch& batch);

// Sends the values of an iteration's _Sends to the peer partitions of their
// _Recvs, one TransferBatch per peer, tagged with the iteration's frame
// instance and iteration; empties `sends`. With `held`, the batches of
// small values wait there for flush_transfers.
void send_transfers(ActorBase* self, const StepShared& step, const Executable& exec,
                    const Tag& tag, std::vector<OutValue>& sends, HeldTransfers* held = nullptr);
// Sends what `held` holds: a peer's one batch as a `transfer`, several as
// one `transfers` message.
void flush_transfers(ActorBase* self, const StepShared& step, HeldTransfers& held);

// One iteration of one frame instance; reused for a later iteration of the
// same frame instance once its frame says it is done.
class IterationActor : public ActorBase {
 public:
  IterationActor(caf::actor_config& cfg, ExecPtr exec, StepPtr step, caf::actor frame, FrameInstanceId instance,
                 int64_t index);
  caf::behavior make_behavior() override;
  const char* name() const override { return "tagflow.iteration"; }
  void on_exit() override;  // drops its handles (see FrameActor::on_exit)

 private:
  void deliver(const ValueBatch& batch);
  void run_and_report();
  void flush();  // sends what the last run produced
  bool take_enters(FrameId frame, ValueBatch& batch);
  void trace_received(trace::MessageKind kind, const std::vector<OutValue>& values, const trace::ActorRef& from);

  ExecPtr exec_;
  StepPtr step_;
  caf::actor frame_;
  IterationState state_;
  Outbox outbox_;
  std::map<FrameId, caf::actor> children_;  // child frame instances, by static frame
  // Enter values of child frames that skip dead instances, held until one
  // is live (the instance starts) or all have arrived dead (it is skipped).
  std::map<FrameId, std::vector<OutValue>> held_enters_;
  int outstanding_children_ = 0;
  int64_t received_ = 0;
  int64_t reported_received_ = -1;
};

}  // namespace tagflow::actors
