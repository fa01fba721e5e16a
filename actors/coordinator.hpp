// StepCoordinator: one per session, in the caller's process. It starts
// every step on its partitions, wherever they run, collects their results
// into the step's waiter, aborts the step on every partition at the first
// error, and monitors every partition it has used: a partition that goes
// down — its actor failed, or its process died or stopped answering the
// middleman's heartbeat — ends each step that waits for it with
// `unavailable` naming the partition (and its task), and every later step
// that would use it at once. Emits partition_up / partition_down. Internal
// to actors/; includes CAF.
//
// Partitions the session no longer needs are released through it
// (`release`): it stops watching them before it stops them, so that their
// end is neither a partition_down nor an error of a later step.
#pragma once

#include <caf/all.hpp>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "actors/actor_base.hpp"
#include "actors/messages.hpp"
#include "actors/step_waiter.hpp"

namespace tagflow::actors {

// A step as the session hands it to its coordinator: never leaves the
// process (the waiter is the caller's).
struct StepLaunch {
  std::shared_ptr<StepWaiter> waiter;  // expects one part per partition
  std::vector<caf::actor> partitions;
  std::vector<std::string> names;  // for errors and events
  std::vector<StepStart> starts;   // by partition; peers and coordinator set here
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, StepLaunch&) {
  auto refuse = []() -> caf::error {
    return caf::make_error(caf::sec::invalid_argument, "a step launch never leaves its process");
  };
  return f(caf::meta::type_name("tagflow.step_launch"), caf::meta::save_callback(refuse),
           caf::meta::load_callback(refuse));
}

class StepCoordinator : public ActorBase {
 public:
  StepCoordinator(caf::actor_config& cfg, trace::Sink* events);
  caf::behavior make_behavior() override;
  const char* name() const override { return "tagflow.coordinator"; }

 private:
  struct Step {
    StepLaunch launch;
    std::vector<bool> answered;
    int left = 0;
    bool aborting = false;
  };
  void begin(StepLaunch& launch);
  void answer(uint64_t id, Step& step, size_t partition, StepWaiter::Result result);
  void abort_rest(uint64_t id, Step& step);
  void release(const std::vector<caf::actor>& partitions);

  trace::Sink* events_;
  std::map<uint64_t, Step> steps_;  // running, by step id
  struct Watched {
    std::string name;
    int32_t index = 0;  // in the steps it serves
  };
  std::map<caf::actor_addr, Watched> watched_;  // monitored partitions
  std::map<caf::actor_addr, std::string> down_;     // and why each went down
};

}  // namespace tagflow::actors
