// FifoQueue: TensorFlow's FIFOQueue — a first-in first-out queue of
// elements, each a tuple of tensors of fixed component dtypes (and, if
// given, shapes) — kept in a session's ResourceManager, where it lives as
// long as the session (ops/resource.hpp).
//
// Waiting. A dequeue waits while the queue has too few elements and is
// open; an enqueue waits while a bounded queue is full. Attempts are served
// in the order they began (an attempt that waits holds up later ones of its
// kind), as in TensorFlow's QueueBase. A call without a Waiting never
// waits: where it would, it changes nothing and reports `would_block`; the
// executor runs it again off its scheduler threads with a Waiting, whose
// Cancellation (the step ending) and deadline (the step's --timeout) end
// the wait. Closing wakes every waiter: dequeues that can no longer be
// served fail with out_of_range, pending enqueues fail with cancelled only
// under cancel_pending_enqueues.
//
// Thread-safe: one mutex per queue; owned through shared_ptr (a waiter's
// wake-up callback holds the queue).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ops/cancellation.hpp"
#include "ops/dtype.hpp"
#include "ops/shape.hpp"
#include "ops/status.hpp"
#include "ops/tensor.hpp"

namespace tagflow::ops {

class FifoQueue : public std::enable_shared_from_this<FifoQueue> {
 public:
  using Tuple = std::vector<Tensor>;

  // `shapes` empty: any shape per component; capacity < 0: unbounded.
  FifoQueue(std::string name, DTypes types, std::vector<PartialShape> shapes, int64_t capacity);

  const std::string& name() const { return name_; }
  const DTypes& component_types() const { return types_; }
  int num_components() const { return static_cast<int>(types_.size()); }

  // Whether a node declaring these attrs may share this queue: the same
  // component types, shapes and capacity (an error names the queue and
  // what differs).
  Status check_signature(const DTypes& types, const std::vector<PartialShape>& shapes,
                         int64_t capacity) const;
  // Checks one element against the component count, dtypes and shapes.
  Status check_element(const Tuple& element) const;

  // Enqueues `elements` in order. Without `waiting` all of them go in at
  // once or, if that would wait, none (*would_block set). With it, they go
  // in as room is made; an error stops there (those already in stay).
  Status enqueue(std::vector<Tuple>& elements, const Waiting* waiting, bool* would_block);
  // Takes `n` elements at once into *out, in order (see enqueue for
  // `waiting` and `would_block`). A closed queue with fewer than `n`
  // elements fails with out_of_range.
  Status dequeue(int64_t n, const Waiting* waiting, bool* would_block, std::vector<Tuple>* out);
  // Later enqueues fail; waiting dequeues that cannot be served fail; with
  // `cancel_pending_enqueues`, waiting enqueues fail too.
  void close(bool cancel_pending_enqueues);
  bool is_closed() const;
  int64_t size() const;
  // Attempts waiting now: for tests.
  int64_t waiting_dequeues() const;
  int64_t waiting_enqueues() const;

 private:
  // The outcome of one look at the queue while waiting: nullopt: wait on.
  using Step = std::optional<Status>;
  template <class Try>
  Status wait_for(std::unique_lock<std::mutex>& lock, std::deque<uint64_t>& line, const Waiting& w,
                  const std::string& what, Try attempt);
  bool has_room(int64_t n) const {
    return capacity_ < 0 || static_cast<int64_t>(elements_.size()) + n <= capacity_;
  }
  std::string named() const { return "FIFOQueue '" + name_ + "'"; }
  Status closed_error() const;
  Status insufficient(int64_t n) const;

  const std::string name_;
  const DTypes types_;
  const std::vector<PartialShape> shapes_;
  const int64_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Tuple> elements_;
  bool closed_ = false;
  uint64_t cancel_epoch_ = 0;  // bumped by close(cancel_pending_enqueues)
  uint64_t next_ticket_ = 1;
  std::deque<uint64_t> enqueuers_;  // waiting attempts, in order
  std::deque<uint64_t> dequeuers_;
};

// The component shapes as written in the attr `shapes`, with unknown
// dimensions allowed: whether `shape` fits `declared`.
bool shape_fits(const Shape& shape, const PartialShape& declared);

}  // namespace tagflow::ops
