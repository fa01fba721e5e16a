// Cancellation and Waiting: how a kernel that may block (a dequeue from an
// empty queue, an enqueue into a full one) learns how long it may wait.
//
// A Cancellation belongs to one step of one partition: the executor cancels
// it when the step ends for any reason (error, abort, timeout, the session
// going away), and every wait registered with it wakes at once. Waits
// register a callback that wakes them and a description ("dequeue from
// FIFOQueue 'q'") that error messages quote. Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tagflow::ops {

class Cancellation {
 public:
  using Id = uint64_t;

  bool cancelled() const;
  // Runs every registered callback once, on this thread, outside the lock;
  // later calls do nothing.
  void cancel();
  // Registers a wait: `wake` runs when the step is cancelled. Returns 0,
  // without registering, if it already is.
  Id add(std::string what, std::function<void()> wake);
  // Unregisters a wait (its callback may still be running on the
  // cancelling thread, so it must own what it touches).
  void remove(Id id);
  // What the registered waits wait for, in the order they began.
  std::vector<std::string> waits() const;

 private:
  struct Wait {
    Id id;
    std::string what;
    std::function<void()> wake;
  };
  mutable std::mutex mu_;
  bool cancelled_ = false;
  Id next_ = 1;
  std::vector<Wait> waits_;
};

// How long a kernel call may block. A kernel that gets no Waiting
// (KernelContext::waiting() is null) must not block: where it would, it
// says so (KernelContext::set_would_block) and the executor calls it again
// off its scheduler threads with a Waiting (docs/protocol.md, "Kernels
// that block").
struct Waiting {
  Cancellation* cancellation = nullptr;  // null: nothing cancels the wait
  // The step's deadline (--timeout); max: none.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

}  // namespace tagflow::ops
