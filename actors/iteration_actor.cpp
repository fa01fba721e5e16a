#include <fmt/format.h>

#include <algorithm>

#include "actors/step_actors.hpp"

namespace tagflow::actors {

caf::behavior KernelWorker::make_behavior() {
  return {
      [=](compute_atom, std::shared_ptr<KernelBatch>& batch, caf::actor& owner) {
        std::vector<int> done;
        for (int i = batch->claim(); i >= 0; i = batch->claim()) {
          batch->compute(batch->jobs[static_cast<size_t>(i)]);
          done.push_back(i);
        }
        if (!done.empty()) send(owner, computed_atom::value, std::move(batch), std::move(done));
      },
  };
}

void hand_out(const StepPtr& step, const std::shared_ptr<KernelBatch>& batch,
              const caf::actor& owner) {
  if (batch->blocking()) {
    owner.home_system().spawn<BlockingRunner, caf::detached>(step, batch, owner);
    return;
  }
  for (const caf::actor& worker : step->workers) caf::anon_send(worker, compute_atom::value, batch, owner);
}

caf::behavior BlockingRunner::make_behavior() {
  if (batch_->claim() == 0) {
    batch_->compute(batch_->jobs[0]);
    send(owner_, computed_atom::value, std::move(batch_), std::vector<int>{0});
  }
  quit();
  return {};
}

void BlockingRunner::on_exit() {
  owner_ = nullptr;
  batch_.reset();
  step_.reset();
}

IterationActor::IterationActor(caf::actor_config& cfg, ExecPtr exec, StepPtr step,
                               caf::actor frame, FrameInstanceId instance, int64_t index)
    : ActorBase(cfg),
      exec_(std::move(exec)),
      step_(std::move(step)),
      frame_(std::move(frame)) {
  set_trace_ref(iteration_ref(step_->context.partition, instance, index));
  set_taken_sink(step_->context.events, step_->context.step_id);
}


void trace_transfers(const StepShared& step, const Executable& exec, const trace::At& at,
                     const trace::ActorRef& to, const TransferBatch& batch) {
  for (const TransferValue& v : batch.values) {
    if (v.part + 1 < v.parts) continue;
    const int recv = exec.recv_item(v.key);
    step.context.events->record(trace::message_received(at, trace::MessageKind::transfer,
                                                        partition_ref(batch.from_partition), to,
                                                        recv >= 0 ? exec.item(recv).node_id : -1, v.key, v.dead,
                                                        transfer_bytes(v)));
  }
}

void IterationActor::trace_received(trace::MessageKind kind, const std::vector<OutValue>& values,
                                    const trace::ActorRef& from) {
  trace::Sink* sink = step_->context.events;
  if (sink == nullptr) return;
  const trace::At at{step_->context.step_id, step_->context.partition, state_.tag().frame_instance(),
                     state_.iteration()};
  for (const OutValue& v : values)
    sink->record(trace::message_received(at, kind, from, trace_ref(), exec_->item(v.item).node_id, 0, v.dead,
                                         static_cast<int64_t>(v.value.byte_size())));
}

void IterationActor::deliver(const ValueBatch& batch) {
  for (const OutValue& v : batch.values) {
    Status s = state_.deliver(v.item, v.value, v.dead);
    if (!s.ok()) {
      quit(to_caf_error(s));
      return;
    }
  }
}

void IterationActor::on_exit() {
  frame_ = nullptr;
  children_.clear();
  held_enters_.clear();
  outbox_.clear();
}

caf::behavior IterationActor::make_behavior() {
  on_unreadable([this](const std::string& what) {
    quit(to_caf_error(Status(ops::Error::invalid_argument,
                             fmt::format("iteration {} on partition {} got {}", state_.tag().to_string(),
                                         exec_->partition(), what))));
  });
  return {
      [=](start_atom, FrameId frame, Tag& tag, ValueBatch& batch) {
        state_.reset(*exec_, frame, std::move(tag), step_->context);
        children_.clear();
        held_enters_.clear();
        outstanding_children_ = 0;
        received_ = 1;
        reported_received_ = -1;
        trace_received(trace::MessageKind::start, batch.values, frame_ref(step_->context.partition, state_.tag().frame_instance()));
        deliver(batch);
        run_and_report();
      },
      [=](deliver_atom, ValueBatch& batch) {
        ++received_;
        trace_received(trace::MessageKind::deliver, batch.values,
                       frame_ref(step_->context.partition, state_.tag().frame_instance()));
        deliver(batch);
        run_and_report();
      },
      [=](exits_atom, FrameId child, ValueBatch& batch) {
        if (step_->context.events != nullptr)
          trace_received(trace::MessageKind::exits, batch.values,
                         frame_ref(step_->context.partition,
                                   state_.tag().child(exec_->frame(child).name, 0).frame_instance()));
        deliver(batch);
        run_and_report();
      },
      [=](frame_done_atom, FrameId child, ValueBatch& dead_exits) {
        if (step_->context.events != nullptr && !dead_exits.values.empty())
          trace_received(trace::MessageKind::frame_done, dead_exits.values,
                         frame_ref(step_->context.partition,
                                   state_.tag().child(exec_->frame(child).name, 0).frame_instance()));
        deliver(dead_exits);
        children_.erase(child);
        --outstanding_children_;
        run_and_report();
      },
      [=](computed_atom, std::shared_ptr<KernelBatch>& batch, std::vector<int>& done) {
        Status s = state_.complete(*batch, done);
        if (!s.ok()) {
          quit(to_caf_error(s));
          return;
        }
        run_and_report();
      },
      [=](transfer_atom, TransferBatch& batch) {
        ++received_;  // forwarded, and counted, by the frame
        if (step_->context.events != nullptr)
          trace_transfers(*step_, *exec_,
                          trace::At{step_->context.step_id, step_->context.partition, state_.tag().frame_instance(),
                                    state_.iteration()},
                          trace_ref(), batch);
        for (TransferValue& v : batch.values) {
          Status s = state_.receive_transfer(v);
          if (!s.ok()) {
            quit(to_caf_error(s));
            return;
          }
        }
        run_and_report();
      },
      [=](finish_atom) { quit(); },
  };
}

void IterationActor::run_and_report() {
  struct Sink : OutboxSink {
    IterationActor& self;
    explicit Sink(IterationActor& a) : self(a) {}
    Status drain(Outbox&) {
      self.flush();  // reports to the frame after every run: early hand-off
      return ops::ok_status();
    }
    bool stopped() const { return self.getf(is_terminated_flag); }
  } sink(*this);
  Status s = state_.run_until_idle(step_->context, outbox_, sink);
  if (!s.ok()) quit(to_caf_error(s));
}

namespace {

void stamp(TransferBatch& batch, const StepShared& step, const Tag& tag) {
  batch.step_id = step.context.step_id;
  batch.instance = tag.frame_instance();
  batch.iteration = tag.iteration();
  batch.from_partition = step.partition_index;
}

// Straight to the peer's frame instance once the peer announced it;
// through the peer partition, which finds it, until then.
caf::actor destination(const StepShared& step, int peer, FrameInstanceId instance) {
  caf::actor frame = step.routes ? step.routes->find(peer, instance) : caf::actor();
  return frame ? frame : step.peers[static_cast<size_t>(peer)];
}

void send_transfer(ActorBase* self, const StepShared& step, const Tag& tag, int peer,
                   TransferBatch&& batch) {
  stamp(batch, step, tag);
  self->send(destination(step, peer, batch.instance), transfer_atom::value, std::move(batch));
}

}  // namespace

void send_transfers(ActorBase* self, const StepShared& step, const Executable& exec,
                    const Tag& tag, std::vector<OutValue>& sends, HeldTransfers* held) {
  std::vector<std::pair<int, TransferBatch>> by_peer;
  for (OutValue& v : sends) {
    const NodeItem& item = exec.item(v.item);
    TransferBatch& b = entry_of(by_peer, item.transfer_partition);
    if (trace::Sink* sink = step.context.events) {
      const trace::At at{step.context.step_id, step.context.partition, tag.frame_instance(), tag.iteration()};
      sink->record(trace::message_sent(at, trace::MessageKind::transfer, self->trace_ref(),
                                       partition_ref(item.transfer_partition),
                                       item.node_id, item.transfer_hash, v.dead,
                                       static_cast<int64_t>(v.value.byte_size())));
    }
    const uint32_t parts =
        v.dead || !v.value.valid() || ops::dtype_is_object(v.value.dtype()) ? 1 : transfer_parts(v.value.byte_size());
    if (parts == 1) {
      TransferValue& x = b.values.emplace_back();
      x.key = item.transfer_hash;
      x.value = std::move(v.value);
      x.dead = v.dead;
      continue;
    }
    // A large value: a message per part, each with the whole tensor by
    // reference (only a serialiser reads out the part's bytes).
    for (uint32_t part = 0; part < parts; ++part) {
      TransferBatch one;
      TransferValue x;
      x.key = item.transfer_hash;
      x.value = v.value;
      x.part = part;
      x.parts = parts;
      one.values.push_back(std::move(x));
      send_transfer(self, step, tag, item.transfer_partition, std::move(one));
    }
  }
  sends.clear();
  for (auto& [peer, batch] : by_peer) {
    if (batch.values.empty()) continue;
    if (held == nullptr) {
      send_transfer(self, step, tag, peer, std::move(batch));
      continue;
    }
    stamp(batch, step, tag);
    entry_of(held->by_peer, peer).push_back(std::move(batch));
  }
}

void flush_transfers(ActorBase* self, const StepShared& step, HeldTransfers& held) {
  for (auto& [peer, batches] : held.by_peer) {
    if (batches.empty()) continue;
    const caf::actor to = destination(step, peer, batches.front().instance);
    if (batches.size() == 1) self->send(to, transfer_atom::value, std::move(batches.front()));
    else self->send(to, transfers_atom::value, TransferBatches{std::move(batches)});
    batches.clear();
  }
}

// For a child frame that skips dead instances: holds the Enter values
// until one is live — then `batch` holds every value so far and the caller
// starts the instance (true) — or all the frame's Enters have arrived dead:
// then the instance would compute nothing but dead Exits, which this
// iteration takes at once instead (false, as it is while values are held).
bool IterationActor::take_enters(FrameId frame, ValueBatch& batch) {
  std::vector<OutValue>& held = held_enters_[frame];
  for (OutValue& v : batch.values) held.push_back(std::move(v));
  batch.values.clear();
  const bool live = std::any_of(held.begin(), held.end(), [](const OutValue& v) { return !v.dead; });
  const FrameLayout& layout = exec_->frame(frame);
  if (live) {
    batch.values = std::move(held);
    held_enters_.erase(frame);
    return true;
  }
  if (static_cast<int>(held.size()) < layout.num_enters) return false;
  held_enters_.erase(frame);
  for (int exit : layout.exits) {
    Status s = state_.deliver(exit, ops::Tensor(), true);
    if (!s.ok()) {
      quit(to_caf_error(s));
      break;
    }
  }
  return false;
}

void IterationActor::flush() {
  for (const std::shared_ptr<KernelBatch>& batch : outbox_.batches)
    hand_out(step_, batch, caf::actor_cast<caf::actor>(this));
  outbox_.batches.clear();
  if (!outbox_.sends.empty()) send_transfers(this, *step_, *exec_, state_.tag(), outbox_.sends);
  // Enter values go to the child frame instance, spawned by the first one.
  if (!outbox_.enters.empty()) {
    std::map<FrameId, ValueBatch> by_frame;
    for (OutValue& v : outbox_.enters)
      by_frame[exec_->item(v.item).enter_frame].values.push_back(std::move(v));
    outbox_.enters.clear();
    for (auto& [frame, batch] : by_frame) {
      caf::actor& child = children_[frame];
      if (!child && exec_->frame(frame).skip_dead_instances && !take_enters(frame, batch)) {
        children_.erase(frame);
        continue;
      }
      if (!child) {
        Tag child_tag = state_.tag().child(exec_->frame(frame).name, 0);
        child = spawn_frame<caf::linked>(this, exec_, step_, frame, std::move(child_tag),
                                         caf::actor_cast<caf::actor>(this));
        ++outstanding_children_;
      }
      send(child, enter_atom::value, std::move(batch));
    }
  }
  const bool quiescent = outstanding_children_ == 0 && held_enters_.empty() && !state_.has_ready() &&
                         state_.outstanding_jobs() == 0 && state_.transfers_missing() == 0;
  const bool news = !outbox_.next_iterations.empty() || !outbox_.exits.empty() ||
                    !outbox_.fetches.empty();
  if (!news && !(quiescent && reported_received_ != received_)) return;
  IterationReport r;
  r.iteration = state_.iteration();
  r.next_iterations = std::move(outbox_.next_iterations);
  r.exits = std::move(outbox_.exits);
  r.fetches = std::move(outbox_.fetches);
  outbox_.clear();
  r.quiescent = quiescent;
  r.received = received_;
  if (quiescent) reported_received_ = received_;
  send(frame_, report_atom::value, std::move(r));
}

}  // namespace tagflow::actors
