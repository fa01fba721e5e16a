#include "actors/kernel_threads.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <utility>

#include <caf/thread_hook.hpp>

#include "ops/cpu/parallel.hpp"

namespace tagflow::actors {

namespace {

// One block task, owned by the scheduler from enqueue until resume returns.
class BlockTask final : public caf::resumable {
 public:
  explicit BlockTask(std::function<void()> f) : f_(std::move(f)) {}
  subtype_t subtype() const override { return function_object; }
  resume_result resume(caf::execution_unit*, size_t) override {
    f_();
    return done;
  }
  void intrusive_ptr_add_ref_impl() override { refs_.fetch_add(1, std::memory_order_relaxed); }
  void intrusive_ptr_release_impl() override {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

 private:
  std::function<void()> f_;
  std::atomic<int> refs_{1};  // the scheduler's
};

class SchedulerPool final : public ops::cpu::WorkerPool {
 public:
  explicit SchedulerPool(caf::actor_system& system) : system_(system) {}
  int threads() const override {
    // Read once the scheduler runs (it does not yet when hooks are made).
    int n = threads_.load(std::memory_order_relaxed);
    if (n == 0) {
      n = static_cast<int>(system_.scheduler().num_workers());
      threads_.store(n, std::memory_order_relaxed);
    }
    return n;
  }
  void schedule(std::function<void()> task) override { system_.scheduler().enqueue(new BlockTask(std::move(task))); }

 private:
  caf::actor_system& system_;
  mutable std::atomic<int> threads_{0};
};

class KernelThreadHook final : public caf::thread_hook {
 public:
  void init(caf::actor_system& system) override { pool_ = std::make_unique<SchedulerPool>(system); }
  void thread_started() override { scope_ = std::make_unique<ops::cpu::WorkerPoolScope>(pool_.get()); }
  void thread_terminates() override { scope_.reset(); }

 private:
  std::unique_ptr<SchedulerPool> pool_;
  // Each thread's own scope: the hook object is shared, the scope is not.
  static thread_local std::unique_ptr<ops::cpu::WorkerPoolScope> scope_;
};

thread_local std::unique_ptr<ops::cpu::WorkerPoolScope> KernelThreadHook::scope_;

}  // namespace

void add_kernel_thread_hook(caf::actor_system_config& cfg) { cfg.add_thread_hook<KernelThreadHook>(); }

std::unique_ptr<ops::cpu::WorkerPool> make_scheduler_pool(caf::actor_system& system) {
  return std::make_unique<SchedulerPool>(system);
}

}  // namespace tagflow::actors
