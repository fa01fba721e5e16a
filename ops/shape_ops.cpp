// Ops that compute on shapes rather than on elements: Shape, ShapeN, Size,
// Rank, and the shape arithmetic of gradient graphs — BroadcastGradientArgs
// (which dimensions a broadcast operand's gradient sums over),
// ConcatOffset (where each ConcatV2 input starts) and InvertPermutation (the
// perm that undoes a Transpose). Signatures follow TensorFlow's
// core/ops/array_ops.cc. Stateless kernels; every index is checked before
// it is used.
#include <algorithm>
#include <limits>
#include <string>

#include "ops/array_ops.hpp"
#include "ops/index_args.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

// --- Shape, ShapeN, Size, Rank ---------------------------------------------

// Writes integer values as the int32 or int64 output a node declares.
Expected<Tensor> int_tensor(DType dtype, const Shape& shape, const std::vector<int64_t>& values,
                            const char* op) {
  TF_ASSIGN_OR_RETURN(Tensor t, allocate_tensor(dtype, shape));
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::int32) {
      if (values[i] > std::numeric_limits<int32_t>::max())
        return Status(Error::invalid_argument,
                      std::string(op) + " value " + std::to_string(values[i]) +
                          " does not fit its int32 output; use out_type int64");
      t.mutable_data<int32_t>()[i] = static_cast<int32_t>(values[i]);
    } else {
      t.mutable_data<int64_t>()[i] = values[i];
    }
  }
  return t;
}

// Shape, ShapeN (output i describes input i) and Size: the output dtype is
// the node's out_type.
template <bool kSize>
class ShapeKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    if (init.output_types.size() != init.input_types.size() || init.output_types.empty())
      return Status(Error::invalid_argument, "Shape, ShapeN and Size have an output per input");
    out_type_ = base_dtype(init.output_types[0]);
    return ok_status();
  }
  Status compute(KernelContext& ctx) const override {
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& in = ctx.input(i);
      Expected<Tensor> out =
          kSize ? int_tensor(out_type_, Shape{}, {in.num_elements()}, "Size")
                : int_tensor(out_type_, Shape{in.rank()}, in.shape().dims(), "Shape");
      if (!out.ok()) return out.status();
      ctx.set_output(i, std::move(*out));
    }
    return ok_status();
  }

 private:
  DType out_type_ = DType::int32;
};

Status rank(KernelContext& ctx) {
  ctx.set_output(0, Tensor::scalar<int32_t>(ctx.input(0).rank()));
  return ok_status();
}

// --- BroadcastGradientArgs -----------------------------------------------------

// The dimensions of the broadcast shape of s0 and s1 that each operand's
// gradient is summed over, as TensorFlow's BCast computes them: aligned at
// the last dimension (missing leading dimensions count as 1), an operand
// reduces where its dimension is 1 and the other's is not, and both reduce
// where both are 1. Equal shapes reduce over nothing.
Status broadcast_gradient_args(KernelContext& ctx) {
  std::vector<int64_t> s[2];
  for (int i = 0; i < 2; ++i) {
    const Tensor& t = ctx.input(i);
    if (t.valid() && t.rank() > 1)
      return Status(Error::invalid_argument,
                    "BroadcastGradientArgs s" + std::to_string(i) +
                        " must be a vector, got shape " + t.shape().to_string());
    TF_ASSIGN_OR_RETURN(s[i], read_int_values(t, i == 0 ? "BroadcastGradientArgs s0"
                                                         : "BroadcastGradientArgs s1"));
  }
  std::vector<int64_t> r[2];
  if (s[0] != s[1]) {
    const size_t n = std::max(s[0].size(), s[1].size());
    for (size_t d = 0; d < n; ++d) {
      int64_t dim[2];
      for (int i = 0; i < 2; ++i) {
        const size_t missing = n - s[i].size();
        dim[i] = d < missing ? 1 : s[i][d - missing];
      }
      if (dim[0] != dim[1] && dim[0] != 1 && dim[1] != 1)
        return Status(Error::invalid_argument,
                      "BroadcastGradientArgs: incompatible shapes for broadcasting: " +
                          ints_to_string(s[0]) + " and " + ints_to_string(s[1]));
      for (int i = 0; i < 2; ++i)
        if (dim[i] == 1) r[i].push_back(static_cast<int64_t>(d));
    }
  }
  for (int i = 0; i < 2; ++i) {
    TF_ASSIGN_OR_RETURN(Tensor out, int_tensor(base_dtype(ctx.input(i).dtype()),
                                               Shape{static_cast<int64_t>(r[i].size())}, r[i],
                                               "BroadcastGradientArgs"));
    ctx.set_output(i, std::move(out));
  }
  return ok_status();
}

// --- ConcatOffset ------------------------------------------------------------------

// The offset of each of N shapes in their concatenation along concat_dim:
// zero except along concat_dim, where it is the sum of the sizes before.
Status concat_offset(KernelContext& ctx) {
  if (ctx.input(0).valid() && ctx.input(0).rank() != 0)
    return Status(Error::invalid_argument, "ConcatOffset concat_dim must be a scalar, got shape " +
                                               ctx.input(0).shape().to_string());
  TF_ASSIGN_OR_RETURN(int64_t concat_dim, read_int_scalar(ctx.input(0), "ConcatOffset concat_dim"));
  const int n = ctx.num_inputs() - 1;
  std::vector<std::vector<int64_t>> shapes(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    Expected<std::vector<int64_t>> v = read_int_vector(ctx.input(i + 1), "ConcatOffset shape");
    if (!v.ok()) return v.status().with_prefix("input " + std::to_string(i) + ": ");
    shapes[static_cast<size_t>(i)] = std::move(*v);
  }
  const std::vector<int64_t>& first = shapes[0];
  const int rank = static_cast<int>(first.size());
  TF_ASSIGN_OR_RETURN(int axis, canonical_axis(concat_dim, rank, "ConcatOffset concat_dim"));
  int64_t offset = 0;
  for (int i = 0; i < n; ++i) {
    const std::vector<int64_t>& shape = shapes[static_cast<size_t>(i)];
    bool match = shape.size() == first.size();
    for (int d = 0; match && d < rank; ++d)
      match = d == axis || shape[static_cast<size_t>(d)] == first[static_cast<size_t>(d)];
    if (!match)
      return Status(Error::invalid_argument,
                    "ConcatOffset: all dimensions except " + std::to_string(axis) +
                        " must match: input " + std::to_string(i) + " has shape " +
                        ints_to_string(shape) + " and input 0 has shape " + ints_to_string(first));
    std::vector<int64_t> out(first.size(), 0);
    out[static_cast<size_t>(axis)] = offset;
    offset += shape[static_cast<size_t>(axis)];
    TF_ASSIGN_OR_RETURN(Tensor t, int_tensor(DType::int32, Shape{rank}, out, "ConcatOffset"));
    ctx.set_output(i, std::move(t));
  }
  return ok_status();
}

// --- InvertPermutation -----------------------------------------------------------

// y[x[i]] = i for a permutation x of 0..n-1.
template <class T>
Status invert_permutation_typed(const Tensor& x, Tensor& y) {
  const T* p = x.data<T>();
  T* q = y.mutable_data<T>();
  const int64_t n = x.num_elements();
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = static_cast<int64_t>(p[i]);
    if (d < 0 || d >= n)
      return Status(Error::invalid_argument, "InvertPermutation: " + std::to_string(d) +
                                                 " is not between 0 and " + std::to_string(n));
    if (seen[static_cast<size_t>(d)])
      return Status(Error::invalid_argument,
                    "InvertPermutation: " + std::to_string(d) + " is duplicated in the input");
    seen[static_cast<size_t>(d)] = true;
    q[d] = static_cast<T>(i);
  }
  return ok_status();
}

Status invert_permutation(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!x.valid() || x.rank() != 1)
    return Status(Error::invalid_argument, "InvertPermutation expects a vector, got shape " +
                                               x.shape().to_string());
  const DType t = base_dtype(x.dtype());
  if (t != DType::int32 && t != DType::int64)
    return Status(Error::invalid_argument,
                  "InvertPermutation expects int32 or int64, got " + dtype_name(x.dtype()));
  if (t == DType::int32 && x.num_elements() > std::numeric_limits<int32_t>::max())
    return Status(Error::invalid_argument, "InvertPermutation: an int32 permutation has at most "
                                           "2^31 - 1 elements");
  TF_ASSIGN_OR_RETURN(Tensor y, allocate_uninitialized(t, x.shape()));
  TF_RETURN_IF_ERROR(t == DType::int32 ? invert_permutation_typed<int32_t>(x, y)
                                       : invert_permutation_typed<int64_t>(x, y));
  ctx.set_output(0, std::move(y));
  return ok_status();
}

}  // namespace

void register_shape_ops(OpRegistry& r) {
  register_builtin(r, OpDef("Shape").shape_fn(shape_fns::shape_of)
                          .input("input: T")
                          .output("output: out_type")
                          .type_attr("T")
                          .type_attr("out_type", index_dtypes(), DType::int32)
                          .kernel(make_kernel_factory<ShapeKernel<false>>()));
  register_builtin(r, OpDef("Size").shape_fn(shape_fns::size)
                          .input("input: T")
                          .output("output: out_type")
                          .type_attr("T")
                          .type_attr("out_type", index_dtypes(), DType::int32)
                          .kernel(make_kernel_factory<ShapeKernel<true>>()));
  register_builtin(r, OpDef("Rank").shape_fn(shape_fns::rank)
                          .input("input: T")
                          .output("output: int32")
                          .type_attr("T")
                          .kernel_fn(rank));
  register_builtin(r, OpDef("ShapeN").shape_fn(shape_fns::shape_of)
                          .input("input: N * T")
                          .output("output: N * out_type")
                          .attr("N", "int", std::nullopt, 1)
                          .type_attr("T")
                          .type_attr("out_type", index_dtypes(), DType::int32)
                          .kernel(make_kernel_factory<ShapeKernel<false>>()));
  register_builtin(r, OpDef("BroadcastGradientArgs").shape_fn(shape_fns::broadcast_gradient_args)
                          .input("s0: T")
                          .input("s1: T")
                          .output("r0: T")
                          .output("r1: T")
                          .type_attr("T", index_dtypes(), DType::int32)
                          .kernel_fn(broadcast_gradient_args));
  register_builtin(r, OpDef("ConcatOffset").shape_fn(shape_fns::concat_offset)
                          .input("concat_dim: int32")
                          .input("shape: N * int32")
                          .output("offset: N * int32")
                          .attr("N", "int", std::nullopt, 2)
                          .kernel_fn(concat_offset));
  register_builtin(r, OpDef("InvertPermutation").shape_fn(shape_fns::unary)
                          .input("x: T")
                          .output("y: T")
                          .type_attr("T", index_dtypes(), DType::int32)
                          .kernel_fn(invert_permutation));
}

}  // namespace tagflow::ops
