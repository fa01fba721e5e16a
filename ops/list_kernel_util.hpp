// What the TensorList kernels share (list_ops.cpp, list_tensor_ops.cpp):
// reading element shapes, sizes and indices, the list an op writes, the
// reading of elements as TensorFlow reads unset ones, rows of a tensor.
// Internal to ops/.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ops/kernel.hpp"
#include "ops/tensor_copy.hpp"
#include "ops/variant.hpp"

namespace tagflow::ops::list_detail {


inline Status invalid(std::string message) { return Status(Error::invalid_argument, std::move(message)); }

// An element_shape input (TensorFlow's TensorShapeFromTensor).
inline Expected<PartialShape> element_shape_input(const Tensor& t, const char* what = "element_shape") {
  if (!t.valid() || (t.dtype() != DType::int32 && t.dtype() != DType::int64))
    return invalid(fmt::format("{} must be an int32 or int64 tensor, got {}", what,
                               t.valid() ? dtype_name(t.dtype()) : "an invalid tensor"));
  auto at = [&](int64_t i) -> int64_t {
    return t.dtype() == DType::int32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
  };
  if (t.rank() == 0) {
    if (at(0) != -1)
      return invalid(fmt::format("{}: the only valid scalar shape is -1 (unknown rank), got {}", what, at(0)));
    return PartialShape{true, {}};
  }
  if (t.rank() != 1) return invalid(fmt::format("{} must be a scalar or a vector, got shape {}", what, t.shape().to_string()));
  if (t.num_elements() > Shape::kMaxRank)
    return invalid(fmt::format("{} has rank {}, over the largest, {}", what, t.num_elements(), Shape::kMaxRank));
  PartialShape p{false, {}};
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (at(i) < -1) return invalid(fmt::format("{} has dimension {} (below -1, unknown)", what, at(i)));
    p.dims.push_back(at(i));
  }
  return p;
}

// An int32 scalar input.
inline Expected<int64_t> int32_scalar(const Tensor& t, const char* what) {
  if (!t.valid() || t.dtype() != DType::int32 || !t.shape().is_scalar())
    return invalid(fmt::format("{} must be an int32 scalar, got {}", what,
                               t.valid() ? dtype_name(t.dtype()) + t.shape().to_string() : "an invalid tensor"));
  return t.scalar_value<int32_t>();
}

// An int32 vector input.
inline Expected<std::vector<int64_t>> int32_vector(const Tensor& t, const char* what) {
  if (!t.valid() || t.dtype() != DType::int32 || t.rank() != 1)
    return invalid(fmt::format("{} must be an int32 vector, got {}", what,
                               t.valid() ? dtype_name(t.dtype()) + t.shape().to_string() : "an invalid tensor"));
  return std::vector<int64_t>(t.data<int32_t>(), t.data<int32_t>() + t.num_elements());
}

inline Status check_dtype(DType op, const TensorList& l) {
  if (op == l.element_dtype) return ok_status();
  return invalid(fmt::format("element dtype mismatch: the op's element_dtype is {} but the list holds {} elements",
                             dtype_name(op), dtype_name(l.element_dtype)));
}

inline Status check_size(int64_t n, const char* what) {
  if (n <= kMaxTensorListSize) return ok_status();
  return Status(Error::resource_exhausted,
                fmt::format("{} {} is over the largest list, {} elements", what, n, kMaxTensorListSize));
}

// The list of input `index`, moved to output `index` and writable: the
// same list when the kernel held it uniquely, else a copy. Call after
// every check: the input is gone afterwards.
inline TensorList* output_list(KernelContext& ctx, int index) {
  Tensor in = ctx.take_input(index);
  if (TensorList* l = writable_list(&in)) {
    ctx.set_output(index, std::move(in));
    return l;
  }
  auto [out, copy] = copy_list(*list_of(in).value());
  ctx.set_output(index, std::move(out));
  return copy;
}

// The shape unset elements read as: `requested` merged with the list's
// element shape and, if that is partial, with the shapes of the set
// elements among `indices` (all when null); `reading` names what is read.
inline Expected<Shape> unset_shape(const TensorList& l, const PartialShape& requested,
                            const std::vector<int64_t>* indices, const std::string& reading) {
  auto merged = merge_shapes(requested, l.element_shape);
  if (!merged.ok())
    return invalid(fmt::format("element_shape {} does not fit the list's element shape {}", requested.to_string(),
                               l.element_shape.to_string()));
  PartialShape p = *merged;
  auto merge_element = [&](int64_t i) -> Status {
    const Tensor& e = l.elements[static_cast<size_t>(i)];
    if (!e.valid() || fully_defined(p)) return ok_status();
    auto m = merge_shapes(p, partial_of(e.shape()));
    if (!m.ok())
      return invalid(fmt::format("list element {} has shape {}, incompatible with element shape {}", i,
                                 e.shape().to_string(), p.to_string()));
    p = *m;
    return ok_status();
  };
  if (indices == nullptr) {
    for (size_t i = 0; i < l.elements.size(); ++i) TF_RETURN_IF_ERROR(merge_element(static_cast<int64_t>(i)));
  } else {
    for (int64_t i : *indices) TF_RETURN_IF_ERROR(merge_element(i));
  }
  if (!fully_defined(p))
    return invalid(fmt::format("{}: the element shape {} is not fully defined and no list element fixes it",
                               reading, p.to_string()));
  return Shape::make(p.dims);
}

// One element read by GetItem or PopBack: the element, or zeros. Only
// GetItem (`infer`) looks at the other elements for the shape, as
// TensorFlow does.
inline Expected<Tensor> read_element(const TensorList& l, int64_t index, const PartialShape& requested, bool infer) {
  const Tensor& e = l.elements[static_cast<size_t>(index)];
  if (e.valid()) return e;
  static const std::vector<int64_t> kNone;
  TF_ASSIGN_OR_RETURN(Shape shape, unset_shape(l, requested, infer ? nullptr : &kNone,
                                               fmt::format("reading unset element {}", index)));
  return allocate_tensor(l.element_dtype, shape);
}

// Elements `indices` of l, stacked along a new first dimension.
inline Expected<Tensor> stack(const TensorList& l, const std::vector<int64_t>& indices, const PartialShape& requested,
                       const char* op) {
  for (int64_t i : indices)
    if (i < 0 || i >= static_cast<int64_t>(l.elements.size()))
      return invalid(fmt::format("{}: index {} is out of range for a list of {} elements", op, i, l.elements.size()));
  TF_ASSIGN_OR_RETURN(Shape shape, unset_shape(l, requested, &indices, op));
  for (int64_t i : indices) {
    const Tensor& e = l.elements[static_cast<size_t>(i)];
    if (e.valid() && e.shape() != shape)
      return invalid(fmt::format("{}: list element {} has shape {}, not {}", op, i, e.shape().to_string(),
                                 shape.to_string()));
  }
  if (shape.rank() == Shape::kMaxRank)
    return invalid(fmt::format("{}: elements of rank {} cannot be stacked (the largest rank is {})", op,
                               shape.rank(), Shape::kMaxRank));
  std::vector<int64_t> dims = shape.dims();
  dims.insert(dims.begin(), static_cast<int64_t>(indices.size()));
  TF_ASSIGN_OR_RETURN(Shape out_shape, Shape::make(dims));
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(l.element_dtype, out_shape));
  const int64_t row = shape.num_elements();
  for (size_t k = 0; k < indices.size(); ++k) {
    const Tensor& e = l.elements[static_cast<size_t>(indices[k])];
    if (e.valid()) copy_elements(e, 0, out, static_cast<int64_t>(k) * row, row);
  }
  return out;
}

// Rows [begin, end) of t along its first dimension, as one tensor.
inline Expected<Tensor> rows(const Tensor& t, int64_t begin, int64_t end) {
  std::vector<int64_t> dims = t.shape().dims();
  const int64_t row = t.dim(0) == 0 ? 0 : t.num_elements() / t.dim(0);
  dims[0] = end - begin;
  TF_ASSIGN_OR_RETURN(Shape shape, Shape::make(dims));
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_uninitialized(t.dtype(), shape));
  copy_elements(t, begin * row, out, 0, (end - begin) * row);
  return out;
}

// Row i of t without its first dimension.
inline Expected<Tensor> row(const Tensor& t, int64_t i) {
  std::vector<int64_t> dims = t.shape().dims();
  dims.erase(dims.begin());
  TF_ASSIGN_OR_RETURN(Tensor r, rows(t, i, i + 1));
  return r.reshaped(Shape::make(dims).value());
}

inline Shape without_first_dim(const Shape& s) {
  std::vector<int64_t> dims = s.dims();
  dims.erase(dims.begin());
  return Shape::make(dims).value();
}

inline Status check_at_least_vector(const Tensor& t, const char* what) {
  if (t.rank() >= 1) return ok_status();
  return invalid(fmt::format("{} must be at least a vector, got shape {}", what, t.shape().to_string()));
}

// The kernels: a base that reads element_dtype, when the op has it.
class ListKernel : public Kernel {
 public:
  Status init(const KernelInit& init) {
    if (init.attrs.count("element_dtype") != 0) {
      TF_ASSIGN_OR_RETURN(element_dtype_, init.attr<DType>("element_dtype"));
    }
    return ok_status();
  }

 protected:
  DType element_dtype_ = DType::invalid;
};

}  // namespace tagflow::ops::list_detail
