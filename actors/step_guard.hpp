// The limits a step runs under, with one check and one error text each,
// whoever checks: its deadline (--timeout), its cancellation, the
// iterations a frame instance or a loop run as written may take
// (--max-iterations), and how deep frames may nest (--max-frame-depth).
// The checkers are the places where a step makes progress — a frame on
// each iteration report and before each new iteration, a partition's
// inline root iteration, a While or For run as written every kCheckEvery
// iterations, the partition's timer — so that a busy loop cannot keep a
// timer from ever running. The frame depth is the session's: checked once
// for the frames of a prepared step's partitions, and for bodies run as
// written each time one starts (docs/errors.md, "Limits"). Plain values;
// copied into every step's shared state.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "ops/cancellation.hpp"
#include "ops/status.hpp"

namespace tagflow::actors {

struct StepGuard {
  uint64_t step_id = 0;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  int64_t max_iterations = 0;  // per frame instance or loop; 0: none
  const ops::Cancellation* cancellation = nullptr;

  // How often a loop run as written checks the clock and the cancellation.
  static constexpr int64_t kCheckEvery = 256;

  // The cheap tests, for hot paths: the error's text is made only when a
  // limit is reached.
  bool past_deadline() const {
    return deadline != std::chrono::steady_clock::time_point::max() && std::chrono::steady_clock::now() > deadline;
  }
  bool over_iterations(int64_t iteration) const { return max_iterations > 0 && iteration >= max_iterations; }
  // "step 3 exceeded its timeout (--timeout)" + `where` (" in frame 'w' at
  // tag w/7 on partition CPU:0"); ok before the deadline.
  ops::Status check_deadline(const std::string& where) const;
  // That error, whatever the clock says (the partition's timer fired).
  ops::Status timed_out(const std::string& where) const;
  // `what` ("frame 'w' at tag w/3 on partition CPU:0") + " exceeded the
  // limit of N iterations (--max-iterations, [tagflow] max-iterations)"
  // when `iteration` is N or more (iterations count from 0).
  ops::Status check_iterations(int64_t iteration, const std::string& what) const;
  // That error, for a caller that tested over_iterations.
  ops::Status iterations_exceeded(const std::string& what) const;
  // "step 3 was cancelled" + `where`, once the cancellation is.
  ops::Status check_cancelled(const std::string& where) const;
  // `what` ("frame 'w/inner' on partition CPU:0", "function 'body' run as
  // written by node 'w'") + " is nested D frames deep, over the limit of N
  // (--max-frame-depth, [tagflow] max-frame-depth)" when `depth` is past
  // `limit`.
  static ops::Status check_frame_depth(int64_t depth, int64_t limit, const std::string& what);
  // The three, as a loop run as written checks them at `iteration`:
  // iterations always, the clock and the cancellation every kCheckEvery.
  ops::Status check_loop(int64_t iteration, const char* what) const {
    if (!over_iterations(iteration) && (iteration == 0 || iteration % kCheckEvery != 0)) return ops::ok_status();
    return check_loop_at(iteration, what);
  }

 private:
  ops::Status check_loop_at(int64_t iteration, const char* what) const;
};

}  // namespace tagflow::actors
