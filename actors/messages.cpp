#include "actors/messages.hpp"

#include "actors/coordinator.hpp"

namespace tagflow::actors {

void add_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<ops::Tensor>("tagflow.tensor");
  cfg.add_message_type<Tag>("tagflow.tag");
  cfg.add_message_type<ValueBatch>("tagflow.value_batch");
  cfg.add_message_type<IterationReport>("tagflow.iteration_report");
  cfg.add_message_type<TransferBatch>("tagflow.transfer_batch");
  cfg.add_message_type<TransferBatches>("tagflow.transfer_batches");
  cfg.add_message_type<StepStart>("tagflow.step_start");
  cfg.add_message_type<StepResult>("tagflow.step_result");
  cfg.add_message_type<std::shared_ptr<KernelBatch>>("tagflow.kernel_batch");
  cfg.add_message_type<StepLaunch>("tagflow.step_launch");
}

}  // namespace tagflow::actors
