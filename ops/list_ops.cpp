// The TensorList ops of TensorFlow 2 (list_ops.cc) under their names,
// signatures and attrs: lists are scalar variant tensors holding a
// TensorList (ops/variant.hpp). Semantics are TensorFlow's: an unset
// element reads (GetItem, PopBack, Stack, Gather, Concat) as zeros when the
// element shape — the list's merged with the op's element_shape input and,
// if still partial, with the set elements' shapes — is fully defined, and
// is an error otherwise; an element dtype other than the list's is an
// error. An op that changes a list writes into it in place when it holds
// the list uniquely (writable_list), else into a copy.
// Element shape inputs are int32/int64 tensors: -1 an unknown dimension, a
// scalar -1 an unknown rank. Kernels are immutable after creation.
#include <fmt/format.h>

#include <algorithm>

#include "ops/array_ops.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/tensor_copy.hpp"
#include "ops/variant.hpp"

namespace tagflow::ops {

namespace {

Status invalid(std::string message) { return Status(Error::invalid_argument, std::move(message)); }

// An element_shape input (TensorFlow's TensorShapeFromTensor).
Expected<PartialShape> element_shape_input(const Tensor& t, const char* what = "element_shape") {
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
Expected<int64_t> int32_scalar(const Tensor& t, const char* what) {
  if (!t.valid() || t.dtype() != DType::int32 || !t.shape().is_scalar())
    return invalid(fmt::format("{} must be an int32 scalar, got {}", what,
                               t.valid() ? dtype_name(t.dtype()) + t.shape().to_string() : "an invalid tensor"));
  return t.scalar_value<int32_t>();
}

// An int32 vector input.
Expected<std::vector<int64_t>> int32_vector(const Tensor& t, const char* what) {
  if (!t.valid() || t.dtype() != DType::int32 || t.rank() != 1)
    return invalid(fmt::format("{} must be an int32 vector, got {}", what,
                               t.valid() ? dtype_name(t.dtype()) + t.shape().to_string() : "an invalid tensor"));
  return std::vector<int64_t>(t.data<int32_t>(), t.data<int32_t>() + t.num_elements());
}

Status check_dtype(DType op, const TensorList& l) {
  if (op == l.element_dtype) return ok_status();
  return invalid(fmt::format("element dtype mismatch: the op's element_dtype is {} but the list holds {} elements",
                             dtype_name(op), dtype_name(l.element_dtype)));
}

Status check_size(int64_t n, const char* what) {
  if (n <= kMaxTensorListSize) return ok_status();
  return Status(Error::resource_exhausted,
                fmt::format("{} {} is over the largest list, {} elements", what, n, kMaxTensorListSize));
}

// The list of input `index`, moved to output `index` and writable: the
// same list when the kernel held it uniquely, else a copy. Call after
// every check: the input is gone afterwards.
TensorList* output_list(KernelContext& ctx, int index) {
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
Expected<Shape> unset_shape(const TensorList& l, const PartialShape& requested,
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
Expected<Tensor> read_element(const TensorList& l, int64_t index, const PartialShape& requested, bool infer) {
  const Tensor& e = l.elements[static_cast<size_t>(index)];
  if (e.valid()) return e;
  static const std::vector<int64_t> kNone;
  TF_ASSIGN_OR_RETURN(Shape shape, unset_shape(l, requested, infer ? nullptr : &kNone,
                                               fmt::format("reading unset element {}", index)));
  return allocate_tensor(l.element_dtype, shape);
}

// Elements `indices` of l, stacked along a new first dimension.
Expected<Tensor> stack(const TensorList& l, const std::vector<int64_t>& indices, const PartialShape& requested,
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
Expected<Tensor> rows(const Tensor& t, int64_t begin, int64_t end) {
  std::vector<int64_t> dims = t.shape().dims();
  const int64_t row = t.dim(0) == 0 ? 0 : t.num_elements() / t.dim(0);
  dims[0] = end - begin;
  TF_ASSIGN_OR_RETURN(Shape shape, Shape::make(dims));
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_uninitialized(t.dtype(), shape));
  copy_elements(t, begin * row, out, 0, (end - begin) * row);
  return out;
}

// Row i of t without its first dimension.
Expected<Tensor> row(const Tensor& t, int64_t i) {
  std::vector<int64_t> dims = t.shape().dims();
  dims.erase(dims.begin());
  TF_ASSIGN_OR_RETURN(Tensor r, rows(t, i, i + 1));
  return r.reshaped(Shape::make(dims).value());
}

Shape without_first_dim(const Shape& s) {
  std::vector<int64_t> dims = s.dims();
  dims.erase(dims.begin());
  return Shape::make(dims).value();
}

Status check_at_least_vector(const Tensor& t, const char* what) {
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

class EmptyTensorListKernel final : public ListKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(PartialShape shape, element_shape_input(ctx.input(0)));
    TF_ASSIGN_OR_RETURN(int64_t max, int32_scalar(ctx.input(1), "max_num_elements"));
    if (max < -1) return invalid(fmt::format("max_num_elements must be -1 (no bound) or more, got {}", max));
    ctx.set_output(0, variant_scalar(std::make_shared<TensorList>(element_dtype_, std::move(shape), max)));
    return ok_status();
  }
};

class TensorListReserveKernel final : public ListKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(PartialShape shape, element_shape_input(ctx.input(0)));
    TF_ASSIGN_OR_RETURN(int64_t n, int32_scalar(ctx.input(1), "num_elements"));
    if (n < 0) return invalid(fmt::format("num_elements to reserve must be non-negative, got {}", n));
    TF_RETURN_IF_ERROR(check_size(n, "num_elements"));
    auto l = std::make_shared<TensorList>(element_dtype_, std::move(shape));
    l->elements.resize(static_cast<size_t>(n));
    ctx.set_output(0, variant_scalar(std::move(l)));
    return ok_status();
  }
};

class TensorListFromTensorKernel final : public ListKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& t = ctx.input(0);
    TF_ASSIGN_OR_RETURN(PartialShape shape, element_shape_input(ctx.input(1)));
    TF_RETURN_IF_ERROR(check_at_least_vector(t, "tensor"));
    const Shape element = without_first_dim(t.shape());
    if (!shape_compatible(shape, element))
      return invalid(fmt::format("element_shape {} does not fit the rows of a tensor of shape {}", shape.to_string(),
                                 t.shape().to_string()));
    TF_RETURN_IF_ERROR(check_size(t.dim(0), "tensor.shape[0]"));
    auto l = std::make_shared<TensorList>(t.dtype(), std::move(shape));
    l->elements.reserve(static_cast<size_t>(t.dim(0)));
    for (int64_t i = 0; i < t.dim(0); ++i) {
      TF_ASSIGN_OR_RETURN(Tensor r, row(t, i));
      l->elements.push_back(std::move(r));
    }
    ctx.set_output(0, variant_scalar(std::move(l)));
    return ok_status();
  }
};

class TensorListPushBackKernel final : public ListKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(const TensorList* l, list_of(ctx.input(0)));
    const Tensor& item = ctx.input(1);
    TF_RETURN_IF_ERROR(check_dtype(element_dtype_, *l));
    if (!item.valid() || item.dtype() != l->element_dtype)
      return invalid(fmt::format("cannot push a {} tensor to a list of {} elements",
                                 item.valid() ? dtype_name(item.dtype()) : "invalid", dtype_name(l->element_dtype)));
    if (!shape_compatible(l->element_shape, item.shape()))
      return invalid(fmt::format("cannot push a tensor of shape {} to a list of element shape {}",
                                 item.shape().to_string(), l->element_shape.to_string()));
    if (l->max_num_elements != -1 && static_cast<int64_t>(l->elements.size()) >= l->max_num_elements)
      return invalid(fmt::format("cannot push to a full list: it has {} elements, max_num_elements is {}",
                                 l->elements.size(), l->max_num_elements));
    TF_RETURN_IF_ERROR(check_size(static_cast<int64_t>(l->elements.size()) + 1, "list length"));
    Tensor pushed = item;
    output_list(ctx, 0)->elements.push_back(std::move(pushed));
    return ok_status();
  }
};

class TensorListPopBackKernel final : public ListKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(const TensorList* l, list_of(ctx.input(0)));
    TF_RETURN_IF_ERROR(check_dtype(element_dtype_, *l));
    TF_ASSIGN_OR_RETURN(PartialShape shape, element_shape_input(ctx.input(1)));
    if (l->elements.empty()) return invalid("cannot pop from an empty list");
    TF_ASSIGN_OR_RETURN(Tensor back,
                        read_element(*l, static_cast<int64_t>(l->elements.size()) - 1, shape, false));
    output_list(ctx, 0)->elements.pop_back();
    ctx.set_output(1, std::move(back));
    return ok_status();
  }
};

class TensorListLengthKernel final : public ListKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(const TensorList* l, list_of(ctx.input(0)));
    ctx.set_output(0, Tensor::scalar<int32_t>(static_cast<int32_t>(l->elements.size())));
    return ok_status();
  }
};

class TensorListElementShapeKernel final : public ListKernel {
 public:
  Status init(const KernelInit& init) {
    shape_type_ = init.output_types.empty() ? DType::int32 : init.output_types[0];
    return ok_status();
  }
  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(const TensorList* l, list_of(ctx.input(0)));
    const PartialShape& p = l->element_shape;
    std::vector<int64_t> dims = p.unknown_rank ? std::vector<int64_t>{-1} : p.dims;
    Shape shape = p.unknown_rank ? Shape{} : Shape{static_cast<int64_t>(dims.size())};
    Tensor out(shape_type_, shape);
    for (size_t i = 0; i < dims.size(); ++i) {
      if (shape_type_ == DType::int64) out.mutable_data<int64_t>()[i] = dims[i];
      else out.mutable_data<int32_t>()[i] = static_cast<int32_t>(dims[i]);
    }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  DType shape_type_ = DType::int32;
};

class TensorListGetItemKernel final : public ListKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(const TensorList* l, list_of(ctx.input(0)));
    TF_RETURN_IF_ERROR(check_dtype(element_dtype_, *l));
    TF_ASSIGN_OR_RETURN(int64_t index, int32_scalar(ctx.input(1), "index"));
    TF_ASSIGN_OR_RETURN(PartialShape shape, element_shape_input(ctx.input(2)));
    if (index < 0 || index >= static_cast<int64_t>(l->elements.size()))
      return invalid(fmt::format("cannot read element {} of a list of {} elements", index, l->elements.size()));
    TF_ASSIGN_OR_RETURN(Tensor item, read_element(*l, index, shape, true));
    ctx.set_output(0, std::move(item));
    return ok_status();
  }
};

class TensorListSetItemKernel final : public ListKernel {
 public:
  Status init(const KernelInit& init) {
    TF_RETURN_IF_ERROR(ListKernel::init(init));
    if (init.attrs.count("resize_if_index_out_of_bounds") != 0) {
      TF_ASSIGN_OR_RETURN(resize_, init.attr<bool>("resize_if_index_out_of_bounds"));
    }
    return ok_status();
  }
  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(const TensorList* l, list_of(ctx.input(0)));
    TF_RETURN_IF_ERROR(check_dtype(element_dtype_, *l));
    TF_ASSIGN_OR_RETURN(int64_t index, int32_scalar(ctx.input(1), "index"));
    const Tensor& item = ctx.input(2);
    if (!item.valid() || item.dtype() != l->element_dtype)
      return invalid(fmt::format("cannot set a {} tensor in a list of {} elements",
                                 item.valid() ? dtype_name(item.dtype()) : "invalid", dtype_name(l->element_dtype)));
    const auto size = static_cast<int64_t>(l->elements.size());
    if (index < 0 || (index >= size && !resize_))
      return invalid(fmt::format("cannot set element {} of a list of {} elements", index, size));
    TF_RETURN_IF_ERROR(check_size(index + 1, "list length"));
    if (!shape_compatible(l->element_shape, item.shape()))
      return invalid(fmt::format("cannot set element {} to a tensor of shape {}: the list's element shape is {}",
                                 index, item.shape().to_string(), l->element_shape.to_string()));
    Tensor value = item;
    TensorList* out = output_list(ctx, 0);
    if (index >= size) out->elements.resize(static_cast<size_t>(index) + 1);
    out->elements[static_cast<size_t>(index)] = std::move(value);
    return ok_status();
  }

 private:
  bool resize_ = false;
};

class TensorListStackKernel final : public ListKernel {
 public:
  Status init(const KernelInit& init) {
    TF_RETURN_IF_ERROR(ListKernel::init(init));
    if (init.attrs.count("num_elements") != 0) {
      TF_ASSIGN_OR_RETURN(num_elements_, init.attr<int64_t>("num_elements"));
    }
    return ok_status();
  }
  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(const TensorList* l, list_of(ctx.input(0)));
    TF_RETURN_IF_ERROR(check_dtype(element_dtype_, *l));
    TF_ASSIGN_OR_RETURN(PartialShape shape, element_shape_input(ctx.input(1)));
    const auto n = static_cast<int64_t>(l->elements.size());
    if (num_elements_ != -1 && n != num_elements_)
      return invalid(fmt::format("TensorListStack expected a list of {} elements, got one of {}", num_elements_, n));
    std::vector<int64_t> all(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
    TF_ASSIGN_OR_RETURN(Tensor out, stack(*l, all, shape, "TensorListStack"));
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  int64_t num_elements_ = -1;
};

class TensorListGatherKernel final : public ListKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(const TensorList* l, list_of(ctx.input(0)));
    TF_RETURN_IF_ERROR(check_dtype(element_dtype_, *l));
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> indices, int32_vector(ctx.input(1), "indices"));
    TF_ASSIGN_OR_RETURN(PartialShape shape, element_shape_input(ctx.input(2)));
    TF_ASSIGN_OR_RETURN(Tensor out, stack(*l, indices, shape, "TensorListGather"));
    ctx.set_output(0, std::move(out));
    return ok_status();
  }
};

class TensorListConcatV2Kernel final : public ListKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(const TensorList* l, list_of(ctx.input(0)));
    TF_RETURN_IF_ERROR(check_dtype(element_dtype_, *l));
    TF_ASSIGN_OR_RETURN(PartialShape requested, element_shape_input(ctx.input(1)));
    const Tensor& leading = ctx.input(2);
    if (!leading.valid() || leading.dtype() != DType::int64 || leading.rank() > 1)
      return invalid("leading_dims must be an int64 vector");
    auto merged = merge_shapes(requested, l->element_shape);
    if (!merged.ok())
      return invalid(fmt::format("element_shape {} does not fit the list's element shape {}", requested.to_string(),
                                 l->element_shape.to_string()));
    if (!merged->unknown_rank && merged->dims.empty())
      return invalid("TensorListConcatV2 needs elements that are at least vectors, the element shape is a scalar");
    int64_t first_dim = merged->unknown_rank ? -1 : merged->dims[0];
    PartialShape rest = merged->unknown_rank ? PartialShape{true, {}}
                                             : PartialShape{false, {merged->dims.begin() + 1, merged->dims.end()}};
    // Check the set elements against `rest` and infer a common first
    // dimension for the unset ones.
    bool common = first_dim == -1;
    int64_t inferred = first_dim;
    for (size_t i = 0; i < l->elements.size(); ++i) {
      const Tensor& e = l->elements[i];
      if (!e.valid()) continue;
      if (e.rank() == 0) return invalid(fmt::format("TensorListConcatV2: list element {} is a scalar", i));
      auto m = merge_shapes(rest, partial_of(without_first_dim(e.shape())));
      if (!m.ok())
        return invalid(fmt::format("TensorListConcatV2: list element {} has shape {}, which does not fit {}", i,
                                   e.shape().to_string(), merged->to_string()));
      rest = *m;
      if (first_dim != -1 && e.dim(0) != first_dim)
        return invalid(fmt::format("TensorListConcatV2: list element {} has first dimension {}, element_shape says {}",
                                   i, e.dim(0), first_dim));
      if (common) {
        if (inferred == -1) inferred = e.dim(0);
        else if (inferred != e.dim(0)) {
          inferred = -1;
          common = false;
        }
      }
    }
    if (!fully_defined(rest))
      return invalid(fmt::format("TensorListConcatV2: the element shape {} is not fully defined past its first "
                                 "dimension and no list element fixes it",
                                 rest.unknown_rank ? std::string("?") : "[?," + rest.to_string().substr(1)));
    const auto n = static_cast<int64_t>(l->elements.size());
    Tensor lengths(DType::int64, Shape{n});
    int64_t total = 0;
    for (int64_t i = 0; i < n; ++i) {
      const Tensor& e = l->elements[static_cast<size_t>(i)];
      int64_t d = 0;
      if (e.valid()) {
        d = e.dim(0);
      } else if (i < leading.num_elements()) {
        d = leading.data<int64_t>()[i];
        if (d < 0) return invalid(fmt::format("leading_dims[{}] is negative: {}", i, d));
      } else if (inferred != -1) {
        d = inferred;
      } else {
        return invalid(fmt::format("TensorListConcatV2: list element {} is unset, its first dimension is unknown "
                                   "and leading_dims has only {} entries",
                                   i, leading.num_elements()));
      }
      lengths.mutable_data<int64_t>()[i] = d;
      total += d;
    }
    std::vector<int64_t> dims = rest.dims;
    dims.insert(dims.begin(), total);
    TF_ASSIGN_OR_RETURN(Shape out_shape, Shape::make(dims));
    TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(l->element_dtype, out_shape));
    const int64_t row = Shape::make(rest.dims).value().num_elements();
    int64_t at = 0;
    for (int64_t i = 0; i < n; ++i) {
      const Tensor& e = l->elements[static_cast<size_t>(i)];
      const int64_t count = lengths.data<int64_t>()[i] * row;
      if (e.valid()) copy_elements(e, 0, out, at, count);
      at += count;
    }
    ctx.set_output(0, std::move(out));
    ctx.set_output(1, std::move(lengths));
    return ok_status();
  }
};

// Scatters the rows of `t` into `l` at `indices` (checked by the caller).
Status scatter_rows(const Tensor& t, const std::vector<int64_t>& indices, TensorList* l) {
  for (size_t k = 0; k < indices.size(); ++k) {
    TF_ASSIGN_OR_RETURN(Tensor r, row(t, static_cast<int64_t>(k)));
    l->elements[static_cast<size_t>(indices[k])] = std::move(r);
  }
  return ok_status();
}

// The checks of every scatter: tensor rows match indices, indices are
// non-negative (and below `limit` when it is not -1); returns the length
// the list needs.
Expected<int64_t> check_scatter(const Tensor& t, const std::vector<int64_t>& indices, int64_t limit) {
  TF_RETURN_IF_ERROR(check_at_least_vector(t, "tensor"));
  if (static_cast<int64_t>(indices.size()) != t.dim(0))
    return invalid(fmt::format("scatter of a tensor of shape {} needs {} indices, got {}", t.shape().to_string(),
                               t.dim(0), indices.size()));
  int64_t needed = 0;
  for (int64_t i : indices) {
    if (i < 0) return invalid(fmt::format("scatter index {} is negative", i));
    if (limit != -1 && i >= limit)
      return invalid(fmt::format("scatter index {} is out of range for a list of {} elements", i, limit));
    needed = std::max(needed, i + 1);
  }
  TF_RETURN_IF_ERROR(check_size(needed, "scatter length"));
  return needed;
}

class TensorListScatterIntoExistingListKernel final : public ListKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(const TensorList* l, list_of(ctx.input(0)));
    const Tensor& t = ctx.input(1);
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> indices, int32_vector(ctx.input(2), "indices"));
    TF_RETURN_IF_ERROR(check_dtype(element_dtype_, *l));
    if (t.dtype() != l->element_dtype)
      return invalid(fmt::format("cannot scatter a {} tensor into a list of {} elements", dtype_name(t.dtype()),
                                 dtype_name(l->element_dtype)));
    TF_ASSIGN_OR_RETURN(int64_t needed, check_scatter(t, indices, -1));
    if (!shape_compatible(l->element_shape, without_first_dim(t.shape())))
      return invalid(fmt::format("cannot scatter rows of shape {} into a list of element shape {}",
                                 without_first_dim(t.shape()).to_string(), l->element_shape.to_string()));
    TensorList* out = output_list(ctx, 0);
    if (needed > static_cast<int64_t>(out->elements.size())) out->elements.resize(static_cast<size_t>(needed));
    return scatter_rows(t, indices, out);
  }
};

// TensorListScatterV2 (with num_elements) and TensorListScatter (without).
class TensorListScatterKernel final : public ListKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& t = ctx.input(0);
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> indices, int32_vector(ctx.input(1), "indices"));
    TF_ASSIGN_OR_RETURN(PartialShape shape, element_shape_input(ctx.input(2)));
    int64_t num_elements = -1;
    if (ctx.num_inputs() > 3) {
      TF_ASSIGN_OR_RETURN(num_elements, int32_scalar(ctx.input(3), "num_elements"));
      if (num_elements < -1) return invalid(fmt::format("num_elements must be -1 or more, got {}", num_elements));
      TF_RETURN_IF_ERROR(check_size(num_elements, "num_elements"));
    }
    TF_ASSIGN_OR_RETURN(int64_t needed, check_scatter(t, indices, num_elements));
    if (!shape_compatible(shape, without_first_dim(t.shape())))
      return invalid(fmt::format("element_shape {} does not fit the rows of a tensor of shape {}", shape.to_string(),
                                 t.shape().to_string()));
    auto l = std::make_shared<TensorList>(t.dtype(), std::move(shape));
    l->elements.resize(static_cast<size_t>(std::max(needed, num_elements)));
    TF_RETURN_IF_ERROR(scatter_rows(t, indices, l.get()));
    ctx.set_output(0, variant_scalar(std::move(l)));
    return ok_status();
  }
};

class TensorListSplitKernel final : public ListKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& t = ctx.input(0);
    TF_ASSIGN_OR_RETURN(PartialShape shape, element_shape_input(ctx.input(1)));
    const Tensor& lengths = ctx.input(2);
    if (!shape.unknown_rank && shape.dims.empty())
      return invalid("TensorListSplit needs an element_shape of rank 1 or more, got a scalar shape");
    TF_RETURN_IF_ERROR(check_at_least_vector(t, "tensor"));
    const PartialShape rest = shape.unknown_rank ? shape : PartialShape{false, {shape.dims.begin() + 1, shape.dims.end()}};
    if (!shape_compatible(rest, without_first_dim(t.shape())))
      return invalid(fmt::format("tensor shape {} does not fit element_shape {}", t.shape().to_string(),
                                 shape.to_string()));
    if (!lengths.valid() || lengths.dtype() != DType::int64 || lengths.rank() != 1)
      return invalid("lengths must be an int64 vector");
    TF_RETURN_IF_ERROR(check_size(lengths.num_elements(), "number of lengths"));
    auto l = std::make_shared<TensorList>(t.dtype(), std::move(shape));
    int64_t begin = 0;
    for (int64_t i = 0; i < lengths.num_elements(); ++i) {
      const int64_t length = lengths.data<int64_t>()[i];
      if (length < 0) return invalid(fmt::format("lengths[{}] is negative: {}", i, length));
      if (length > t.dim(0) - begin)
        return invalid(fmt::format("lengths[{}] = {} runs past the {} rows of the tensor", i, length, t.dim(0)));
      TF_ASSIGN_OR_RETURN(Tensor piece, rows(t, begin, begin + length));
      l->elements.push_back(std::move(piece));
      begin += length;
    }
    if (begin != t.dim(0))
      return invalid(fmt::format("lengths add up to {}, the tensor has {} rows", begin, t.dim(0)));
    ctx.set_output(0, variant_scalar(std::move(l)));
    return ok_status();
  }
};

class TensorListResizeKernel final : public ListKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(const TensorList* l, list_of(ctx.input(0)));
    TF_ASSIGN_OR_RETURN(int64_t size, int32_scalar(ctx.input(1), "size"));
    if (size < 0) return invalid(fmt::format("TensorListResize expects a non-negative size, got {}", size));
    TF_RETURN_IF_ERROR(check_size(size, "size"));
    (void)l;
    output_list(ctx, 0)->elements.resize(static_cast<size_t>(size));
    return ok_status();
  }
};

class TensorListPushBackBatchKernel final : public ListKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& handles = ctx.input(0);
    const Tensor& t = ctx.input(1);
    if (!handles.valid() || handles.dtype() != DType::variant || handles.rank() != 1)
      return invalid("input_handles must be a variant vector");
    TF_RETURN_IF_ERROR(check_at_least_vector(t, "tensor"));
    if (t.dim(0) != handles.num_elements())
      return invalid(fmt::format("tensor.shape[0] is {}, there are {} lists", t.dim(0), handles.num_elements()));
    if (t.dtype() != element_dtype_)
      return invalid(fmt::format("cannot push {} rows to lists of {}", dtype_name(t.dtype()), dtype_name(element_dtype_)));
    const Shape element = without_first_dim(t.shape());
    Tensor out(DType::variant, handles.shape());
    for (int64_t b = 0; b < handles.num_elements(); ++b) {
      const VariantPtr& v = handles.data<VariantPtr>()[b];
      if (v == nullptr || v->kind() != VariantValue::Kind::tensor_list)
        return invalid(fmt::format("input_handles[{}] is not a TensorList: it holds {}", b, variant_debug_string(v)));
      const auto& l = static_cast<const TensorList&>(*v);
      TF_RETURN_IF_ERROR(check_dtype(element_dtype_, l).with_prefix(fmt::format("list {}: ", b)));
      if (!shape_compatible(l.element_shape, element))
        return invalid(fmt::format("cannot push a row of shape {} to list {} of element shape {}",
                                   element.to_string(), b, l.element_shape.to_string()));
      if (l.max_num_elements != -1 && static_cast<int64_t>(l.elements.size()) >= l.max_num_elements)
        return invalid(fmt::format("list {} is full ({} elements)", b, l.elements.size()));
      auto copy = std::make_shared<TensorList>(l);
      TF_ASSIGN_OR_RETURN(Tensor r, row(t, b));
      copy->elements.push_back(std::move(r));
      out.mutable_data<VariantPtr>()[b] = std::move(copy);
    }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }
};

}  // namespace

void register_list_ops(OpRegistry& r) {
  const std::vector<DType> shape_types = index_dtypes();
  register_builtin(r, OpDef("EmptyTensorList")
                          .input("element_shape: shape_type")
                          .input("max_num_elements: int32")
                          .output("handle: variant")
                          .type_attr("element_dtype")
                          .type_attr("shape_type", shape_types)
                          .kernel(make_kernel_factory<EmptyTensorListKernel>()));
  register_builtin(r, OpDef("TensorListReserve")
                          .input("element_shape: shape_type")
                          .input("num_elements: int32")
                          .output("handle: variant")
                          .type_attr("element_dtype")
                          .type_attr("shape_type", shape_types)
                          .kernel(make_kernel_factory<TensorListReserveKernel>()));
  register_builtin(r, OpDef("TensorListFromTensor")
                          .input("tensor: element_dtype")
                          .input("element_shape: shape_type")
                          .output("output_handle: variant")
                          .type_attr("element_dtype")
                          .type_attr("shape_type", shape_types)
                          .kernel(make_kernel_factory<TensorListFromTensorKernel>()));
  register_builtin(r, OpDef("TensorListPushBack")
                          .input("input_handle: variant")
                          .input("tensor: element_dtype")
                          .output("output_handle: variant")
                          .type_attr("element_dtype")
                          .kernel(make_kernel_factory<TensorListPushBackKernel>()));
  register_builtin(r, OpDef("TensorListPushBackBatch")
                          .input("input_handles: variant")
                          .input("tensor: element_dtype")
                          .output("output_handles: variant")
                          .type_attr("element_dtype")
                          .kernel(make_kernel_factory<TensorListPushBackBatchKernel>()));
  register_builtin(r, OpDef("TensorListPopBack")
                          .input("input_handle: variant")
                          .input("element_shape: int32")
                          .output("output_handle: variant")
                          .output("tensor: element_dtype")
                          .type_attr("element_dtype")
                          .kernel(make_kernel_factory<TensorListPopBackKernel>()));
  register_builtin(r, OpDef("TensorListLength")
                          .input("input_handle: variant")
                          .output("length: int32")
                          .kernel(make_kernel_factory<TensorListLengthKernel>()));
  register_builtin(r, OpDef("TensorListElementShape")
                          .input("input_handle: variant")
                          .output("element_shape: shape_type")
                          .type_attr("shape_type", shape_types)
                          .kernel(make_kernel_factory<TensorListElementShapeKernel>()));
  register_builtin(r, OpDef("TensorListGetItem")
                          .input("input_handle: variant")
                          .input("index: int32")
                          .input("element_shape: int32")
                          .output("item: element_dtype")
                          .type_attr("element_dtype")
                          .kernel(make_kernel_factory<TensorListGetItemKernel>()));
  register_builtin(r, OpDef("TensorListSetItem")
                          .input("input_handle: variant")
                          .input("index: int32")
                          .input("item: element_dtype")
                          .output("output_handle: variant")
                          .type_attr("element_dtype")
                          .attr("resize_if_index_out_of_bounds", "bool", false)
                          .kernel(make_kernel_factory<TensorListSetItemKernel>()));
  register_builtin(r, OpDef("TensorListStack")
                          .input("input_handle: variant")
                          .input("element_shape: int32")
                          .output("tensor: element_dtype")
                          .type_attr("element_dtype")
                          .attr("num_elements", "int", int64_t{-1})
                          .kernel(make_kernel_factory<TensorListStackKernel>()));
  register_builtin(r, OpDef("TensorListGather")
                          .input("input_handle: variant")
                          .input("indices: int32")
                          .input("element_shape: int32")
                          .output("values: element_dtype")
                          .type_attr("element_dtype")
                          .kernel(make_kernel_factory<TensorListGatherKernel>()));
  register_builtin(r, OpDef("TensorListConcatV2")
                          .input("input_handle: variant")
                          .input("element_shape: shape_type")
                          .input("leading_dims: int64")
                          .output("tensor: element_dtype")
                          .output("lengths: int64")
                          .type_attr("element_dtype")
                          .type_attr("shape_type", shape_types)
                          .kernel(make_kernel_factory<TensorListConcatV2Kernel>()));
  register_builtin(r, OpDef("TensorListScatterIntoExistingList")
                          .input("input_handle: variant")
                          .input("tensor: element_dtype")
                          .input("indices: int32")
                          .output("output_handle: variant")
                          .type_attr("element_dtype")
                          .kernel(make_kernel_factory<TensorListScatterIntoExistingListKernel>()));
  register_builtin(r, OpDef("TensorListScatter")
                          .input("tensor: element_dtype")
                          .input("indices: int32")
                          .input("element_shape: shape_type")
                          .output("output_handle: variant")
                          .type_attr("element_dtype")
                          .type_attr("shape_type", shape_types)
                          .kernel(make_kernel_factory<TensorListScatterKernel>()));
  register_builtin(r, OpDef("TensorListScatterV2")
                          .input("tensor: element_dtype")
                          .input("indices: int32")
                          .input("element_shape: shape_type")
                          .input("num_elements: int32")
                          .output("output_handle: variant")
                          .type_attr("element_dtype")
                          .type_attr("shape_type", shape_types)
                          .kernel(make_kernel_factory<TensorListScatterKernel>()));
  register_builtin(r, OpDef("TensorListSplit")
                          .input("tensor: element_dtype")
                          .input("element_shape: shape_type")
                          .input("lengths: int64")
                          .output("output_handle: variant")
                          .type_attr("element_dtype")
                          .type_attr("shape_type", shape_types)
                          .kernel(make_kernel_factory<TensorListSplitKernel>()));
  register_builtin(r, OpDef("TensorListResize")
                          .input("input_handle: variant")
                          .input("size: int32")
                          .output("output_handle: variant")
                          .kernel(make_kernel_factory<TensorListResizeKernel>()));
}

}  // namespace tagflow::ops
