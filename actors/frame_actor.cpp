#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "actors/step_actors.hpp"

namespace tagflow::actors {

namespace {

// Iteration runs a frame that runs its iterations does per message before
// it lets the messages behind it in (an abort, a transfer, a timer):
// ~10-100 µs of a cheap loop.
constexpr int kRunsPerMessage = 256;

}  // namespace

FrameActor::FrameActor(caf::actor_config& cfg, ExecPtr exec, StepPtr step, FrameId frame,
                       Tag tag, caf::actor parent)
    : ActorBase(cfg),
      exec_(std::move(exec)),
      step_(std::move(step)),
      frame_(frame),
      tag0_(std::move(tag)),
      parent_(std::move(parent)),
      layout_(exec_->frame(frame)),
      exit_live_(layout_.exits.size(), false),
      runs_iterations_(step_->plan->frame_runs_iterations[static_cast<size_t>(frame)]) {
  set_trace_ref(frame_ref(step_->context.partition, tag0_.frame_instance()));
  set_taken_sink(step_->context.events, step_->context.step_id);
}

trace::At FrameActor::at(int64_t iteration) const {
  return trace::At{step_->context.step_id, step_->context.partition, tag0_.frame_instance(), iteration};
}

void FrameActor::on_exit() {
  parent_ = nullptr;
  active_.clear();
  idle_.clear();
  deferred_.reset();
  held_dead_.clear();
  invariants_.clear();
  fetches_.clear();
  early_transfers_.clear();
  idle_states_.clear();
  runnable_.clear();
  outbox_.clear();
}

caf::behavior FrameActor::make_behavior() {
  on_unreadable([this](const std::string& what) {
    fail(Status(ops::Error::invalid_argument,
                fmt::format("frame '{}' on partition {} got {}", layout_.name, exec_->partition(), what)));
  });
  if (trace::Sink* sink = step_->context.events) {
    const Tag parent = tag0_.parent();
    sink->record(trace::frame_created(at(0), frame_, parent.frame_instance(), parent.iteration()));
  }
  // Transfers for this frame instance reach it through its partition.
  if (layout_.num_recvs > 0)
    send(step_->partition, frame_up_atom::value,
         step_->context.step_id, tag0_.frame_instance(), caf::actor_cast<caf::actor>(this));
  // The root frame starts at once; a loop's iteration 0 with its first Enters.
  if (tag0_.is_root() && start_iteration(0, {}) && runs_iterations_ && !runnable_.empty()) {
    resume_sent_ = true;
    send(this, run_iterations_atom::value);
  }
  return {
      [=](enter_atom, ValueBatch& batch) {
        on_enter(batch);
        run_iterations();
      },
      [=](report_atom, IterationReport& r) { on_report(r); },
      [=](transfer_atom, TransferBatch& batch) {
        on_transfer(batch);
        run_iterations();
      },
      [=](transfers_atom, TransferBatches& batches) {
        for (TransferBatch& batch : batches.batches) {
          if (stopped_) return;
          on_transfer(batch);
        }
        run_iterations();
      },
      [=](run_iterations_atom) {
        resume_sent_ = false;
        run_iterations();
      },
      // Jobs a kernel worker computed of a batch one of the iterations this
      // frame runs made (an iteration cannot retire while its jobs are out).
      [=](computed_atom, std::shared_ptr<KernelBatch>& batch, std::vector<int>& done) {
        const int64_t iteration = batch->iteration;
        if (stopped_ || !runs_iterations_ || !is_active(iteration)) return;
        Status s = slot(iteration).state->complete(*batch, done);
        if (!s.ok()) return fail(s);
        queue(iteration);
        run_iterations();
      },
  };
}

void FrameActor::queue(int64_t iteration) {
  Slot& s = slot(iteration);
  if (s.queued) return;
  s.queued = true;
  runnable_.push_back(iteration);
}

void FrameActor::deliver_here(int64_t iteration, const std::vector<OutValue>& values) {
  IterationState& state = *slot(iteration).state;
  for (const OutValue& v : values) {
    Status s = state.deliver(v.item, v.value, v.dead);
    if (!s.ok()) return fail(s);
  }
  queue(iteration);
}

// Runs the queued iterations, each until it has nothing ready, and takes
// what each run produced as that iteration's report. Every delivery to an
// iteration was counted in its slot (`sent`) before it was made, and a
// report counts all of them (`received`), so an iteration is retired only
// after a run that saw everything sent to it, as with iteration actors.
void FrameActor::run_iterations() {
  if (running_ || !runs_iterations_) return;
  running_ = true;
  int runs = 0;
  while (!runnable_.empty() && !stopped_) {
    if (++runs > kRunsPerMessage) {
      if (!resume_sent_) {
        resume_sent_ = true;
        send(this, run_iterations_atom::value);
      }
      break;
    }
    const int64_t iteration = runnable_.front();
    runnable_.pop_front();
    if (!is_active(iteration)) continue;
    Slot& s = slot(iteration);
    s.queued = false;
    IterationState& state = *s.state;
    Status status = state.run(step_->context, outbox_);
    if (!status.ok()) {
      fail(status);
      break;
    }
    for (const std::shared_ptr<KernelBatch>& batch : outbox_.batches)
      hand_out(step_, batch, caf::actor_cast<caf::actor>(this));
    if (!outbox_.sends.empty()) send_transfers(this, *step_, *exec_, state.tag(), outbox_.sends, &held_transfers_);
    // The report takes the outbox's vectors and leaves it its own, emptied.
    IterationReport& r = report_;
    r.iteration = iteration;
    r.next_iterations.clear();
    r.exits.clear();
    r.fetches.clear();
    std::swap(r.next_iterations, outbox_.next_iterations);
    std::swap(r.exits, outbox_.exits);
    std::swap(r.fetches, outbox_.fetches);
    outbox_.clear();
    if (state.has_ready()) queue(iteration);
    r.quiescent = !state.has_ready() && state.transfers_missing() == 0 && state.outstanding_jobs() == 0;
    r.received = s.sent;
    on_report(r);
  }
  if (!stopped_ || finished_) flush_transfers(this, *step_, held_transfers_);
  running_ = false;
}

// A transfer goes to its iteration if it runs, waits if the iteration is
// still to come (it cannot be done before the transfer arrives, so an
// iteration that is done can never be its target).
void FrameActor::on_transfer(TransferBatch& batch) {
  const int64_t end = oldest_ + static_cast<int64_t>(active_.size());
  if (batch.iteration < oldest_) {
    const TransferValue& v = batch.values.front();
    fail(Status(ops::Error::internal,
                fmt::format("frame '{}' on partition {} got a transfer for key '{}' at tag {}, "
                            "an iteration that is done",
                            layout_.name, exec_->partition(), exec_->transfer_name(v.key),
                            tag0_.with_iteration(batch.iteration).to_string())));
    return;
  }
  if (batch.iteration >= end) {
    early_transfers_[batch.iteration].push_back(std::move(batch));
    return;
  }
  Slot& s = slot(batch.iteration);
  ++s.sent;
  if (!runs_iterations_) {
    send(s.actor, transfer_atom::value, std::move(batch));
    return;
  }
  if (step_->context.events != nullptr)
    trace_transfers(*step_, *exec_, at(batch.iteration), trace_ref(), batch);
  for (TransferValue& v : batch.values) {
    Status status = s.state->receive_transfer(v);
    if (!status.ok()) return fail(status);
  }
  queue(batch.iteration);
}

void FrameActor::fail(const Status& s) {
  stopped_ = true;
  quit(to_caf_error(s));
}

// Sends values to a started, not yet done iteration (`counted`: the message
// is already counted in its slot).
void FrameActor::send_to(int64_t iteration, std::vector<OutValue>&& values, bool counted) {
  Slot& s = slot(iteration);
  if (!counted) ++s.sent;
  if (runs_iterations_) {
    deliver_here(iteration, values);
    values.clear();
    return;
  }
  if (trace::Sink* sink = step_->context.events) {
    const trace::ActorRef me = frame_ref(step_->context.partition, tag0_.frame_instance());
    const trace::ActorRef to = iteration_ref(step_->context.partition, tag0_.frame_instance(), s.index);
    for (const OutValue& v : values)
      sink->record(trace::message_sent(at(iteration), trace::MessageKind::deliver, me, to, exec_->item(v.item).node_id,
                                       0, v.dead, static_cast<int64_t>(v.value.byte_size())));
  }
  send(s.actor, deliver_atom::value, ValueBatch{std::move(values)});
}

// Starts `iteration` (the next one) with `values` plus the loop invariants.
// False if the step must stop (too many iterations).
bool FrameActor::start_iteration(int64_t iteration, std::vector<OutValue>&& values) {
  if (step_->guard.over_iterations(iteration)) {
    fail(step_->guard.iterations_exceeded(fmt::format("frame '{}' at tag {} on partition {}", layout_.name,
                                                      tag0_.with_iteration(iteration).to_string(),
                                                      exec_->partition())));
    return false;
  }
  if (runs_iterations_) {
    std::unique_ptr<IterationState> state;
    if (!idle_states_.empty()) {
      state = std::move(idle_states_.back());
      idle_states_.pop_back();
    } else {
      state = std::make_unique<IterationState>();
    }
    state->reset(*exec_, frame_, tag0_.with_iteration(iteration), step_->context);
    Slot& s = active_.emplace_back();
    s.sent = 1;
    s.state = std::move(state);
    if (trace::Sink* sink = step_->context.events) sink->record(trace::iteration_started(at(iteration)));
    deliver_here(iteration, values);
    values.clear();
    if (!stopped_ && !held_dead_.empty()) deliver_here(iteration, held_dead_);
    held_dead_.clear();
    if (!stopped_ && !invariants_.empty()) deliver_here(iteration, invariants_);
    if (stopped_) return false;
    if (!early_transfers_.empty() && early_transfers_.begin()->first == iteration) {
      std::vector<TransferBatch> batches = std::move(early_transfers_.begin()->second);
      early_transfers_.erase(early_transfers_.begin());
      for (TransferBatch& b : batches) on_transfer(b);
    }
    return !stopped_;
  }
  caf::actor a;
  int64_t index = 0;
  if (!idle_.empty()) {
    std::tie(a, index) = std::move(idle_.back());
    idle_.pop_back();
  } else {
    index = spawned_++;
    a = spawn<IterationActor, caf::linked>(exec_, step_, caf::actor_cast<caf::actor>(this), tag0_.frame_instance(),
                                           index);
  }
  Slot& slot = active_.emplace_back();
  slot.actor = a;
  slot.index = index;
  slot.sent = 1;
  for (OutValue& v : held_dead_) values.push_back(std::move(v));
  held_dead_.clear();
  values.insert(values.end(), invariants_.begin(), invariants_.end());
  if (trace::Sink* sink = step_->context.events) sink->record(trace::iteration_started(at(iteration)));
  send(a, start_atom::value, frame_, tag0_.with_iteration(iteration), ValueBatch{std::move(values)});
  if (!early_transfers_.empty() && early_transfers_.begin()->first == iteration) {
    for (TransferBatch& b : early_transfers_.begin()->second) {
      ++active_.back().sent;
      send(a, transfer_atom::value, std::move(b));
    }
    early_transfers_.erase(early_transfers_.begin());
  }
  return true;
}

// Enter values come from the parent iteration while iteration 0 is still
// running (it is not done before every Enter has arrived).
void FrameActor::trace_received(trace::MessageKind kind, int64_t iteration, const std::vector<OutValue>& values,
                                const trace::ActorRef& from) {
  trace::Sink* sink = step_->context.events;
  const trace::ActorRef me = frame_ref(step_->context.partition, tag0_.frame_instance());
  for (const OutValue& v : values)
    sink->record(trace::message_received(at(iteration), kind, from, me, exec_->item(v.item).node_id, 0, v.dead,
                                         static_cast<int64_t>(v.value.byte_size())));
}

void FrameActor::on_enter(ValueBatch& batch) {
  if (step_->context.events != nullptr)
    trace_received(trace::MessageKind::enter, 0, batch.values,
                   iteration_ref(step_->context.partition, tag0_.parent().frame_instance(), -1));
  if (oldest_ != 0) {
    fail(Status(ops::Error::internal,
                fmt::format("frame '{}' on partition {} got an Enter value after iteration 0",
                            layout_.name, exec_->partition())));
    return;
  }
  std::vector<OutValue> to_first;
  for (OutValue& v : batch.values) {
    ++enters_arrived_;
    if (exec_->item(v.item).is_constant) {
      // A loop invariant reaches every iteration, running or still to come.
      for (int64_t i = 1; i < static_cast<int64_t>(active_.size()); ++i) send_to(i, {v});
      invariants_.push_back(v);
      if (active_.empty()) continue;  // start_iteration(0) adds the invariants
    }
    to_first.push_back(std::move(v));
  }
  if (active_.empty()) {
    if (!start_iteration(0, std::move(to_first))) return;
  } else {
    send_to(0, std::move(to_first));
  }
  advance();
}

void FrameActor::on_report(IterationReport& r) {
  if (!is_active(r.iteration)) {
    fail(Status(ops::Error::internal,
                fmt::format("frame '{}' on partition {} got a report for iteration {}, which is "
                            "not running",
                            layout_.name, exec_->partition(), r.iteration)));
    return;
  }
  if (step_->guard.past_deadline()) {
    fail(step_->guard.timed_out(fmt::format(" in frame '{}' at tag {} on partition {}", layout_.name,
                                            tag0_.with_iteration(r.iteration).to_string(), exec_->partition())));
    return;
  }
  if (trace::Sink* sink = step_->context.events; sink != nullptr && !runs_iterations_) {
    const trace::ActorRef from = iteration_ref(step_->context.partition, tag0_.frame_instance(), slot(r.iteration).index);
    trace_received(trace::MessageKind::report, r.iteration, r.next_iterations, from);
    trace_received(trace::MessageKind::report, r.iteration, r.exits, from);
    sink->record(trace::message_received(at(r.iteration), trace::MessageKind::report, from,
                                         frame_ref(step_->context.partition, tag0_.frame_instance()), -1, 0, false, 0));
  }
  Slot& s = slot(r.iteration);
  s.received = r.received;
  s.quiescent = r.quiescent;
  for (OutValue& f : r.fetches) fetches_.push_back(std::move(f));

  std::vector<OutValue> live_exits;
  for (OutValue& x : r.exits) {
    if (x.dead) continue;  // a dead Exit counts only when the frame is done
    auto pos = std::find(layout_.exits.begin(), layout_.exits.end(), x.item) - layout_.exits.begin();
    if (exit_live_[static_cast<size_t>(pos)]) {
      fail(Status(ops::Error::invalid_graph,
                  fmt::format("Exit '{}' got a second live value at tag {} on partition {}",
                              exec_->item(x.item).node->name,
                              tag0_.with_iteration(r.iteration).to_string(), exec_->partition())));
      return;
    }
    exit_live_[static_cast<size_t>(pos)] = true;
    live_exits.push_back(std::move(x));
  }
  if (!live_exits.empty()) send(parent_, exits_atom::value, frame_, ValueBatch{std::move(live_exits)});

  // Values for a running iteration are counted at once (it cannot be taken
  // as done before it has them) but sent after advance(): a worker runs the
  // actor it scheduled last first, so the iteration that waited for them —
  // the loop's critical path — runs next on this core, where they are in
  // cache, and an iteration advance() starts is the one another worker may
  // steal.
  // A live NextIteration value starts the next iteration; dead ones reach
  // it only if it runs (they are dropped with the frame otherwise).
  int64_t forward = -1;
  if (!r.next_iterations.empty()) {
    int64_t next = r.iteration + 1;
    int64_t end = oldest_ + static_cast<int64_t>(active_.size());
    const bool live = std::any_of(r.next_iterations.begin(), r.next_iterations.end(),
                                  [](const OutValue& v) { return !v.dead; });
    if (next < end) {
      ++slot(next).sent;
      forward = next;
    } else if (!live || deferred_) {
      for (OutValue& v : r.next_iterations) (v.dead ? held_dead_ : *deferred_).push_back(std::move(v));
    } else if (end - oldest_ < layout_.parallel_iterations) {
      if (!start_iteration(next, std::move(r.next_iterations))) return;
    } else {
      deferred_.emplace();
      for (OutValue& v : r.next_iterations) (v.dead ? held_dead_ : *deferred_).push_back(std::move(v));
    }
  }
  advance();
  if (forward >= 0 && !stopped_) send_to(forward, std::move(r.next_iterations), true);
}

// Retires finished iterations in order, starts a deferred one when the
// window allows, and finishes the frame when everything is done.
void FrameActor::advance() {
  while (!active_.empty()) {
    Slot& s = active_.front();
    bool inputs_done = oldest_ > 0 || enters_arrived_ == layout_.num_enters;
    if (!(s.quiescent && s.received == s.sent && inputs_done)) break;
    if (trace::Sink* sink = step_->context.events) sink->record(trace::iteration_done(at(oldest_)));
    if (s.state) idle_states_.push_back(std::move(s.state));
    else idle_.emplace_back(std::move(s.actor), s.index);
    active_.pop_front();
    ++oldest_;
    if (deferred_ && static_cast<int64_t>(active_.size()) < layout_.parallel_iterations) {
      std::vector<OutValue> values = std::move(*deferred_);
      deferred_.reset();
      if (!start_iteration(oldest_ + static_cast<int64_t>(active_.size()), std::move(values))) return;
    }
  }
  if (active_.empty() && !deferred_ && !finished_) finish();
}

void FrameActor::finish() {
  finished_ = true;
  stopped_ = true;
  if (!early_transfers_.empty()) {
    const auto& [iteration, batches] = *early_transfers_.begin();
    fail(Status(ops::Error::internal,
                fmt::format("frame '{}' on partition {} ended with a transfer for key '{}' at tag "
                            "{}, an iteration that never ran",
                            layout_.name, exec_->partition(),
                            exec_->transfer_name(batches.front().values.front().key),
                            tag0_.with_iteration(iteration).to_string())));
    return;
  }
  // Recorded before the news leaves: its receiver may record the end of
  // the step at once.
  if (trace::Sink* sink = step_->context.events) sink->record(trace::frame_done(at(oldest_ - 1)));
  if (tag0_.is_root()) {
    send(parent_, step_result_atom::value, ValueBatch{std::move(fetches_)});
  } else {
    // The Exits that delivered nothing live deliver dead, with the news
    // that the instance is done (one message).
    std::vector<OutValue> dead_exits;
    for (size_t i = 0; i < layout_.exits.size(); ++i)
      if (!exit_live_[i]) dead_exits.push_back({layout_.exits[i], ops::Tensor(), true});
    send(parent_, frame_done_atom::value, frame_, ValueBatch{std::move(dead_exits)});
  }
  for (auto& [a, index] : idle_) send(a, finish_atom::value);
  idle_.clear();
  if (layout_.num_recvs > 0)
    send(step_->partition, frame_down_atom::value,
         step_->context.step_id, tag0_.frame_instance());
  quit();
}

}  // namespace tagflow::actors
