// ReverseV2(tensor, axis) -> output: tensor with the order of its elements
// reversed along each dimension listed in axis (negative axes count from
// the end; naming a dimension twice is an error, as in TensorFlow). It is a
// strided copy with negative strides (ops/tensor_copy.hpp), so it works for
// every dtype, strings included. ReverseV2 is its own gradient. Signature
// as in TensorFlow's core/ops/array_ops.cc; the kernel is stateless.
#include <string>

#include "ops/array_ops.hpp"
#include "ops/index_args.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

Status reverse_v2(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!x.valid()) return Status(Error::invalid_argument, "ReverseV2 tensor is missing");
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> axes, read_int_vector(ctx.input(1), "ReverseV2 axis"));
  std::vector<bool> reversed(static_cast<size_t>(x.rank()), false);
  for (int64_t a : axes) {
    TF_ASSIGN_OR_RETURN(int axis, canonical_axis(a, x.rank(), "ReverseV2 axis"));
    if (reversed[static_cast<size_t>(axis)])
      return Status(Error::invalid_argument, "ReverseV2 axis " + std::to_string(axis) +
                                                 " is named more than once in " +
                                                 ints_to_string(axes));
    reversed[static_cast<size_t>(axis)] = true;
  }
  StridedView view;
  view.dims = x.shape().dims();
  view.strides = row_major_strides(x.shape());
  for (int i = 0; i < x.rank(); ++i)
    if (reversed[static_cast<size_t>(i)] && x.dim(i) > 1) {
      view.offset += (x.dim(i) - 1) * view.strides[static_cast<size_t>(i)];
      view.strides[static_cast<size_t>(i)] = -view.strides[static_cast<size_t>(i)];
    }
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_uninitialized(x.dtype(), x.shape()));
  if (x.num_elements() > 0) strided_copy(x, view, out);
  ctx.set_output(0, std::move(out));
  return ok_status();
}

}  // namespace

void register_reverse_op(OpRegistry& r) {
  register_builtin(r, OpDef("ReverseV2").shape_fn(shape_fns::identity)
                          .input("tensor: T")
                          .input("axis: Tidx")
                          .output("output: T")
                          .type_attr("Tidx", index_dtypes(), DType::int32)
                          .type_attr("T")
                          .kernel_fn(reverse_v2));
}

}  // namespace tagflow::ops
