#include "actors/partition_actor.hpp"

#include <fmt/format.h>

#include "actors/step_waiter.hpp"

namespace tagflow::actors {

namespace {
constexpr caf::atom_value kErrorCategory = caf::atom("tagflow");
}

caf::error to_caf_error(const Status& s) {
  return caf::error(static_cast<uint8_t>(s.code()), kErrorCategory, caf::make_message(s.message()));
}

Status from_caf_error(const caf::error& e) {
  if (e.category() == kErrorCategory) {
    std::string message;
    if (e.context().match_elements<std::string>()) message = e.context().get_as<std::string>(0);
    return Status(static_cast<ops::Error>(e.code()), message);
  }
  return Status(ops::Error::aborted, "step aborted: " + caf::to_string(e));
}

PartitionActor::PartitionActor(caf::actor_config& cfg, ExecPtr exec,
                               std::vector<std::string> fetch_names)
    : caf::event_based_actor(cfg), exec_(std::move(exec)), fetch_names_(std::move(fetch_names)) {}

void PartitionActor::finish(caf::actor_addr root, StepWaiter::Result result) {
  auto it = running_.find(root);
  if (it == running_.end()) return;
  StepPtr step = it->second.step;
  running_.erase(it);
  if (EventSink* sink = step->context.events) {
    Event e(EventKind::step_done);
    e.time_ns = sink->now_ns();
    e.step = step->context.step_id;
    e.partition = exec_->partition();
    e.tag = "/";
    if (!result.ok()) e.detail = result.status().to_string();
    sink->record(std::move(e));
  }
  step->waiter->fulfil(std::move(result));
}

StepWaiter::Result PartitionActor::collect(const Running& r, ValueBatch& fetches) const {
  std::vector<ops::Tensor> out(fetch_names_.size());
  std::vector<bool> seen(fetch_names_.size(), false);
  for (OutValue& v : fetches.values) {
    const NodeItem& item = exec_->item(v.item);
    const std::string& name = fetch_names_[static_cast<size_t>(item.index)];
    if (v.dead)
      return Status(ops::Error::dead_value,
                    fmt::format("fetch '{}' is dead at tag / on partition {}: it lies on a branch "
                                "that was not taken",
                                name, exec_->partition()));
    out[static_cast<size_t>(item.index)] = std::move(v.value);
    seen[static_cast<size_t>(item.index)] = true;
  }
  for (size_t i = 0; i < seen.size(); ++i)
    if (!seen[i])
      return Status(ops::Error::internal,
                    fmt::format("step {} ended without a value for fetch '{}'",
                                r.step->context.step_id, fetch_names_[i]));
  return out;
}

caf::behavior PartitionActor::make_behavior() {
  set_down_handler([=](caf::down_msg& dm) {
    if (dm.reason) finish(dm.source, from_caf_error(dm.reason));
    else finish(dm.source, Status(ops::Error::internal, "the step's root frame ended early"));
  });
  return {
      [=](run_step_atom, StepPtr step) {
        if (EventSink* sink = step->context.events) {
          Event e(EventKind::step_started);
          e.time_ns = sink->now_ns();
          e.step = step->context.step_id;
          e.partition = exec_->partition();
          e.tag = "/";
          sink->record(std::move(e));
        }
        caf::actor root = spawn<FrameActor, caf::monitored>(exec_, step, graph::kRootFrame, Tag(),
                                                             caf::actor_cast<caf::actor>(this));
        if (step->timeout.count() > 0)
          delayed_send(this, step->timeout, timeout_atom::value, root.address());
        running_.emplace(root.address(), Running{step, root});
      },
      [=](step_result_atom, ValueBatch& fetches) {
        auto it = running_.find(caf::actor_cast<caf::actor_addr>(current_sender()));
        if (it == running_.end()) return;
        finish(it->first, collect(it->second, fetches));
      },
      [=](timeout_atom, caf::actor_addr root) {
        auto it = running_.find(root);
        if (it == running_.end()) return;
        Status s(ops::Error::deadline_exceeded,
                 fmt::format("step {} on partition {} exceeded its timeout (--timeout)",
                             it->second.step->context.step_id, exec_->partition()));
        send_exit(it->second.root, to_caf_error(s));
        finish(root, s);
      },
  };
}

}  // namespace tagflow::actors
