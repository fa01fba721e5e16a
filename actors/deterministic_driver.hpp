// The driver of a deterministic session (SessionOptions::deterministic):
// CAF's testing scheduler runs every actor on the caller's thread, one
// message at a time, and under an installed Network (actors/network.hpp)
// the network's schedule decides which held message is delivered next.
// Internal to actors/; the session calls it in place of waiting.
#pragma once

#include <caf/all.hpp>

#include "actors/network.hpp"
#include "actors/step_waiter.hpp"

namespace tagflow::actors {

class DeterministicDriver {
 public:
  // `system` runs on CAF's test_coordinator; `network` may be nullptr.
  DeterministicDriver(caf::actor_system& system, Network* network) : system_(system), network_(network) {}

  // Runs the step's actors until one of them, or (under a network) the
  // schedule, ends it: a schedule that holds messages it will not deliver
  // aborts the step, actors with nothing to do end it as stalled.
  void run_step(StepWaiter& waiter);

  // Runs every actor until none has anything left to do (under a network:
  // with every held message delivered).
  void drain();

 private:
  caf::scheduler::test_coordinator& coordinator();

  caf::actor_system& system_;
  Network* network_;
};

}  // namespace tagflow::actors
