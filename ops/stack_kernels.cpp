// Kernels of the StackV2 family. Each run of StackV2 makes a new stack that
// belongs to the step (freed by ResourceManager::end_step); push, pop and
// close name it by the handle StackV2 output. In TensorFlow's while-loop
// gradients the forward loop pushes and the gradient loop pops.
#include "ops/index_args.hpp"
#include "ops/resource.hpp"
#include "ops/state_kernels.hpp"

namespace tagflow::ops::state_kernels {

namespace {

class StackKernel final : public Kernel {
 public:
  StackKernel(std::string node_name, DType elem_type)
      : node_name_(std::move(node_name)), elem_type_(elem_type) {}

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 1, 1));
    TF_ASSIGN_OR_RETURN(int64_t max_size, read_int_scalar(ctx.input(0), "max_size"));
    ctx.set_output(0, make_handle(rm->create_stack(node_name_, ctx.step_id(), elem_type_,
                                                   max_size)));
    return ok_status();
  }

 private:
  std::string node_name_;
  DType elem_type_;
};

class StackPopKernel final : public Kernel {
 public:
  explicit StackPopKernel(DType elem_type) : elem_type_(elem_type) {}

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 1, 1));
    TF_ASSIGN_OR_RETURN(std::string name, handle_name(ctx.input(0), "stack handle"));
    TF_ASSIGN_OR_RETURN(Tensor elem, rm->pop_stack(name));
    if (elem.dtype() != elem_type_)
      return Status(Error::invalid_argument, "popped a " + dtype_name(elem.dtype()) +
                                                 " value from stack '" + name + "', not " +
                                                 dtype_name(elem_type_));
    ctx.set_output(0, std::move(elem));
    return ok_status();
  }

 private:
  DType elem_type_;
};

}  // namespace

Made stack(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(DType elem_type, init.attr<DType>("elem_type"));
  return std::unique_ptr<Kernel>(new StackKernel(init.node_name, elem_type));
}

Status stack_push(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 2, 1));
  TF_ASSIGN_OR_RETURN(std::string name, handle_name(ctx.input(0), "stack handle"));
  TF_RETURN_IF_ERROR(rm->push_stack(name, ctx.input(1)));
  ctx.set_output(0, ctx.input(1));
  return ok_status();
}

Made stack_pop(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(DType elem_type, init.attr<DType>("elem_type"));
  return std::unique_ptr<Kernel>(new StackPopKernel(elem_type));
}

Status stack_close(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 1, 0));
  TF_ASSIGN_OR_RETURN(std::string name, handle_name(ctx.input(0), "stack handle"));
  return rm->close_stack(name);
}

}  // namespace tagflow::ops::state_kernels
