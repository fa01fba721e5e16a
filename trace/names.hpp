// PartitionNames: what the numbers of a partition's events stand for — the
// partition's name, its nodes' names and ops (by node id), its frames' names
// (by frame id) and the names of its transfer keys. Made once per partition
// graph, only when someone records events, and shared read-only by every
// step of that partition; a sink writes it once (trace/sink.hpp) and a
// step_started event names it by the id the sink gave it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tagflow::trace {

struct PartitionNames {
  std::string partition;           // "CPU:0", or a device of a cluster task
  std::vector<std::string> nodes;  // by node id
  std::vector<std::string> ops;    // by node id
  std::vector<std::string> frames;  // by frame id ("" for the root frame)
  // transfer key hash -> "tensor_name;send_device;recv_device"
  std::vector<std::pair<uint64_t, std::string>> transfers;

  const std::string& node(int32_t id) const;
  const std::string& op(int32_t id) const;
  const std::string& frame(int32_t id) const;
  // The transfer's name, or "" if the key is not one of this partition's.
  const std::string& transfer(uint64_t key) const;
};

}  // namespace tagflow::trace
