// StepWaiter: how the caller of Session::run learns that a step finished.
// The partition side fulfils it once; the caller spins briefly (a wake-up
// through the kernel costs ~25 µs here) and then blocks. Thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <vector>

#include "ops/status.hpp"
#include "ops/tensor.hpp"

namespace tagflow::actors {

class StepWaiter {
 public:
  using Result = ops::Expected<std::vector<ops::Tensor>>;

  // The first result wins; later ones are ignored.
  void fulfil(Result result);
  bool done() const { return done_.load(std::memory_order_acquire); }
  // Blocks until fulfilled.
  Result wait();
  // The result, if fulfilled (for callers that drive a test scheduler).
  Result take();

 private:
  std::atomic<bool> done_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool claimed_ = false;  // guarded by mu_
  std::optional<Result> result_;
};

}  // namespace tagflow::actors
