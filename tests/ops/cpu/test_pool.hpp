// A WorkerPool of plain threads for the ops tests, which run kernels
// without an actor system: the same contract as the scheduler's pool
// (actors/kernel_threads.cpp), at a thread count the test chooses.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "ops/cpu/parallel.hpp"

namespace tagflow::ops::testing {

class ThreadPool final : public cpu::WorkerPool {
 public:
  // `threads` in all: the caller and threads - 1 helpers.
  explicit ThreadPool(int threads) : threads_(threads) {
    for (int i = 1; i < threads; ++i) helpers_.emplace_back([this] { loop(); });
  }
  ~ThreadPool() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : helpers_) t.join();
  }
  int threads() const override { return threads_; }
  void schedule(std::function<void()> task) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  int threads_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> helpers_;
};

}  // namespace tagflow::ops::testing
