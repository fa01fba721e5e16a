#include "ops/tensor_copy.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>

#include "ops/memory_budget.hpp"

namespace tagflow::ops {

namespace {

// Calls f(T{}) with T the C++ element type of an object dtype: VariantPtr
// for variant, std::string for string and resource.
template <class F>
void with_object_type(DType t, F&& f) {
  if (base_dtype(t) == DType::variant) f(VariantPtr{});
  else f(std::string{});
}

// Visits a simplified view (no size-1 dims, adjacent contiguous dims merged)
// in row-major order: `move(dst_index, src_index, count)` copies `count`
// elements contiguous in both, `move_one(dst_index, src_index)` one element.
template <class Move, class MoveOne>
void walk_view(const StridedView& v, Move&& move, MoveOne&& move_one) {
  const int rank = static_cast<int>(v.dims.size());
  if (rank == 0) {
    move_one(0, v.offset);
    return;
  }
  const int64_t inner = v.dims[rank - 1];
  const int64_t inner_stride = v.strides[rank - 1];
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  int64_t src = v.offset;
  int64_t dst = 0;
  while (true) {
    if (inner_stride == 1) {
      move(dst, src, inner);
    } else {
      for (int64_t i = 0; i < inner; ++i) move_one(dst + i, src + i * inner_stride);
    }
    dst += inner;
    // Advance the odometer over the outer dims.
    int d = rank - 2;
    for (; d >= 0; --d) {
      src += v.strides[d];
      if (++index[d] < v.dims[d]) break;
      src -= v.strides[d] * v.dims[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// Drops size-1 dims and merges dims that are contiguous in the source.
StridedView simplify(const StridedView& v) {
  StridedView out;
  out.offset = v.offset;
  for (size_t i = 0; i < v.dims.size(); ++i) {
    if (v.dims[i] == 1) continue;
    if (!out.dims.empty() && out.strides.back() == v.strides[i] * v.dims[i]) {
      out.dims.back() *= v.dims[i];
      out.strides.back() = v.strides[i];
      continue;
    }
    out.dims.push_back(v.dims[i]);
    out.strides.push_back(v.strides[i]);
  }
  return out;
}

template <size_t N>
void strided_copy_bytes(const Tensor& src, const StridedView& v, Tensor& dst) {
  const auto* s = static_cast<const unsigned char*>(src.raw_data());
  auto* d = static_cast<unsigned char*>(dst.raw_mutable_data());
  walk_view(
      v,
      [&](int64_t di, int64_t si, int64_t n) {
        std::memcpy(d + di * N, s + si * N, static_cast<size_t>(n) * N);
      },
      [&](int64_t di, int64_t si) { std::memcpy(d + di * N, s + si * N, N); });
}

template <size_t N>
void strided_scatter_bytes(const Tensor& src, Tensor& dst, const StridedView& v) {
  const auto* s = static_cast<const unsigned char*>(src.raw_data());
  auto* d = static_cast<unsigned char*>(dst.raw_mutable_data());
  walk_view(
      v,
      [&](int64_t si, int64_t di, int64_t n) {
        std::memcpy(d + di * N, s + si * N, static_cast<size_t>(n) * N);
      },
      [&](int64_t si, int64_t di) { std::memcpy(d + di * N, s + si * N, N); });
}

}  // namespace

namespace {

// Fills n elements of `size` bytes at d with the element at v: copies it
// once, then doubles the filled prefix, so the work is a few large memcpy
// calls (vectorised) rather than one call or scalar store per element.
void fill_bytes(unsigned char* d, const unsigned char* v, size_t size, int64_t n) {
  const size_t total = size * static_cast<size_t>(n);
  std::memcpy(d, v, size);
  for (size_t done = size; done < total;) {
    const size_t k = std::min(done, total - done);
    std::memcpy(d + done, d, k);
    done += k;
  }
}

Expected<Tensor> allocate(DType dtype, const Shape& shape, bool zero_fill) {
  const int64_t n = shape.num_elements();
  const int64_t elem = dtype_is_object(dtype) ? static_cast<int64_t>(sizeof(std::string))  // >= a VariantPtr
                                              : std::max(dtype_size(dtype), 1);
  if (n > kMaxKernelTensorBytes / elem)
    return Status(Error::resource_exhausted,
                  "a " + dtype_name(dtype) + " tensor of shape " + shape.to_string() +
                      " is larger than the kernel allocation limit of " +
                      std::to_string(kMaxKernelTensorBytes) + " bytes");
  try {
    return zero_fill ? Tensor(base_dtype(dtype), shape)
                     : Tensor::uninitialized(base_dtype(dtype), shape);
  } catch (const MemoryLimitExceeded& e) {
    return Status(Error::resource_exhausted, e.what());
  } catch (const std::bad_alloc&) {
    return Status(Error::resource_exhausted, "out of memory allocating a " + dtype_name(dtype) +
                                                 " tensor of shape " + shape.to_string());
  } catch (const std::length_error&) {
    return Status(Error::resource_exhausted, "cannot allocate a " + dtype_name(dtype) +
                                                 " tensor of shape " + shape.to_string());
  }
}

}  // namespace

Expected<Tensor> allocate_tensor(DType dtype, const Shape& shape) {
  return allocate(dtype, shape, true);
}

Expected<Tensor> allocate_uninitialized(DType dtype, const Shape& shape) {
  return allocate(dtype, shape, false);
}

void copy_elements(const Tensor& src, int64_t src_offset, Tensor& dst, int64_t dst_offset,
                   int64_t n) {
  if (n <= 0) return;
  if (dtype_is_object(dst.dtype())) {
    with_object_type(dst.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* s = src.data<T>() + src_offset;
      std::copy(s, s + n, dst.mutable_data<T>() + dst_offset);
    });
    return;
  }
  const size_t size = static_cast<size_t>(dtype_size(dst.dtype()));
  if (size == 0) return;  // an invalid tensor: nothing to move
  std::memcpy(static_cast<unsigned char*>(dst.raw_mutable_data()) + dst_offset * size,
              static_cast<const unsigned char*>(src.raw_data()) + src_offset * size, n * size);
}

void fill_elements(const Tensor& value, int64_t index, Tensor& dst, int64_t offset, int64_t n) {
  if (n <= 0) return;
  if (dtype_is_object(dst.dtype())) {
    with_object_type(dst.dtype(), [&](auto tag) {
      using T = decltype(tag);
      T* d = dst.mutable_data<T>() + offset;
      std::fill(d, d + n, value.data<T>()[index]);
    });
    return;
  }
  const size_t size = static_cast<size_t>(dtype_size(dst.dtype()));
  if (size == 0) return;
  const auto* v = static_cast<const unsigned char*>(value.raw_data()) + index * size;
  auto* d = static_cast<unsigned char*>(dst.raw_mutable_data()) + offset * size;
  fill_bytes(d, v, size, n);
}

void strided_copy(const Tensor& src, const StridedView& view, Tensor& dst) {
  for (int64_t d : view.dims)
    if (d == 0) return;
  const StridedView v = simplify(view);
  if (dtype_is_object(dst.dtype())) {
    with_object_type(dst.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* s = src.data<T>();
      T* d = dst.mutable_data<T>();
      walk_view(
          v, [&](int64_t di, int64_t si, int64_t n) { std::copy(s + si, s + si + n, d + di); },
          [&](int64_t di, int64_t si) { d[di] = s[si]; });
    });
    return;
  }
  switch (dtype_size(dst.dtype())) {
    case 1: strided_copy_bytes<1>(src, v, dst); break;
    case 2: strided_copy_bytes<2>(src, v, dst); break;
    case 4: strided_copy_bytes<4>(src, v, dst); break;
    case 8: strided_copy_bytes<8>(src, v, dst); break;
    case 16: strided_copy_bytes<16>(src, v, dst); break;
    default: break;  // an invalid tensor (size 0): nothing to move
  }
}

// walk_view's contiguous index is src's here and its view index dst's.
void strided_scatter(const Tensor& src, Tensor& dst, const StridedView& view) {
  for (int64_t d : view.dims)
    if (d == 0) return;
  const StridedView v = simplify(view);
  if (dtype_is_object(dst.dtype())) {
    with_object_type(dst.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* s = src.data<T>();
      T* d = dst.mutable_data<T>();
      walk_view(
          v, [&](int64_t si, int64_t di, int64_t n) { std::copy(s + si, s + si + n, d + di); },
          [&](int64_t si, int64_t di) { d[di] = s[si]; });
    });
    return;
  }
  switch (dtype_size(dst.dtype())) {
    case 1: strided_scatter_bytes<1>(src, dst, v); break;
    case 2: strided_scatter_bytes<2>(src, dst, v); break;
    case 4: strided_scatter_bytes<4>(src, dst, v); break;
    case 8: strided_scatter_bytes<8>(src, dst, v); break;
    case 16: strided_scatter_bytes<16>(src, dst, v); break;
    default: break;  // an invalid tensor (size 0): nothing to move
  }
}

std::optional<StridedView> broadcast_view(const Shape& from, const Shape& to) {
  const int offset = to.rank() - from.rank();
  if (offset < 0) return std::nullopt;
  const std::vector<int64_t> from_strides = row_major_strides(from);
  StridedView view;
  for (int k = 0; k < to.rank(); ++k) {
    const int64_t want = to.dim(k);
    int64_t stride = 0;
    if (k >= offset) {
      const int64_t have = from.dim(k - offset);
      if (have == want) stride = from_strides[static_cast<size_t>(k - offset)];
      else if (have != 1) return std::nullopt;
    }
    view.dims.push_back(want);
    view.strides.push_back(stride);
  }
  return view;
}

std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> strides(static_cast<size_t>(shape.rank()));
  int64_t s = 1;
  for (int i = shape.rank() - 1; i >= 0; --i) {
    strides[static_cast<size_t>(i)] = s;
    s *= shape.dim(i);
  }
  return strides;
}

namespace {

// t with its dimensions in the order `perm` (dimension i of the result is
// dimension perm[i] of t).
Tensor permuted(const Tensor& t, const std::vector<int>& perm) {
  const std::vector<int64_t> strides = row_major_strides(t.shape());
  StridedView v;
  Shape shape;
  for (int d : perm) {
    v.dims.push_back(t.dim(d));
    v.strides.push_back(strides[static_cast<size_t>(d)]);
    shape.add_dim(t.dim(d));
  }
  Tensor out = Tensor::uninitialized(t.dtype(), shape);
  strided_copy(t, v, out);
  return out;
}

}  // namespace

Tensor channels_last(const Tensor& t) {
  std::vector<int> perm{0};
  for (int d = 2; d < t.rank(); ++d) perm.push_back(d);
  perm.push_back(1);
  return permuted(t, perm);
}

Tensor channels_first(const Tensor& t) {
  std::vector<int> perm{0, t.rank() - 1};
  for (int d = 1; d + 1 < t.rank(); ++d) perm.push_back(d);
  return permuted(t, perm);
}

}  // namespace tagflow::ops
