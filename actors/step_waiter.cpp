#include "actors/step_waiter.hpp"

#include <fmt/format.h>

#include <chrono>
#include <thread>

namespace tagflow::actors {

void StepWaiter::fulfil(Result result) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (parts_left_ <= 0) return;
    if (!result.ok()) {
      const bool echo = result.status().code() == ops::Error::aborted;
      if (!error_ || (error_->code() == ops::Error::aborted && !echo)) error_ = result.status();
    } else {
      std::vector<ops::Tensor>& v = *result;
      if (values_.size() < v.size()) values_.resize(v.size());
      for (size_t i = 0; i < v.size(); ++i)
        if (v[i].valid()) values_[i] = std::move(v[i]);
    }
    if (--parts_left_ > 0) return;
    done_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

void StepWaiter::fail_all(ops::Status s) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (parts_left_ <= 0) return;
    error_ = std::move(s);
    parts_left_ = 0;
    done_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

StepWaiter::Result StepWaiter::wait() {
  // Spin for up to ~200 µs: most small steps finish well within that.
  auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
  while (!done() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return parts_left_ <= 0; });
  }
  return take();
}

StepWaiter::Result StepWaiter::take() {
  std::lock_guard<std::mutex> lock(mu_);
  if (error_) return *error_;
  return std::move(values_);
}

void RunningSteps::close() {
  std::unique_lock<std::mutex> lock(mu_);
  closing_ = true;
  for (auto& [waiter, step_id] : waiting_)
    waiter->fail_all(ops::Status(ops::Error::cancelled,
                                 fmt::format("step {} was cancelled: its session was destroyed while it ran", step_id)));
  done_.wait(lock, [&] { return runs_ == 0; });
}

}  // namespace tagflow::actors
