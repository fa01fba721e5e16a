// ActorBase: the base of tagflow's actor classes (partition, frame,
// iteration, kernel worker) — caf::event_based_actor, plus, in
// ThreadSanitizer builds, the happens-before edges that CAF's mailbox and
// scheduler create. Debian's libcaf is not instrumented: TSan sees neither
// the atomics that hand a message from its sender to the thread that runs
// the receiver nor those that hand an actor from one worker thread to the
// next, and would report every message's contents and every actor's members
// as raced. So a send releases the message and consuming it acquires it;
// launching an actor releases it, each resume acquires it, and it is
// released again after its behavior is made and after every message (before
// CAF may hand it to another thread); its destruction and the cleanup that
// drops unread messages acquire everything before them (docs/testing.md,
// "ThreadSanitizer"). Without TSan it adds nothing. Internal to actors/;
// includes CAF.
#pragma once

#include <caf/all.hpp>

#include <atomic>
#include <map>
#include <string>

#include "trace/sink.hpp"

#if defined(__SANITIZE_THREAD__)
#define TAGFLOW_TSAN_ANNOTATE 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TAGFLOW_TSAN_ANNOTATE 1
#endif
#endif

namespace tagflow::actors {

class Network;

class ActorBase : public caf::event_based_actor {
 public:
  // An actor made while a Network is installed on the making thread
  // (Network::Installed, deterministic sessions only) hands every message
  // sent to it to that network, which delivers it when its schedule says.
  explicit ActorBase(caf::actor_config& cfg);

  // What the actor is in the protocol (set by its constructor, so that
  // the first message to it already knows), and, with a sink, a
  // message_taken event for every message it takes from its mailbox: who
  // sent it, what it carries, its number on that channel — the order a
  // replay forces (docs/trace.md).
  void set_trace_ref(const trace::ActorRef& ref) { trace_ref_ = ref; }
  void set_taken_sink(trace::Sink* sink, uint64_t step) {
    taken_sink_ = sink;
    trace_step_ = step;
  }
  const trace::ActorRef& trace_ref() const { return trace_ref_; }
  caf::invoke_message_result consume(caf::mailbox_element& x) override;
  void enqueue(caf::mailbox_element_ptr ptr, caf::execution_unit* eu) override;
  // The real mailbox, past the network (Network::deliver).
  void enqueue_now(caf::mailbox_element_ptr ptr, caf::execution_unit* eu);
  // Takes at most messages_per_resume() messages before it gives the
  // worker thread back.
  resume_result resume(caf::execution_unit* eu, size_t max_throughput) override;

#ifdef TAGFLOW_TSAN_ANNOTATE
  void on_destroy() override;
  void launch(caf::execution_unit* eu, bool lazy, bool hide) override;
  void initialize() override;
  bool cleanup(caf::error&& reason, caf::execution_unit* host) override;
#endif

 protected:
  // A message no handler takes — what a peer of another tagflow, or bytes
  // that failed their check on arrival (CAF then delivers an empty
  // message), look like — goes to `fail` with a text naming it and its
  // sender's node, instead of CAF's notice on stdout: the step it belonged
  // to can only end with an error, never wait for it.
  template <class F>
  void on_unreadable(F fail) {
    set_default_handler([fail](caf::scheduled_actor* self, caf::message_view& x) -> caf::result<caf::message> {
      fail(unreadable_text(self, x));
      return caf::sec::unexpected_message;
    });
  }
  static std::string unreadable_text(caf::scheduled_actor* self, caf::message_view& x);
  // How many messages one resume may take, of the scheduler's bound (read
  // with the actor's state, on the resuming thread).
  virtual size_t messages_per_resume(size_t max_throughput) const { return max_throughput; }

 private:
  void record_taken(const caf::mailbox_element& x);

  trace::ActorRef trace_ref_;
  // Set once, by the constructor; read by every sender's thread (relaxed:
  // the actor's handle reaches a sender only after it was made).
  std::atomic<Network*> network_{nullptr};
  trace::Sink* taken_sink_ = nullptr;
  uint64_t trace_step_ = 0;
  std::map<trace::ActorRef, uint64_t> taken_;  // messages taken so far, by sender
};

// What a message carries, by its first element (an atom).
trace::MessageKind message_kind(const caf::type_erased_tuple& m);

}  // namespace tagflow::actors
