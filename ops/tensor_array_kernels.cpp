// Kernels of the TensorArrayV3 family. Each run of TensorArrayV3 makes a
// new array that belongs to the step (freed by ResourceManager::end_step);
// the others name it by its handle. The float `flow` values carry no data:
// they only order the ops in the graph, so each op passes flow_in through.
#include "ops/index_args.hpp"
#include "ops/resource.hpp"
#include "ops/state_kernels.hpp"

namespace tagflow::ops::state_kernels {

namespace {

Expected<std::shared_ptr<TensorArray>> array_at(const KernelContext& ctx, ResourceManager& rm) {
  TF_ASSIGN_OR_RETURN(std::string name, handle_name(ctx.input(0), "TensorArray handle"));
  return rm.tensor_array(name);
}

Status check_dtype(const TensorArray& array, DType dtype) {
  if (array.dtype() == dtype) return ok_status();
  return Status(Error::invalid_argument, "TensorArray '" + array.name() + "' holds " +
                                             dtype_name(array.dtype()) + ", not " +
                                             dtype_name(dtype));
}

class TensorArrayKernel final : public Kernel {
 public:
  TensorArrayKernel(std::string node_name, TensorArray::Options options)
      : node_name_(std::move(node_name)), options_(std::move(options)) {}

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 1, 2));
    TF_ASSIGN_OR_RETURN(int64_t size, read_int_scalar(ctx.input(0), "size"));
    TensorArray::Options options = options_;
    options.size = size;
    TF_ASSIGN_OR_RETURN(std::string name,
                        rm->create_tensor_array(node_name_, ctx.step_id(), options));
    ctx.set_output(0, make_handle(name));
    ctx.set_output(1, Tensor::scalar<float>(0.0f));
    return ok_status();
  }

 private:
  std::string node_name_;
  TensorArray::Options options_;
};

class ReadKernel final : public Kernel {
 public:
  explicit ReadKernel(DType dtype) : dtype_(dtype) {}

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 3, 1));
    TF_ASSIGN_OR_RETURN(auto array, array_at(ctx, *rm));
    TF_RETURN_IF_ERROR(check_dtype(*array, dtype_));
    TF_ASSIGN_OR_RETURN(int64_t index, read_int_scalar(ctx.input(1), "index"));
    TF_ASSIGN_OR_RETURN(Tensor value, array->read(index));
    ctx.set_output(0, std::move(value));
    return ok_status();
  }

 private:
  DType dtype_;
};

class GatherKernel final : public Kernel {
 public:
  GatherKernel(DType dtype, PartialShape element_shape)
      : dtype_(dtype), element_shape_(std::move(element_shape)) {}

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 3, 1));
    TF_ASSIGN_OR_RETURN(auto array, array_at(ctx, *rm));
    TF_RETURN_IF_ERROR(check_dtype(*array, dtype_));
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> indices, read_int_vector(ctx.input(1), "indices"));
    TF_ASSIGN_OR_RETURN(Tensor value, array->gather(indices, element_shape_));
    ctx.set_output(0, std::move(value));
    return ok_status();
  }

 private:
  DType dtype_;
  PartialShape element_shape_;
};

class ConcatKernel final : public Kernel {
 public:
  ConcatKernel(DType dtype, PartialShape element_shape_except0)
      : dtype_(dtype), element_shape_except0_(std::move(element_shape_except0)) {}

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 2, 2));
    TF_ASSIGN_OR_RETURN(auto array, array_at(ctx, *rm));
    TF_RETURN_IF_ERROR(check_dtype(*array, dtype_));
    TF_ASSIGN_OR_RETURN(auto value_and_lengths, array->concat(element_shape_except0_));
    ctx.set_output(0, std::move(value_and_lengths.first));
    ctx.set_output(1, std::move(value_and_lengths.second));
    return ok_status();
  }

 private:
  DType dtype_;
  PartialShape element_shape_except0_;
};

class GradKernel final : public Kernel {
 public:
  explicit GradKernel(std::string source) : source_(std::move(source)) {}

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 2, 2));
    TF_ASSIGN_OR_RETURN(std::string name, handle_name(ctx.input(0), "TensorArray handle"));
    TF_ASSIGN_OR_RETURN(std::string grad, rm->tensor_array_grad(name, source_));
    ctx.set_output(0, make_handle(grad));
    ctx.set_output(1, ctx.input(1));
    return ok_status();
  }

 private:
  std::string source_;
};

}  // namespace

Made tensor_array(const KernelInit& init) {
  TensorArray::Options o;
  TF_ASSIGN_OR_RETURN(o.dtype, init.attr<DType>("dtype"));
  TF_ASSIGN_OR_RETURN(o.element_shape, init.attr<PartialShape>("element_shape"));
  TF_ASSIGN_OR_RETURN(o.dynamic_size, init.attr<bool>("dynamic_size"));
  TF_ASSIGN_OR_RETURN(o.clear_after_read, init.attr<bool>("clear_after_read"));
  TF_ASSIGN_OR_RETURN(o.identical_element_shapes, init.attr<bool>("identical_element_shapes"));
  return std::unique_ptr<Kernel>(new TensorArrayKernel(init.node_name, std::move(o)));
}

Status tensor_array_write(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 4, 1));
  TF_ASSIGN_OR_RETURN(auto array, array_at(ctx, *rm));
  TF_ASSIGN_OR_RETURN(int64_t index, read_int_scalar(ctx.input(1), "index"));
  TF_RETURN_IF_ERROR(array->write(index, ctx.input(2)));
  ctx.set_output(0, ctx.input(3));
  return ok_status();
}

Made tensor_array_read(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(DType dtype, init.attr<DType>("dtype"));
  return std::unique_ptr<Kernel>(new ReadKernel(dtype));
}

Made tensor_array_gather(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(DType dtype, init.attr<DType>("dtype"));
  TF_ASSIGN_OR_RETURN(PartialShape element_shape, init.attr<PartialShape>("element_shape"));
  return std::unique_ptr<Kernel>(new GatherKernel(dtype, std::move(element_shape)));
}

Status tensor_array_scatter(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 4, 1));
  TF_ASSIGN_OR_RETURN(auto array, array_at(ctx, *rm));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> indices, read_int_vector(ctx.input(1), "indices"));
  TF_RETURN_IF_ERROR(array->scatter(indices, ctx.input(2)));
  ctx.set_output(0, ctx.input(3));
  return ok_status();
}

Made tensor_array_concat(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(DType dtype, init.attr<DType>("dtype"));
  TF_ASSIGN_OR_RETURN(PartialShape except0, init.attr<PartialShape>("element_shape_except0"));
  return std::unique_ptr<Kernel>(new ConcatKernel(dtype, std::move(except0)));
}

Status tensor_array_split(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 4, 1));
  TF_ASSIGN_OR_RETURN(auto array, array_at(ctx, *rm));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> lengths, read_int_vector(ctx.input(2), "lengths"));
  TF_RETURN_IF_ERROR(array->split(ctx.input(1), lengths));
  ctx.set_output(0, ctx.input(3));
  return ok_status();
}

Status tensor_array_size(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 2, 1));
  TF_ASSIGN_OR_RETURN(auto array, array_at(ctx, *rm));
  TF_ASSIGN_OR_RETURN(int64_t size, array->size());
  ctx.set_output(0, Tensor::scalar<int32_t>(static_cast<int32_t>(size)));
  return ok_status();
}

Made tensor_array_grad(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(std::string source, init.attr<std::string>("source"));
  return std::unique_ptr<Kernel>(new GradKernel(std::move(source)));
}

Status tensor_array_close(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 1, 0));
  TF_ASSIGN_OR_RETURN(std::string name, handle_name(ctx.input(0), "TensorArray handle"));
  return rm->close_tensor_array(name);
}

}  // namespace tagflow::ops::state_kernels
