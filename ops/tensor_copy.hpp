// Element movement for kernels that rearrange rather than compute: allocate
// an output safely, copy runs of elements, and copy a strided view (the one
// primitive behind Transpose, Slice, StridedSlice, Tile, BroadcastTo and
// Unpack) or write into one (StridedSliceGrad). Works for every dtype: fixed-size elements move as bytes, so
// quantized, half and complex types need no dispatch; string and resource
// elements are copied as std::string objects, variant elements as shared
// pointers to their (immutable) values.
// Stateless free functions; thread-safe on distinct destination tensors.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ops/status.hpp"
#include "ops/tensor.hpp"

namespace tagflow::ops {

// The largest tensor a kernel allocates; a bigger request is an error
// (resource_exhausted), as is a failed allocation, rather than a crash.
inline constexpr int64_t kMaxKernelTensorBytes = int64_t{1} << 34;

// A zero-filled tensor (empty strings) for a kernel output.
Expected<Tensor> allocate_tensor(DType dtype, const Shape& shape);
// The same with fixed-size elements left unset (Tensor::uninitialized), for
// a kernel that writes every element.
Expected<Tensor> allocate_uninitialized(DType dtype, const Shape& shape);

// Copies n elements from src[src_offset...] to dst[dst_offset...]. Both have
// the same base dtype; dst was just allocated by the caller.
void copy_elements(const Tensor& src, int64_t src_offset, Tensor& dst, int64_t dst_offset,
                   int64_t n);

// Sets dst[offset...offset+n) to the single element value[index].
void fill_elements(const Tensor& value, int64_t index, Tensor& dst, int64_t offset, int64_t n);

// Element (i_0, ..., i_k) of the view is src[offset + sum_j i_j * strides[j]].
// Strides may be negative (reversed slices) or zero (broadcast, tile).
struct StridedView {
  int64_t offset = 0;
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
};

// Writes the view's elements in row-major order to dst, which holds exactly
// the product of view.dims elements. The view must stay inside src.
void strided_copy(const Tensor& src, const StridedView& view, Tensor& dst);

// The inverse of strided_copy: writes src's elements, in row-major order,
// to the view's elements of dst, which the caller just allocated. src holds
// exactly the product of view.dims elements; the view must stay inside dst
// and name no element twice (no zero stride on a dimension longer than 1).
void strided_scatter(const Tensor& src, Tensor& dst, const StridedView& view);

// The view that repeats a tensor of shape `from` as shape `to` (NumPy
// broadcasting: shapes aligned at their last dimension, a dimension of 1
// repeated), for BroadcastTo and the kernels that broadcast an operand; none
// if `from` does not broadcast to `to`.
std::optional<StridedView> broadcast_view(const Shape& from, const Shape& to);

// Row-major element strides of a shape: {12, 4, 1} for [2,3,4].
std::vector<int64_t> row_major_strides(const Shape& shape);

// t (rank >= 2) with dimension 1 moved last — NCHW to NHWC, NCDHW to
// NDHWC — and back: for kernels that compute channels last only.
Tensor channels_last(const Tensor& t);
Tensor channels_first(const Tensor& t);

}  // namespace tagflow::ops
