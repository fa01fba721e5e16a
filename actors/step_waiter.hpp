// StepWaiter: how the caller of Session::run learns that a step finished.
// Every partition of the step fulfils it once with the fetches it holds
// (the others left empty) or an error; the step is done when all have. The
// first error that is not the `aborted` echo of another partition's failure
// wins. The caller spins briefly (a wake-up through the kernel costs ~25 µs
// here) and then blocks. Thread-safe.
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

  explicit StepWaiter(int parts = 1) : parts_left_(parts) {}

  // One partition's part. Values are merged by position.
  void fulfil(Result result);
  // Ends the wait at once with `s`, whatever parts are still missing.
  void fail_all(ops::Status s);
  bool done() const { return done_.load(std::memory_order_acquire); }
  // Blocks until every part arrived.
  Result wait();
  // The result, once done (for callers that drive a test scheduler).
  Result take();

 private:
  std::atomic<bool> done_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  int parts_left_;                     // guarded by mu_
  std::optional<ops::Status> error_;   // guarded by mu_
  std::vector<ops::Tensor> values_;    // guarded by mu_
};

}  // namespace tagflow::actors
