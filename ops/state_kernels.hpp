// The kernels of the stateful ops, attached to their OpDefs in
// state_ops.cpp (and Abort's in control_flow_ops.cpp). Variable, queue,
// stack and TensorArray kernels work on the ResourceManager of their KernelContext
// and fail with failed_precondition when the caller gave none. Handles and
// refs are scalar resource tensors naming the resource (ops/resource.hpp).
// Like every kernel, each is immutable after creation and thread-safe.
#pragma once

#include <memory>
#include <string>

#include "ops/kernel.hpp"

namespace tagflow::ops::state_kernels {

using Made = Expected<std::unique_ptr<Kernel>>;

// An internal error unless the call has `inputs` inputs and `outputs`
// outputs (the executor sizes them from the OpDef; this guards the rest).
inline Status check_arity(const KernelContext& ctx, int inputs, int outputs) {
  if (ctx.num_inputs() == inputs && ctx.num_outputs() == outputs) return ok_status();
  return Status(Error::internal, "kernel called with " + std::to_string(ctx.num_inputs()) +
                                     " inputs and " + std::to_string(ctx.num_outputs()) +
                                     " outputs, expected " + std::to_string(inputs) + " and " +
                                     std::to_string(outputs));
}

// The session state of a call checked by check_arity; failed_precondition
// when the caller runs kernels without one.
inline Expected<ResourceManager*> session_state(const KernelContext& ctx, int inputs,
                                                int outputs) {
  TF_RETURN_IF_ERROR(check_arity(ctx, inputs, outputs));
  if (ctx.resources() == nullptr)
    return Status(Error::failed_precondition,
                  "this op needs session state (a ResourceManager), and the caller gave none");
  return ctx.resources();
}

// variable_kernels.cpp — resource variables and ref variables.
Made var_handle(const KernelInit& init);  // VarHandleOp and VariableV2
Made read_variable(const KernelInit& init);
Made assign_variable(const KernelInit& init);
Status assign_add_variable(KernelContext& ctx);
Status assign_sub_variable(KernelContext& ctx);
Status var_is_initialized(KernelContext& ctx);  // also IsVariableInitialized
Status disable_copy_on_read(KernelContext& ctx);
Made assign(const KernelInit& init);
Status assign_add(KernelContext& ctx);
Status assign_sub(KernelContext& ctx);

// scatter_kernels.cpp — row updates of ref and resource variables.
Status scatter_add(KernelContext& ctx);
Status scatter_sub(KernelContext& ctx);
Status scatter_update(KernelContext& ctx);
Status resource_scatter_add(KernelContext& ctx);
Status resource_scatter_sub(KernelContext& ctx);
Status resource_scatter_update(KernelContext& ctx);

// stack_kernels.cpp
Made stack(const KernelInit& init);
Status stack_push(KernelContext& ctx);
Made stack_pop(const KernelInit& init);
Status stack_close(KernelContext& ctx);

// tensor_array_kernels.cpp
Made tensor_array(const KernelInit& init);
Status tensor_array_write(KernelContext& ctx);
Made tensor_array_read(const KernelInit& init);
Made tensor_array_gather(const KernelInit& init);
Status tensor_array_scatter(KernelContext& ctx);
Made tensor_array_concat(const KernelInit& init);
Status tensor_array_split(KernelContext& ctx);
Status tensor_array_size(KernelContext& ctx);
Made tensor_array_grad(const KernelInit& init);
Status tensor_array_close(KernelContext& ctx);

// queue_kernels.cpp — the FIFOQueueV2 family; enqueue and dequeue may block.
Made fifo_queue(const KernelInit& init);
Made queue_enqueue(const KernelInit& init);
Made queue_enqueue_many(const KernelInit& init);
Made queue_dequeue(const KernelInit& init);
Made queue_dequeue_many(const KernelInit& init);
Made queue_close(const KernelInit& init);
Status queue_size(KernelContext& ctx);
Status queue_is_closed(KernelContext& ctx);

// assert_kernels.cpp
Made assert_op(const KernelInit& init);
Made abort_op(const KernelInit& init);

}  // namespace tagflow::ops::state_kernels
