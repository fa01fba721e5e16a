// Tag: where in the dynamic execution a value lives — the root frame, or a
// path of (frame name, iteration) pairs from the root down, printed
// "/", "while/0", "while/0/inner/3". A FrameInstanceId identifies one
// execution of a loop; it is computed from (parent frame instance, parent
// iteration, static frame name) and so is the same on every device, which
// is what Send/Recv keys across devices rely on (docs/protocol.md).
// A tag is a shared, immutable frame-instance record (made once per frame
// instance by child()) plus an iteration number: copying a tag, moving it
// to another iteration and comparing tags cost O(1) whatever the nesting
// depth; only to_string() walks the path. Safe to read from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tagflow::actors {

using FrameInstanceId = uint64_t;
constexpr FrameInstanceId kRootFrameInstance = 0;

// Deterministic: the same inputs give the same id in every process.
FrameInstanceId frame_instance_id(FrameInstanceId parent, int64_t parent_iteration,
                                  const std::string& frame_name);

struct FrameInstanceRecord;

class Tag {
 public:
  Tag() = default;  // the root frame, iteration 0

  // The tag of iteration `iteration` of the frame instance `frame_name`
  // entered from this tag.
  Tag child(const std::string& frame_name, int64_t iteration) const;
  // The same frame instance at another iteration.
  Tag with_iteration(int64_t iteration) const;

  bool is_root() const { return instance_ == nullptr; }
  int64_t iteration() const { return iteration_; }
  FrameInstanceId frame_instance() const;
  const std::string& frame_name() const;
  int depth() const;  // the root: 0
  Tag parent() const;

  // "/" for the root, else "outer/2/inner/0".
  std::string to_string() const;
  bool operator==(const Tag& o) const;

 private:
  std::shared_ptr<const FrameInstanceRecord> instance_;
  int64_t iteration_ = 0;
};

// One frame instance, shared by the tags of all its iterations.
struct FrameInstanceRecord {
  Tag parent;  // the tag the frame instance was entered from
  std::string frame_name;
  FrameInstanceId id = kRootFrameInstance;
  int depth = 0;
};

inline Tag Tag::with_iteration(int64_t iteration) const {
  Tag t = *this;
  if (instance_ != nullptr) t.iteration_ = iteration;
  return t;
}
inline FrameInstanceId Tag::frame_instance() const {
  return instance_ == nullptr ? kRootFrameInstance : instance_->id;
}
inline int Tag::depth() const { return instance_ == nullptr ? 0 : instance_->depth; }
inline Tag Tag::parent() const { return instance_ == nullptr ? Tag() : instance_->parent; }
inline bool Tag::operator==(const Tag& o) const {
  if (instance_ == o.instance_) return iteration_ == o.iteration_;
  return instance_ != nullptr && o.instance_ != nullptr && instance_->id == o.instance_->id &&
         iteration_ == o.iteration_ && instance_->frame_name == o.instance_->frame_name;
}

}  // namespace tagflow::actors
