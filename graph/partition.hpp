// Partitioning: splits a placed graph into one graph per device. Every
// cross-device edge (data or control) becomes a `_Send` on the source's
// device and a `_Recv` on the destination's; an Enter read on another
// device is cloned there; and every device that holds nodes of a loop spread
// over several devices gets a control loop for that frame (Enter -> Merge ->
// NextIteration -> Merge), stacked for nested loops, driven by the frame's
// continue signal: a bool live in an iteration exactly when one of the
// frame's NextIteration values is. The construction, the transfer key format
// and the argument why the partitions compute what the graph computes are in
// docs/protocol.md, "Partitioning". Pure function of its inputs; the
// partitions are validated graphs, immutable once returned.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace tagflow::graph {

struct Partition {
  std::string device;  // canonical full name
  Graph graph;
};

// `placed` must be validated and placed (graph/placement.hpp): every
// node's device is one of `devices` (full names). Returns one partition per
// device that holds nodes, in the order of `devices`. Errors name the node:
// a node on no listed device, a NextIteration and its Merge on two devices.
// Fault injection for the tests that must catch a broken distributed loop
// (the randomized split-versus-one-device test, docs/testing.md); never set
// outside tests. indicators_ignore_control_inputs: a NextIteration's live
// indicator reads its data input only, so a NextIteration made dead by a
// control input alone still keeps the continue signal live.
struct PartitionMutant {
  bool indicators_ignore_control_inputs = false;
};

Expected<std::vector<Partition>> partition_graph(const Graph& placed,
                                                 const std::vector<std::string>& devices,
                                                 const PartitionMutant& mutant = {});

// The `tensor_name` of the transfer of output `port` of node `src` (port
// kControlPort for its control output) to the device whose short name
// (graph/device.hpp) is `dst_device`: "edge_<src>_<port>_to_<dst_device>",
// with "control" for the port of a control edge.
std::string transfer_key(const std::string& src, int port, const std::string& dst_device);

}  // namespace tagflow::graph

namespace tagflow::graph {

// Graphviz .dot of the partitions: one cluster per device, control-loop
// nodes (`_cf/...`) shaded, and each `_Send` joined to its `_Recv` across
// clusters by a bold edge labelled with the key.
std::string partitions_to_dot(const std::vector<Partition>& parts);

}  // namespace tagflow::graph
