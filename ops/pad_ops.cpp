// Pad and PadV2: the input surrounded, along each dimension d, by
// paddings[d][0] elements before and paddings[d][1] after, all 0 (Pad; empty
// strings) or constant_values (PadV2). The output is filled with the
// constant and the input written into its interior view
// (ops/tensor_copy.hpp), so both work for every dtype, strings included.
// Signatures follow TensorFlow's core/ops/array_ops.cc.
#include <string>

#include "ops/array_ops.hpp"
#include "ops/index_args.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

Status pad(KernelContext& ctx, const char* op, const Tensor* constant) {
  const Tensor& in = ctx.input(0);
  const Tensor& paddings = ctx.input(1);
  if (!paddings.valid() || paddings.rank() != 2 || paddings.dim(1) != 2 ||
      paddings.dim(0) != in.rank())
    return Status(Error::invalid_argument,
                  std::string(op) + " paddings must be a matrix of one [before, after] row per " +
                      "dimension of the input " + in.shape().to_string() + ", got shape " +
                      paddings.shape().to_string());
  if (constant != nullptr && (!constant->valid() || constant->rank() != 0 ||
                              base_dtype(constant->dtype()) != base_dtype(in.dtype())))
    return Status(Error::invalid_argument,
                  std::string(op) + " constant_values must be a scalar of the input's dtype " +
                      dtype_name(in.dtype()) + ", got " + dtype_name(constant->dtype()) +
                      constant->shape().to_string());
  const std::string what = std::string(op) + " paddings";
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> p, read_int_values(paddings, what.c_str()));
  std::vector<int64_t> dims;
  for (int d = 0; d < in.rank(); ++d) {
    const int64_t before = p[2 * static_cast<size_t>(d)], after = p[2 * static_cast<size_t>(d) + 1];
    int64_t size = 0;
    if (before < 0 || after < 0 || __builtin_add_overflow(in.dim(d), before, &size) ||
        __builtin_add_overflow(size, after, &size))
      return Status(Error::invalid_argument, what + " " + ints_to_string(p) + ": dimension " +
                                                 std::to_string(d) + " pads by " +
                                                 std::to_string(before) + " and " +
                                                 std::to_string(after) +
                                                 "; paddings must be non-negative");
    dims.push_back(size);
  }
  Expected<Shape> shape = Shape::make(dims);
  if (!shape.ok()) return shape.status().with_prefix(std::string(op) + " output: ");
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(in.dtype(), *shape));  // zeros: Pad's value
  if (constant != nullptr) fill_elements(*constant, 0, out, 0, out.num_elements());
  const std::vector<int64_t> strides = row_major_strides(*shape);
  StridedView interior;
  for (int d = 0; d < in.rank(); ++d) {
    interior.offset += p[2 * static_cast<size_t>(d)] * strides[static_cast<size_t>(d)];
    interior.dims.push_back(in.dim(d));
    interior.strides.push_back(strides[static_cast<size_t>(d)]);
  }
  strided_scatter(in, out, interior);
  ctx.set_output(0, std::move(out));
  return ok_status();
}

Status pad_v1(KernelContext& ctx) { return pad(ctx, "Pad", nullptr); }
Status pad_v2(KernelContext& ctx) { return pad(ctx, "PadV2", &ctx.input(2)); }

}  // namespace

void register_pad_ops(OpRegistry& r) {
  register_builtin(r, OpDef("Pad").shape_fn(shape_fns::pad)
                          .input("input: T")
                          .input("paddings: Tpaddings")
                          .output("output: T")
                          .type_attr("T")
                          .type_attr("Tpaddings", index_dtypes(), DType::int32)
                          .kernel_fn(pad_v1));
  register_builtin(r, OpDef("PadV2").shape_fn(shape_fns::pad)
                          .input("input: T")
                          .input("paddings: Tpaddings")
                          .input("constant_values: T")
                          .output("output: T")
                          .type_attr("T")
                          .type_attr("Tpaddings", index_dtypes(), DType::int32)
                          .kernel_fn(pad_v2));
}

}  // namespace tagflow::ops
