// The Optional ops of TensorFlow (dataset_ops.cc / optional_ops.cc):
// OptionalFromValue, OptionalNone, OptionalHasValue, OptionalGetValue.
// An optional is a scalar variant tensor holding an OptionalValue
// (ops/variant.hpp); getting the value of none is an error, as are
// components whose dtypes or shapes differ from the op's attrs.
// Kernels are immutable after creation.
#include <fmt/format.h>

#include "ops/array_ops.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/shape_fns.hpp"
#include "ops/variant.hpp"

namespace tagflow::ops {

namespace {

Status optional_from_value(KernelContext& ctx) {
  std::vector<Tensor> components;
  components.reserve(static_cast<size_t>(ctx.num_inputs()));
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.input(i).valid())
      return Status(Error::invalid_argument, fmt::format("component {} is an invalid tensor", i));
    components.push_back(ctx.input(i));
  }
  ctx.set_output(0, variant_scalar(std::make_shared<OptionalValue>(std::move(components))));
  return ok_status();
}

Status optional_none(KernelContext& ctx) {
  ctx.set_output(0, variant_scalar(std::make_shared<OptionalValue>()));
  return ok_status();
}

Status optional_has_value(KernelContext& ctx) {
  TF_ASSIGN_OR_RETURN(const OptionalValue* o, optional_of(ctx.input(0)));
  ctx.set_output(0, Tensor::scalar<bool>(o->has_value));
  return ok_status();
}

class OptionalGetValueKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(AttrList types, init.attr<AttrList>("output_types"));
    TF_ASSIGN_OR_RETURN(AttrList shapes, init.attr<AttrList>("output_shapes"));
    types_ = types.type;
    shapes_ = shapes.shape;
    if (shapes_.size() != types_.size())
      return Status(Error::invalid_argument, fmt::format("output_types has {} entries but output_shapes {}",
                                                         types_.size(), shapes_.size()));
    return ok_status();
  }
  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(const OptionalValue* o, optional_of(ctx.input(0)));
    if (!o->has_value) return Status(Error::invalid_argument, "the optional has no value");
    if (o->components.size() != types_.size())
      return Status(Error::invalid_argument, fmt::format("the optional has {} components, output_types {}",
                                                         o->components.size(), types_.size()));
    for (size_t i = 0; i < types_.size(); ++i) {
      const Tensor& c = o->components[i];
      if (c.dtype() != types_[i])
        return Status(Error::invalid_argument, fmt::format("component {} of the optional is {}, output_types says {}",
                                                           i, dtype_name(c.dtype()), dtype_name(types_[i])));
      if (!shape_compatible(shapes_[i], c.shape()))
        return Status(Error::invalid_argument,
                      fmt::format("component {} of the optional has shape {}, output_shapes says {}", i,
                                  c.shape().to_string(), shapes_[i].to_string()));
    }
    for (size_t i = 0; i < types_.size(); ++i) ctx.set_output(static_cast<int>(i), o->components[i]);
    return ok_status();
  }

 private:
  std::vector<DType> types_;
  std::vector<PartialShape> shapes_;
};

}  // namespace

void register_optional_ops(OpRegistry& r) {
  register_builtin(r, OpDef("OptionalFromValue").shape_fn(shape_fns::scalars)
                          .input("components: Toutput_types")
                          .output("optional: variant")
                          .attr("Toutput_types", "list(type)", std::nullopt, 1)
                          .kernel_fn(optional_from_value));
  register_builtin(r, OpDef("OptionalNone").shape_fn(shape_fns::scalars)
                          .output("optional: variant").kernel_fn(optional_none));
  register_builtin(r, OpDef("OptionalHasValue").shape_fn(shape_fns::scalars)
                          .input("optional: variant")
                          .output("has_value: bool")
                          .kernel_fn(optional_has_value));
  register_builtin(r, OpDef("OptionalGetValue").shape_fn(shape_fns::optional_get_value)
                          .input("optional: variant")
                          .output("components: output_types")
                          .attr("output_types", "list(type)", std::nullopt, 1)
                          .attr("output_shapes", "list(shape)", std::nullopt, 1)
                          .kernel(make_kernel_factory<OptionalGetValueKernel>()));
}

}  // namespace tagflow::ops
