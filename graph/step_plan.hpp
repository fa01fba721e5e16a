// The step compiler: from a session's registered graph and one step's
// signature (feeds, fetches, targets) to what each device runs — the step
// graph (pruned, functional ops lowered where they must be, pruned again),
// the optimiser's passes, resource-making nodes pinned where the session
// keeps their resources, placement, and the partitions with their
// Send/Recv pairs and control loops. Pure graph/ code, the one pipeline of
// every caller: a Session's prepared steps, `tagflow partition` and the
// import fuzzers (the benchmarks run sessions, or time the pipeline's
// pieces on purpose) (docs/protocol.md, "Partitioning").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/optimize/optimizer.hpp"
#include "graph/partition.hpp"
#include "graph/placement.hpp"
#include "graph/step_graph.hpp"

namespace tagflow::graph {

inline namespace functions {
class FunctionInstantiator;
}  // namespace functions

struct StepSignature {
  std::vector<std::string> feeds;    // "name[:port]"
  std::vector<std::string> fetches;  // "name[:port]"
  std::vector<std::string> targets;  // node names
};

struct StepPlanOptions {
  std::vector<std::string> devices;  // the session's devices, full names
  PlacementOptions placement;
  std::vector<const optimize::Pass*> passes;  // none: the graph as the step needs it
  int64_t max_constant_bytes = int64_t{10} << 20;  // no folded constant larger
  // Lowers what cannot run as written (graph/functions/function_instantiator.hpp);
  // nullptr: a graph without functional ops.
  FunctionInstantiator* functions = nullptr;
  // node name -> device for nodes that make a resource (resource_devices);
  // nullptr: placed with the step's other nodes.
  const std::map<std::string, std::string>* resource_devices = nullptr;
  PartitionMutant mutant;  // tests only
};

struct StepPlan {
  std::vector<DeclaredOutput> feeds;  // by feed index (the _Arg index)
  std::vector<std::string> fetches;   // by fetch index (the _Retval index)
  std::vector<optimize::Change> changes;  // what the passes did, in order
  // One per device that runs something, in the order of the devices. A
  // step wholly on one device keeps its nodes' device fields as written
  // (its graph shares every node the step does not change with `g`).
  std::vector<Partition> partitions;
};

// `g` must be registered as a session registers it (validated, attrs
// inferred). Errors are make_step_graph's, the passes', placement's and
// partitioning's, each naming its node.
Expected<StepPlan> plan_step(const Graph& g, const StepSignature& step, const StepPlanOptions& options);

// Where the whole of `g`, its functional ops lowered, placed on `devices`
// puts each node that makes a resource (a variable, stack, TensorArray: no
// inputs, a ref or resource output), with the consumers of each in its
// colocation group through calls and function bodies, as TensorFlow's
// placer groups them. A session pins these for all its steps, so that
// every step finds a variable where the first one left it. Empty for one
// device.
Expected<std::map<std::string, std::string>> resource_devices(const Graph& g, const std::vector<std::string>& devices,
                                                             const PlacementOptions& placement,
                                                             int64_t max_nodes = 0);

}  // namespace tagflow::graph
