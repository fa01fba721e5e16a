// Stateful ops: resource and ref variables with their row updates
// (Scatter*, ResourceScatter*), queues, stacks, TensorArrays and Assert.
// Their kernels (ops/state_kernels.hpp) keep per-session state in the
// ResourceManager of the KernelContext (ops/resource.hpp). Every op here is
// stateful, so graph passes never prune, merge or reorder them as if they
// were pure. Signatures follow TensorFlow's resource_variable_ops.cc,
// state_ops.cc, data_flow_ops.cc and logging_ops.cc.
#include "ops/op_def.hpp"
#include "ops/shape_fns.hpp"
#include "ops/state_kernels.hpp"

namespace tagflow::ops {

namespace {

// TensorFlow's `numbertype`.
const std::vector<DType>& number_types() {
  static const std::vector<DType> kTypes = {
      DType::float32, DType::float64,   DType::int32,   DType::uint8,      DType::int16,
      DType::int8,    DType::complex64, DType::int64,   DType::qint8,      DType::quint8,
      DType::qint32,  DType::bfloat16,  DType::qint16,  DType::quint16,    DType::uint16,
      DType::complex128, DType::half,   DType::uint32,  DType::uint64};
  return kTypes;
}

PartialShape unknown_shape() { return PartialShape{true, {}}; }

void add(OpRegistry& r, OpDef& d) { register_builtin(r, std::move(d.stateful())); }

void register_resource_variables(OpRegistry& r) {
  OpDef handle("VarHandleOp");
  handle.shape_fn(shape_fns::scalars).output("resource: resource")
      .attr("container", "string", std::string())
      .attr("shared_name", "string", std::string())
      .type_attr("dtype")
      .attr("shape", "shape")
      .attr("allowed_devices", "list(string)", AttrList{})
      .kernel(state_kernels::var_handle);
  add(r, handle);
  OpDef read("ReadVariableOp");
  read.shape_fn(shape_fns::none).input("resource: resource")
      .output("value: dtype")
      .type_attr("dtype")
      .kernel(state_kernels::read_variable);
  add(r, read);
  OpDef assign("AssignVariableOp");
  assign.shape_fn(shape_fns::none).input("resource: resource")
      .input("value: dtype")
      .type_attr("dtype")
      .attr("validate_shape", "bool", false)
      .kernel(state_kernels::assign_variable);
  add(r, assign);
  OpDef assign_add("AssignAddVariableOp");
  assign_add.shape_fn(shape_fns::none).input("resource: resource")
      .input("value: dtype")
      .type_attr("dtype")
      .kernel_fn(state_kernels::assign_add_variable);
  add(r, assign_add);
  OpDef assign_sub("AssignSubVariableOp");
  assign_sub.shape_fn(shape_fns::none).input("resource: resource")
      .input("value: dtype")
      .type_attr("dtype")
      .kernel_fn(state_kernels::assign_sub_variable);
  add(r, assign_sub);
  OpDef initialized("VarIsInitializedOp");
  initialized.shape_fn(shape_fns::scalars).input("resource: resource")
      .output("is_initialized: bool")
      .kernel_fn(state_kernels::var_is_initialized);
  add(r, initialized);
  OpDef disable_copy_on_read("DisableCopyOnRead");
  disable_copy_on_read.shape_fn(shape_fns::none)
      .input("resource: resource").kernel_fn(state_kernels::disable_copy_on_read);
  add(r, disable_copy_on_read);
}

void register_ref_variables(OpRegistry& r) {
  OpDef variable("VariableV2");
  variable.shape_fn(shape_fns::shape_attr).output("ref: Ref(dtype)")
      .attr("shape", "shape")
      .type_attr("dtype")
      .attr("container", "string", std::string())
      .attr("shared_name", "string", std::string())
      .kernel(state_kernels::var_handle);
  add(r, variable);
  OpDef assign("Assign");
  assign.shape_fn(shape_fns::assign).input("ref: Ref(T)")
      .input("value: T")
      .output("output_ref: Ref(T)")
      .type_attr("T")
      .attr("validate_shape", "bool", true)
      .attr("use_locking", "bool", true)
      .kernel(state_kernels::assign);
  add(r, assign);
  for (const char* name : {"AssignAdd", "AssignSub"}) {
    OpDef d(name);
    d.shape_fn(shape_fns::of_input<0>)
        .input("ref: Ref(T)")
        .input("value: T")
        .output("output_ref: Ref(T)")
        .type_attr("T", number_types())
        .attr("use_locking", "bool", false)
        .kernel_fn(d.name() == "AssignAdd" ? state_kernels::assign_add
                                           : state_kernels::assign_sub);
    add(r, d);
  }
  OpDef initialized("IsVariableInitialized");
  initialized.shape_fn(shape_fns::scalars).input("ref: Ref(dtype)")
      .output("is_initialized: bool")
      .type_attr("dtype")
      .kernel_fn(state_kernels::var_is_initialized);
  add(r, initialized);
}

// ScatterAdd, ScatterSub, ScatterUpdate and their resource twins.
void register_scatters(OpRegistry& r) {
  struct Scatter {
    const char* name;
    bool arithmetic;
    FunctionKernel::Fn ref_kernel;
    FunctionKernel::Fn resource_kernel;
  };
  const Scatter kScatters[] = {
      {"Add", true, state_kernels::scatter_add, state_kernels::resource_scatter_add},
      {"Sub", true, state_kernels::scatter_sub, state_kernels::resource_scatter_sub},
      {"Update", false, state_kernels::scatter_update, state_kernels::resource_scatter_update},
  };
  const std::vector<DType> index_types = {DType::int32, DType::int64};
  for (const Scatter& s : kScatters) {
    OpDef ref(std::string("Scatter") + s.name);
    ref.shape_fn(shape_fns::of_input<0>)
        .input("ref: Ref(T)")
        .input("indices: Tindices")
        .input("updates: T")
        .output("output_ref: Ref(T)")
        .type_attr("T", s.arithmetic ? number_types() : std::vector<DType>{})
        .type_attr("Tindices", index_types)
        .attr("use_locking", "bool", !s.arithmetic)
        .kernel_fn(s.ref_kernel);
    add(r, ref);
    OpDef resource(std::string("ResourceScatter") + s.name);
    resource.shape_fn(shape_fns::none)
        .input("resource: resource")
        .input("indices: Tindices")
        .input("updates: dtype")
        .type_attr("dtype", s.arithmetic ? number_types() : std::vector<DType>{})
        .type_attr("Tindices", index_types)
        .kernel_fn(s.resource_kernel);
    add(r, resource);
  }
}

void register_stacks(OpRegistry& r) {
  OpDef stack("StackV2");
  stack.shape_fn(shape_fns::scalars).input("max_size: int32")
      .output("handle: resource")
      .type_attr("elem_type")
      .attr("stack_name", "string", std::string())
      .kernel(state_kernels::stack);
  add(r, stack);
  OpDef push("StackPushV2");
  push.shape_fn(shape_fns::of_input<1>).input("handle: resource")
      .input("elem: T")
      .output("output: T")
      .type_attr("T")
      .attr("swap_memory", "bool", false)
      .kernel_fn(state_kernels::stack_push);
  add(r, push);
  OpDef pop("StackPopV2");
  pop.shape_fn(shape_fns::none).input("handle: resource")
      .output("elem: elem_type")
      .type_attr("elem_type")
      .kernel(state_kernels::stack_pop);
  add(r, pop);
  OpDef close("StackCloseV2");
  close.shape_fn(shape_fns::none).input("handle: resource").kernel_fn(state_kernels::stack_close);
  add(r, close);
}

void register_queues(OpRegistry& r) {
  OpDef fifo("FIFOQueueV2");
  fifo.shape_fn(shape_fns::scalars).output("handle: resource")
      .attr("component_types", "list(type)", std::nullopt, 1)
      .attr("shapes", "list(shape)", AttrList{})
      .attr("capacity", "int", int64_t{-1})
      .attr("container", "string", std::string())
      .attr("shared_name", "string", std::string())
      .kernel(state_kernels::fifo_queue);
  add(r, fifo);
  for (const char* name : {"QueueEnqueueV2", "QueueEnqueueManyV2"}) {
    OpDef enqueue(name);
    enqueue.shape_fn(shape_fns::none)
        .input("handle: resource")
        .input("components: Tcomponents")
        .attr("Tcomponents", "list(type)", std::nullopt, 1)
        .attr("timeout_ms", "int", int64_t{-1})
        .blocking()
        .kernel(enqueue.name() == "QueueEnqueueV2" ? state_kernels::queue_enqueue
                                                    : state_kernels::queue_enqueue_many);
    add(r, enqueue);
  }
  OpDef dequeue("QueueDequeueV2");
  dequeue.shape_fn(shape_fns::none).input("handle: resource")
      .output("components: component_types")
      .attr("component_types", "list(type)", std::nullopt, 1)
      .attr("timeout_ms", "int", int64_t{-1})
      .blocking()
      .kernel(state_kernels::queue_dequeue);
  add(r, dequeue);
  OpDef dequeue_many("QueueDequeueManyV2");
  dequeue_many.shape_fn(shape_fns::none).input("handle: resource")
      .input("n: int32")
      .output("components: component_types")
      .attr("component_types", "list(type)", std::nullopt, 1)
      .attr("timeout_ms", "int", int64_t{-1})
      .blocking()
      .kernel(state_kernels::queue_dequeue_many);
  add(r, dequeue_many);
  OpDef close("QueueCloseV2");
  close.shape_fn(shape_fns::none).input("handle: resource")
      .attr("cancel_pending_enqueues", "bool", false)
      .kernel(state_kernels::queue_close);
  add(r, close);
  OpDef size("QueueSizeV2");
  size.shape_fn(shape_fns::scalars)
      .input("handle: resource").output("size: int32").kernel_fn(state_kernels::queue_size);
  add(r, size);
  OpDef closed("QueueIsClosedV2");
  closed.shape_fn(shape_fns::scalars)
      .input("handle: resource").output("is_closed: bool").kernel_fn(state_kernels::queue_is_closed);
  add(r, closed);
}

void register_tensor_arrays(OpRegistry& r) {
  OpDef array("TensorArrayV3");
  array.shape_fn(shape_fns::tensor_array_v3).input("size: int32")
      .output("handle: resource")
      .output("flow: float")
      .type_attr("dtype")
      .attr("element_shape", "shape", unknown_shape())
      .attr("dynamic_size", "bool", false)
      .attr("clear_after_read", "bool", true)
      .attr("identical_element_shapes", "bool", false)
      .attr("tensor_array_name", "string", std::string())
      .kernel(state_kernels::tensor_array);
  add(r, array);
  OpDef grad("TensorArrayGradV3");
  grad.shape_fn(shape_fns::tensor_array_v3).input("handle: resource")
      .input("flow_in: float")
      .output("grad_handle: resource")
      .output("flow_out: float")
      .attr("source", "string")
      .kernel(state_kernels::tensor_array_grad);
  add(r, grad);
  OpDef write("TensorArrayWriteV3");
  write.shape_fn(shape_fns::scalars).input("handle: resource")
      .input("index: int32")
      .input("value: T")
      .input("flow_in: float")
      .output("flow_out: float")
      .type_attr("T")
      .kernel_fn(state_kernels::tensor_array_write);
  add(r, write);
  OpDef read("TensorArrayReadV3");
  read.shape_fn(shape_fns::none).input("handle: resource")
      .input("index: int32")
      .input("flow_in: float")
      .output("value: dtype")
      .type_attr("dtype")
      .kernel(state_kernels::tensor_array_read);
  add(r, read);
  OpDef gather("TensorArrayGatherV3");
  gather.shape_fn(shape_fns::tensor_array_gather).input("handle: resource")
      .input("indices: int32")
      .input("flow_in: float")
      .output("value: dtype")
      .type_attr("dtype")
      .attr("element_shape", "shape", unknown_shape())
      .kernel(state_kernels::tensor_array_gather);
  add(r, gather);
  OpDef scatter("TensorArrayScatterV3");
  scatter.shape_fn(shape_fns::scalars).input("handle: resource")
      .input("indices: int32")
      .input("value: T")
      .input("flow_in: float")
      .output("flow_out: float")
      .type_attr("T")
      .kernel_fn(state_kernels::tensor_array_scatter);
  add(r, scatter);
  OpDef concat("TensorArrayConcatV3");
  concat.shape_fn(shape_fns::tensor_array_concat).input("handle: resource")
      .input("flow_in: float")
      .output("value: dtype")
      .output("lengths: int64")
      .type_attr("dtype")
      .attr("element_shape_except0", "shape", unknown_shape())
      .kernel(state_kernels::tensor_array_concat);
  add(r, concat);
  OpDef split("TensorArraySplitV3");
  split.shape_fn(shape_fns::scalars).input("handle: resource")
      .input("value: T")
      .input("lengths: int64")
      .input("flow_in: float")
      .output("flow_out: float")
      .type_attr("T")
      .kernel_fn(state_kernels::tensor_array_split);
  add(r, split);
  OpDef size("TensorArraySizeV3");
  size.shape_fn(shape_fns::scalars).input("handle: resource")
      .input("flow_in: float")
      .output("size: int32")
      .kernel_fn(state_kernels::tensor_array_size);
  add(r, size);
  OpDef close("TensorArrayCloseV3");
  close.shape_fn(shape_fns::none).input("handle: resource").kernel_fn(state_kernels::tensor_array_close);
  add(r, close);
}

}  // namespace

void register_state_ops(OpRegistry& r) {
  register_resource_variables(r);
  register_ref_variables(r);
  register_scatters(r);
  register_queues(r);
  register_stacks(r);
  register_tensor_arrays(r);
  OpDef assert_op("Assert");
  assert_op.shape_fn(shape_fns::none).input("condition: bool")
      .input("data: T")
      .attr("T", "list(type)")
      .attr("summarize", "int", int64_t{3})
      .kernel(state_kernels::assert_op);
  add(r, assert_op);
  register_checkpoint_ops(r);
}

}  // namespace tagflow::ops
