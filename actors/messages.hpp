// The messages between the actors of one partition (docs/protocol.md):
// partition -> frame -> iteration and back. Only actors/*.cpp include this
// header (CAF headers are expensive to compile).
//
//   partition --spawn--> root frame --start--> iteration 0
//   iteration --enter--> child frame (spawned by the first Enter)
//   frame --deliver--> iteration (NextIteration values, loop invariants)
//   iteration --report--> frame (NextIteration/Exit/fetch values, quiescence)
//   frame --exits--> parent iteration (live Exits); frame --frame_done--> parent
//   (with the dead Exits)
//   root frame --step_result--> partition
//
// Between partitions (docs/protocol.md, "Partitioned runs"):
//   iteration --transfer--> peer partition --transfer--> frame --> iteration
//   frame --frameup/framedown--> its partition (frames that hold _Recvs)
//   session --abort--> every partition of a failed step
#pragma once

#include <caf/all.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "actors/executable.hpp"
#include "actors/iteration_state.hpp"
#include "actors/tag.hpp"

namespace tagflow::actors {

using start_atom = caf::atom_constant<caf::atom("start")>;
using deliver_atom = caf::atom_constant<caf::atom("deliver")>;
using enter_atom = caf::atom_constant<caf::atom("enter")>;
using report_atom = caf::atom_constant<caf::atom("report")>;
using exits_atom = caf::atom_constant<caf::atom("exits")>;
using frame_done_atom = caf::atom_constant<caf::atom("framedone")>;
using finish_atom = caf::atom_constant<caf::atom("finish")>;
using run_step_atom = caf::atom_constant<caf::atom("runstep")>;
using step_result_atom = caf::atom_constant<caf::atom("stepresult")>;
using timeout_atom = caf::atom_constant<caf::atom("timeout")>;
using compute_atom = caf::atom_constant<caf::atom("compute")>;
using computed_atom = caf::atom_constant<caf::atom("computed")>;
using transfer_atom = caf::atom_constant<caf::atom("transfer")>;
using frame_up_atom = caf::atom_constant<caf::atom("frameup")>;
using frame_down_atom = caf::atom_constant<caf::atom("framedown")>;
using abort_atom = caf::atom_constant<caf::atom("abort")>;
using route_atom = caf::atom_constant<caf::atom("route")>;
using unroute_atom = caf::atom_constant<caf::atom("unroute")>;

// Values crossing between actors of one partition: (item, tensor, dead).
struct ValueBatch {
  std::vector<OutValue> values;
};

// What an iteration tells its frame after running.
struct IterationReport {
  int64_t iteration = 0;
  std::vector<OutValue> next_iterations;
  std::vector<OutValue> exits;
  std::vector<OutValue> fetches;
  bool quiescent = false;   // nothing ready, no child frame outstanding
  int64_t received = 0;     // messages from the frame processed so far
};

// Values of `_Send`s of one (frame instance, iteration) for one peer
// partition; `item` of each value is the peer's `_Recv`.
struct TransferBatch {
  uint64_t step_id = 0;
  FrameInstanceId instance = kRootFrameInstance;
  int64_t iteration = 0;
  int from_partition = 0;
  std::vector<OutValue> values;
};

// The frame instances of peer partitions that take transfers, as the peers
// announced them (`route`): an iteration sends a transfer straight to the
// frame when it is known here, else through the peer partition, which finds
// it. Weak handles (no cycle with the frames that hold the step). One per
// partition per step; written by its partition actor, read by its
// iterations. Thread-safe.
class TransferRoutes {
 public:
  caf::actor find(int partition, FrameInstanceId instance) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = frames_.find({partition, instance});
    return it == frames_.end() ? caf::actor() : caf::actor_cast<caf::actor>(it->second);
  }
  void put(int partition, FrameInstanceId instance, const caf::actor& frame) {
    std::lock_guard<std::mutex> lock(mu_);
    frames_[{partition, instance}] = frame.address();
  }
  void erase(int partition, FrameInstanceId instance) {
    std::lock_guard<std::mutex> lock(mu_);
    frames_.erase({partition, instance});
  }

 private:
  mutable std::mutex mu_;
  std::map<std::pair<int, FrameInstanceId>, caf::actor_addr> frames_;
};

class StepWaiter;

// Everything one step of one partition shares, read-only.
struct StepShared {
  StepContext context;
  std::vector<ops::Tensor> feeds;
  std::shared_ptr<ops::MemoryBudget> memory;  // owns context.memory
  int64_t max_iterations = 0;  // per frame instance; 0: unbounded
  std::shared_ptr<StepWaiter> waiter;
  std::vector<caf::actor> workers;  // compute jobs of kernel batches
  // The partitions of the step by index (transfers go to peers[i]), and
  // which of them this one is. One partition: peers holds only itself.
  std::vector<caf::actor> peers;
  int partition_index = 0;
  std::shared_ptr<TransferRoutes> routes;  // peers' frames; null for one partition
  std::chrono::nanoseconds timeout{0};  // 0: none
  // now + timeout, checked by frames on every iteration report: a busy
  // loop may keep a single worker from ever running the partition's timer.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

caf::error to_caf_error(const Status& s);
Status from_caf_error(const caf::error& e);

}  // namespace tagflow::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tagflow::actors::ValueBatch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tagflow::actors::TransferBatch)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tagflow::actors::IterationReport)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(tagflow::actors::Tag)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<tagflow::actors::KernelBatch>)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::shared_ptr<const tagflow::actors::StepShared>)
