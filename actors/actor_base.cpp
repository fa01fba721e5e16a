#include "actors/actor_base.hpp"

#include "actors/network.hpp"

#ifdef TAGFLOW_TSAN_ANNOTATE
#include <sanitizer/tsan_interface.h>
#endif

namespace tagflow::actors {

#ifdef TAGFLOW_TSAN_ANNOTATE
namespace {
// What the constructor set, for every sender's thread (CAF's clock thread
// among them): released at launch, acquired before enqueue reads it.
void* made_sync(ActorBase* a) { return reinterpret_cast<char*>(a) + 2; }
}  // namespace
#endif

ActorBase::ActorBase(caf::actor_config& cfg) : caf::event_based_actor(cfg), network_(Network::installed()) {}

void ActorBase::enqueue(caf::mailbox_element_ptr ptr, caf::execution_unit* eu) {
#ifdef TAGFLOW_TSAN_ANNOTATE
  __tsan_acquire(made_sync(this));
#endif
  if (Network* network = network_.load(std::memory_order_relaxed)) {
    network->hold(this, std::move(ptr));
    return;
  }
  enqueue_now(std::move(ptr), eu);
}

std::string ActorBase::unreadable_text(caf::scheduled_actor* self, caf::message_view& x) {
  const caf::strong_actor_ptr& sender = self->current_sender();
  const std::string from = sender ? caf::to_string(sender->node()) : std::string("an unknown sender");
  if (x.content().empty())
    return "a message that could not be read (a type or a value that failed its check on arrival) from node " + from;
  return "an unexpected message " + caf::to_string(x.content()) + " from node " + from;
}

void ActorBase::record_taken(const caf::mailbox_element& x) {
  trace::ActorRef from{trace::Role::caller, -1, 0, 0};
  if (x.sender) {
    auto* sender = dynamic_cast<ActorBase*>(caf::actor_cast<caf::abstract_actor*>(x.sender));
    if (sender != nullptr) from = sender->trace_ref_;
  }
  taken_sink_->record(trace::message_taken(trace_step_, trace_ref_, from, message_kind(x.content()), ++taken_[from]));
}

trace::MessageKind message_kind(const caf::type_erased_tuple& m) {
  using K = trace::MessageKind;
  if (m.empty() || !m.match_element<caf::atom_value>(0)) return K::other;
  switch (static_cast<uint64_t>(m.get_as<caf::atom_value>(0))) {
    case static_cast<uint64_t>(caf::atom("transfer")): return K::transfer;
    case static_cast<uint64_t>(caf::atom("transfers")): return K::transfer;
    case static_cast<uint64_t>(caf::atom("enter")): return K::enter;
    case static_cast<uint64_t>(caf::atom("deliver")): return K::deliver;
    case static_cast<uint64_t>(caf::atom("start")): return K::start;
    case static_cast<uint64_t>(caf::atom("report")): return K::report;
    case static_cast<uint64_t>(caf::atom("exits")): return K::exits;
    case static_cast<uint64_t>(caf::atom("framedone")): return K::frame_done;
    case static_cast<uint64_t>(caf::atom("runstep")): return K::step_start;
    case static_cast<uint64_t>(caf::atom("result")): return K::step_result;
    case static_cast<uint64_t>(caf::atom("stepresult")): return K::step_result;
    case static_cast<uint64_t>(caf::atom("abort")): return K::abort;
    case static_cast<uint64_t>(caf::atom("route")): return K::route;
    case static_cast<uint64_t>(caf::atom("frameup")): return K::route;
    case static_cast<uint64_t>(caf::atom("compute")): return K::compute;
    default: return K::other;
  }
}

#ifndef TAGFLOW_TSAN_ANNOTATE
caf::resumable::resume_result ActorBase::resume(caf::execution_unit* eu, size_t max_throughput) {
  return caf::event_based_actor::resume(eu, messages_per_resume(max_throughput));
}

void ActorBase::enqueue_now(caf::mailbox_element_ptr ptr, caf::execution_unit* eu) {
  caf::event_based_actor::enqueue(std::move(ptr), eu);
}

caf::invoke_message_result ActorBase::consume(caf::mailbox_element& x) {
  if (taken_sink_ != nullptr) record_taken(x);
  return caf::event_based_actor::consume(x);
}
#endif

}  // namespace tagflow::actors

#ifdef TAGFLOW_TSAN_ANNOTATE

#include <sanitizer/tsan_interface.h>

namespace tagflow::actors {

namespace {
// Two synchronisation addresses per actor: its state (constructed before
// launch, handed between worker threads between resumes) and its mailbox
// (everything enqueued so far).
void* state_sync(ActorBase* a) { return a; }
void* mailbox_sync(ActorBase* a) { return reinterpret_cast<char*>(a) + 1; }
}  // namespace

// Called right before the destructor, on whichever thread dropped the last
// strong reference.
void ActorBase::on_destroy() {
  __tsan_acquire(state_sync(this));
  __tsan_acquire(mailbox_sync(this));
  caf::event_based_actor::on_destroy();
}

void ActorBase::launch(caf::execution_unit* eu, bool lazy, bool hide) {
  __tsan_release(made_sync(this));
  __tsan_release(state_sync(this));
  caf::event_based_actor::launch(eu, lazy, hide);
}

void ActorBase::initialize() {
  caf::event_based_actor::initialize();
  __tsan_release(state_sync(this));
}

void ActorBase::enqueue_now(caf::mailbox_element_ptr ptr, caf::execution_unit* eu) {
  __tsan_release(ptr.get());
  __tsan_release(mailbox_sync(this));
  caf::event_based_actor::enqueue(std::move(ptr), eu);
}

caf::resumable::resume_result ActorBase::resume(caf::execution_unit* eu, size_t max_throughput) {
  __tsan_acquire(state_sync(this));
  auto result = caf::event_based_actor::resume(eu, messages_per_resume(max_throughput));
  __tsan_release(state_sync(this));
  return result;
}

// The actor may block as soon as this returns, and a sender may hand it to
// another worker before resume() returns: release here, not only there.
caf::invoke_message_result ActorBase::consume(caf::mailbox_element& x) {
  __tsan_acquire(&x);
  if (taken_sink_ != nullptr) record_taken(x);
  auto result = caf::event_based_actor::consume(x);
  __tsan_release(state_sync(this));
  return result;
}

bool ActorBase::cleanup(caf::error&& reason, caf::execution_unit* host) {
  // Messages still in the mailbox are dropped here, unread.
  __tsan_acquire(mailbox_sync(this));
  return caf::event_based_actor::cleanup(std::move(reason), host);
}

}  // namespace tagflow::actors

#endif
