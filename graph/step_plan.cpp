#include "graph/step_plan.hpp"

#include <algorithm>

#include "graph/functions/lower_functional.hpp"
#include "graph/validate.hpp"

namespace tagflow::graph {

namespace {

// A ref or a resource handle: what colocation follows.
bool names_state(DType t) { return ops::is_ref(t) || ops::base_dtype(t) == DType::resource; }

bool makes_resource(const Node& n) {
  return n.inputs.empty() && std::any_of(n.output_types.begin(), n.output_types.end(), names_state);
}

}  // namespace

Expected<std::map<std::string, std::string>> resource_devices(const Graph& g, const std::vector<std::string>& devices,
                                                             const PlacementOptions& placement, int64_t max_nodes) {
  std::map<std::string, std::string> out;
  if (devices.size() < 2) return out;
  // The whole graph with its functional ops lowered, so that the consumers
  // of a resource inside a function body (a TF 2 restore function's
  // AssignVariableOps, with the devices they were saved with) join its
  // colocation group, as TensorFlow's placer follows resource edges
  // through calls. Lowering keeps every name, and each step lowers a
  // function to the same names. A graph that cannot be lowered is placed
  // as it is (its steps say what is wrong with it).
  // A node that reads several resources (a functional node run as written,
  // any op) keeps them on one device in the unlowered graph too, where
  // lowering would spread them over the inlined bodies: `_class`
  // colocation entries on the lowered copy say so.
  std::vector<std::vector<std::string>> together;
  for (const Node& n : g.nodes()) {
    std::vector<std::string> makers;
    for (size_t i = 0; i < n.inputs.size() && i < n.input_types.size(); ++i)
      if (names_state(n.input_types[i])) makers.push_back(g.node(n.inputs[i].node).name);
    if (makers.size() > 1) together.push_back(std::move(makers));
  }
  Graph lowered = g;
  ValidateOptions v;  // (validation gives the inlined nodes their input types: resource edges)
  v.allow_unknown_ops = true;
  const bool ok = lower_functional_ops(&lowered, max_nodes).ok() && validate(lowered, v).ok();
  if (ok)
    for (const std::vector<std::string>& names : together) {
      const NodeId first = lowered.find(names[0]);
      if (first == kNoNode) continue;
      ops::AttrValue& cls = lowered.mutable_node(first).attrs["_class"];
      ops::AttrList list = cls.get_if<ops::AttrList>() != nullptr ? *cls.get_if<ops::AttrList>() : ops::AttrList{};
      for (size_t i = 1; i < names.size(); ++i) list.s.push_back("loc:@" + names[i]);
      cls = ops::AttrValue(std::move(list));
    }
  const Graph* placed_graph = ok ? &lowered : &g;
  TF_ASSIGN_OR_RETURN(DeviceAssignment placed, assign_devices(*placed_graph, devices, placement));
  for (NodeId id = 0; id < placed_graph->num_nodes(); ++id)
    if (makes_resource(placed_graph->node(id)))
      out[placed_graph->node(id).name] =
          placed.devices[static_cast<size_t>(placed.device_of[static_cast<size_t>(id)])];
  return out;
}

Expected<StepPlan> plan_step(const Graph& g, const StepSignature& step, const StepPlanOptions& options) {
  TF_ASSIGN_OR_RETURN(StepGraph sg, make_step_graph(g, step.feeds, step.fetches, step.targets, options.functions));
  StepPlan plan;
  if (!options.passes.empty()) {
    // The step graph's feeds and fetches are _Arg and _Retval nodes,
    // which every pass keeps; targets keep their names.
    optimize::OptimizeOptions oo;
    oo.keep.insert(step.targets.begin(), step.targets.end());
    oo.keep_sinks = false;
    oo.max_constant_bytes = std::min(oo.max_constant_bytes, options.max_constant_bytes);
    oo.changes = &plan.changes;
    TF_ASSIGN_OR_RETURN(sg.graph, optimize::run_passes(sg.graph, options.passes, oo));
  }
  if (options.resource_devices != nullptr && !options.resource_devices->empty()) {
    for (NodeId id = 0; id < sg.graph.num_nodes(); ++id) {
      const Node& n = sg.graph.node(id);
      if (!n.device.empty() || !makes_resource(n)) continue;
      auto it = options.resource_devices->find(n.name);
      if (it != options.resource_devices->end()) sg.graph.mutable_node(id).device = it->second;
    }
  }
  TF_ASSIGN_OR_RETURN(DeviceAssignment placed, assign_devices(sg.graph, options.devices, options.placement));
  plan.feeds = std::move(sg.feeds);
  plan.fetches = std::move(sg.fetches);
  if (placed.one_device()) {
    const std::string& device =
        placed.device_of.empty() ? options.devices[0] : placed.devices[static_cast<size_t>(placed.device_of[0])];
    plan.partitions.push_back(Partition{device, std::move(sg.graph)});
    return plan;
  }
  write_devices(placed, &sg.graph);
  TF_ASSIGN_OR_RETURN(plan.partitions, partition_graph(sg.graph, options.devices, options.mutant));
  return plan;
}

}  // namespace tagflow::graph
