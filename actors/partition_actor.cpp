#include "actors/partition_actor.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "actors/step_waiter.hpp"
#include "ops/memory_budget.hpp"
#include "ops/resource.hpp"

namespace tagflow::actors {

namespace {
constexpr caf::atom_value kErrorCategory = caf::atom("tagflow");
// How long after the step's deadline a waiting kernel ends its wait itself.
constexpr std::chrono::seconds kWaitGrace{1};
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
                               std::vector<std::string> fetch_names, PartitionEnv env)
    : ActorBase(cfg),
      exec_(std::move(exec)),
      env_(std::move(env)),
      plans_{std::make_shared<PartitionPlan>(plan_partition(*exec_, true)),
             std::make_shared<PartitionPlan>(plan_partition(*exec_, false))},
      fetch_names_(std::move(fetch_names)) {
  set_trace_ref(partition_ref(env_.index));
  set_taken_sink(env_.events, 0);
}

void PartitionActor::on_exit() {
  // The partition stops (its session is going): the steps still running
  // here end too, and so do their waiting kernels.
  if (inline_step_ != nullptr) inline_step_->cancellation->cancel();
  for (auto& [id, r] : running_) {
    r.step->cancellation->cancel();
    caf::anon_send_exit(r.root, caf::exit_reason::user_shutdown);
  }
  running_.clear();
  routes_.clear();
  coordinators_.clear();
  inline_step_.reset();
  outbox_.clear();
  fetches_.clear();
}

void PartitionActor::finish(const StepShared& step, StepWaiter::Result result) {
  const uint64_t id = step.context.step_id;
  // Kernels of the step still waiting off the scheduler stop waiting.
  step.cancellation->cancel();
  auto route = routes_.find(id);
  if (route != routes_.end()) {
    if (result.ok() && !route->second.held.empty()) {
      const TransferBatch& b = route->second.held.begin()->second.front();
      result = Status(ops::Error::internal,
                      fmt::format("step {} ended on partition {} with an undelivered transfer for "
                                  "key '{}' (frame instance {:x}, iteration {})",
                                  id, exec_->partition(), exec_->transfer_name(b.values.front().key),
                                  b.instance, b.iteration));
    }
    routes_.erase(route);
  }
  if (trace::Sink* sink = step.context.events)
    sink->record(trace::step_done(id, step.context.partition, result.ok() ? std::string() : result.status().to_string()));
  // Stacks and TensorArrays of the step on this device.
  if (step.context.resources != nullptr) step.context.resources->end_step(id);
  StepResult r;
  r.step_id = id;
  r.partition_index = step.partition_index;
  if (result.ok()) {
    r.fetches = std::move(result).value();
  } else {
    r.code = static_cast<int32_t>(result.status().code());
    r.message = result.status().message();
  }
  auto coordinator = coordinators_.find(id);
  if (coordinator == coordinators_.end()) return;
  send(coordinator->second, result_atom::value, std::move(r));
  coordinators_.erase(coordinator);
}

// What the step's kernels still wait for, for its timeout message:
// "; waiting to dequeue from FIFOQueue 'q'".
namespace {
std::string waits_text(const StepShared& step) {
  std::string text;
  for (const std::string& w : step.cancellation->waits()) text += (text.empty() ? "; waiting to " : ", to ") + w;
  return text;
}
}  // namespace

// Ends a running step here because another partition failed.
void PartitionActor::abort(uint64_t step_id, const Status& s) {
  if (inline_step_ != nullptr && inline_step_->context.step_id == step_id) {
    end_inline(s);
    return;
  }
  auto it = running_.find(step_id);
  if (it != running_.end()) {
    // The step ends here when its root frame is down (the down handler):
    // its frame and iteration actors stop before the step's result leaves.
    send_exit(it->second.root, to_caf_error(s));
    return;
  }
  if (step_id > last_started_) aborted_.insert(step_id);  // it has not started here yet
}

// Hands a transfer to the root iteration of the inline step; false (and the
// step ended with the error) if a value cannot be taken.
bool PartitionActor::deliver_to_root(TransferBatch& batch) {
  for (TransferValue& v : batch.values) {
    if (trace::Sink* sink = inline_step_->context.events; sink != nullptr && v.part + 1 >= v.parts) {
      const int recv = exec_->recv_item(v.key);
      sink->record(trace::message_received(root_at(), trace::MessageKind::transfer, partition_ref(batch.from_partition),
                                           trace_ref(), recv >= 0 ? exec_->item(recv).node_id : -1, v.key, v.dead,
                                           transfer_bytes(v)));
    }
    Status s = root_.receive_transfer(v);
    if (!s.ok()) {
      end_inline(std::move(s));
      return false;
    }
  }
  return true;
}

void PartitionActor::on_transfer(TransferBatch& batch) {
  const uint64_t id = batch.step_id;
  const bool inline_target = inline_step_ != nullptr && inline_step_->context.step_id == id;
  if (!inline_target && running_.count(id) == 0 && id <= last_started_) return;  // an ended step
  if (!inline_target && running_.count(id) == 0 && env_.mutant_drop_early_transfers) return;  // (tests: broken)
  if (inline_target) {
    if (deliver_to_root(batch)) run_inline();
    return;
  }
  Route& route = routes_[id];
  auto frame = route.frames.find(batch.instance);
  if (frame != route.frames.end()) send(frame->second, transfer_atom::value, std::move(batch));
  else route.held[batch.instance].push_back(std::move(batch));
}

// The fetches this partition holds, at their positions among the step's
// fetches; the other partitions fill the rest.
StepWaiter::Result collect_fetches(const Executable& exec, const std::vector<std::string>& fetch_names,
                                   uint64_t step_id, std::vector<OutValue>& fetches) {
  std::vector<ops::Tensor> out(fetch_names.size());
  for (OutValue& v : fetches) {
    const NodeItem& item = exec.item(v.item);
    const std::string& name = fetch_names[static_cast<size_t>(item.index)];
    if (v.dead)
      return Status(ops::Error::dead_value,
                    fmt::format("fetch '{}' is dead at tag / on partition {}: it lies on a branch "
                                "that was not taken",
                                name, exec.partition()));
    out[static_cast<size_t>(item.index)] = std::move(v.value);
  }
  for (int retval : exec.retvals())
    if (const NodeItem& item = exec.item(retval); !out[static_cast<size_t>(item.index)].valid())
      return Status(ops::Error::internal,
                    fmt::format("step {} ended on partition {} without a value for fetch '{}'", step_id,
                                exec.partition(), fetch_names[static_cast<size_t>(item.index)]));
  return out;
}

StepWaiter::Result PartitionActor::collect(const StepShared& step, std::vector<OutValue>& fetches) const {
  return collect_fetches(*exec_, fetch_names_, step.context.step_id, fetches);
}

StepPtr PartitionActor::make_step(StepStart& start) {
  auto step = std::make_shared<StepShared>();
  step->context.step_id = start.step_id;
  step->context.events = env_.events;
  step->context.partition = start.partition_index;
  step->context.resources = env_.resources.get();
  step->context.strict_merge = start.strict_merge;
  step->plan = start.no_shortcuts ? plans_.without_shortcuts : plans_.with_shortcuts;
  step->memory = std::make_shared<ops::MemoryBudget>(start.memory_limit);
  step->context.memory = step->memory.get();
  step->guard.step_id = start.step_id;
  step->guard.max_iterations = start.max_iterations;
  step->guard.cancellation = step->cancellation.get();
  step->context.guard = &step->guard;
  step->timeout = start.timeout;
  if (start.timeout.count() > 0) step->guard.deadline = std::chrono::steady_clock::now() + start.timeout;
  step->resources = env_.resources;
  step->waiting.cancellation = step->cancellation.get();
  // The step's timer ends a waiting kernel's wait at the deadline (and its
  // error names what the step waits for); the kernel's own deadline, a
  // little later, is the backstop should the timer be late.
  if (step->guard.deadline != std::chrono::steady_clock::time_point::max())
    step->waiting.deadline = step->guard.deadline + kWaitGrace;
  if (env_.may_wait) step->context.waiting = &step->waiting;
  step->workers = env_.workers;
  // A recorded step is a replayable one: what an actor does follows from
  // the messages it takes. Kernel batches (a job queue shared with the
  // workers) and the route table (transfers straight to a peer's frame)
  // are read outside that order, so a step with events uses neither.
  step->context.use_workers = !env_.workers.empty() && env_.events == nullptr;
  step->peers = std::move(start.peers);
  step->partition_index = start.partition_index;
  step->partition = caf::actor_cast<caf::actor>(this);
  if (step->peers.size() > 1 && env_.events == nullptr) step->routes = std::make_shared<TransferRoutes>();
  step->feeds = std::move(start.feeds);
  step->context.feeds = &step->feeds;
  coordinators_[start.step_id] = std::move(start.coordinator);
  return step;
}

void PartitionActor::start(StepPtr step) {
  caf::actor root = spawn_frame<caf::monitored>(this, exec_, step, graph::kRootFrame, Tag(),
                                                caf::actor_cast<caf::actor>(this));
  const uint64_t id = step->context.step_id;
  running_.emplace(id, Running{std::move(step), std::move(root)});
}

// Where the inline step's root frame is, for its events (recorded as its
// frame actor would record them).
trace::At PartitionActor::root_at() const {
  return trace::At{inline_step_->context.step_id, inline_step_->context.partition, kRootFrameInstance, 0};
}

void PartitionActor::start_inline(StepPtr step) {
  inline_step_ = std::move(step);
  if (trace::Sink* sink = inline_step_->context.events) {
    sink->record(trace::frame_created(root_at(), graph::kRootFrame, 0, 0));
    sink->record(trace::iteration_started(root_at()));
  }
  root_.reset(*exec_, graph::kRootFrame, Tag(), inline_step_->context);
  fetches_.clear();
  // Transfers that came before the step started here.
  auto route = routes_.find(inline_step_->context.step_id);
  if (route != routes_.end()) {
    std::vector<TransferBatch> early = std::move(route->second.held[kRootFrameInstance]);
    routes_.erase(route);
    for (TransferBatch& b : early)
      if (!deliver_to_root(b)) return;
  }
  run_inline();
}

// Runs the root iteration until it is done or waits for kernels on workers.
// Without control flow nothing leaves it but fetches and kernel jobs.
void PartitionActor::run_inline() {
  const StepShared& step = *inline_step_;
  if (step.guard.past_deadline()) {
    end_inline(step.guard.timed_out(fmt::format(" at tag / on partition {}", exec_->partition())));
    return;
  }
  // Without control flow nothing leaves the root iteration but fetches,
  // kernel jobs and transfers.
  struct Sink : OutboxSink {
    PartitionActor& self;
    explicit Sink(PartitionActor& p) : self(p) {}
    Status drain(Outbox& out) {
      for (const std::shared_ptr<KernelBatch>& batch : out.batches)
        hand_out(self.inline_step_, batch, caf::actor_cast<caf::actor>(&self));
      for (OutValue& v : out.fetches) self.fetches_.push_back(std::move(v));
      if (!out.sends.empty()) send_transfers(&self, *self.inline_step_, *self.exec_, Tag(), out.sends);
      out.clear();
      return ops::ok_status();
    }
  } sink(*this);
  if (Status s = root_.run_until_idle(step.context, outbox_, sink); !s.ok()) {
    end_inline(std::move(s));
    return;
  }
  // `computed` or a transfer resumes it
  if (root_.outstanding_jobs() > 0 || root_.transfers_missing() > 0) return;
  if (trace::Sink* sink = step.context.events) {
    sink->record(trace::iteration_done(root_at()));
    sink->record(trace::frame_done(root_at()));
  }
  end_inline(collect(step, fetches_));
}

void PartitionActor::end_inline(StepWaiter::Result result) {
  StepPtr step = std::move(inline_step_);
  fetches_.clear();
  finish(*step, std::move(result));
}

// Ends every step running here with `s` (an unreadable message: which
// step it belonged to cannot be known).
void PartitionActor::fail_all(const Status& s) {
  if (inline_step_ != nullptr) end_inline(s);
  while (!running_.empty()) {
    auto it = running_.begin();
    send_exit(it->second.root, to_caf_error(s));
    StepPtr step = std::move(it->second.step);
    running_.erase(it);
    finish(*step, s);
  }
}

caf::behavior PartitionActor::make_behavior() {
  on_unreadable([this](const std::string& what) {
    fail_all(Status(ops::Error::invalid_argument, fmt::format("partition {} got {}", exec_->partition(), what)));
  });
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
      [=](run_step_atom, StepStart& s) {
        StepPtr step = make_step(s);
        last_started_ = std::max(last_started_, step->context.step_id);
        if (trace::Sink* sink = step->context.events)
          sink->record(trace::step_started(step->context.step_id, step->context.partition,
                                           sink->names(exec_->trace_names())));
        if (aborted_.erase(step->context.step_id) > 0) {
          finish(*step, Status(ops::Error::aborted,
                               fmt::format("step {} aborted on partition {}: another partition failed",
                                           step->context.step_id, exec_->partition())));
          return;
        }
        if (step->timeout.count() > 0)
          delayed_send(this, step->timeout, timeout_atom::value, step->context.step_id);
        if (step->plan->root_inline && inline_step_ == nullptr) start_inline(std::move(step));
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
      [=](transfer_atom, TransferBatch& batch) { on_transfer(batch); },
      [=](transfers_atom, TransferBatches& batches) {
        for (TransferBatch& batch : batches.batches) on_transfer(batch);
      },
      [=](frame_up_atom, uint64_t step_id, FrameInstanceId instance, caf::actor& frame) {
        if (running_.count(step_id) == 0) return;  // the step already ended here
        Route& route = routes_[step_id];
        auto held = route.held.find(instance);
        if (held != route.held.end()) {
          for (TransferBatch& b : held->second) send(frame, transfer_atom::value, std::move(b));
          route.held.erase(held);
        }
        // Peers may send to the frame directly from now on.
        const StepShared& step = *running_.find(step_id)->second.step;
        send_to_peers(step, route_atom::value, step_id, instance, step.partition_index, frame);
        route.frames[instance] = std::move(frame);
      },
      [=](frame_down_atom, uint64_t step_id, FrameInstanceId instance) {
        auto route = routes_.find(step_id);
        if (route != routes_.end()) route->second.frames.erase(instance);
        auto running = running_.find(step_id);
        if (running == running_.end()) return;
        const StepShared& step = *running->second.step;
        send_to_peers(step, unroute_atom::value, step_id, instance, step.partition_index);
      },
      [=](route_atom, uint64_t step_id, FrameInstanceId instance, int from, caf::actor& frame) {
        auto running = running_.find(step_id);
        if (running != running_.end() && running->second.step->routes)
          running->second.step->routes->put(from, instance, frame);
      },
      [=](unroute_atom, uint64_t step_id, FrameInstanceId instance, int from) {
        auto running = running_.find(step_id);
        if (running != running_.end() && running->second.step->routes)
          running->second.step->routes->erase(from, instance);
      },
      [=](abort_atom, uint64_t step_id) {
        abort(step_id, Status(ops::Error::aborted,
                              fmt::format("step {} aborted on partition {}: another partition failed",
                                          step_id, exec_->partition())));
      },
      [=](timeout_atom, uint64_t step_id) {
        const bool inline_target = inline_step_ != nullptr && inline_step_->context.step_id == step_id;
        auto it = running_.find(step_id);
        if (!inline_target && it == running_.end()) return;
        const StepShared& late = inline_target ? *inline_step_ : *it->second.step;
        Status s = late.guard.timed_out(fmt::format(" on partition {}{}", exec_->partition(), waits_text(late)));
        if (inline_target) {
          end_inline(std::move(s));
          return;
        }
        send_exit(it->second.root, to_caf_error(s));
        StepPtr step = std::move(it->second.step);
        running_.erase(it);
        finish(*step, std::move(s));
      },
  };
}

}  // namespace tagflow::actors
