// The messages between tagflow's actors (docs/protocol.md).
//
// Within one partition: partition -> frame -> iteration and back. These
// never leave their process, but are registered types with `inspect` like
// every other (a kernel batch refuses to be serialised: it is a job handle
// of the process's own kernel workers).
//
//   partition --spawn--> root frame --start--> iteration 0
//   iteration --enter--> child frame (spawned by the first Enter)
//   frame --deliver--> iteration (NextIteration values, loop invariants)
//   iteration --report--> frame (NextIteration/Exit/fetch values, quiescence)
//   frame --exits--> parent iteration (live Exits); frame --frame_done--> parent
//   (with the dead Exits)
//   root frame --step_result--> partition
//
// The partition boundary — what passes between a partition and its peers or
// the step's coordinator, in one process or across processes alike:
//   coordinator --run_step(StepStart)--> every partition of the step
//   partition --result(StepResult)--> coordinator
//   coordinator --abort--> every partition of a failed step
//   iteration --transfer(TransferBatch)--> peer partition or its frame
//   frame --frameup/framedown--> its partition --route/unroute--> peers
// Only actors/*.cpp and net/*.cpp include this header (CAF headers are
// expensive to compile).
#pragma once

#include <caf/all.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "actors/executable.hpp"
#include "actors/execution_plan.hpp"
#include "actors/frame_values.hpp"
#include "actors/iteration_state.hpp"
#include "actors/tag.hpp"
#include "actors/tensor_inspect.hpp"
#include "actors/transfer.hpp"

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
using result_atom = caf::atom_constant<caf::atom("result")>;
using begin_atom = caf::atom_constant<caf::atom("begin")>;
using release_atom = caf::atom_constant<caf::atom("release")>;
using run_iterations_atom = caf::atom_constant<caf::atom("runiters")>;
using transfers_atom = caf::atom_constant<caf::atom("transfers")>;

// What a partition needs to run one step: everything but what belongs to
// the partition's own process (its device's resources, its kernel
// workers, its event sink), which it was given when it was made.
struct StepStart {
  uint64_t step_id = 0;
  // The step's feeds by position; a partition that reads none of a feed
  // gets an invalid tensor in its place.
  std::vector<ops::Tensor> feeds;
  caf::timespan timeout{0};  // what is left of the step's time; 0: none
  int64_t max_iterations = 0;  // per frame instance; 0: unbounded
  int64_t memory_limit = 0;    // bytes this partition's tensors may hold
  bool strict_merge = false;
  bool no_shortcuts = false;  // SessionOptions::no_shortcuts (the partition plans itself with it)
  // The partitions of the step by index (transfers go to peers[i]), which
  // of them this one is, and where the result goes.
  std::vector<caf::actor> peers;
  int32_t partition_index = 0;
  caf::actor coordinator;
};

// One partition's end of a step: its fetches at their positions among the
// step's fetches (invalid tensors elsewhere), or an error.
struct StepResult {
  uint64_t step_id = 0;
  int32_t partition_index = 0;
  std::vector<ops::Tensor> fetches;
  int32_t code = 0;  // ops::Error; 0: ok
  std::string message;
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

// Everything one step of one partition shares, read-only; made by the
// partition from the StepStart and what its process gave it.
struct StepShared {
  StepContext context;
  std::vector<ops::Tensor> feeds;
  std::shared_ptr<ops::MemoryBudget> memory;  // owns context.memory
  std::vector<caf::actor> workers;  // compute jobs of kernel batches
  // The partitions of the step by index (transfers go to peers[i]), and
  // which of them this one is; `partition` is this partition's own actor.
  std::vector<caf::actor> peers;
  int partition_index = 0;
  caf::actor partition;
  std::shared_ptr<TransferRoutes> routes;  // peers' frames; null for one partition
  std::chrono::nanoseconds timeout{0};  // 0: none
  // The step's limits (context.guard points to it): its deadline (arrival
  // + timeout, checked by frames on every iteration report: a busy loop
  // may keep a single worker from ever running the partition's timer), its
  // cancellation and its iterations per frame instance.
  StepGuard guard;
  // Who drives the partition's iterations in this step
  // (actors/execution_plan.hpp).
  std::shared_ptr<const PartitionPlan> plan;
  // Cancelled when the step ends here for any reason: wakes the kernels of
  // the step that wait off the scheduler (docs/protocol.md, "Kernels that
  // block"); `waiting` (context.waiting points to it) says so and gives
  // them the deadline. `resources` keeps context.resources alive for them.
  std::shared_ptr<ops::Cancellation> cancellation = std::make_shared<ops::Cancellation>();
  ops::Waiting waiting;
  std::shared_ptr<ops::ResourceManager> resources;
};

caf::error to_caf_error(const Status& s);
Status from_caf_error(const caf::error& e);

// Registers every message type above with its stable name ("tagflow.…"):
// the names must match on every node of a cluster.
void add_message_types(caf::actor_system_config& cfg);

// --- inspect: how CAF serialises the messages ------------------------------

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, OutValue& x) {
  return f(caf::meta::type_name("tagflow.out_value"), x.item, x.value, x.dead);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, ValueBatch& x) {
  return f(caf::meta::type_name("tagflow.value_batch"), x.values);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, IterationReport& x) {
  return f(caf::meta::type_name("tagflow.iteration_report"), x.iteration, x.next_iterations, x.exits,
           x.fetches, x.quiescent, x.received);
}

// A whole value crosses as its tensor; a part as the whole tensor's head
// and the part's bytes, read into a fragment (checked against the head and
// what is left of the message before anything is allocated).
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TransferValue& x) {
  if constexpr (std::is_base_of<caf::serializer, Inspector>::value) {
    if (caf::error e = f(x.key, x.dead, x.part, x.parts)) return e;
    if (x.parts <= 1) return f(x.value);
    if (x.fragment || !x.value.valid() || ops::dtype_is_object(x.value.dtype()) ||
        x.part >= transfer_parts(x.value.byte_size()) || x.parts != transfer_parts(x.value.byte_size()))
      return caf::make_error(caf::sec::invalid_argument, "a transfer part that does not fit its tensor");
    std::string head;
    ops::append_tensor_wire_head(x.value, &head);
    if (caf::error e = f(head)) return e;
    const uint64_t at = uint64_t{x.part} * kTransferPartBytes;
    return f.apply_raw(transfer_part_size(x.value.byte_size(), x.part),
                       const_cast<char*>(static_cast<const char*>(x.value.raw_data())) + at);
  } else if constexpr (std::is_base_of<caf::deserializer, Inspector>::value) {
    if (caf::error e = f(x.key, x.dead, x.part, x.parts)) return e;
    if (x.parts <= 1) return f(x.value);
    std::string head;
    if (caf::error e = f(head)) return e;
    auto whole = ops::describe_tensor_wire_head(head);
    if (!whole.ok()) return caf::make_error(caf::sec::invalid_argument, whole.status().to_string());
    const auto malformed = [&](const std::string& what) {
      return caf::make_error(caf::sec::invalid_argument, "malformed transfer part: " + what);
    };
    if (x.dead) return malformed("a dead value has no parts");
    if (x.parts != transfer_parts(whole->payload))
      return malformed(std::to_string(x.parts) + " parts for " + std::to_string(whole->payload) + " bytes");
    if (x.part >= x.parts)
      return malformed("part " + std::to_string(x.part) + " of " + std::to_string(x.parts));
    const uint64_t n = transfer_part_size(whole->payload, x.part);
    if (auto* binary = dynamic_cast<caf::binary_deserializer*>(&f); binary != nullptr && n > binary->remaining())
      return malformed(std::to_string(n) + " bytes, " + std::to_string(binary->remaining()) + " left in the message");
    ops::Tensor bytes = ops::Tensor::uninitialized(ops::DType::uint8, ops::Shape{static_cast<int64_t>(n)});
    if (caf::error e = f.apply_raw(n, bytes.raw_mutable_data())) return e;
    x.value = std::move(bytes);
    x.fragment = true;
    x.whole_dtype = whole->dtype;
    x.whole_shape = whole->shape;
    return caf::error{};
  } else {
    return f(caf::meta::type_name("tagflow.transfer_value"), x.key, x.value, x.dead, x.part, x.parts);
  }
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TransferBatch& x) {
  return f(caf::meta::type_name("tagflow.transfer_batch"), x.step_id, x.instance, x.iteration,
           x.from_partition, x.values);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, TransferBatches& x) {
  return f(caf::meta::type_name("tagflow.transfer_batches"), x.batches);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, StepStart& x) {
  return f(caf::meta::type_name("tagflow.step_start"), x.step_id, x.feeds, x.timeout, x.max_iterations,
           x.memory_limit, x.strict_merge, x.no_shortcuts, x.peers, x.partition_index, x.coordinator);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, StepResult& x) {
  return f(caf::meta::type_name("tagflow.step_result"), x.step_id, x.partition_index, x.fetches, x.code,
           x.message);
}

// A tag as its path from the root: (frame name, iteration) pairs.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Tag& x) {
  std::vector<std::string> frames;
  std::vector<int64_t> iterations;
  if constexpr (Inspector::reads_state) {
    for (Tag t = x; !t.is_root(); t = t.parent()) {
      frames.push_back(t.frame_name());
      iterations.push_back(t.iteration());
    }
  }
  auto load = caf::meta::load_callback([&]() -> caf::error {
    if (frames.size() != iterations.size()) return caf::make_error(caf::sec::invalid_argument, "malformed tag");
    Tag t;
    for (size_t i = frames.size(); i-- > 0;) t = t.child(frames[i], iterations[i]);
    x = std::move(t);
    return caf::none;
  });
  return f(caf::meta::type_name("tagflow.tag"), frames, iterations, load);
}

// A kernel batch is a job handle of the process's own kernel workers:
// serialising one (sending it to another process) is an error.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, std::shared_ptr<KernelBatch>&) {
  auto refuse = []() -> caf::error {
    return caf::make_error(caf::sec::invalid_argument, "a kernel batch never leaves its process");
  };
  return f(caf::meta::type_name("tagflow.kernel_batch"), caf::meta::save_callback(refuse),
           caf::meta::load_callback(refuse));
}

}  // namespace tagflow::actors
