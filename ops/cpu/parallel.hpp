// Intra-op parallelism: a large kernel splits its work into blocks that run
// on the session's own threads (CAF's scheduler workers), never on a pool
// of its own, so that the threads computing never outnumber the cores the
// session is configured for ([scheduler] max-threads, --threads).
//
// The actors layer installs a WorkerPool on every scheduler thread
// (WorkerPoolScope); kernels call parallel_for, which runs inline where no
// pool is installed (unit tests, the deterministic scheduler, --threads 1)
// or the work is small. A worker of the pool that calls parallel_for takes
// part: blocks are claimed one at a time by whichever thread is free, so a
// busy scheduler delays nothing — the caller then simply runs every block
// itself. A thread outside the pool (a step run on the session caller's
// thread) hands every block to the pool's threads and sleeps until they
// finish, so that the threads computing are never more than the pool's;
// blocks no thread of the pool has claimed after 30 µs (all busy, or
// asleep) it runs itself.
//
// Thread-safe. parallel_for does not nest: a block's own parallel_for
// runs inline.
#pragma once

#include <cstdint>
#include <functional>

namespace tagflow::ops::cpu {

class WorkerPool {
 public:
  virtual ~WorkerPool() = default;
  // Threads that may run a kernel's blocks at once, the caller included.
  virtual int threads() const = 0;
  // Runs `task` soon on another of the pool's threads; never inline.
  virtual void schedule(std::function<void()> task) = 0;
};

// The pool the calling thread's kernels split onto; nullptr: none.
WorkerPool* current_worker_pool();

// Installs `pool` for the calling thread: one of its threads (`worker`),
// or a thread outside it whose kernels hand their blocks to it (`outside`).
class WorkerPoolScope {
 public:
  enum class Role { worker, outside };
  explicit WorkerPoolScope(WorkerPool* pool, Role role = Role::worker);
  ~WorkerPoolScope();
  WorkerPoolScope(const WorkerPoolScope&) = delete;
  WorkerPoolScope& operator=(const WorkerPoolScope&) = delete;

 private:
  WorkerPool* previous_;
  bool previous_outside_;
};

// Below this many operations (multiply-adds, element visits) a kernel's
// work is not split: handing a block to another thread costs a few µs.
inline constexpr int64_t kMinParallelCost = 1 << 17;

// How many blocks work of `cost` operations should be split into: 1 when
// no pool is installed, when inside another parallel_for, or when the
// work is small; at most the pool's threads and `max_blocks`.
int parallel_blocks(int64_t cost, int64_t max_blocks);

// Runs block(i) for every i in [0, blocks), on up to `blocks` threads, and
// returns when all have run. An exception thrown by a block (a memory
// limit, say) is rethrown here after the other blocks finish. Allocations
// inside blocks count against the caller's memory budget.
void parallel_run(int blocks, const std::function<void(int)>& block);

// Splits [0, n) into parallel_blocks(n * cost_per_item, n) ranges of
// consecutive items and runs f(begin, end) on each.
void parallel_for(int64_t n, int64_t cost_per_item, const std::function<void(int64_t, int64_t)>& f);

}  // namespace tagflow::ops::cpu
