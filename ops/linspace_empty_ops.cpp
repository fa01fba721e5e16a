// Tensors made from scalars or a shape alone:
//
// - LinSpace(start, stop, num): num evenly spaced values from start to
//   stop, both included, computed as TensorFlow does: start + i * step with
//   step = (stop - start) / (num - 1), and the last value exactly stop; num
//   = 1 gives [start]. num must be positive.
// - Empty(shape): a tensor of the dtype attr and the given shape. TensorFlow
//   leaves its contents unspecified unless init is set; here they are
//   always zero (empty strings), so init changes nothing.
//
// Signatures as in TensorFlow's core/ops/math_ops.cc and array_ops.cc.
// Kernels are stateless.
#include <string>

#include "ops/array_ops.hpp"
#include "ops/index_args.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/math_ops.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

template <class T>
Status linspace_typed(KernelContext& ctx, int64_t num) {
  const T start = ctx.input(0).scalar_value<T>();
  const T stop = ctx.input(1).scalar_value<T>();
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_uninitialized(dtype_v<T>, Shape{num}));
  T* p = out.mutable_data<T>();
  if (num == 1) {
    p[0] = start;
  } else {
    const T step = (stop - start) / static_cast<T>(num - 1);
    for (int64_t i = 0; i < num - 1; ++i) p[i] = start + step * static_cast<T>(i);
    p[num - 1] = stop;
  }
  ctx.set_output(0, std::move(out));
  return ok_status();
}

Status linspace(KernelContext& ctx) {
  static const char* const kNames[] = {"start", "stop", "num"};
  for (int i = 0; i < 3; ++i)
    if (!ctx.input(i).valid() || ctx.input(i).rank() != 0)
      return Status(Error::invalid_argument,
                    std::string("LinSpace ") + kNames[i] + " must be a scalar, got " +
                        (ctx.input(i).valid() ? "shape " + ctx.input(i).shape().to_string()
                                              : std::string("no tensor")));
  if (ctx.input(0).dtype() != ctx.input(1).dtype())
    return Status(Error::invalid_argument, "LinSpace start is " +
                                               dtype_name(ctx.input(0).dtype()) + ", stop is " +
                                               dtype_name(ctx.input(1).dtype()));
  TF_ASSIGN_OR_RETURN(int64_t num, read_int_scalar(ctx.input(2), "LinSpace num"));
  if (num <= 0)
    return Status(Error::invalid_argument,
                  "LinSpace num must be positive, got " + std::to_string(num));
  switch (base_dtype(ctx.input(0).dtype())) {
    case DType::float32: return linspace_typed<float>(ctx, num);
    case DType::float64: return linspace_typed<double>(ctx, num);
    default:
      return Status(Error::unimplemented,
                    "LinSpace has no kernel for dtype " + dtype_name(ctx.input(0).dtype()));
  }
}

class EmptyKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(dtype_, init.attr<DType>("dtype"));
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(Shape shape, shape_from_tensor(ctx.input(0), "Empty shape"));
    TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(dtype_, shape));
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  DType dtype_ = DType::invalid;
};

}  // namespace

void register_linspace_empty_ops(OpRegistry& r) {
  register_builtin(r, OpDef("LinSpace").shape_fn(shape_fns::lin_space)
                          .input("start: T")
                          .input("stop: T")
                          .input("num: Tidx")
                          .output("output: T")
                          .type_attr("T", float_types())
                          .type_attr("Tidx", index_dtypes(), DType::int32)
                          .kernel_fn(linspace));
  register_builtin(r, OpDef("Empty").shape_fn(shape_fns::from_input<0>)
                          .input("shape: int32")
                          .output("output: dtype")
                          .type_attr("dtype")
                          .attr("init", "bool", false)
                          .kernel(make_kernel_factory<EmptyKernel>()));
}

}  // namespace tagflow::ops
