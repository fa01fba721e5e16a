// Array ops that select elements by index: GatherV2 (with batch_dims), the
// legacy Gather (axis 0, no batch_dims), GatherNd (slices named by index
// tuples) and OneHot. Elements move with ops/tensor_copy.hpp, so all work
// for every dtype, strings included. An index outside its range is an error
// for the gathers (as TensorFlow on CPU; Gather's validate_indices attr is
// accepted and, as there, checking is never skipped) and yields an all-off
// row for OneHot.
// Signatures follow TensorFlow's core/ops/array_ops.cc.
#include <string>

#include "ops/array_ops.hpp"
#include "ops/index_args.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

int64_t product(const Shape& s, int begin, int end) {
  int64_t n = 1;
  for (int i = begin; i < end; ++i) n *= s.dim(i);
  return n;
}

// GatherV2, or Gather when the node has no axis input (axis 0).
class GatherKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    if (init.input_types.size() == 2) {
      op_ = "Gather";
      return ok_status();
    }
    TF_ASSIGN_OR_RETURN(batch_dims_, init.attr<int64_t>("batch_dims"));
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    const Tensor& params = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    int64_t axis_value = 0;
    if (ctx.num_inputs() == 3) {
      TF_ASSIGN_OR_RETURN(axis_value, read_int_scalar(ctx.input(2), "GatherV2 axis"));
    }
    const std::string op = op_;
    if (params.rank() == 0)
      return Status(Error::invalid_argument, op + " params must be at least a vector");
    TF_ASSIGN_OR_RETURN(int axis, canonical_axis(axis_value, params.rank(), "GatherV2 axis"));
    const int bd = static_cast<int>(batch_dims_ < 0 ? batch_dims_ + indices.rank() : batch_dims_);
    if (bd < 0 || bd > indices.rank())
      return Status(Error::invalid_argument,
                    "GatherV2 batch_dims " + std::to_string(batch_dims_) + " must be in [" +
                        std::to_string(-indices.rank()) + ", " + std::to_string(indices.rank()) +
                        "] for indices of shape " + indices.shape().to_string());
    if (bd > axis)
      return Status(Error::invalid_argument, "GatherV2 batch_dims " + std::to_string(bd) +
                                                 " must be <= axis " + std::to_string(axis));
    for (int i = 0; i < bd; ++i)
      if (params.dim(i) != indices.dim(i))
        return Status(Error::invalid_argument,
                      "GatherV2 params shape " + params.shape().to_string() +
                          " and indices shape " + indices.shape().to_string() +
                          " differ in batch dimension " + std::to_string(i));
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> index, read_int_values(indices, (op + " indices").c_str()));

    const int64_t limit = params.dim(axis);
    for (size_t i = 0; i < index.size(); ++i)
      if (index[i] < 0 || index[i] >= limit)
        return Status(Error::invalid_argument,
                      op + " indices" + element_index(indices.shape(), static_cast<int64_t>(i)) +
                          " = " + std::to_string(index[i]) + " is not in [0, " +
                          std::to_string(limit) + ")");

    std::vector<int64_t> dims;
    for (int i = 0; i < axis; ++i) dims.push_back(params.dim(i));
    for (int i = bd; i < indices.rank(); ++i) dims.push_back(indices.dim(i));
    for (int i = axis + 1; i < params.rank(); ++i) dims.push_back(params.dim(i));
    TF_ASSIGN_OR_RETURN(Shape shape, Shape::make(dims));
    TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(params.dtype(), shape));

    const int64_t batch = product(params.shape(), 0, bd);
    const int64_t outer = product(params.shape(), bd, axis);
    const int64_t inner = product(params.shape(), axis + 1, params.rank());
    const int64_t n = product(indices.shape(), bd, indices.rank());
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t o = 0; o < outer; ++o) {
        const int64_t row = b * outer + o;
        for (int64_t j = 0; j < n; ++j)
          copy_elements(params, (row * limit + index[static_cast<size_t>(b * n + j)]) * inner,
                        out, (row * n + j) * inner, inner);
      }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  const char* op_ = "GatherV2";
  int64_t batch_dims_ = 0;
};

// GatherNd: output[t] = params[indices[t]], the slice of params that the
// tuple indices[t] (the last dimension of indices) names.
Status gather_nd(KernelContext& ctx) {
  const Tensor& params = ctx.input(0);
  const Tensor& indices = ctx.input(1);
  if (!params.valid() || params.rank() < 1)
    return Status(Error::invalid_argument, "GatherNd params must be at least a vector, got " +
                                               (params.valid() ? "shape " + params.shape().to_string()
                                                               : std::string("no tensor")));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> slices,
                      nd_slice_numbers(indices, params.shape(), "GatherNd indices", "params shape"));
  const int depth = static_cast<int>(indices.dim(indices.rank() - 1));
  std::vector<int64_t> dims = indices.shape().dims();
  dims.pop_back();
  for (int i = depth; i < params.rank(); ++i) dims.push_back(params.dim(i));
  Expected<Shape> shape = Shape::make(dims);
  if (!shape.ok()) return shape.status().with_prefix("GatherNd output: ");
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_uninitialized(params.dtype(), *shape));
  const int64_t slice = product(params.shape(), depth, params.rank());
  for (size_t t = 0; t < slices.size(); ++t)
    copy_elements(params, slices[t] * slice, out, static_cast<int64_t>(t) * slice, slice);
  ctx.set_output(0, std::move(out));
  return ok_status();
}

class OneHotKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(axis_, init.attr<int64_t>("axis"));
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    const Tensor& indices = ctx.input(0);
    const Tensor& on = ctx.input(2);
    const Tensor& off = ctx.input(3);
    TF_ASSIGN_OR_RETURN(int64_t depth, read_int_scalar(ctx.input(1), "OneHot depth"));
    if (depth < 0)
      return Status(Error::invalid_argument,
                    "OneHot depth must be non-negative, got " + std::to_string(depth));
    if (!on.valid() || !off.valid() || on.rank() != 0 || off.rank() != 0 ||
        on.dtype() != off.dtype())
      return Status(Error::invalid_argument,
                    "OneHot on_value and off_value must be scalars of one dtype, got " +
                        on.debug_string(4) + " and " + off.debug_string(4));
    const int rank = indices.rank();
    if (axis_ < -1 || axis_ > rank)
      return Status(Error::invalid_argument, "OneHot axis " + std::to_string(axis_) +
                                                 " is out of range [-1, " +
                                                 std::to_string(rank) + "]");
    const int axis = axis_ == -1 ? rank : static_cast<int>(axis_);
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> index, read_int_values(indices, "OneHot indices"));

    std::vector<int64_t> dims = indices.shape().dims();
    dims.insert(dims.begin() + axis, depth);
    TF_ASSIGN_OR_RETURN(Shape shape, Shape::make(dims));
    TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(on.dtype(), shape));
    fill_elements(off, 0, out, 0, out.num_elements());
    const int64_t prefix = product(indices.shape(), 0, axis);
    const int64_t suffix = product(indices.shape(), axis, rank);
    for (int64_t p = 0; p < prefix; ++p)
      for (int64_t s = 0; s < suffix; ++s) {
        const int64_t ix = index[static_cast<size_t>(p * suffix + s)];
        if (ix >= 0 && ix < depth) fill_elements(on, 0, out, (p * depth + ix) * suffix + s, 1);
      }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  int64_t axis_ = -1;
};

}  // namespace

void register_array_gather_ops(OpRegistry& r) {
  register_builtin(r, OpDef("GatherV2").shape_fn(shape_fns::gather)
                          .input("params: Tparams")
                          .input("indices: Tindices")
                          .input("axis: Taxis")
                          .output("output: Tparams")
                          .attr("batch_dims", "int", int64_t{0})
                          .type_attr("Tparams")
                          .type_attr("Tindices", {DType::int16, DType::int32, DType::int64})
                          .type_attr("Taxis", index_dtypes())
                          .kernel(make_kernel_factory<GatherKernel>()));
  register_builtin(r, OpDef("Gather").shape_fn(shape_fns::gather)
                          .input("params: Tparams")
                          .input("indices: Tindices")
                          .output("output: Tparams")
                          .attr("validate_indices", "bool", true)
                          .type_attr("Tparams")
                          .type_attr("Tindices", index_dtypes())
                          .kernel(make_kernel_factory<GatherKernel>()));
  register_builtin(r, OpDef("GatherNd").shape_fn(shape_fns::gather_nd)
                          .input("params: Tparams")
                          .input("indices: Tindices")
                          .output("output: Tparams")
                          .type_attr("Tparams")
                          .type_attr("Tindices", {DType::int16, DType::int32, DType::int64})
                          .kernel_fn(gather_nd));
  register_builtin(r, OpDef("OneHot").shape_fn(shape_fns::one_hot)
                          .input("indices: TI")
                          .input("depth: int32")
                          .input("on_value: T")
                          .input("off_value: T")
                          .output("output: T")
                          .attr("axis", "int", int64_t{-1})
                          .type_attr("T")
                          .type_attr("TI", {DType::uint8, DType::int8, DType::int32, DType::int64},
                                     DType::int64)
                          .kernel(make_kernel_factory<OneHotKernel>()));
}

}  // namespace tagflow::ops
