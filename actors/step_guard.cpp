#include "actors/step_guard.hpp"

#include <fmt/format.h>

namespace tagflow::actors {

ops::Status StepGuard::check_deadline(const std::string& where) const {
  return past_deadline() ? timed_out(where) : ops::ok_status();
}

ops::Status StepGuard::timed_out(const std::string& where) const {
  return ops::Status(ops::Error::deadline_exceeded,
                     fmt::format("step {} exceeded its timeout (--timeout){}", step_id, where));
}

ops::Status StepGuard::check_iterations(int64_t iteration, const std::string& what) const {
  return over_iterations(iteration) ? iterations_exceeded(what) : ops::ok_status();
}

ops::Status StepGuard::iterations_exceeded(const std::string& what) const {
  return ops::Status(ops::Error::resource_exhausted,
                     fmt::format("{} exceeded the limit of {} iterations (--max-iterations, [tagflow] max-iterations)",
                                 what, max_iterations));
}

ops::Status StepGuard::check_cancelled(const std::string& where) const {
  if (cancellation == nullptr || !cancellation->cancelled()) return ops::ok_status();
  return ops::Status(ops::Error::cancelled, fmt::format("step {} was cancelled{}", step_id, where));
}

ops::Status StepGuard::check_frame_depth(int64_t depth, int64_t limit, const std::string& what) {
  if (depth <= limit) return ops::ok_status();
  return ops::Status(ops::Error::resource_exhausted,
                     fmt::format("{} is nested {} frames deep, over the limit of {} (--max-frame-depth, [tagflow] "
                                 "max-frame-depth)", what, depth, limit));
}

ops::Status StepGuard::check_loop_at(int64_t iteration, const char* what) const {
  if (over_iterations(iteration)) return iterations_exceeded(what);
  const std::string where = fmt::format(" in iteration {} of {}", iteration, what);
  TF_RETURN_IF_ERROR(check_cancelled(where));
  return check_deadline(where);
}

}  // namespace tagflow::actors
