// Placement: gives every node of a graph one of the session's devices,
// honouring node `device` constraints (full, partial, legacy forms),
// colocation (`_class: loc:@x`, ref and resource inputs with their
// producer) and TensorFlow's control-flow colocation (Switch with its data
// input, Exit with its input, NextIteration with its Merge, Enter with its
// first data consumer). Nodes that must share a device form a group; a
// strategy picks among the devices a group may use. Runs once per step
// graph, before partitioning (graph/partition.hpp); see docs/protocol.md,
// "Partitioning".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph.hpp"

namespace tagflow::graph {

struct PlacementOptions {
  enum class Strategy {
    by_default,   // the first device a group may use (TensorFlow's choice on a CPU-only host)
    round_robin,  // groups in order of their lowest NodeId, cycling over their devices
    random,       // std::mt19937_64(seed), uniform over the group's devices
  };
  Strategy strategy = Strategy::by_default;
  uint64_t seed = 0;
  // A requested device type the session does not have (GPU, TPU) falls
  // back to any device (keeping job, replica and task if set).
  bool soft = true;
};

// `default`, `round-robin` or `random:SEED`; an error names the text.
Expected<PlacementOptions> parse_place_option(std::string_view text);

// Where each node goes: devices[device_of[id]].
struct DeviceAssignment {
  std::vector<std::string> devices;  // the session's devices, canonical full names
  std::vector<int> device_of;        // by NodeId
  // True if every node goes to one device (or there are none).
  bool one_device() const;
};

// Chooses a device for every node among `devices` (full names). Explicit
// constraints are always honoured. Errors (invalid_argument) name the nodes
// and devices involved: two members of a group with incompatible devices;
// a constraint no device matches. `g` must be validated (input types
// decide ref/resource colocation).
Expected<DeviceAssignment> assign_devices(const Graph& g, const std::vector<std::string>& devices,
                                          const PlacementOptions& options);

// Writes Node::device of every node: the canonical full name of its device.
void write_devices(const DeviceAssignment& placed, Graph* g);

// assign_devices, then write_devices.
Status place(Graph* g, const std::vector<std::string>& devices, const PlacementOptions& options);

}  // namespace tagflow::graph
