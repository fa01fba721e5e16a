#include "actors/step_waiter.hpp"

#include <chrono>
#include <thread>

namespace tagflow::actors {

void StepWaiter::fulfil(Result result) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (claimed_) return;
    claimed_ = true;
    result_.emplace(std::move(result));
    done_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

StepWaiter::Result StepWaiter::wait() {
  // Spin for up to ~200 µs: most small steps finish well within that.
  auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(200);
  while (!done() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return result_.has_value(); });
  return std::move(*result_);
}

StepWaiter::Result StepWaiter::take() {
  std::lock_guard<std::mutex> lock(mu_);
  return std::move(*result_);
}

}  // namespace tagflow::actors
