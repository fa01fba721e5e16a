#include "actors/tag.hpp"

namespace tagflow::actors {

namespace {

// FNV-1a over the bytes, then a splitmix64 finaliser: stable across
// processes and platforms (no std::hash, whose values may differ).
uint64_t mix(uint64_t h, uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    h ^= (v >> (8 * i)) & 0xff;
    h *= 0x100000001b3ULL;
  }
  return h;
}

uint64_t finalise(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

FrameInstanceId frame_instance_id(FrameInstanceId parent, int64_t parent_iteration,
                                  const std::string& frame_name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  h = mix(h, parent);
  h = mix(h, static_cast<uint64_t>(parent_iteration));
  for (unsigned char c : frame_name) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  FrameInstanceId id = finalise(h);
  return id == kRootFrameInstance ? 1 : id;
}

Tag Tag::child(const std::string& frame_name, int64_t iteration) const {
  auto n = std::make_shared<PathNode>();
  n->parent = node_;
  n->frame_name = frame_name;
  n->iteration = iteration;
  n->instance = frame_instance_id(frame_instance(), this->iteration(), frame_name);
  return Tag(std::move(n));
}

Tag Tag::with_iteration(int64_t iteration) const {
  if (node_ == nullptr) return *this;
  auto n = std::make_shared<PathNode>(*node_);
  n->iteration = iteration;
  return Tag(std::move(n));
}

int64_t Tag::iteration() const { return node_ == nullptr ? 0 : node_->iteration; }

FrameInstanceId Tag::frame_instance() const {
  return node_ == nullptr ? kRootFrameInstance : node_->instance;
}

const std::string& Tag::frame_name() const {
  static const std::string root;
  return node_ == nullptr ? root : node_->frame_name;
}

Tag Tag::parent() const { return node_ == nullptr ? Tag() : Tag(node_->parent); }

std::string Tag::to_string() const {
  if (node_ == nullptr) return "/";
  std::string parent_part = node_->parent ? Tag(node_->parent).to_string() + "/" : "";
  return parent_part + node_->frame_name + "/" + std::to_string(node_->iteration);
}

bool Tag::operator==(const Tag& o) const {
  if (node_ == o.node_) return true;
  if (node_ == nullptr || o.node_ == nullptr) return false;
  return node_->instance == o.node_->instance && node_->iteration == o.node_->iteration &&
         node_->frame_name == o.node_->frame_name;
}

}  // namespace tagflow::actors
