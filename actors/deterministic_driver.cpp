#include "actors/deterministic_driver.hpp"

#include <caf/scheduler/test_coordinator.hpp>

namespace tagflow::actors {

caf::scheduler::test_coordinator& DeterministicDriver::coordinator() {
  return dynamic_cast<caf::scheduler::test_coordinator&>(system_.scheduler());
}

void DeterministicDriver::run_step(StepWaiter& waiter) {
  auto& c = coordinator();
  while (!waiter.done()) {
    if (c.try_run_once()) continue;
    if (network_ != nullptr && network_->has_pending()) {
      if (network_->deliver_next()) continue;
      waiter.fail_all(ops::Status(ops::Error::aborted, "step stopped by the schedule"));
      break;
    }
    waiter.fail_all(ops::Status(ops::Error::internal, "step stalled: no actor has a message to process"));
    break;
  }
  drain();
}

void DeterministicDriver::drain() {
  auto& c = coordinator();
  for (;;) {
    while (c.try_run_once()) {
    }
    if (network_ == nullptr || !network_->has_pending()) return;
    if (!network_->chooses_after_step() || !network_->deliver_next()) network_->deliver_all();
  }
}

}  // namespace tagflow::actors
