#include "actors/coordinator.hpp"

#include <fmt/format.h>

namespace tagflow::actors {

StepCoordinator::StepCoordinator(caf::actor_config& cfg, trace::Sink* events)
    : ActorBase(cfg), events_(events) {
  set_trace_ref({trace::Role::coordinator, -1, 0, 0});
  set_taken_sink(events, 0);
}

void StepCoordinator::begin(StepLaunch& launch) {
  const uint64_t id = launch.starts.empty() ? 0 : launch.starts.front().step_id;
  Step& step = steps_[id];
  const size_t n = launch.partitions.size();
  step.answered.assign(n, false);
  step.left = static_cast<int>(n);
  step.launch = std::move(launch);
  StepLaunch& p = step.launch;
  const caf::actor self = caf::actor_cast<caf::actor>(this);
  caf::timespan timeout{0};
  if (p.deadline != std::chrono::steady_clock::time_point::max()) {
    timeout = std::max(std::chrono::duration_cast<caf::timespan>(p.deadline - std::chrono::steady_clock::now()),
                       caf::timespan{1});
  }
  for (size_t i = 0; i < n; ++i) {
    const caf::actor& part = p.partitions[i];
    auto down = down_.find(part.address());
    if (down != down_.end()) {
      answer(id, step, i, Status(ops::Error::unavailable, down->second));
      continue;
    }
    if (watched_.emplace(part.address(), Watched{p.names[i], static_cast<int32_t>(i)}).second) {
      monitor(part);
      if (events_ != nullptr) events_->record(trace::partition_up(id, static_cast<int32_t>(i), p.names[i]));
    }
    StepStart& s = p.starts[i];
    s.peers = p.partitions;
    s.partition_index = static_cast<int32_t>(i);
    s.coordinator = self;
    s.timeout = timeout;
    send(part, run_step_atom::value, std::move(s));
  }
  p.starts.clear();
  if (step.left == 0) steps_.erase(id);
}

// Partition `partition` of step `id` is done: its result, an error, or
// its death.
void StepCoordinator::answer(uint64_t id, Step& step, size_t partition, StepWaiter::Result result) {
  if (step.answered[partition]) return;
  step.answered[partition] = true;
  --step.left;
  const bool failed = !result.ok();
  step.launch.waiter->fulfil(std::move(result));
  if (failed) abort_rest(id, step);
}

// The first error ends the step on every partition that has not answered.
void StepCoordinator::abort_rest(uint64_t id, Step& step) {
  if (step.aborting) return;
  step.aborting = true;
  for (size_t i = 0; i < step.answered.size(); ++i)
    if (!step.answered[i]) send(step.launch.partitions[i], abort_atom::value, id);
}

void StepCoordinator::release(const std::vector<caf::actor>& partitions) {
  for (const caf::actor& p : partitions) {
    if (watched_.erase(p.address()) > 0) demonitor(p);
    send_exit(p, caf::exit_reason::user_shutdown);
  }
}

caf::behavior StepCoordinator::make_behavior() {
  set_down_handler([=](caf::down_msg& dm) {
    auto watched = watched_.find(dm.source);
    if (watched == watched_.end()) return;
    const std::string name = watched->second.name;
    const int32_t index = watched->second.index;
    watched_.erase(watched);
    const std::string why =
        fmt::format("partition {} went down: {}", name,
                    (dm.reason == caf::exit_reason::remote_link_unreachable || dm.reason == caf::exit_reason::unreachable)
                        ? "its process is unreachable (it died, or stopped answering the heartbeat)"
                        : caf::to_string(dm.reason));
    down_[dm.source] = why;
    if (events_ != nullptr) events_->record(trace::partition_down(0, index, why));
    for (auto it = steps_.begin(); it != steps_.end();) {
      Step& step = it->second;
      for (size_t i = 0; i < step.launch.partitions.size(); ++i)
        if (step.launch.partitions[i].address() == dm.source)
          answer(it->first, step, i,
                 Status(ops::Error::unavailable, fmt::format("step {}: {}", it->first, why)));
      it = step.left == 0 ? steps_.erase(it) : std::next(it);
    }
  });
  return {
      [=](begin_atom, StepLaunch& launch) { begin(launch); },
      [=](release_atom, const std::vector<caf::actor>& partitions) { release(partitions); },
      [=](result_atom, StepResult& r) {
        auto it = steps_.find(r.step_id);
        if (it == steps_.end()) return;  // answered already (its partition went down)
        Step& step = it->second;
        const auto index = static_cast<size_t>(r.partition_index);
        if (r.partition_index < 0 || index >= step.answered.size() ||
            step.launch.partitions[index].address() != current_sender()) {
          return;  // not from a partition of the step
        }
        // A peer's code is checked like anything else from the wire.
        const bool known = r.code > 0 && r.code <= static_cast<int32_t>(ops::Error::cancelled);
        StepWaiter::Result result =
            Status(known ? static_cast<ops::Error>(r.code) : ops::Error::internal,
                   known ? std::move(r.message)
                         : fmt::format("partition {} answered with unknown error code {}: {}",
                                       step.launch.names[index], r.code, r.message));
        if (r.code == 0) result = std::move(r.fetches);
        answer(r.step_id, step, index, std::move(result));
        if (step.left == 0) steps_.erase(it);
      },
  };
}

}  // namespace tagflow::actors
