#include "actors/frame_book.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace tagflow::actors {

FrameBook::FrameBook(const Executable& exec, FrameId frame, Tag tag0, const StepGuard& guard, FrameHost& host)
    : exec_(exec),
      layout_(exec.frame(frame)),
      tag0_(std::move(tag0)),
      guard_(guard),
      host_(host),
      exit_live_(layout_.exits.size(), false) {}

void FrameBook::clear() {
  active_.clear();
  deferred_.reset();
  held_dead_.clear();
  invariants_.clear();
  fetches_.clear();
  early_transfers_.clear();
}

void FrameBook::fail(const Status& s) {
  stopped_ = true;
  host_.fail(s);
}

bool FrameBook::start_root() { return start_iteration(0, {}); }

void FrameBook::send_to(int64_t iteration, std::vector<OutValue>&& values, bool counted) {
  if (!counted) ++slot(iteration).sent;
  host_.deliver(iteration, std::move(values));
}

// Starts `iteration` (the next one) with `values` plus the dead values held
// for it and the loop invariants, then hands it the transfers that came
// before it. False if the frame stopped (too many iterations, or the host
// failed).
bool FrameBook::start_iteration(int64_t iteration, std::vector<OutValue>&& values) {
  if (guard_.over_iterations(iteration)) {
    fail(guard_.iterations_exceeded(fmt::format("frame '{}' at tag {} on partition {}", layout_.name,
                                                tag0_.with_iteration(iteration).to_string(), exec_.partition())));
    return false;
  }
  active_.emplace_back().sent = 1;
  for (OutValue& v : held_dead_) values.push_back(std::move(v));
  held_dead_.clear();
  values.insert(values.end(), invariants_.begin(), invariants_.end());
  host_.start(iteration, std::move(values));
  if (stopped_) return false;
  if (!early_transfers_.empty() && early_transfers_.begin()->first == iteration) {
    std::vector<TransferBatch> batches = std::move(early_transfers_.begin()->second);
    early_transfers_.erase(early_transfers_.begin());
    for (TransferBatch& b : batches) on_transfer(b);
  }
  return !stopped_;
}

// A transfer goes to its iteration if it runs, waits if the iteration is
// still to come (it cannot be done before the transfer arrives, so an
// iteration that is done can never be its target).
void FrameBook::on_transfer(TransferBatch& batch) {
  if (batch.iteration < oldest_) {
    const TransferValue& v = batch.values.front();
    fail(Status(ops::Error::internal,
                fmt::format("frame '{}' on partition {} got a transfer for key '{}' at tag {}, "
                            "an iteration that is done",
                            layout_.name, exec_.partition(), exec_.transfer_name(v.key),
                            tag0_.with_iteration(batch.iteration).to_string())));
    return;
  }
  if (batch.iteration >= end()) {
    early_transfers_[batch.iteration].push_back(std::move(batch));
    return;
  }
  ++slot(batch.iteration).sent;
  host_.transfer(batch.iteration, std::move(batch));
}

// Enter values come from the parent iteration while iteration 0 is still
// running (it is not done before every Enter has arrived).
void FrameBook::on_enter(std::vector<OutValue>& values) {
  if (oldest_ != 0) {
    fail(Status(ops::Error::internal, fmt::format("frame '{}' on partition {} got an Enter value after iteration 0",
                                                  layout_.name, exec_.partition())));
    return;
  }
  std::vector<OutValue> to_first;
  for (OutValue& v : values) {
    ++enters_arrived_;
    if (exec_.item(v.item).is_constant) {
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

void FrameBook::on_report(IterationReport& r) {
  if (!is_active(r.iteration)) {
    fail(Status(ops::Error::internal,
                fmt::format("frame '{}' on partition {} got a report for iteration {}, which is not running",
                            layout_.name, exec_.partition(), r.iteration)));
    return;
  }
  if (guard_.past_deadline()) {
    fail(guard_.timed_out(fmt::format(" in frame '{}' at tag {} on partition {}", layout_.name,
                                      tag0_.with_iteration(r.iteration).to_string(), exec_.partition())));
    return;
  }
  host_.reported(r);
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
                              exec_.item(x.item).node->name, tag0_.with_iteration(r.iteration).to_string(),
                              exec_.partition())));
      return;
    }
    exit_live_[static_cast<size_t>(pos)] = true;
    live_exits.push_back(std::move(x));
  }
  if (!live_exits.empty()) host_.exits(std::move(live_exits));

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
    const int64_t next = r.iteration + 1;
    const bool live = std::any_of(r.next_iterations.begin(), r.next_iterations.end(),
                                  [](const OutValue& v) { return !v.dead; });
    if (next < end()) {
      ++slot(next).sent;
      forward = next;
    } else if (!live || deferred_) {
      for (OutValue& v : r.next_iterations) (v.dead ? held_dead_ : *deferred_).push_back(std::move(v));
    } else if (end() - oldest_ < layout_.parallel_iterations) {
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
void FrameBook::advance() {
  while (!active_.empty()) {
    const Slot& s = active_.front();
    const bool inputs_done = oldest_ > 0 || enters_arrived_ == layout_.num_enters;
    if (!(s.quiescent && s.received == s.sent && inputs_done)) break;
    host_.retire(oldest_);
    active_.pop_front();
    ++oldest_;
    if (deferred_ && static_cast<int64_t>(active_.size()) < layout_.parallel_iterations) {
      std::vector<OutValue> values = std::move(*deferred_);
      deferred_.reset();
      if (!start_iteration(end(), std::move(values))) return;
    }
  }
  if (active_.empty() && !deferred_ && !finished_) finish();
}

void FrameBook::finish() {
  finished_ = true;
  stopped_ = true;
  if (!early_transfers_.empty()) {
    const auto& [iteration, batches] = *early_transfers_.begin();
    fail(Status(ops::Error::internal,
                fmt::format("frame '{}' on partition {} ended with a transfer for key '{}' at tag "
                            "{}, an iteration that never ran",
                            layout_.name, exec_.partition(), exec_.transfer_name(batches.front().values.front().key),
                            tag0_.with_iteration(iteration).to_string())));
    return;
  }
  if (tag0_.is_root()) {
    host_.done(std::move(fetches_));
    return;
  }
  // The Exits that delivered nothing live deliver dead, with the news that
  // the instance is done (one message).
  std::vector<OutValue> dead_exits;
  for (size_t i = 0; i < layout_.exits.size(); ++i)
    if (!exit_live_[i]) dead_exits.push_back({layout_.exits[i], ops::Tensor(), true});
  host_.done(std::move(dead_exits));
}

}  // namespace tagflow::actors
