// Slice, StridedSlice and StridedSliceGrad. Each reduces to one strided view
// of a tensor (ops/tensor_copy.hpp), so they work for every dtype, strings
// included: Slice and StridedSlice copy the view out of their input,
// StridedSliceGrad writes dy into the same view of zeros. The strided view
// follows TensorFlow's ValidateStridedSliceOp exactly: the user's "sparse"
// spec (begin/end/strides plus the five masks) is expanded into a "dense"
// spec with one entry per input dimension, each entry is canonicalised
// (negative indices, clamping, masks), and the final shape re-inserts new
// axes and drops shrunk ones.
#include <algorithm>
#include <string>

#include "ops/array_ops.hpp"
#include "ops/index_args.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

Status slice(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> begin, read_int_vector(ctx.input(1), "Slice begin"));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> size, read_int_vector(ctx.input(2), "Slice size"));
  const int rank = in.rank();
  if (static_cast<int>(begin.size()) != rank || static_cast<int>(size.size()) != rank)
    return Status(Error::invalid_argument,
                  "Slice begin " + ints_to_string(begin) + " and size " + ints_to_string(size) +
                      " must have one entry per dimension of the input shape " +
                      in.shape().to_string());
  const std::vector<int64_t> in_strides = row_major_strides(in.shape());
  StridedView view;
  for (int i = 0; i < rank; ++i) {
    const size_t k = static_cast<size_t>(i);
    const int64_t dim = in.dim(i);
    if (begin[k] < 0 || begin[k] > dim)
      return Status(Error::invalid_argument,
                    "Slice of shape " + in.shape().to_string() + ": begin[" + std::to_string(i) +
                        "] = " + std::to_string(begin[k]) + " is not in [0, " +
                        std::to_string(dim) + "]");
    const int64_t n = size[k] == -1 ? dim - begin[k] : size[k];
    if (n < 0 || n > dim - begin[k])
      return Status(Error::invalid_argument,
                    "Slice of shape " + in.shape().to_string() + ": size[" + std::to_string(i) +
                        "] = " + std::to_string(size[k]) + " is not in [0, " +
                        std::to_string(dim - begin[k]) + "] (or -1)");
    view.offset += begin[k] * in_strides[k];
    view.dims.push_back(n);
    view.strides.push_back(in_strides[k]);
  }
  TF_ASSIGN_OR_RETURN(Shape shape, Shape::make(view.dims));
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(in.dtype(), shape));
  strided_copy(in, view, out);
  ctx.set_output(0, std::move(out));
  return ok_status();
}

struct SliceMasks {
  uint64_t begin = 0, end = 0, ellipsis = 0, new_axis = 0, shrink_axis = 0;
};

bool bit(uint64_t mask, int i) { return i < 64 && ((mask >> i) & 1u) != 0; }

// One entry per input dimension.
struct DenseSpec {
  std::vector<int64_t> begin, end, strides;
  uint64_t begin_mask = 0, end_mask = 0, shrink_axis_mask = 0;
  // Per output dimension: the input dimension it comes from, or kNewAxis;
  // shrunk dimensions have no entry.
  std::vector<int> final_dims_from;
};
constexpr int kNewAxis = -1;

// The largest begin/end/strides length: the masks are 64-bit attrs and one
// bit is kept free for the implicit trailing ellipsis.
constexpr size_t kMaxSparseDims = 63;

Expected<DenseSpec> build_dense_spec(int rank, const std::vector<int64_t>& begin,
                                     const std::vector<int64_t>& end,
                                     const std::vector<int64_t>& strides, SliceMasks m) {
  int sparse_dims = static_cast<int>(begin.size());
  int new_axes_after_ellipsis = 0;
  bool ellipsis_seen = false;
  for (int i = 0; i < sparse_dims; ++i) {
    if (ellipsis_seen && bit(m.new_axis, i)) ++new_axes_after_ellipsis;
    if (bit(m.ellipsis, i)) {
      if (ellipsis_seen)
        return Status(Error::invalid_argument,
                      "StridedSlice: multiple ellipses in the slice spec are not allowed");
      ellipsis_seen = true;
    }
  }
  // Without an ellipsis, an implicit one at the end keeps the rest whole.
  if (!ellipsis_seen) m.ellipsis |= uint64_t{1} << sparse_dims++;

  DenseSpec d;
  d.begin.assign(static_cast<size_t>(rank), 0);
  d.end.assign(static_cast<size_t>(rank), 0);
  d.strides.assign(static_cast<size_t>(rank), 1);
  int full = 0;
  for (int i = 0; i < sparse_dims; ++i) {
    if (bit(m.ellipsis, i)) {
      const int next = std::min(rank - (sparse_dims - i) + 1 + new_axes_after_ellipsis, rank);
      for (; full < next; ++full) {
        d.begin_mask |= uint64_t{1} << full;
        d.end_mask |= uint64_t{1} << full;
        d.final_dims_from.push_back(full);
      }
    } else if (bit(m.new_axis, i)) {
      d.final_dims_from.push_back(kNewAxis);
    } else {
      if (full == rank)
        return Status(Error::invalid_argument,
                      "StridedSlice: index out of range using input dim " + std::to_string(full) +
                          "; the input has only " + std::to_string(rank) + " dims");
      const size_t s = static_cast<size_t>(i), f = static_cast<size_t>(full);
      d.begin[f] = begin[s];
      d.end[f] = end[s];
      d.strides[f] = strides[s];
      if (bit(m.begin, i)) d.begin_mask |= uint64_t{1} << full;
      if (bit(m.end, i)) d.end_mask |= uint64_t{1} << full;
      if (bit(m.shrink_axis, i)) d.shrink_axis_mask |= uint64_t{1} << full;
      else d.final_dims_from.push_back(full);
      ++full;
    }
  }
  return d;
}

// Fills view (offset, per-input-dim sizes and strides) from the dense spec.
Status canonicalize(const Shape& shape, const DenseSpec& d, StridedView& view) {
  const std::vector<int64_t> in_strides = row_major_strides(shape);
  for (int i = 0; i < shape.rank(); ++i) {
    const size_t k = static_cast<size_t>(i);
    const int64_t dim = shape.dim(i);
    const int64_t stride = d.strides[k];
    const bool shrink = bit(d.shrink_axis_mask, i);
    if (stride == 0)
      return Status(Error::invalid_argument,
                    "StridedSlice: strides[" + std::to_string(i) + "] must be non-zero");
    if (shrink && stride <= 0)
      return Status(Error::invalid_argument,
                    "StridedSlice: only stride 1 is allowed on a shrunk (indexed) dimension " +
                        std::to_string(i));
    int64_t b = 0, e = 0;
    if (shrink) {
      const int64_t x = d.begin[k] < 0 ? dim + d.begin[k] : d.begin[k];
      if (x < 0 || x >= dim)
        return Status(Error::invalid_argument,
                      "StridedSlice: index " + std::to_string(d.begin[k]) + " of dimension " +
                          std::to_string(i) + " is out of bounds for size " +
                          std::to_string(dim));
      b = x;
      e = x + 1;
    } else {
      // Valid positions: [0, dim] going forward, [-1, dim - 1] going back.
      const int64_t lo = stride > 0 ? 0 : -1;
      const int64_t hi = stride > 0 ? dim : dim - 1;
      auto place = [&](int64_t x, bool masked, bool is_begin) {
        if (masked) return (stride > 0) == is_begin ? lo : hi;
        const int64_t fwd = x < 0 ? dim + x : x;
        return fwd < lo ? lo : fwd > hi ? hi : fwd;
      };
      b = place(d.begin[k], bit(d.begin_mask, i), true);
      e = place(d.end[k], bit(d.end_mask, i), false);
    }
    const int64_t interval = e - b;
    int64_t size = 0;
    if (interval != 0 && (interval < 0) == (stride < 0))
      size = interval / stride + (interval % stride != 0 ? 1 : 0);
    view.offset += b * in_strides[k];
    view.dims.push_back(size);
    // A dim of size <= 1 never steps, and its stride may be huge.
    view.strides.push_back(size > 1 ? stride * in_strides[k] : 0);
  }
  return ok_status();
}

// What StridedSlice takes from a tensor of `shape`: the strided view and the
// output shape (new axes added, shrunk dimensions dropped).
struct StridedSlicing {
  StridedView view;
  Shape output;
};

// Reads begin, end and strides (inputs first..first+2) and computes the
// slicing of `shape` as TensorFlow's ValidateStridedSliceOp does.
Expected<StridedSlicing> strided_slicing(KernelContext& ctx, int first, const Shape& shape,
                                         const SliceMasks& masks) {
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> begin,
                      read_int_vector(ctx.input(first), "StridedSlice begin"));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> end,
                      read_int_vector(ctx.input(first + 1), "StridedSlice end"));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> strides,
                      read_int_vector(ctx.input(first + 2), "StridedSlice strides"));
  if (end.size() != begin.size() || strides.size() != begin.size())
    return Status(Error::invalid_argument,
                  "StridedSlice begin " + ints_to_string(begin) + ", end " + ints_to_string(end) +
                      " and strides " + ints_to_string(strides) + " must have the same length");
  if (begin.size() > kMaxSparseDims)
    return Status(Error::invalid_argument, "StridedSlice spec has " +
                                               std::to_string(begin.size()) +
                                               " entries, more than the masks can describe");
  TF_ASSIGN_OR_RETURN(DenseSpec dense, build_dense_spec(shape.rank(), begin, end, strides, masks));
  StridedSlicing s;
  TF_RETURN_IF_ERROR(canonicalize(shape, dense, s.view));
  std::vector<int64_t> final_dims;
  for (int from : dense.final_dims_from)
    final_dims.push_back(from == kNewAxis ? 1 : s.view.dims[static_cast<size_t>(from)]);
  Expected<Shape> output = Shape::make(final_dims);
  if (!output.ok()) return output.status().with_prefix("StridedSlice output: ");
  s.output = *output;
  return s;
}

Expected<SliceMasks> read_masks(const KernelInit& init) {
  SliceMasks masks;
  const std::pair<const char*, uint64_t*> attrs[] = {
      {"begin_mask", &masks.begin},       {"end_mask", &masks.end},
      {"ellipsis_mask", &masks.ellipsis}, {"new_axis_mask", &masks.new_axis},
      {"shrink_axis_mask", &masks.shrink_axis}};
  for (auto& [name, mask] : attrs) {
    TF_ASSIGN_OR_RETURN(int64_t v, init.attr<int64_t>(name));
    *mask = static_cast<uint64_t>(v);
  }
  return masks;
}

class StridedSliceKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(masks_, read_masks(init));
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    const Tensor& in = ctx.input(0);
    TF_ASSIGN_OR_RETURN(StridedSlicing s, strided_slicing(ctx, 1, in.shape(), masks_));
    TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(in.dtype(), s.output));
    strided_copy(in, s.view, out);
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  SliceMasks masks_;
};

// StridedSliceGrad(shape, begin, end, strides, dy): zeros of `shape` with dy
// written where StridedSlice(x of that shape, begin, end, strides) reads.
class StridedSliceGradKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(masks_, read_masks(init));
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(Shape shape, shape_from_tensor(ctx.input(0), "StridedSliceGrad shape"));
    const Tensor& dy = ctx.input(4);
    TF_ASSIGN_OR_RETURN(StridedSlicing s, strided_slicing(ctx, 1, shape, masks_));
    if (!dy.valid() || dy.shape() != s.output)
      return Status(Error::invalid_argument,
                    "StridedSliceGrad: dy has shape " + dy.shape().to_string() +
                        " but the slice of shape " + shape.to_string() + " has shape " +
                        s.output.to_string());
    TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(dy.dtype(), shape));
    strided_scatter(dy, out, s.view);
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  SliceMasks masks_;
};

}  // namespace

void register_array_slice_ops(OpRegistry& r) {
  register_builtin(r, OpDef("Slice").shape_fn(shape_fns::slice)
                          .input("input: T")
                          .input("begin: Index")
                          .input("size: Index")
                          .output("output: T")
                          .type_attr("T")
                          .type_attr("Index", index_dtypes())
                          .kernel_fn(slice));
  register_builtin(r, OpDef("StridedSlice").shape_fn(shape_fns::strided_slice)
                          .input("input: T")
                          .input("begin: Index")
                          .input("end: Index")
                          .input("strides: Index")
                          .output("output: T")
                          .type_attr("T")
                          .type_attr("Index", {DType::int16, DType::int32, DType::int64})
                          .attr("begin_mask", "int", int64_t{0})
                          .attr("end_mask", "int", int64_t{0})
                          .attr("ellipsis_mask", "int", int64_t{0})
                          .attr("new_axis_mask", "int", int64_t{0})
                          .attr("shrink_axis_mask", "int", int64_t{0})
                          .kernel(make_kernel_factory<StridedSliceKernel>()));
  register_builtin(r, OpDef("StridedSliceGrad").shape_fn(shape_fns::from_input<0>)
                          .input("shape: Index")
                          .input("begin: Index")
                          .input("end: Index")
                          .input("strides: Index")
                          .input("dy: T")
                          .output("output: T")
                          .type_attr("T")
                          .type_attr("Index", index_dtypes())
                          .attr("begin_mask", "int", int64_t{0})
                          .attr("end_mask", "int", int64_t{0})
                          .attr("ellipsis_mask", "int", int64_t{0})
                          .attr("new_axis_mask", "int", int64_t{0})
                          .attr("shrink_axis_mask", "int", int64_t{0})
                          .kernel(make_kernel_factory<StridedSliceGradKernel>()));
}

}  // namespace tagflow::ops
