#include "ops/queue.hpp"

#include <algorithm>
#include <chrono>

namespace tagflow::ops {

namespace {

std::string types_text(const DTypes& types) {
  std::string s = "[";
  for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + dtype_name(types[i]);
  return s + "]";
}

std::string shapes_text(const std::vector<PartialShape>& shapes) {
  std::string s = "[";
  for (size_t i = 0; i < shapes.size(); ++i) s += (i ? ", " : "") + shapes[i].to_string();
  return s + "]";
}

std::string capacity_text(int64_t capacity) {
  return capacity < 0 ? std::string("unbounded") : std::to_string(capacity);
}

void leave(std::deque<uint64_t>& line, uint64_t ticket) {
  line.erase(std::find(line.begin(), line.end(), ticket));
}

}  // namespace

bool shape_fits(const Shape& shape, const PartialShape& declared) {
  if (declared.unknown_rank) return true;
  if (static_cast<int>(declared.dims.size()) != shape.rank()) return false;
  for (int i = 0; i < shape.rank(); ++i)
    if (declared.dims[static_cast<size_t>(i)] >= 0 && declared.dims[static_cast<size_t>(i)] != shape.dim(i))
      return false;
  return true;
}

FifoQueue::FifoQueue(std::string name, DTypes types, std::vector<PartialShape> shapes, int64_t capacity)
    : name_(std::move(name)), types_(std::move(types)), shapes_(std::move(shapes)), capacity_(capacity) {}

Status FifoQueue::check_signature(const DTypes& types, const std::vector<PartialShape>& shapes,
                                  int64_t capacity) const {
  if (types.size() != types_.size() || !std::equal(types.begin(), types.end(), types_.begin()))
    return Status(Error::invalid_argument, "shared " + named() + " has component types " + types_text(types_) +
                                               ", but the node asks for " + types_text(types));
  if (shapes != shapes_)
    return Status(Error::invalid_argument, "shared " + named() + " has component shapes " +
                                               shapes_text(shapes_) + ", but the node asks for " +
                                               shapes_text(shapes));
  if ((capacity < 0 ? -1 : capacity) != (capacity_ < 0 ? -1 : capacity_))
    return Status(Error::invalid_argument, "shared " + named() + " has capacity " + capacity_text(capacity_) +
                                               ", but the node asks for " + capacity_text(capacity));
  return ok_status();
}

Status FifoQueue::check_element(const Tuple& element) const {
  if (element.size() != types_.size())
    return Status(Error::invalid_argument, named() + " takes elements of " + std::to_string(types_.size()) +
                                               " components, got " + std::to_string(element.size()));
  for (size_t i = 0; i < element.size(); ++i) {
    const Tensor& t = element[i];
    if (!t.valid() || t.dtype() != types_[i])
      return Status(Error::invalid_argument,
                    "component " + std::to_string(i) + " of an element for " + named() + " is " +
                        (t.valid() ? dtype_name(t.dtype()) : std::string("no tensor")) + ", the queue holds " +
                        dtype_name(types_[i]));
    if (!shapes_.empty() && !shape_fits(t.shape(), shapes_[i]))
      return Status(Error::invalid_argument, "component " + std::to_string(i) + " of an element for " + named() +
                                                 " has shape " + t.shape().to_string() +
                                                 ", the queue's component shape is " + shapes_[i].to_string());
  }
  return ok_status();
}

Status FifoQueue::closed_error() const { return Status(Error::cancelled, named() + " is closed"); }

Status FifoQueue::insufficient(int64_t n) const {
  return Status(Error::out_of_range, named() + " is closed and has insufficient elements (requested " +
                                         std::to_string(n) + ", current size " + std::to_string(elements_.size()) +
                                         ")");
}

// Waits in `line` until `attempt` (called with the lock held, knowing
// whether this attempt is first in line) gives a result, the step is
// cancelled or the deadline passes.
template <class Try>
Status FifoQueue::wait_for(std::unique_lock<std::mutex>& lock, std::deque<uint64_t>& line, const Waiting& w,
                           const std::string& what, Try attempt) {
  const uint64_t ticket = next_ticket_++;
  line.push_back(ticket);
  Cancellation::Id registered = 0;
  Status result;
  if (w.cancellation != nullptr) {
    std::weak_ptr<FifoQueue> self = weak_from_this();
    registered = w.cancellation->add(what + " " + named(), [self] {
      if (auto q = self.lock()) {
        std::lock_guard<std::mutex> wake(q->mu_);
        q->cv_.notify_all();
      }
    });
  }
  for (;;) {
    if (w.cancellation != nullptr && (registered == 0 || w.cancellation->cancelled())) {
      result = Status(Error::aborted, "the step ended while waiting to " + what + " " + named());
      break;
    }
    if (Step s = attempt(line.front() == ticket)) {
      result = std::move(*s);
      break;
    }
    if (w.deadline == std::chrono::steady_clock::time_point::max()) {
      cv_.wait(lock);
    } else if (cv_.wait_until(lock, w.deadline) == std::cv_status::timeout &&
               std::chrono::steady_clock::now() >= w.deadline) {
      if (Step s = attempt(line.front() == ticket)) {
        result = std::move(*s);
        break;
      }
      result = Status(Error::deadline_exceeded, "the step's timeout (--timeout) passed while waiting to " + what +
                                                    " " + named() + " (current size " +
                                                    std::to_string(elements_.size()) + ")");
      break;
    }
  }
  leave(line, ticket);
  cv_.notify_all();  // the next in line may go now
  if (registered != 0) w.cancellation->remove(registered);
  return result;
}

Status FifoQueue::enqueue(std::vector<Tuple>& elements, const Waiting* waiting, bool* would_block) {
  std::unique_lock<std::mutex> lock(mu_);
  if (closed_) return closed_error();
  const auto n = static_cast<int64_t>(elements.size());
  if (enqueuers_.empty() && has_room(n)) {
    for (Tuple& e : elements) elements_.push_back(std::move(e));
    cv_.notify_all();
    return ok_status();
  }
  if (waiting == nullptr) {
    *would_block = true;
    return ok_status();
  }
  const uint64_t epoch = cancel_epoch_;
  size_t next = 0;
  return wait_for(lock, enqueuers_, *waiting, "enqueue into", [&](bool first) -> Step {
    if (cancel_epoch_ != epoch)
      return Status(Error::cancelled, "an enqueue into " + named() +
                                          " was cancelled: the queue was closed with cancel_pending_enqueues");
    if (!first) return std::nullopt;
    bool added = false;
    while (next < elements.size() && has_room(1)) {
      elements_.push_back(std::move(elements[next++]));
      added = true;
    }
    if (added) cv_.notify_all();
    if (next == elements.size()) return ok_status();
    return std::nullopt;
  });
}

Status FifoQueue::dequeue(int64_t n, const Waiting* waiting, bool* would_block, std::vector<Tuple>* out) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto take = [&] {
    for (int64_t i = 0; i < n; ++i) {
      out->push_back(std::move(elements_.front()));
      elements_.pop_front();
    }
    cv_.notify_all();  // room for waiting enqueues
  };
  if (dequeuers_.empty() && static_cast<int64_t>(elements_.size()) >= n) {
    take();
    return ok_status();
  }
  if (closed_ && static_cast<int64_t>(elements_.size()) < n) return insufficient(n);
  if (waiting == nullptr) {
    *would_block = true;
    return ok_status();
  }
  return wait_for(lock, dequeuers_, *waiting, "dequeue from", [&](bool first) -> Step {
    if (first && static_cast<int64_t>(elements_.size()) >= n) {
      take();
      return ok_status();
    }
    if (closed_ && static_cast<int64_t>(elements_.size()) < n) return insufficient(n);
    return std::nullopt;
  });
}

void FifoQueue::close(bool cancel_pending_enqueues) {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  if (cancel_pending_enqueues) ++cancel_epoch_;
  cv_.notify_all();
}

bool FifoQueue::is_closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

int64_t FifoQueue::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(elements_.size());
}

int64_t FifoQueue::waiting_dequeues() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(dequeuers_.size());
}

int64_t FifoQueue::waiting_enqueues() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int64_t>(enqueuers_.size());
}

}  // namespace tagflow::ops
