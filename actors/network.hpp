// Network: the deliveries of a deterministic session, one message at a
// time, in the order a Chooser picks (actors/schedule.hpp). Installed on a
// thread, it is the mailbox door of every ActorBase made on that thread
// while it is installed: a message sent to one is held in its channel
// (sender → receiver, in order); deliver_next() hands the head of the
// chosen channel to the receiver's real mailbox. Since every actor is a
// deterministic function of the messages it takes, what a schedule leads
// to is determined by each actor's sequence of received messages; the
// network keeps a hash of that (state_hash), which the explorer uses to
// recognise orders that commute. Owned by one thread (the deterministic
// scheduler's); internal to actors/ (includes CAF).
#pragma once

#include <caf/all.hpp>

#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "actors/schedule.hpp"

namespace tagflow::actors {

class ActorBase;

class Network {
 public:
  // `after_step`: the schedule also picks the deliveries after a step
  // ends (replay follows the recording to the last message); else those
  // go channel by channel.
  explicit Network(Chooser chooser, bool after_step = false)
      : chooser_(std::move(chooser)), after_step_(after_step) {}
  bool chooses_after_step() const { return after_step_; }
  ~Network();

  // While one lives, the network is installed on the making thread.
  class Installed {
   public:
    explicit Installed(Network* n);
    ~Installed();
    Installed(const Installed&) = delete;
    Installed& operator=(const Installed&) = delete;

   private:
    Network* previous_;
  };
  // The network installed on this thread, or nullptr.
  static Network* installed();

  void hold(ActorBase* receiver, caf::mailbox_element_ptr msg);
  bool has_pending() const { return held_ > 0; }
  std::vector<PendingMessage> pending() const;
  // Asks the chooser and delivers its pick; false if it said stop (or
  // picked no pending message).
  bool deliver_next();
  // Delivers everything held, channel by channel (after a step: the
  // messages that only stop actors).
  void deliver_all();

  // Deliveries so far and the hash of every receiver's history.
  uint64_t deliveries() const { return deliveries_; }
  uint64_t state_hash() const { return state_; }
  // The state after also delivering `m` (without delivering it).
  uint64_t state_after(const PendingMessage& m) const;

 private:
  struct Held {
    caf::mailbox_element_ptr msg;
    caf::strong_actor_ptr receiver;
    trace::MessageKind kind;
    uint64_t seq;
    uint64_t arrival;  // when the network took it
  };
  struct Channel {
    std::deque<Held> queue;
  };
  using ChannelKey = std::pair<trace::ActorRef, trace::ActorRef>;  // (to, from)
  void deliver(std::map<ChannelKey, Channel>::iterator channel);
  static uint64_t entry_hash(const PendingMessage& m);

  Chooser chooser_;
  bool after_step_;
  std::map<ChannelKey, Channel> channels_;
  // A message's number on its channel, counted per receiving actor (by its
  // CAF id) as the actor counts what it takes (ActorBase::record_taken):
  // two steps' partitions of one index are two actors of one ActorRef.
  std::map<std::pair<caf::actor_id, trace::ActorRef>, uint64_t> next_seq_;
  std::map<trace::ActorRef, uint64_t> history_;  // receiver -> hash of what it took
  uint64_t state_ = 0;
  uint64_t deliveries_ = 0;
  uint64_t arrivals_ = 0;
  size_t held_ = 0;
};

}  // namespace tagflow::actors
