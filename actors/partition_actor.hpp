// PartitionActor: one device partition of a registered graph. For every
// step it spawns the root frame actor (monitored) and answers the step's
// waiter with the fetched values or an error that names node, tag and
// partition; a timed-out step is aborted by ending its root frame, which
// ends every frame and iteration actor of the step through their links.
//
// Graphs without control flow take a fast path (docs/protocol.md): the root
// frame has one iteration and no child frame, so the partition runs that
// iteration itself — no actor spawned, no message but the step request and
// the expensive kernels it hands to workers — and keeps its IterationState
// from step to step. Internal to actors/; includes CAF.
#pragma once

#include <caf/all.hpp>

#include <map>
#include <set>
#include <unordered_map>

#include "actors/step_actors.hpp"
#include "actors/step_waiter.hpp"

namespace tagflow::actors {

// What a partition gets from the process it runs in: the resources of its
// device (variables, stacks, TensorArrays of every partition on that
// device), the process's kernel workers, and its event sink (may be null).
struct PartitionEnv {
  std::shared_ptr<ops::ResourceManager> resources;
  std::vector<caf::actor> workers;
  trace::Sink* events = nullptr;
  int32_t index = -1;  // its place among the partitions of the steps it runs
  bool mutant_drop_early_transfers = false;  // SessionOptions::ProtocolMutant (tests)
  // Kernels that would block may wait off the scheduler threads (false in
  // a deterministic session, whose steps run one at a time: they fail).
  bool may_wait = true;
};

// The fetched values of a partition's step, at their positions among the
// step's `fetch_names` (invalid elsewhere), or the error naming a dead
// fetch or one that got no value.
StepWaiter::Result collect_fetches(const Executable& exec, const std::vector<std::string>& fetch_names,
                                   uint64_t step_id, std::vector<OutValue>& fetches);

class PartitionActor : public ActorBase {
 public:
  PartitionActor(caf::actor_config& cfg, ExecPtr exec, std::vector<std::string> fetch_names,
                 PartitionEnv env);
  caf::behavior make_behavior() override;
  const char* name() const override { return "tagflow.partition"; }
  // Drops its steps: a step holds the handles of its partitions, this one
  // among them, and the cycle would keep it alive after it quit.
  void on_exit() override;

 private:
  struct Running {
    StepPtr step;
    caf::actor root;  // the root frame
  };
  // Where transfers of one step go: the frame actors that hold _Recvs, by
  // frame instance, and transfers for instances that have not started here.
  struct Route {
    std::unordered_map<FrameInstanceId, caf::actor> frames;
    std::unordered_map<FrameInstanceId, std::vector<TransferBatch>> held;
  };
  void on_transfer(TransferBatch& batch);
  bool deliver_to_root(TransferBatch& batch);
  // Sends to every partition of `step` but this one.
  template <class... Ts>
  void send_to_peers(const StepShared& step, Ts&&... xs) {
    for (size_t p = 0; p < step.peers.size(); ++p)
      if (static_cast<int>(p) != step.partition_index) send(step.peers[p], xs...);
  }
  StepPtr make_step(StepStart& start);
  void abort(uint64_t step_id, const Status& s);
  void fail_all(const Status& s);
  void start(StepPtr step);
  void start_inline(StepPtr step);
  void run_inline();
  void end_inline(StepWaiter::Result result);
  trace::At root_at() const;
  void finish(const StepShared& step, StepWaiter::Result result);
  StepWaiter::Result collect(const StepShared& step, std::vector<OutValue>& fetches) const;

  ExecPtr exec_;
  PartitionEnv env_;
  // Who drives this partition's iterations, with the shortcuts and
  // without (a step's StepStart says which), decided once.
  struct Plans {
    std::shared_ptr<const PartitionPlan> with_shortcuts, without_shortcuts;
  } plans_;
  // Where each step's result goes, by step id.
  std::map<uint64_t, caf::actor> coordinators_;
  std::vector<std::string> fetch_names_;
  std::map<uint64_t, Running> running_;  // by step id
  std::map<uint64_t, Route> routes_;     // by step id
  // Steps start here in the order of their ids (the session sends them so),
  // so a step not running with an id up to this one has ended: its late
  // transfers are dropped; later ones are held until the step starts.
  uint64_t last_started_ = 0;
  std::set<uint64_t> aborted_;           // steps aborted before they started here

  // The fast path: the step whose root iteration runs here (none if null).
  StepPtr inline_step_;
  IterationState root_;
  Outbox outbox_;
  std::vector<OutValue> fetches_;
};

}  // namespace tagflow::actors
