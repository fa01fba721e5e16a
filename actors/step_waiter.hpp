// StepWaiter: how the caller of Session::run learns that a step finished.
// Every partition of the step fulfils it once with the fetches it holds
// (the others left empty) or an error; the step is done when all have. The
// first error that is not the `aborted` echo of another partition's failure
// wins. The caller spins briefly (a wake-up through the kernel costs ~25 µs
// here) and then blocks. Thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
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

// The steps a session runs, for its destructor: how many calls of
// Session::run are in progress, and the waiters of the steps its actors
// run. close() ends every such step with `cancelled` and waits for every
// run to return; a step started after close() is refused.
class RunningSteps {
 public:
  // Counts a run in progress for as long as it lives.
  class Run {
   public:
    explicit Run(RunningSteps& steps) : steps_(steps) {
      std::lock_guard<std::mutex> lock(steps_.mu_);
      ++steps_.runs_;
    }
    ~Run() {
      std::lock_guard<std::mutex> lock(steps_.mu_);
      if (--steps_.runs_ == 0) steps_.done_.notify_all();
    }
    Run(const Run&) = delete;
    Run& operator=(const Run&) = delete;

   private:
    RunningSteps& steps_;
  };

  // Registers the waiter of step `step_id` and calls `start` (which hands
  // the step to its actors) under the same lock; false, and no call, once
  // close() has begun.
  template <typename Start>
  bool start(StepWaiter* waiter, uint64_t step_id, Start&& start) {
    std::lock_guard<std::mutex> lock(mu_);
    if (closing_) return false;
    waiting_.emplace(waiter, step_id);
    start();
    return true;
  }
  void finished(StepWaiter* waiter) {
    std::lock_guard<std::mutex> lock(mu_);
    waiting_.erase(waiter);
  }

  // Fails every registered step with `cancelled`, then waits until no run
  // is in progress.
  void close();

 private:
  std::mutex mu_;
  std::condition_variable done_;
  int runs_ = 0;
  bool closing_ = false;
  std::map<StepWaiter*, uint64_t> waiting_;
};

}  // namespace tagflow::actors
