// Tag: where in the dynamic execution a value lives — the root frame, or a
// path of (frame name, iteration) pairs from the root down, printed
// "/", "while/0", "while/0/inner/3". A FrameInstanceId identifies one
// execution of a loop; it is computed from (parent frame instance, parent
// iteration, static frame name) and so is the same on every device, which
// is what Send/Recv keys across devices rely on (docs/protocol.md).
// Tags are immutable and shared (a child holds its parent): cheap to copy,
// safe to read from any thread.
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

class Tag {
 public:
  Tag() = default;  // the root frame, iteration 0

  // The tag of iteration `iteration` of the frame instance `frame_name`
  // entered from this tag.
  Tag child(const std::string& frame_name, int64_t iteration) const;
  // The same frame instance at another iteration.
  Tag with_iteration(int64_t iteration) const;

  bool is_root() const { return node_ == nullptr; }
  int64_t iteration() const;
  FrameInstanceId frame_instance() const;
  const std::string& frame_name() const;
  Tag parent() const;  // the tag the frame instance was entered from

  // "/" for the root, else "outer/2/inner/0".
  std::string to_string() const;
  bool operator==(const Tag& o) const;

 private:
  struct PathNode {
    std::shared_ptr<const PathNode> parent;
    std::string frame_name;
    int64_t iteration;
    FrameInstanceId instance;
  };
  explicit Tag(std::shared_ptr<const PathNode> n) : node_(std::move(n)) {}
  std::shared_ptr<const PathNode> node_;
};

}  // namespace tagflow::actors
