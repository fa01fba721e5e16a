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
#include "actors/frame_book.hpp"
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

// One frame instance: its book-keeping (FrameBook, actors/frame_book.hpp)
// hosted by an actor, which makes and feeds the iterations the book starts
// and tells the parent (an iteration of the enclosing frame, or for the
// root frame the partition, which gets step_result) what the book decides.
// Two hosts: ActorIterationsFrame spawns an iteration actor per live
// iteration; InlineIterationsFrame, for a frame the execution plan says
// runs its iterations (ExecutionPlan::frame_runs_iterations), keeps their
// states itself, so that what would be a message to an iteration actor is
// a call and an iteration's report is taken as it runs (docs/protocol.md,
// "Frames that run their iterations"). spawn_frame picks one.
class FrameActor : public ActorBase, protected FrameHost {
 public:
  FrameActor(caf::actor_config& cfg, ExecPtr exec, StepPtr step, FrameId frame, Tag tag,
             caf::actor parent);
  caf::behavior make_behavior() override;
  // Drops every actor handle: frames and iterations refer to each other,
  // and a cycle of handles would keep both alive after they quit.
  void on_exit() override;

 protected:
  // What the hosts do differently. After each message: run what is
  // runnable (an inline host); the jobs a kernel worker computed of a
  // batch an inline iteration made; the root iteration just started.
  virtual void run_iterations() {}
  // The message a host sends itself to go on running (run_iterations_atom).
  virtual void resume() {}
  virtual void on_computed(std::shared_ptr<KernelBatch>& /*batch*/, std::vector<int>& /*done*/) {}
  virtual void root_started() {}
  // The frame is done: what ran its iterations is released.
  virtual void release_iterations() {}

  // FrameHost, the parts both hosts share.
  void exits(std::vector<OutValue>&& live) override;
  void done(std::vector<OutValue>&& values) override;
  void fail(const Status& s) override;

  trace::At at(int64_t iteration) const;
  void trace_received(trace::MessageKind kind, int64_t iteration, const std::vector<OutValue>& values,
                      const trace::ActorRef& from);

  ExecPtr exec_;
  StepPtr step_;
  FrameId frame_;
  caf::actor parent_;
  const FrameLayout& layout_;
  FrameBook book_;
};

// The frame's host that spawns an iteration actor per live iteration and
// reuses the actors of retired ones.
class ActorIterationsFrame final : public FrameActor {
 public:
  using FrameActor::FrameActor;
  const char* name() const override { return "tagflow.frame"; }
  void on_exit() override;

 private:
  struct Running {
    caf::actor actor;
    int64_t index = 0;  // the actor's number among this frame's iteration actors
  };
  void start(int64_t iteration, std::vector<OutValue>&& values) override;
  void deliver(int64_t iteration, std::vector<OutValue>&& values) override;
  void transfer(int64_t iteration, TransferBatch&& batch) override;
  void reported(const IterationReport& r) override;
  void retire(int64_t iteration) override;
  void release_iterations() override;

  IterationWindow<Running> running_{book_};
  std::vector<std::pair<caf::actor, int64_t>> idle_;  // with their numbers
  int64_t spawned_ = 0;  // iteration actors made
};

// The frame's host that keeps its iterations' states and runs them, each
// until it has nothing ready, a bounded number of runs per message.
class InlineIterationsFrame final : public FrameActor {
 public:
  using FrameActor::FrameActor;
  const char* name() const override { return "tagflow.frame"; }
  void on_exit() override;

 protected:
  // Its turns end by sending itself the next, and CAF's default lets an
  // actor keep its thread while its mailbox has messages.
  size_t messages_per_resume(size_t /*max_throughput*/) const override { return 1; }

 private:
  struct Running {
    std::unique_ptr<IterationState> state;
    bool queued = false;  // among the iterations to run
  };
  void start(int64_t iteration, std::vector<OutValue>&& values) override;
  void deliver(int64_t iteration, std::vector<OutValue>&& values) override;
  void transfer(int64_t iteration, TransferBatch&& batch) override;
  void reported(const IterationReport& /*r*/) override {}
  void retire(int64_t iteration) override;
  void run_iterations() override;
  void resume() override;
  void on_computed(std::shared_ptr<KernelBatch>& batch, std::vector<int>& done) override;
  void root_started() override;
  // Hands values to one iteration and queues it.
  void deliver_here(int64_t iteration, const std::vector<OutValue>& values);
  void queue(int64_t iteration);

  IterationWindow<Running> running_{book_};
  std::vector<std::unique_ptr<IterationState>> idle_states_;
  std::deque<int64_t> runnable_;  // iterations with work, in order
  Outbox outbox_;
  IterationReport report_;        // of the last run; its vectors are reused
  HeldTransfers held_transfers_;  // of the runs of one run_iterations()
  bool running_now_ = false;      // inside run_iterations()
  bool resume_sent_ = false;      // a resume message to itself is on its way
};

// Spawns the host the step's execution plan picks for `frame`, with
// `Flags` (caf::linked, caf::monitored) from `self`.
template <caf::spawn_options Flags, class Self>
caf::actor spawn_frame(Self* self, ExecPtr exec, StepPtr step, FrameId frame, Tag tag, caf::actor parent) {
  if (step->plan->frame_runs_iterations[static_cast<size_t>(frame)])
    return self->template spawn<InlineIterationsFrame, Flags>(std::move(exec), std::move(step), frame,
                                                              std::move(tag), std::move(parent));
  return self->template spawn<ActorIterationsFrame, Flags>(std::move(exec), std::move(step), frame, std::move(tag),
                                                           std::move(parent));
}

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
