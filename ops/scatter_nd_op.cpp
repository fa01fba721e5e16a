// ScatterNd(indices, updates, shape): a tensor of `shape`, zero except at the
// slices that the tuples of indices (its last dimension) name, which hold
// the sum of the updates sent there — repeated tuples add up, as in
// TensorFlow. It is GatherNd's gradient. updates has shape
// indices.shape[:-1] + shape[depth:]. A tuple outside `shape` is an error
// naming it (as TensorFlow on CPU). Integer sums wrap. Signature as in
// TensorFlow's core/ops/array_ops.cc; the kernel is stateless.
#include <string>
#include <type_traits>

#include "ops/array_ops.hpp"
#include "ops/cwise_kernel.hpp"
#include "ops/index_args.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

// a + b, wrapping for signed integers instead of overflowing.
template <class T>
T add_wrapping(T a, T b) {
  if constexpr (is_signed_int_v<T>)
    return static_cast<T>(static_cast<wrapping_t<T>>(a) + static_cast<wrapping_t<T>>(b));
  else
    return static_cast<T>(a + b);
}

Status scatter_nd(KernelContext& ctx) {
  const Tensor& indices = ctx.input(0);
  const Tensor& updates = ctx.input(1);
  TF_ASSIGN_OR_RETURN(Shape shape, shape_from_tensor(ctx.input(2), "ScatterNd shape"));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> slices,
                      nd_slice_numbers(indices, shape, "ScatterNd indices", "shape"));
  const int depth = static_cast<int>(indices.dim(indices.rank() - 1));
  std::vector<int64_t> expected = indices.shape().dims();
  expected.pop_back();
  for (int i = depth; i < shape.rank(); ++i) expected.push_back(shape.dim(i));
  if (!updates.valid() || updates.shape().dims() != expected)
    return Status(Error::invalid_argument,
                  "ScatterNd updates must have shape indices.shape[:-1] + shape[" +
                      std::to_string(depth) + ":] = " + ints_to_string(expected) +
                      " (indices " + indices.shape().to_string() + ", shape " +
                      shape.to_string() + "), got " +
                      (updates.valid() ? updates.shape().to_string() : std::string("no tensor")));
  if (shape.num_elements() == 0 && !slices.empty() && updates.num_elements() > 0)
    return Status(Error::invalid_argument,
                  "ScatterNd has indices and updates for an empty output shape " +
                      shape.to_string());
  int64_t slice = 1;
  for (int i = depth; i < shape.rank(); ++i) slice *= shape.dim(i);
  const DType dtype = updates.dtype();
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(dtype, shape));  // zeros
  bool computed = false;
  dispatch_pod(dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      computed = true;
      const T* src = updates.data<T>();
      T* dst = out.mutable_data<T>();
      for (size_t t = 0; t < slices.size(); ++t) {
        T* row = dst + slices[t] * slice;
        const T* from = src + static_cast<int64_t>(t) * slice;
        for (int64_t j = 0; j < slice; ++j) row[j] = add_wrapping(row[j], from[j]);
      }
    }
  });
  if (!computed)
    return Status(Error::unimplemented, "ScatterNd has no kernel for dtype " + dtype_name(dtype));
  ctx.set_output(0, std::move(out));
  return ok_status();
}

}  // namespace

void register_scatter_nd_op(OpRegistry& r) {
  register_builtin(r, OpDef("ScatterNd").shape_fn(shape_fns::from_input<2>)
                          .input("indices: Tindices")
                          .input("updates: T")
                          .input("shape: Tindices")
                          .output("output: T")
                          .type_attr("T")
                          .type_attr("Tindices", {DType::int16, DType::int32, DType::int64})
                          .kernel_fn(scatter_nd));
}

}  // namespace tagflow::ops
