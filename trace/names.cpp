#include "trace/names.hpp"

#include <algorithm>

namespace tagflow::trace {

namespace {
const std::string kNone;

const std::string& at(const std::vector<std::string>& v, int32_t i) {
  return i >= 0 && static_cast<size_t>(i) < v.size() ? v[static_cast<size_t>(i)] : kNone;
}
}  // namespace

const std::string& PartitionNames::node(int32_t id) const { return at(nodes, id); }
const std::string& PartitionNames::op(int32_t id) const { return at(ops, id); }
const std::string& PartitionNames::frame(int32_t id) const { return at(frames, id); }

const std::string& PartitionNames::transfer(uint64_t key) const {
  for (const auto& [k, name] : transfers)
    if (k == key) return name;
  return kNone;
}

}  // namespace tagflow::trace
