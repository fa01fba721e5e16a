#include "ops/cpu/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "ops/memory_budget.hpp"

namespace tagflow::ops::cpu {

namespace {

// How long a thread outside the pool waits for the pool's threads to claim
// its blocks before it runs the rest itself.
constexpr std::chrono::microseconds kOutsideWait{30};
// How long a caller yields while the blocks it did not run finish, before
// it sleeps.
constexpr std::chrono::microseconds kYieldWait{100};

thread_local WorkerPool* current_pool = nullptr;
thread_local bool outside_pool = false;  // the thread is not one of current_pool's
thread_local bool inside_block = false;

// What the caller and its helpers share. Helpers hold it by shared_ptr: a
// helper the scheduler starts after the work is done finds no block left
// and never touches `block`.
struct Job {
  const std::function<void(int)>* block = nullptr;
  MemoryBudget* budget = nullptr;
  int blocks = 0;
  std::atomic<int> next{0};
  std::atomic<int> unfinished{0};
  std::mutex mu;
  std::condition_variable done;
  std::exception_ptr error;

  // Claims and runs blocks until none is left.
  void work() {
    for (int i = next.fetch_add(1, std::memory_order_relaxed); i < blocks;
         i = next.fetch_add(1, std::memory_order_relaxed)) {
      try {
        (*block)(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
      }
      if (unfinished.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mu);
        done.notify_all();
      }
    }
  }
};

class BlockScope {
 public:
  BlockScope() : previous_(inside_block) { inside_block = true; }
  ~BlockScope() { inside_block = previous_; }

 private:
  bool previous_;
};

}  // namespace

WorkerPool* current_worker_pool() { return current_pool; }

WorkerPoolScope::WorkerPoolScope(WorkerPool* pool, Role role)
    : previous_(current_pool), previous_outside_(outside_pool) {
  current_pool = pool;
  outside_pool = role == Role::outside;
}
WorkerPoolScope::~WorkerPoolScope() {
  current_pool = previous_;
  outside_pool = previous_outside_;
}

int parallel_blocks(int64_t cost, int64_t max_blocks) {
  WorkerPool* pool = current_pool;
  if (pool == nullptr || inside_block || cost < 2 * kMinParallelCost || max_blocks < 2) return 1;
  const int64_t by_cost = cost / kMinParallelCost;
  return static_cast<int>(std::max<int64_t>(1, std::min({by_cost, max_blocks, int64_t{pool->threads()}})));
}

void parallel_run(int blocks, const std::function<void(int)>& block) {
  WorkerPool* pool = current_pool;
  if (blocks <= 1 || pool == nullptr || inside_block) {
    BlockScope in_block;
    for (int i = 0; i < blocks; ++i) block(i);
    return;
  }
  auto job = std::make_shared<Job>();
  job->block = &block;
  job->budget = current_memory_budget();
  job->blocks = blocks;
  job->unfinished.store(blocks, std::memory_order_relaxed);
  // A thread outside the pool hands every block to the pool's threads; it
  // takes a block itself only if none of them has claimed it after a short
  // wait (they are all busy, or asleep), so that a large kernel computes on
  // the pool's threads alone while a small one is not delayed by their
  // waking up.
  const bool outside = outside_pool;
  const int helpers = std::min(blocks, pool->threads()) - (outside ? 0 : 1);
  for (int h = 0; h < helpers; ++h)
    pool->schedule([job] {
      MemoryBudgetScope budget(job->budget);
      BlockScope in_block;
      job->work();
    });
  if (outside) {
    const auto give_up = std::chrono::steady_clock::now() + kOutsideWait;
    while (job->next.load(std::memory_order_relaxed) < blocks && std::chrono::steady_clock::now() < give_up)
      std::this_thread::yield();
  }
  {
    BlockScope in_block;
    job->work();  // nothing when the helpers claimed every block
  }
  // What is left runs on helpers right now: wait a moment yielding (a
  // block is often short, and waking from a sleep costs tens of µs), then
  // sleep.
  const auto stop_yielding = std::chrono::steady_clock::now() + kYieldWait;
  while (job->unfinished.load(std::memory_order_acquire) > 0 && std::chrono::steady_clock::now() < stop_yielding)
    std::this_thread::yield();
  std::unique_lock<std::mutex> lock(job->mu);
  job->done.wait(lock, [&] { return job->unfinished.load(std::memory_order_acquire) == 0; });
  if (job->error) std::rethrow_exception(job->error);
}

void parallel_for(int64_t n, int64_t cost_per_item, const std::function<void(int64_t, int64_t)>& f) {
  if (n <= 0) return;
  const int blocks = parallel_blocks(n * std::max<int64_t>(cost_per_item, 1), n);
  parallel_run(blocks, [&](int i) {
    const int64_t begin = n * i / blocks, end = n * (i + 1) / blocks;
    if (begin < end) f(begin, end);
  });
}

}  // namespace tagflow::ops::cpu
