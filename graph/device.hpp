// Device names: TensorFlow's `/job:J/replica:R/task:T/device:TYPE:ID`,
// every part optional (a partial name is a constraint, the empty name none),
// plus the legacy `/cpu:0` and `/gpu:0` forms (only lowercase `cpu` and `gpu`;
// `/device:cpu:0` names a type "cpu" that is not "CPU"). Placement
// (graph/placement.hpp) matches node constraints against the session's
// devices with these; partitioning (graph/partition.hpp) names partitions,
// control loops and Send/Recv keys after them. Plain values; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.hpp"

namespace tagflow::graph {

// A parsed device name; an unset part is unconstrained (`/device:CPU:*`
// leaves `id` unset).
struct DeviceName {
  std::optional<std::string> job;
  std::optional<int> replica;
  std::optional<int> task;
  std::optional<std::string> type;
  std::optional<int> id;

  bool empty() const { return !job && !replica && !task && !type && !id; }
  bool operator==(const DeviceName& o) const {
    return job == o.job && replica == o.replica && task == o.task && type == o.type && id == o.id;
  }
  bool operator!=(const DeviceName& o) const { return !(*this == o); }
};

// Full, partial, legacy or empty names. An error (invalid_argument) quotes
// the text and says which part is wrong.
Expected<DeviceName> parse_device_name(std::string_view text);

// The canonical text: the set parts in the order job, replica, task, device
// (`/device:CPU:*` for a type without id); "" for the empty name.
std::string full_name(const DeviceName& d);

// "CPU_1" for node and file names; parts other than type and id are added
// when they are not the defaults of one local process ("worker_t1_CPU_0").
std::string short_name(const DeviceName& d);

// Every part `spec` sets is set to the same value in `device`.
bool matches(const DeviceName& spec, const DeviceName& device);
// No part is set to different values in `a` and `b`.
bool compatible(const DeviceName& a, const DeviceName& b);
// The union of the parts of two compatible names (an error names both
// otherwise).
Expected<DeviceName> merge(const DeviceName& a, const DeviceName& b);

// The full names of CPU:0 .. CPU:n-1 of one task.
std::vector<std::string> local_devices(int n, const std::string& job = "localhost",
                                       int replica = 0, int task = 0);

}  // namespace tagflow::graph
