// Array ops that rearrange elements: Transpose, ConcatV2 and its inverses
// Split and SplitV, Pack, Unpack, Tile and BroadcastTo. Every kernel moves elements with ops/tensor_copy.hpp, so
// each works for every dtype, strings included. Signatures follow
// TensorFlow's core/ops/array_ops.cc.
#include <optional>
#include <string>

#include "ops/array_ops.hpp"
#include "ops/index_args.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

int64_t product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end; ++i) n *= dims[i];
  return n;
}

Status transpose(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> perm, read_int_vector(ctx.input(1), "Transpose perm"));
  const int rank = in.rank();
  if (static_cast<int>(perm.size()) != rank)
    return Status(Error::invalid_argument,
                  "Transpose perm " + ints_to_string(perm) + " has " +
                      std::to_string(perm.size()) + " entries for a tensor of shape " +
                      in.shape().to_string());
  const std::vector<int64_t> in_strides = row_major_strides(in.shape());
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  StridedView view;
  for (int64_t p : perm) {
    if (p < 0 || p >= rank)
      return Status(Error::invalid_argument, "Transpose perm " + ints_to_string(perm) + ": " +
                                                 std::to_string(p) + " is out of range [0, " +
                                                 std::to_string(rank) + ")");
    if (seen[static_cast<size_t>(p)])
      return Status(Error::invalid_argument, "Transpose perm " + ints_to_string(perm) + ": " +
                                                 std::to_string(p) + " is duplicated");
    seen[static_cast<size_t>(p)] = true;
    view.dims.push_back(in.dim(static_cast<int>(p)));
    view.strides.push_back(in_strides[static_cast<size_t>(p)]);
  }
  TF_ASSIGN_OR_RETURN(Shape shape, Shape::make(view.dims));
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(in.dtype(), shape));
  strided_copy(in, view, out);
  ctx.set_output(0, std::move(out));
  return ok_status();
}

Status concat(KernelContext& ctx) {
  const int n = ctx.num_inputs() - 1;
  TF_ASSIGN_OR_RETURN(int64_t axis_value, read_int_scalar(ctx.input(n), "ConcatV2 axis"));
  const Tensor& first = ctx.input(0);
  const int rank = first.rank();
  if (rank == 0)
    return Status(Error::invalid_argument, "ConcatV2 cannot concatenate scalars (use Pack)");
  TF_ASSIGN_OR_RETURN(int axis, canonical_axis(axis_value, rank, "ConcatV2 axis"));
  std::vector<int64_t> dims = first.shape().dims();
  int64_t total = 0;
  for (int i = 0; i < n; ++i) {
    const Tensor& t = ctx.input(i);
    bool match = t.dtype() == first.dtype() && t.rank() == rank;
    for (int d = 0; match && d < rank; ++d) match = d == axis || t.dim(d) == first.dim(d);
    if (!match)
      return Status(Error::invalid_argument,
                    "ConcatV2 input " + std::to_string(i) + " is " + dtype_name(t.dtype()) +
                        t.shape().to_string() + ", which does not match input 0, " +
                        dtype_name(first.dtype()) + first.shape().to_string() +
                        ", outside axis " + std::to_string(axis));
    total += t.dim(axis);
  }
  dims[static_cast<size_t>(axis)] = total;
  TF_ASSIGN_OR_RETURN(Shape shape, Shape::make(dims));
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(first.dtype(), shape));
  const int64_t outer = product(dims, 0, static_cast<size_t>(axis));
  const int64_t inner = product(dims, static_cast<size_t>(axis) + 1, dims.size());
  int64_t offset = 0;
  for (int64_t o = 0; o < outer; ++o) {
    for (int i = 0; i < n; ++i) {
      const int64_t run = ctx.input(i).dim(axis) * inner;
      copy_elements(ctx.input(i), o * run, out, offset, run);
      offset += run;
    }
  }
  ctx.set_output(0, std::move(out));
  return ok_status();
}

// Cuts `value` along `axis` into pieces of `sizes` (which sum to the
// dimension), one output each.
Status split_along(KernelContext& ctx, const Tensor& value, int axis,
                   const std::vector<int64_t>& sizes) {
  std::vector<int64_t> dims = value.shape().dims();
  const size_t a = static_cast<size_t>(axis);
  const int64_t outer = product(dims, 0, a);
  const int64_t inner = product(dims, a + 1, dims.size());
  const int64_t len = dims[a];
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    dims[a] = sizes[i];
    TF_ASSIGN_OR_RETURN(Shape shape, Shape::make(dims));
    TF_ASSIGN_OR_RETURN(Tensor out, allocate_uninitialized(value.dtype(), shape));
    const int64_t run = sizes[i] * inner;
    for (int64_t o = 0; o < outer && run > 0; ++o)
      copy_elements(value, (o * len + start) * inner, out, o * run, run);
    start += sizes[i];
    ctx.set_output(static_cast<int>(i), std::move(out));
  }
  return ok_status();
}

Expected<int> split_axis(const Tensor& value, const Tensor& split_dim, const char* what) {
  TF_ASSIGN_OR_RETURN(int64_t dim, read_int_scalar(split_dim, what));
  if (value.rank() == 0)
    return Status(Error::invalid_argument, std::string(what) + ": cannot split a scalar");
  return canonical_axis(dim, value.rank(), what);
}

// Split(split_dim, value): num_split equal pieces.
Status split(KernelContext& ctx) {
  const Tensor& value = ctx.input(1);
  const int num = ctx.num_outputs();
  TF_ASSIGN_OR_RETURN(int axis, split_axis(value, ctx.input(0), "Split split_dim"));
  if (num < 1 || value.dim(axis) % num != 0)
    return Status(Error::invalid_argument,
                  "Split: num_split " + std::to_string(num) + " does not evenly divide dimension " +
                      std::to_string(axis) + " of shape " + value.shape().to_string());
  return split_along(ctx, value, axis, std::vector<int64_t>(static_cast<size_t>(num),
                                                            value.dim(axis) / num));
}

// SplitV(value, size_splits, split_dim): pieces of the given sizes, one of
// which may be -1 (what the others leave).
Status split_v(KernelContext& ctx) {
  const Tensor& value = ctx.input(0);
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                      read_int_vector(ctx.input(1), "SplitV size_splits"));
  TF_ASSIGN_OR_RETURN(int axis, split_axis(value, ctx.input(2), "SplitV split_dim"));
  const std::string spec = "SplitV size_splits " + ints_to_string(sizes);
  if (static_cast<int>(sizes.size()) != ctx.num_outputs())
    return Status(Error::invalid_argument, spec + " has " + std::to_string(sizes.size()) +
                                               " entries but num_split is " +
                                               std::to_string(ctx.num_outputs()));
  const int64_t len = value.dim(axis);
  std::optional<size_t> unknown;
  int64_t sum = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1 && unknown)
      return Status(Error::invalid_argument, spec + ": only one size may be -1");
    if (sizes[i] == -1) {
      unknown = i;
    } else if (sizes[i] < 0 || __builtin_add_overflow(sum, sizes[i], &sum)) {
      return Status(Error::invalid_argument, spec + " has a negative size");
    }
  }
  if (unknown ? sum > len : sum != len)
    return Status(Error::invalid_argument,
                  spec + " sums to " + std::to_string(sum) + (unknown ? ", more than" : ", not") +
                      " the size " + std::to_string(len) + " of dimension " +
                      std::to_string(axis) + " of shape " + value.shape().to_string());
  if (unknown) sizes[*unknown] = len - sum;
  return split_along(ctx, value, axis, sizes);
}

class PackKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(axis_, init.attr<int64_t>("axis"));
    return ok_status();
  }
  Status compute(KernelContext& ctx) const override {
    const int n = ctx.num_inputs();
    const Tensor& first = ctx.input(0);
    for (int i = 1; i < n; ++i) {
      const Tensor& t = ctx.input(i);
      if (t.dtype() != first.dtype() || t.shape() != first.shape())
        return Status(Error::invalid_argument,
                      "Pack input " + std::to_string(i) + " is " + dtype_name(t.dtype()) +
                          t.shape().to_string() + ", which does not match input 0, " +
                          dtype_name(first.dtype()) + first.shape().to_string());
    }
    TF_ASSIGN_OR_RETURN(int axis, canonical_axis(axis_, first.rank() + 1, "Pack axis"));
    std::vector<int64_t> dims = first.shape().dims();
    const int64_t outer = product(dims, 0, static_cast<size_t>(axis));
    const int64_t inner = product(dims, static_cast<size_t>(axis), dims.size());
    dims.insert(dims.begin() + axis, n);
    TF_ASSIGN_OR_RETURN(Shape shape, Shape::make(dims));
    TF_ASSIGN_OR_RETURN(Tensor out, allocate_uninitialized(first.dtype(), shape));
    for (int64_t o = 0; o < outer; ++o)
      for (int i = 0; i < n; ++i)
        copy_elements(ctx.input(i), o * inner, out, (o * n + i) * inner, inner);
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  int64_t axis_ = 0;
};

class UnpackKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(axis_, init.attr<int64_t>("axis"));
    return ok_status();
  }
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = ctx.input(0);
    const int num = ctx.num_outputs();
    if (in.rank() == 0)
      return Status(Error::invalid_argument, "Unpack needs a tensor of rank >= 1, got a scalar");
    TF_ASSIGN_OR_RETURN(int axis, canonical_axis(axis_, in.rank(), "Unpack axis"));
    if (in.dim(axis) != num)
      return Status(Error::invalid_argument,
                    "Unpack of shape " + in.shape().to_string() + " along axis " +
                        std::to_string(axis) + " gives " + std::to_string(in.dim(axis)) +
                        " tensors, but num is " + std::to_string(num));
    std::vector<int64_t> dims = in.shape().dims();
    const int64_t outer = product(dims, 0, static_cast<size_t>(axis));
    const int64_t inner = product(dims, static_cast<size_t>(axis) + 1, dims.size());
    dims.erase(dims.begin() + axis);
    TF_ASSIGN_OR_RETURN(Shape shape, Shape::make(dims));
    for (int i = 0; i < num; ++i) {
      TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(in.dtype(), shape));
      for (int64_t o = 0; o < outer; ++o)
        copy_elements(in, (o * num + i) * inner, out, o * inner, inner);
      ctx.set_output(i, std::move(out));
    }
    return ok_status();
  }

 private:
  int64_t axis_ = 0;
};

// Output dim k, of size m_k * d_k, is walked as the pair (m_k, d_k) with
// source strides (0, stride_k): the view repeats the input m_k times.
Status tile(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> multiples,
                      read_int_vector(ctx.input(1), "Tile multiples"));
  const int rank = in.rank();
  if (static_cast<int>(multiples.size()) != rank)
    return Status(Error::invalid_argument,
                  "Tile multiples " + ints_to_string(multiples) + " must have one entry per " +
                      "dimension of the input shape " + in.shape().to_string());
  const std::vector<int64_t> in_strides = row_major_strides(in.shape());
  std::vector<int64_t> out_dims;
  StridedView view;
  for (int k = 0; k < rank; ++k) {
    const int64_t m = multiples[static_cast<size_t>(k)];
    if (m < 0)
      return Status(Error::invalid_argument, "Tile multiples " + ints_to_string(multiples) +
                                                 " has a negative entry");
    int64_t d = 0;
    if (__builtin_mul_overflow(in.dim(k), m, &d))
      return Status(Error::invalid_argument, "Tile output has too many elements");
    out_dims.push_back(d);
    view.dims.insert(view.dims.end(), {m, in.dim(k)});
    view.strides.insert(view.strides.end(), {0, in_strides[static_cast<size_t>(k)]});
  }
  TF_ASSIGN_OR_RETURN(Shape shape, Shape::make(out_dims));
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(in.dtype(), shape));
  strided_copy(in, view, out);
  ctx.set_output(0, std::move(out));
  return ok_status();
}

Status broadcast_to(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  TF_ASSIGN_OR_RETURN(Shape shape, shape_from_tensor(ctx.input(1), "BroadcastTo shape"));
  std::optional<StridedView> view = broadcast_view(in.shape(), shape);
  if (!view)
    return Status(Error::invalid_argument, "Unable to broadcast a tensor of shape " +
                                               in.shape().to_string() + " to shape " +
                                               shape.to_string());
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(in.dtype(), shape));
  strided_copy(in, *view, out);
  ctx.set_output(0, std::move(out));
  return ok_status();
}

}  // namespace

void register_array_layout_ops(OpRegistry& r) {
  register_builtin(r, OpDef("Transpose").shape_fn(shape_fns::transpose)
                          .input("x: T")
                          .input("perm: Tperm")
                          .output("y: T")
                          .type_attr("T")
                          .type_attr("Tperm", index_dtypes(), DType::int32)
                          .kernel_fn(transpose));
  register_builtin(r, OpDef("ConcatV2").shape_fn(shape_fns::concat_v2)
                          .input("values: N * T")
                          .input("axis: Tidx")
                          .output("output: T")
                          .attr("N", "int", std::nullopt, 2)
                          .type_attr("T")
                          .type_attr("Tidx", index_dtypes(), DType::int32)
                          .kernel_fn(concat));
  register_builtin(r, OpDef("Split").shape_fn(shape_fns::split)
                          .input("split_dim: int32")
                          .input("value: T")
                          .output("output: num_split * T")
                          .attr("num_split", "int", std::nullopt, 1)
                          .type_attr("T")
                          .kernel_fn(split));
  register_builtin(r, OpDef("SplitV").shape_fn(shape_fns::split)
                          .input("value: T")
                          .input("size_splits: Tlen")
                          .input("split_dim: int32")
                          .output("output: num_split * T")
                          .attr("num_split", "int", std::nullopt, 1)
                          .type_attr("T")
                          .type_attr("Tlen", {DType::int8, DType::int32, DType::int64}, DType::int64)
                          .kernel_fn(split_v));
  register_builtin(r, OpDef("Pack").shape_fn(shape_fns::pack)
                          .input("values: N * T")
                          .output("output: T")
                          .attr("N", "int", std::nullopt, 1)
                          .type_attr("T")
                          .attr("axis", "int", int64_t{0})
                          .kernel(make_kernel_factory<PackKernel>()));
  register_builtin(r, OpDef("Unpack").shape_fn(shape_fns::unpack)
                          .input("value: T")
                          .output("output: num * T")
                          .attr("num", "int", std::nullopt, 0)
                          .type_attr("T")
                          .attr("axis", "int", int64_t{0})
                          .kernel(make_kernel_factory<UnpackKernel>()));
  register_builtin(r, OpDef("Tile").shape_fn(shape_fns::tile)
                          .input("input: T")
                          .input("multiples: Tmultiples")
                          .output("output: T")
                          .type_attr("T")
                          .type_attr("Tmultiples", index_dtypes(), DType::int32)
                          .kernel_fn(tile));
  register_builtin(r, OpDef("BroadcastTo").shape_fn(shape_fns::from_input<1>)
                          .input("input: T")
                          .input("shape: Tidx")
                          .output("output: T")
                          .type_attr("T")
                          .type_attr("Tidx", index_dtypes(), DType::int32)
                          .kernel_fn(broadcast_to));
}

}  // namespace tagflow::ops
