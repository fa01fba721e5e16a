#include "ops/cancellation.hpp"

#include <algorithm>

namespace tagflow::ops {

bool Cancellation::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

void Cancellation::cancel() {
  std::vector<Wait> waits;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) return;
    cancelled_ = true;
    waits.swap(waits_);
  }
  for (Wait& w : waits) w.wake();
}

Cancellation::Id Cancellation::add(std::string what, std::function<void()> wake) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_) return 0;
  const Id id = next_++;
  waits_.push_back(Wait{id, std::move(what), std::move(wake)});
  return id;
}

void Cancellation::remove(Id id) {
  std::lock_guard<std::mutex> lock(mu_);
  waits_.erase(std::remove_if(waits_.begin(), waits_.end(), [&](const Wait& w) { return w.id == id; }),
               waits_.end());
}

std::vector<std::string> Cancellation::waits() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const Wait& w : waits_) out.push_back(w.what);
  return out;
}

}  // namespace tagflow::ops
