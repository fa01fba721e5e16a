// The TensorList ops between lists and whole tensors (list_ops.cc):
// TensorListFromTensor, Stack, Gather, ConcatV2, Scatter, ScatterV2,
// ScatterIntoExistingList, Split; the semantics of lists and their unset
// elements are in list_ops.cpp's header comment.
#include "ops/array_ops.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/list_kernel_util.hpp"
#include "ops/shape_fns.hpp"

namespace tagflow::ops {

namespace {

using namespace list_detail;


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

}  // namespace

void register_list_tensor_ops(OpRegistry& r) {
  const std::vector<DType> shape_types = index_dtypes();
  register_builtin(r, OpDef("TensorListFromTensor").shape_fn(shape_fns::scalars)
                          .input("tensor: element_dtype")
                          .input("element_shape: shape_type")
                          .output("output_handle: variant")
                          .type_attr("element_dtype")
                          .type_attr("shape_type", shape_types)
                          .kernel(make_kernel_factory<TensorListFromTensorKernel>()));
  register_builtin(r, OpDef("TensorListStack").shape_fn(shape_fns::list_stack)
                          .input("input_handle: variant")
                          .input("element_shape: int32")
                          .output("tensor: element_dtype")
                          .type_attr("element_dtype")
                          .attr("num_elements", "int", int64_t{-1})
                          .kernel(make_kernel_factory<TensorListStackKernel>()));
  register_builtin(r, OpDef("TensorListGather").shape_fn(shape_fns::list_gather)
                          .input("input_handle: variant")
                          .input("indices: int32")
                          .input("element_shape: int32")
                          .output("values: element_dtype")
                          .type_attr("element_dtype")
                          .kernel(make_kernel_factory<TensorListGatherKernel>()));
  register_builtin(r, OpDef("TensorListConcatV2").shape_fn(shape_fns::list_concat)
                          .input("input_handle: variant")
                          .input("element_shape: shape_type")
                          .input("leading_dims: int64")
                          .output("tensor: element_dtype")
                          .output("lengths: int64")
                          .type_attr("element_dtype")
                          .type_attr("shape_type", shape_types)
                          .kernel(make_kernel_factory<TensorListConcatV2Kernel>()));
  register_builtin(r, OpDef("TensorListScatterIntoExistingList").shape_fn(shape_fns::scalars)
                          .input("input_handle: variant")
                          .input("tensor: element_dtype")
                          .input("indices: int32")
                          .output("output_handle: variant")
                          .type_attr("element_dtype")
                          .kernel(make_kernel_factory<TensorListScatterIntoExistingListKernel>()));
  register_builtin(r, OpDef("TensorListScatter").shape_fn(shape_fns::scalars)
                          .input("tensor: element_dtype")
                          .input("indices: int32")
                          .input("element_shape: shape_type")
                          .output("output_handle: variant")
                          .type_attr("element_dtype")
                          .type_attr("shape_type", shape_types)
                          .kernel(make_kernel_factory<TensorListScatterKernel>()));
  register_builtin(r, OpDef("TensorListScatterV2").shape_fn(shape_fns::scalars)
                          .input("tensor: element_dtype")
                          .input("indices: int32")
                          .input("element_shape: shape_type")
                          .input("num_elements: int32")
                          .output("output_handle: variant")
                          .type_attr("element_dtype")
                          .type_attr("shape_type", shape_types)
                          .kernel(make_kernel_factory<TensorListScatterKernel>()));
  register_builtin(r, OpDef("TensorListSplit").shape_fn(shape_fns::scalars)
                          .input("tensor: element_dtype")
                          .input("element_shape: shape_type")
                          .input("lengths: int64")
                          .output("output_handle: variant")
                          .type_attr("element_dtype")
                          .type_attr("shape_type", shape_types)
                          .kernel(make_kernel_factory<TensorListSplitKernel>()));
}

}  // namespace tagflow::ops
