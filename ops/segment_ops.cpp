// Ops that place the rows of data at positions an index tensor gives, as
// gradient graphs use them to send values back where gathers took them:
//
// - UnsortedSegmentSum(data, segment_ids, num_segments): output[j] is the
//   sum of the data rows whose id is j; segment_ids' shape is a prefix of
//   data's, the rows are what remains. As TensorFlow's CPU kernel: negative
//   ids are skipped, an id >= num_segments is an error, empty segments are 0.
// - DynamicStitch(indices: N * int32, data: N * T): merged[indices[m][i]] =
//   data[m][i] for every m and i; where an index repeats, the later (m, i)
//   wins, as in TensorFlow's (serial) CPU kernel. Rows no index names are
//   zero (empty strings). Works for every dtype.
//
// Signatures follow TensorFlow's math_ops.cc and data_flow_ops.cc. Every id
// is checked before it is used; kernels are stateless.
#include <algorithm>
#include <string>

#include <Eigen/Core>

#include "ops/cwise_kernel.hpp"
#include "ops/index_args.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/math_ops.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

// The product of dims [begin, rank) of `shape`.
int64_t row_size(const Shape& shape, int begin) {
  int64_t n = 1;
  for (int i = begin; i < shape.rank(); ++i) n *= shape.dim(i);
  return n;
}

bool starts_with(const Shape& shape, const Shape& prefix) {
  if (prefix.rank() > shape.rank()) return false;
  for (int i = 0; i < prefix.rank(); ++i)
    if (shape.dim(i) != prefix.dim(i)) return false;
  return true;
}

// --- UnsortedSegmentSum ---------------------------------------------------------

template <class T>
Status unsorted_segment_sum(KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  const Tensor& ids = ctx.input(1);
  const Tensor& num = ctx.input(2);
  if (!holds<T>(data)) {
    const Tensor* inputs[] = {&data};
    return input_dtype_error("UnsortedSegmentSum", dtype_v<T>, inputs, 1);
  }
  if (num.valid() && num.rank() != 0)
    return Status(Error::invalid_argument,
                  "UnsortedSegmentSum num_segments must be a scalar, got shape " +
                      num.shape().to_string());
  TF_ASSIGN_OR_RETURN(int64_t num_segments,
                      read_int_scalar(num, "UnsortedSegmentSum num_segments"));
  if (num_segments < 0)
    return Status(Error::invalid_argument, "UnsortedSegmentSum num_segments = " +
                                               std::to_string(num_segments) +
                                               " must not be negative");
  if (!ids.valid() || !starts_with(data.shape(), ids.shape()))
    return Status(Error::invalid_argument,
                  "UnsortedSegmentSum data.shape = " + data.shape().to_string() +
                      " does not start with segment_ids.shape = " + ids.shape().to_string());
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> id, read_int_values(ids, "UnsortedSegmentSum segment_ids"));
  std::vector<int64_t> dims = {num_segments};
  for (int i = ids.rank(); i < data.rank(); ++i) dims.push_back(data.dim(i));
  Expected<Shape> shape = Shape::make(dims);
  if (!shape.ok()) return shape.status().with_prefix("UnsortedSegmentSum output: ");
  for (size_t i = 0; i < id.size(); ++i)
    if (id[i] >= num_segments)
      return Status(Error::invalid_argument,
                    "UnsortedSegmentSum segment_ids" +
                        element_index(ids.shape(), static_cast<int64_t>(i)) + " = " +
                        std::to_string(id[i]) + " is out of range [0, " +
                        std::to_string(num_segments) + ")");
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(dtype_v<T>, *shape));  // zeros
  const int64_t row = row_size(data.shape(), ids.rank());
  if (row > 0) {
    using C = wrapping_t<T>;  // integer sums wrap
    const C* in = reinterpret_cast<const C*>(elements<T>(data));
    C* acc = reinterpret_cast<C*>(out.mutable_data<T>());
    for (size_t i = 0; i < id.size(); ++i) {
      if (id[i] < 0) continue;  // skipped, as TensorFlow does
      ArrayMap<C>(acc + id[i] * row, row) += ConstArrayMap<C>(in + static_cast<int64_t>(i) * row, row);
    }
  }
  ctx.set_output(0, std::move(out));
  return ok_status();
}

KernelFactory unsorted_segment_sum_factory() {
  return [](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    DType t = init.input_types.empty() ? DType::invalid : base_dtype(init.input_types[0]);
    std::unique_ptr<Kernel> k;
    dispatch_among<float, double, int32_t, int64_t>(t, [&](auto tag) {
      k = std::make_unique<FunctionKernel>(&unsorted_segment_sum<typename decltype(tag)::type>);
    });
    if (!k) return no_kernel_error("UnsortedSegmentSum", t);
    return k;
  };
}

// --- DynamicStitch -----------------------------------------------------------

Status dynamic_stitch(KernelContext& ctx) {
  const int n = ctx.num_inputs() / 2;
  if (n < 1 || ctx.num_inputs() != 2 * n)
    return Status(Error::invalid_argument, "DynamicStitch takes N indices and N data tensors");
  std::vector<std::vector<int64_t>> indices(static_cast<size_t>(n));
  int64_t rows = 0;
  const Tensor& data0 = ctx.input(n);
  const int suffix0 = ctx.input(0).rank();
  for (int m = 0; m < n; ++m) {
    const Tensor& index = ctx.input(m);
    const Tensor& data = ctx.input(n + m);
    if (!index.valid() || !data.valid() || !starts_with(data.shape(), index.shape()))
      return Status(Error::invalid_argument,
                    "DynamicStitch data[" + std::to_string(m) + "].shape = " +
                        data.shape().to_string() + " does not start with indices[" +
                        std::to_string(m) + "].shape = " + index.shape().to_string());
    bool same_suffix = data.dtype() == data0.dtype() &&
                       data.rank() - index.rank() == data0.rank() - suffix0;
    for (int d = 0; same_suffix && d < data.rank() - index.rank(); ++d)
      same_suffix = data.dim(index.rank() + d) == data0.dim(suffix0 + d);
    if (!same_suffix)
      return Status(Error::invalid_argument,
                    "DynamicStitch data[" + std::to_string(m) + "] is " +
                        dtype_name(data.dtype()) + data.shape().to_string() + " with indices of shape " +
                        index.shape().to_string() + ", which does not match data[0], " +
                        dtype_name(data0.dtype()) + data0.shape().to_string() +
                        ", past the indices' dimensions");
    Expected<std::vector<int64_t>> v = read_int_values(index, "DynamicStitch indices");
    if (!v.ok()) return v.status();
    for (size_t i = 0; i < v->size(); ++i) {
      if ((*v)[i] < 0)
        return Status(Error::invalid_argument,
                      "DynamicStitch indices[" + std::to_string(m) + "]" +
                          element_index(index.shape(), static_cast<int64_t>(i)) + " = " +
                          std::to_string((*v)[i]) + " is negative");
      rows = std::max(rows, (*v)[i] + 1);
    }
    indices[static_cast<size_t>(m)] = std::move(*v);
  }
  std::vector<int64_t> dims = {rows};
  for (int d = suffix0; d < data0.rank(); ++d) dims.push_back(data0.dim(d));
  Expected<Shape> shape = Shape::make(dims);
  if (!shape.ok()) return shape.status().with_prefix("DynamicStitch output: ");
  TF_ASSIGN_OR_RETURN(Tensor merged, allocate_tensor(data0.dtype(), *shape));
  const int64_t row = row_size(data0.shape(), suffix0);
  for (int m = 0; m < n; ++m) {
    const std::vector<int64_t>& index = indices[static_cast<size_t>(m)];
    for (size_t i = 0; i < index.size(); ++i)
      copy_elements(ctx.input(n + m), static_cast<int64_t>(i) * row, merged, index[i] * row, row);
  }
  ctx.set_output(0, std::move(merged));
  return ok_status();
}

}  // namespace

void register_segment_ops(OpRegistry& r) {
  register_builtin(r, OpDef("UnsortedSegmentSum").shape_fn(shape_fns::unsorted_segment_sum)
                          .input("data: T")
                          .input("segment_ids: Tindices")
                          .input("num_segments: Tnumsegments")
                          .output("output: T")
                          .type_attr("T", real_types())
                          .type_attr("Tindices", index_dtypes())
                          .type_attr("Tnumsegments", index_dtypes(), DType::int32)
                          .kernel(unsorted_segment_sum_factory()));
  register_builtin(r, OpDef("DynamicStitch").shape_fn(shape_fns::dynamic_stitch)
                          .input("indices: N * int32")
                          .input("data: N * T")
                          .output("merged: T")
                          .attr("N", "int", std::nullopt, 1)
                          .type_attr("T")
                          .kernel_fn(dynamic_stitch));
}

}  // namespace tagflow::ops
