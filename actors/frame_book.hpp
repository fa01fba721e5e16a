// FrameBook: the book-keeping of one frame instance, in plain C++ (no
// CAF), whoever runs its iterations (docs/protocol.md, "Frames").
//
// It starts iteration 0 with the frame's first Enters (the root frame at
// once); starts iteration n+1 on the first live NextIteration value out of
// n, or defers it while `parallel_iterations` are outstanding; holds the
// dead NextIteration values of an iteration not started yet and the
// transfers that arrive before their iteration; hands loop invariants to
// every iteration, running or still to come; counts what it sends each
// iteration and retires iterations in order once one reports it is
// quiescent having seen everything sent to it; forwards live Exit values
// at once and, when the last iteration is retired, the dead ones (or the
// root frame's fetches) with the news that it is done.
//
// What it decides it asks its host to do (FrameHost): the frame actor that
// spawns an iteration actor per live iteration, or the one that keeps its
// iterations' states and runs them itself (actors/step_actors.hpp).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "actors/executable.hpp"
#include "actors/frame_values.hpp"
#include "actors/step_guard.hpp"
#include "actors/tag.hpp"

namespace tagflow::actors {

// What a frame's book asks of the frame that hosts it. Every call is made
// from within one of the book's methods, on the host's thread.
class FrameHost {
 public:
  // Makes iteration `iteration` (the next one) and hands it `values`: its
  // NextIteration values, the dead ones held for it, the loop invariants.
  virtual void start(int64_t iteration, std::vector<OutValue>&& values) = 0;
  // Hands values to a started, not retired iteration. The host may leave
  // `values` empty (its capacity kept) or moved from.
  virtual void deliver(int64_t iteration, std::vector<OutValue>&& values) = 0;
  // Hands a transfer to a started, not retired iteration.
  virtual void transfer(int64_t iteration, TransferBatch&& batch) = 0;
  // A report was taken (before anything it says is acted on), for events.
  virtual void reported(const IterationReport& r) = 0;
  // Live Exit values, for the parent iteration.
  virtual void exits(std::vector<OutValue>&& live) = 0;
  // The oldest iteration is done: the host may reuse what ran it.
  virtual void retire(int64_t iteration) = 0;
  // The frame is done: `values` are the root frame's fetches, or a loop's
  // Exits that delivered nothing live, as dead values. Called once; the
  // host then ends the frame.
  virtual void done(std::vector<OutValue>&& values) = 0;
  // The step fails with `s`; the book stops (FrameBook::stopped).
  virtual void fail(const Status& s) = 0;

 protected:
  ~FrameHost() = default;
};

class FrameBook {
 public:
  // `tag0` is the tag of iteration 0; `exec`, `guard` and `host` outlive
  // the book.
  FrameBook(const Executable& exec, FrameId frame, Tag tag0, const StepGuard& guard, FrameHost& host);

  // The root frame starts its iteration 0 at once, with no values.
  // False if the frame stopped.
  bool start_root();
  // Enter values from the parent iteration.
  void on_enter(std::vector<OutValue>& values);
  // What an iteration produced and whether it is quiescent.
  void on_report(IterationReport& r);
  // A transfer for an iteration of this frame instance: to it if it runs,
  // held if it is still to come, an error if it is done.
  void on_transfer(TransferBatch& batch);
  // Stops the frame with `s` (the host's own errors too).
  void fail(const Status& s);

  // Failed or finished: nothing more is asked of the host.
  bool stopped() const { return stopped_; }
  bool finished() const { return finished_; }
  // Started and not yet retired.
  bool is_active(int64_t iteration) const {
    return iteration >= oldest_ && iteration < end();
  }
  // What was sent to a started iteration so far (messages or calls): a
  // report that counts as many has seen all of it.
  int64_t sent(int64_t iteration) const { return slot(iteration).sent; }
  int64_t oldest() const { return oldest_; }
  const Tag& tag0() const { return tag0_; }
  // Drops every value it holds (the host is ending).
  void clear();

 private:
  struct Slot {
    int64_t sent = 0;      // messages sent to it for this iteration
    int64_t received = 0;  // as last reported
    bool quiescent = false;
  };

  int64_t end() const { return oldest_ + static_cast<int64_t>(active_.size()); }
  Slot& slot(int64_t iteration) { return active_[static_cast<size_t>(iteration - oldest_)]; }
  const Slot& slot(int64_t iteration) const { return active_[static_cast<size_t>(iteration - oldest_)]; }
  // `counted`: the delivery is already counted in the iteration's slot.
  void send_to(int64_t iteration, std::vector<OutValue>&& values, bool counted = false);
  bool start_iteration(int64_t iteration, std::vector<OutValue>&& values);
  void advance();
  void finish();

  const Executable& exec_;
  const FrameLayout& layout_;
  const Tag tag0_;
  const StepGuard& guard_;
  FrameHost& host_;
  int enters_arrived_ = 0;
  std::vector<OutValue> invariants_;
  std::deque<Slot> active_;  // iterations oldest_ .. end() - 1
  int64_t oldest_ = 0;       // the oldest iteration not done
  std::optional<std::vector<OutValue>> deferred_;  // for iteration end()
  // Dead NextIteration values for iteration end(), which has not started:
  // they go with it if it starts.
  std::vector<OutValue> held_dead_;
  std::vector<bool> exit_live_;  // by position in layout_.exits
  std::vector<OutValue> fetches_;
  // Transfers for iterations not started yet, by iteration.
  std::map<int64_t, std::vector<TransferBatch>> early_transfers_;
  bool finished_ = false;
  bool stopped_ = false;
};

// What a host keeps for each iteration its book has started and not yet
// retired, oldest first, found by iteration number: added in
// FrameHost::start, dropped in FrameHost::retire (the book starts
// iterations in order and retires the oldest), so it always spans the
// book's active iterations.
template <class T>
class IterationWindow {
 public:
  explicit IterationWindow(const FrameBook& book) : book_(book) {}
  T& at(int64_t iteration) { return items_[static_cast<size_t>(iteration - book_.oldest())]; }
  // For the iteration the book has just started (the newest).
  void push(T item) { items_.push_back(std::move(item)); }
  T& oldest() { return items_.front(); }
  // After FrameHost::retire of the oldest.
  void pop_oldest() { items_.pop_front(); }
  void clear() { items_.clear(); }

 private:
  const FrameBook& book_;
  std::deque<T> items_;
};

}  // namespace tagflow::actors
