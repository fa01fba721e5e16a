// The two hosts of a frame's book-keeping (actors/frame_book.hpp): the one
// with an iteration actor per live iteration and the one that runs its
// iterations itself, and what they share.
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

// --- what both hosts share ----------------------------------------------

FrameActor::FrameActor(caf::actor_config& cfg, ExecPtr exec, StepPtr step, FrameId frame, Tag tag,
                       caf::actor parent)
    : ActorBase(cfg),
      exec_(std::move(exec)),
      step_(std::move(step)),
      frame_(frame),
      parent_(std::move(parent)),
      layout_(exec_->frame(frame)),
      book_(*exec_, frame, std::move(tag), step_->guard, *this) {
  set_trace_ref(frame_ref(step_->context.partition, book_.tag0().frame_instance()));
  set_taken_sink(step_->context.events, step_->context.step_id);
}

trace::At FrameActor::at(int64_t iteration) const {
  return trace::At{step_->context.step_id, step_->context.partition, book_.tag0().frame_instance(), iteration};
}

void FrameActor::on_exit() {
  parent_ = nullptr;
  book_.clear();
}

caf::behavior FrameActor::make_behavior() {
  on_unreadable([this](const std::string& what) {
    book_.fail(Status(ops::Error::invalid_argument,
                      fmt::format("frame '{}' on partition {} got {}", layout_.name, exec_->partition(), what)));
  });
  const Tag& tag0 = book_.tag0();
  if (trace::Sink* sink = step_->context.events) {
    const Tag parent = tag0.parent();
    sink->record(trace::frame_created(at(0), frame_, parent.frame_instance(), parent.iteration()));
  }
  // Transfers for this frame instance reach it through its partition.
  if (layout_.num_recvs > 0)
    send(step_->partition, frame_up_atom::value, step_->context.step_id, tag0.frame_instance(),
         caf::actor_cast<caf::actor>(this));
  // The root frame starts at once; a loop's iteration 0 with its first Enters.
  if (tag0.is_root() && book_.start_root()) root_started();
  return {
      [=](enter_atom, ValueBatch& batch) {
        if (step_->context.events != nullptr)
          trace_received(trace::MessageKind::enter, 0, batch.values,
                         iteration_ref(step_->context.partition, book_.tag0().parent().frame_instance(), -1));
        book_.on_enter(batch.values);
        run_iterations();
      },
      [=](report_atom, IterationReport& r) { book_.on_report(r); },
      [=](transfer_atom, TransferBatch& batch) {
        book_.on_transfer(batch);
        run_iterations();
      },
      [=](transfers_atom, TransferBatches& batches) {
        for (TransferBatch& batch : batches.batches) {
          if (book_.stopped()) return;
          book_.on_transfer(batch);
        }
        run_iterations();
      },
      [=](run_iterations_atom) { resume(); },
      // Jobs a kernel worker computed of a batch one of the iterations this
      // frame runs made (an iteration cannot retire while its jobs are out).
      [=](computed_atom, std::shared_ptr<KernelBatch>& batch, std::vector<int>& done) { on_computed(batch, done); },
  };
}

void FrameActor::trace_received(trace::MessageKind kind, int64_t iteration, const std::vector<OutValue>& values,
                                const trace::ActorRef& from) {
  trace::Sink* sink = step_->context.events;
  const trace::ActorRef me = frame_ref(step_->context.partition, book_.tag0().frame_instance());
  for (const OutValue& v : values)
    sink->record(trace::message_received(at(iteration), kind, from, me, exec_->item(v.item).node_id, 0, v.dead,
                                         static_cast<int64_t>(v.value.byte_size())));
}

void FrameActor::exits(std::vector<OutValue>&& live) {
  send(parent_, exits_atom::value, frame_, ValueBatch{std::move(live)});
}

void FrameActor::fail(const Status& s) { quit(to_caf_error(s)); }

void FrameActor::done(std::vector<OutValue>&& values) {
  // Recorded before the news leaves: its receiver may record the end of
  // the step at once.
  if (trace::Sink* sink = step_->context.events) sink->record(trace::frame_done(at(book_.oldest() - 1)));
  if (book_.tag0().is_root())
    send(parent_, step_result_atom::value, ValueBatch{std::move(values)});
  else
    send(parent_, frame_done_atom::value, frame_, ValueBatch{std::move(values)});
  release_iterations();
  if (layout_.num_recvs > 0)
    send(step_->partition, frame_down_atom::value, step_->context.step_id, book_.tag0().frame_instance());
  quit();
}

// --- an iteration actor per live iteration ------------------------------

void ActorIterationsFrame::on_exit() {
  FrameActor::on_exit();
  running_.clear();
  idle_.clear();
}

void ActorIterationsFrame::start(int64_t iteration, std::vector<OutValue>&& values) {
  caf::actor a;
  int64_t index = 0;
  if (!idle_.empty()) {
    std::tie(a, index) = std::move(idle_.back());
    idle_.pop_back();
  } else {
    index = spawned_++;
    a = spawn<IterationActor, caf::linked>(exec_, step_, caf::actor_cast<caf::actor>(this),
                                           book_.tag0().frame_instance(), index);
  }
  running_.push({a, index});
  if (trace::Sink* sink = step_->context.events) sink->record(trace::iteration_started(at(iteration)));
  send(a, start_atom::value, frame_, book_.tag0().with_iteration(iteration), ValueBatch{std::move(values)});
}

void ActorIterationsFrame::deliver(int64_t iteration, std::vector<OutValue>&& values) {
  const Running& r = running_.at(iteration);
  if (trace::Sink* sink = step_->context.events) {
    const trace::ActorRef me = frame_ref(step_->context.partition, book_.tag0().frame_instance());
    const trace::ActorRef to = iteration_ref(step_->context.partition, book_.tag0().frame_instance(), r.index);
    for (const OutValue& v : values)
      sink->record(trace::message_sent(at(iteration), trace::MessageKind::deliver, me, to, exec_->item(v.item).node_id,
                                       0, v.dead, static_cast<int64_t>(v.value.byte_size())));
  }
  send(r.actor, deliver_atom::value, ValueBatch{std::move(values)});
}

void ActorIterationsFrame::transfer(int64_t iteration, TransferBatch&& batch) {
  send(running_.at(iteration).actor, transfer_atom::value, std::move(batch));
}

void ActorIterationsFrame::reported(const IterationReport& r) {
  trace::Sink* sink = step_->context.events;
  if (sink == nullptr) return;
  const trace::ActorRef from =
      iteration_ref(step_->context.partition, book_.tag0().frame_instance(), running_.at(r.iteration).index);
  trace_received(trace::MessageKind::report, r.iteration, r.next_iterations, from);
  trace_received(trace::MessageKind::report, r.iteration, r.exits, from);
  sink->record(trace::message_received(at(r.iteration), trace::MessageKind::report, from,
                                       frame_ref(step_->context.partition, book_.tag0().frame_instance()), -1, 0,
                                       false, 0));
}

void ActorIterationsFrame::retire(int64_t iteration) {
  if (trace::Sink* sink = step_->context.events) sink->record(trace::iteration_done(at(iteration)));
  Running& r = running_.oldest();
  idle_.emplace_back(std::move(r.actor), r.index);
  running_.pop_oldest();
}

void ActorIterationsFrame::release_iterations() {
  for (auto& [a, index] : idle_) send(a, finish_atom::value);
  idle_.clear();
}

// --- a frame that runs its iterations -----------------------------------

void InlineIterationsFrame::on_exit() {
  FrameActor::on_exit();
  running_.clear();
  idle_states_.clear();
  runnable_.clear();
  outbox_.clear();
}

void InlineIterationsFrame::root_started() {
  if (runnable_.empty()) return;
  resume_sent_ = true;
  send(this, run_iterations_atom::value);
}

void InlineIterationsFrame::resume() {
  resume_sent_ = false;
  run_iterations();
}

void InlineIterationsFrame::queue(int64_t iteration) {
  Running& r = running_.at(iteration);
  if (r.queued) return;
  r.queued = true;
  runnable_.push_back(iteration);
}

void InlineIterationsFrame::deliver_here(int64_t iteration, const std::vector<OutValue>& values) {
  IterationState& state = *running_.at(iteration).state;
  for (const OutValue& v : values) {
    Status s = state.deliver(v.item, v.value, v.dead);
    if (!s.ok()) return book_.fail(s);
  }
  queue(iteration);
}

void InlineIterationsFrame::start(int64_t iteration, std::vector<OutValue>&& values) {
  std::unique_ptr<IterationState> state;
  if (!idle_states_.empty()) {
    state = std::move(idle_states_.back());
    idle_states_.pop_back();
  } else {
    state = std::make_unique<IterationState>();
  }
  state->reset(*exec_, frame_, book_.tag0().with_iteration(iteration), step_->context);
  running_.push({std::move(state), false});
  if (trace::Sink* sink = step_->context.events) sink->record(trace::iteration_started(at(iteration)));
  deliver_here(iteration, values);
  values.clear();
}

void InlineIterationsFrame::deliver(int64_t iteration, std::vector<OutValue>&& values) {
  deliver_here(iteration, values);
  values.clear();
}

void InlineIterationsFrame::transfer(int64_t iteration, TransferBatch&& batch) {
  if (step_->context.events != nullptr) trace_transfers(*step_, *exec_, at(iteration), trace_ref(), batch);
  IterationState& state = *running_.at(iteration).state;
  for (TransferValue& v : batch.values) {
    Status status = state.receive_transfer(v);
    if (!status.ok()) return book_.fail(status);
  }
  queue(iteration);
}

void InlineIterationsFrame::retire(int64_t iteration) {
  if (trace::Sink* sink = step_->context.events) sink->record(trace::iteration_done(at(iteration)));
  idle_states_.push_back(std::move(running_.oldest().state));
  running_.pop_oldest();
}

void InlineIterationsFrame::on_computed(std::shared_ptr<KernelBatch>& batch, std::vector<int>& done) {
  const int64_t iteration = batch->iteration;
  if (book_.stopped() || !book_.is_active(iteration)) return;
  Status s = running_.at(iteration).state->complete(*batch, done);
  if (!s.ok()) return book_.fail(s);
  queue(iteration);
  run_iterations();
}

// Runs the queued iterations, each until it has nothing ready, and takes
// what each run produced as that iteration's report. Every delivery to an
// iteration was counted by the book (FrameBook::sent) before it was made,
// and a report counts all of them, so an iteration is retired only after a
// run that saw everything sent to it, as with iteration actors.
void InlineIterationsFrame::run_iterations() {
  if (running_now_) return;
  running_now_ = true;
  int runs = 0;
  while (!runnable_.empty() && !book_.stopped()) {
    if (++runs > kRunsPerMessage) {
      if (!resume_sent_) {
        resume_sent_ = true;
        send(this, run_iterations_atom::value);
      }
      break;
    }
    const int64_t iteration = runnable_.front();
    runnable_.pop_front();
    if (!book_.is_active(iteration)) continue;
    Running& slot = running_.at(iteration);
    slot.queued = false;
    IterationState& state = *slot.state;
    Status status = state.run(step_->context, outbox_);
    if (!status.ok()) {
      book_.fail(status);
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
    r.received = book_.sent(iteration);
    book_.on_report(r);
  }
  if (!book_.stopped() || book_.finished()) flush_transfers(this, *step_, held_transfers_);
  running_now_ = false;
}

}  // namespace tagflow::actors
