#include "actors/execution_plan.hpp"

namespace tagflow::actors {

PartitionPlan plan_partition(const Executable& exec, bool shortcuts) {
  PartitionPlan p;
  p.root_inline = shortcuts && !exec.has_control_flow();
  p.frame_runs_iterations.resize(static_cast<size_t>(exec.num_frames()), false);
  for (int f = 0; f < exec.num_frames(); ++f)
    p.frame_runs_iterations[static_cast<size_t>(f)] = shortcuts && exec.frame(f).runs_iterations;
  return p;
}

ExecutionPlan plan_execution(const std::vector<std::shared_ptr<const Executable>>& partitions, bool remote,
                             const ExecutionPolicy& policy) {
  ExecutionPlan plan;
  for (const auto& exec : partitions) plan.partitions.push_back(plan_partition(*exec, policy.shortcuts));
  if (partitions.size() == 1 && !remote && policy.shortcuts && !policy.events && !policy.deterministic &&
      !policy.timeout) {
    const Executable& only = *partitions.front();
    plan.on_callers_thread =
        !only.has_control_flow() && !only.has_recvs() && only.num_expensive() <= 1 && only.num_blocking() == 0;
  }
  return plan;
}

}  // namespace tagflow::actors
