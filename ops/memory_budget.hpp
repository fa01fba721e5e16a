// MemoryBudget: how many bytes the tensors of one step may hold at once
// (the per-step memory limit, docs/errors.md "Limits"). A tensor buffer
// allocated while a budget is installed on the allocating thread (a
// MemoryBudgetScope; run_kernel installs the step's around every kernel)
// is charged to it and gives its bytes back when it is freed, whenever that
// is: buffers keep their budget alive. An allocation the budget cannot take
// throws MemoryLimitExceeded, a std::bad_alloc, which run_kernel turns into
// resource_exhausted. Buffers of 32 bytes or less (scalars, kept inside the
// buffer object) are not counted; strings count their std::string objects,
// not their characters. MemoryBudget is thread-safe; a scope belongs to
// the thread that made it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <string>

#include "ops/status.hpp"

namespace tagflow::ops {

// Made with std::make_shared: the buffers it counts hold on to it.
class MemoryBudget : public std::enable_shared_from_this<MemoryBudget> {
 public:
  explicit MemoryBudget(int64_t limit) : limit_(limit) {}

  // Charges `bytes`, or throws MemoryLimitExceeded (charging nothing) when
  // they would take the tensors held past the limit.
  void charge(int64_t bytes);
  void release(int64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }

  int64_t used() const { return used_.load(std::memory_order_relaxed); }
  int64_t limit() const { return limit_; }

 private:
  std::atomic<int64_t> used_{0};
  const int64_t limit_;
};

class MemoryLimitExceeded : public std::bad_alloc {
 public:
  MemoryLimitExceeded(int64_t requested, int64_t used, int64_t limit);
  // "a tensor of 4.0 MiB with 1.2 MiB already held by the step's tensors
  // is over the step's memory limit of 1.0 MiB (--memory-limit, [tagflow]
  // memory-limit)"
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// Tensor allocations of the calling thread count against `budget` (nullptr:
// against none) while the scope lives; the previous budget comes back after.
class MemoryBudgetScope {
 public:
  explicit MemoryBudgetScope(MemoryBudget* budget);
  ~MemoryBudgetScope();
  MemoryBudgetScope(const MemoryBudgetScope&) = delete;
  MemoryBudgetScope& operator=(const MemoryBudgetScope&) = delete;

 private:
  MemoryBudget* previous_;
};

// The budget the calling thread's tensor allocations count against, if any.
MemoryBudget* current_memory_budget();

// The machine's physical memory, or its control group's memory limit when
// that is lower; 0 if neither can be read.
int64_t physical_memory_bytes();
// The per-step memory limit when none is configured: a quarter of
// physical_memory_bytes() (1 GiB if it is unknown), leaving room for the
// graph's constants, the variables, and the rest of the process.
int64_t default_memory_limit();

// "512 bytes", "1.5 KiB", "4.0 GiB".
std::string format_bytes(int64_t bytes);
// A size as a person writes it: "1048576", "512K", "64MiB", "4G", "1T"
// (K, M, G, T are powers of 1024; a trailing "B" or "iB" is allowed). An
// error (invalid_argument) quotes the text, shortened.
Expected<int64_t> parse_byte_size(const std::string& text);

}  // namespace tagflow::ops
