#include "actors/tag.hpp"

#include <vector>

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
  auto instance = std::make_shared<FrameInstanceRecord>();
  instance->parent = *this;
  instance->frame_name = frame_name;
  instance->id = frame_instance_id(frame_instance(), iteration_, frame_name);
  instance->depth = depth() + 1;
  Tag t;
  t.instance_ = std::move(instance);
  t.iteration_ = iteration;
  return t;
}

const std::string& Tag::frame_name() const {
  static const std::string root;
  return instance_ == nullptr ? root : instance_->frame_name;
}

std::string Tag::to_string() const {
  if (instance_ == nullptr) return "/";
  // Innermost first, then reversed: one pass, no quadratic concatenation.
  std::vector<const Tag*> path;
  size_t length = 0;
  for (const Tag* t = this; t->instance_ != nullptr; t = &t->instance_->parent) {
    path.push_back(t);
    length += t->instance_->frame_name.size() + 22;
  }
  std::string out;
  out.reserve(length);
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    if (!out.empty()) out += '/';
    out += (*it)->instance_->frame_name;
    out += '/';
    out += std::to_string((*it)->iteration_);
  }
  return out;
}

}  // namespace tagflow::actors
