// Kernels of resource variables (VarHandleOp, ReadVariableOp, Assign*VariableOp,
// VarIsInitializedOp) and ref variables (VariableV2, Assign, AssignAdd,
// AssignSub, IsVariableInitialized). Both kinds name their variable by a
// handle, so both end in the same ResourceManager calls.
#include "ops/resource.hpp"
#include "ops/state_kernels.hpp"

namespace tagflow::ops::state_kernels {

namespace {

// VarHandleOp and VariableV2: declare the variable, output its handle.
class VarHandleKernel final : public Kernel {
 public:
  VarHandleKernel(std::string name, DType dtype, PartialShape shape)
      : name_(std::move(name)), handle_(make_handle(name_)), dtype_(dtype),
        shape_(std::move(shape)) {}

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 0, 1));
    TF_RETURN_IF_ERROR(rm->declare_variable(name_, dtype_, shape_));
    ctx.set_output(0, handle_);
    return ok_status();
  }

 private:
  std::string name_;
  Tensor handle_;  // shared by every call: tensors are immutable
  DType dtype_;
  PartialShape shape_;
};

class ReadVariableKernel final : public Kernel {
 public:
  explicit ReadVariableKernel(DType dtype) : dtype_(dtype) {}

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 1, 1));
    TF_ASSIGN_OR_RETURN(std::string name, handle_name(ctx.input(0), "resource"));
    TF_ASSIGN_OR_RETURN(Tensor value, rm->read_variable(name));
    if (value.dtype() != dtype_)
      return Status(Error::invalid_argument, "variable '" + name + "' holds " +
                                                 dtype_name(value.dtype()) + ", not " +
                                                 dtype_name(dtype_));
    ctx.set_output(0, std::move(value));
    return ok_status();
  }

 private:
  DType dtype_;
};

// AssignVariableOp (no output) and Assign (outputs the ref it was given).
class AssignKernel final : public Kernel {
 public:
  AssignKernel(bool validate_shape, int num_outputs)
      : validate_shape_(validate_shape), num_outputs_(num_outputs) {}

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 2, num_outputs_));
    TF_ASSIGN_OR_RETURN(std::string name, handle_name(ctx.input(0), "input 0"));
    TF_RETURN_IF_ERROR(rm->assign_variable(name, ctx.input(1), validate_shape_));
    if (num_outputs_ == 1) ctx.set_output(0, ctx.input(0));
    return ok_status();
  }

 private:
  bool validate_shape_;
  int num_outputs_;
};

Status update(KernelContext& ctx, bool subtract, int num_outputs) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 2, num_outputs));
  TF_ASSIGN_OR_RETURN(std::string name, handle_name(ctx.input(0), "input 0"));
  TF_RETURN_IF_ERROR(subtract ? rm->assign_sub(name, ctx.input(1))
                              : rm->assign_add(name, ctx.input(1)));
  if (num_outputs == 1) ctx.set_output(0, ctx.input(0));
  return ok_status();
}

}  // namespace

Made var_handle(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(std::string container, init.attr<std::string>("container"));
  TF_ASSIGN_OR_RETURN(std::string shared_name, init.attr<std::string>("shared_name"));
  TF_ASSIGN_OR_RETURN(DType dtype, init.attr<DType>("dtype"));
  TF_ASSIGN_OR_RETURN(PartialShape shape, init.attr<PartialShape>("shape"));
  std::string name = container + "/" + (shared_name.empty() ? init.node_name : shared_name);
  return std::unique_ptr<Kernel>(new VarHandleKernel(std::move(name), dtype, std::move(shape)));
}

Made read_variable(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(DType dtype, init.attr<DType>("dtype"));
  return std::unique_ptr<Kernel>(new ReadVariableKernel(dtype));
}

Made assign_variable(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(bool validate_shape, init.attr<bool>("validate_shape"));
  return std::unique_ptr<Kernel>(new AssignKernel(validate_shape, 0));
}

Made assign(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(bool validate_shape, init.attr<bool>("validate_shape"));
  return std::unique_ptr<Kernel>(new AssignKernel(validate_shape, 1));
}

Status assign_add_variable(KernelContext& ctx) { return update(ctx, false, 0); }
Status assign_sub_variable(KernelContext& ctx) { return update(ctx, true, 0); }
Status assign_add(KernelContext& ctx) { return update(ctx, false, 1); }
Status assign_sub(KernelContext& ctx) { return update(ctx, true, 1); }

Status var_is_initialized(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 1, 1));
  TF_ASSIGN_OR_RETURN(std::string name, handle_name(ctx.input(0), "input 0"));
  ctx.set_output(0, Tensor::scalar<bool>(rm->is_initialized(name)));
  return ok_status();
}

// DisableCopyOnRead: TensorFlow turns off a variable's copy-on-read mode
// (kept for sparse updates) before a saver reads it. A tagflow variable's
// value is immutable once read (writers copy a shared buffer first), so
// there is no such mode: the kernel only checks that the variable exists.
Status disable_copy_on_read(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 1, 0));
  TF_ASSIGN_OR_RETURN(std::string name, handle_name(ctx.input(0), "resource"));
  return rm->read_variable(name).status();
}

}  // namespace tagflow::ops::state_kernels
