// PartitionActor: one device partition of a registered graph. For every
// step it spawns the root frame actor (monitored) and answers the step's
// waiter with the fetched values or an error that names node, tag and
// partition; a timed-out step is aborted by ending its root frame, which
// ends every frame and iteration actor of the step through their links.
// Internal to actors/; includes CAF.
#pragma once

#include <caf/all.hpp>

#include <map>

#include "actors/step_actors.hpp"
#include "actors/step_waiter.hpp"

namespace tagflow::actors {

class PartitionActor : public caf::event_based_actor {
 public:
  PartitionActor(caf::actor_config& cfg, ExecPtr exec, std::vector<std::string> fetch_names);
  caf::behavior make_behavior() override;
  const char* name() const override { return "tagflow.partition"; }

 private:
  struct Running {
    StepPtr step;
    caf::actor root;
  };
  void finish(caf::actor_addr root, StepWaiter::Result result);
  StepWaiter::Result collect(const Running& r, ValueBatch& fetches) const;

  ExecPtr exec_;
  std::vector<std::string> fetch_names_;
  std::map<caf::actor_addr, Running> running_;
};

}  // namespace tagflow::actors
