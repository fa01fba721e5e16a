#include "actors/partition_actor.hpp"

#include <fmt/format.h>

#include <algorithm>

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

void PartitionActor::finish(const StepShared& step, StepWaiter::Result result) {
  if (EventSink* sink = step.context.events) {
    Event e(EventKind::step_done);
    e.time_ns = sink->now_ns();
    e.step = step.context.step_id;
    e.partition = exec_->partition();
    e.tag = "/";
    if (!result.ok()) e.detail = result.status().to_string();
    sink->record(std::move(e));
  }
  step.waiter->fulfil(std::move(result));
}

StepWaiter::Result PartitionActor::collect(const StepShared& step,
                                           std::vector<OutValue>& fetches) const {
  std::vector<ops::Tensor> out(fetch_names_.size());
  std::vector<bool> seen(fetch_names_.size(), false);
  for (OutValue& v : fetches) {
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
                                step.context.step_id, fetch_names_[i]));
  return out;
}

void PartitionActor::start(StepPtr step) {
  caf::actor root = spawn<FrameActor, caf::monitored>(exec_, step, graph::kRootFrame, Tag(),
                                                       caf::actor_cast<caf::actor>(this));
  const uint64_t id = step->context.step_id;
  running_.emplace(id, Running{std::move(step), std::move(root)});
}

// The root frame's events, as its frame actor would record them.
void PartitionActor::trace_root(EventKind kind) const {
  EventSink* sink = inline_step_->context.events;
  if (sink == nullptr) return;
  Event e{kind};
  e.time_ns = sink->now_ns();
  e.step = inline_step_->context.step_id;
  e.partition = exec_->partition();
  e.tag = "/";
  e.detail = exec_->frame(graph::kRootFrame).name;
  sink->record(std::move(e));
}

void PartitionActor::start_inline(StepPtr step) {
  inline_step_ = std::move(step);
  trace_root(EventKind::frame_created);
  trace_root(EventKind::iteration_started);
  root_.reset(*exec_, graph::kRootFrame, Tag());
  fetches_.clear();
  run_inline();
}

// Runs the root iteration until it is done or waits for kernels on workers.
// Without control flow nothing leaves it but fetches and kernel jobs.
void PartitionActor::run_inline() {
  const StepShared& step = *inline_step_;
  if (step.deadline != std::chrono::steady_clock::time_point::max() &&
      std::chrono::steady_clock::now() > step.deadline) {
    end_inline(Status(ops::Error::deadline_exceeded,
                      fmt::format("step {} exceeded its timeout (--timeout) at tag / on partition {}",
                                  step.context.step_id, exec_->partition())));
    return;
  }
  do {
    Status s = root_.run(step.context, outbox_);
    for (const std::shared_ptr<KernelBatch>& batch : outbox_.batches)
      hand_out(step, batch, caf::actor_cast<caf::actor>(this));
    for (OutValue& v : outbox_.fetches) fetches_.push_back(std::move(v));
    outbox_.clear();
    if (!s.ok()) {
      end_inline(std::move(s));
      return;
    }
  } while (root_.has_ready());
  if (root_.outstanding_jobs() > 0) return;  // `computed` resumes it
  trace_root(EventKind::iteration_done);
  trace_root(EventKind::frame_done);
  end_inline(collect(step, fetches_));
}

void PartitionActor::end_inline(StepWaiter::Result result) {
  StepPtr step = std::move(inline_step_);
  fetches_.clear();
  finish(*step, std::move(result));
}

caf::behavior PartitionActor::make_behavior() {
  set_down_handler([=](caf::down_msg& dm) {
    auto it = std::find_if(running_.begin(), running_.end(),
                           [&](const auto& r) { return r.second.root.address() == dm.source; });
    if (it == running_.end()) return;  // its step is already answered
    StepPtr step = std::move(it->second.step);
    running_.erase(it);
    finish(*step, dm.reason ? from_caf_error(dm.reason)
                            : Status(ops::Error::internal, "the step's root frame ended early"));
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
        if (step->timeout.count() > 0)
          delayed_send(this, step->timeout, timeout_atom::value, step->context.step_id);
        if (!exec_->has_control_flow() && inline_step_ == nullptr) start_inline(std::move(step));
        else start(std::move(step));
      },
      [=](step_result_atom, ValueBatch& fetches) {
        const caf::actor_addr from = caf::actor_cast<caf::actor_addr>(current_sender());
        auto it = std::find_if(running_.begin(), running_.end(),
                               [&](const auto& r) { return r.second.root.address() == from; });
        if (it == running_.end()) return;
        StepPtr step = std::move(it->second.step);
        running_.erase(it);
        finish(*step, collect(*step, fetches.values));
      },
      [=](computed_atom, std::shared_ptr<KernelBatch>& batch, std::vector<int>& done) {
        // Jobs of an inline step that already ended (error, timeout) are dropped.
        if (inline_step_ == nullptr || batch->step_id() != inline_step_->context.step_id) return;
        Status s = root_.complete(*batch, done);
        if (!s.ok()) end_inline(std::move(s));
        else run_inline();
      },
      [=](timeout_atom, uint64_t step_id) {
        Status s(ops::Error::deadline_exceeded,
                 fmt::format("step {} on partition {} exceeded its timeout (--timeout)", step_id,
                             exec_->partition()));
        if (inline_step_ != nullptr && inline_step_->context.step_id == step_id) {
          end_inline(std::move(s));
          return;
        }
        auto it = running_.find(step_id);
        if (it == running_.end()) return;
        send_exit(it->second.root, to_caf_error(s));
        StepPtr step = std::move(it->second.step);
        running_.erase(it);
        finish(*step, std::move(s));
      },
  };
}

}  // namespace tagflow::actors
