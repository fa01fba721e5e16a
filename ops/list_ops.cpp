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
// This file: the ops on elements — EmptyTensorList, TensorListReserve,
// PushBack, PushBackBatch, PopBack, Length, ElementShape, GetItem,
// SetItem, Resize; the ops between lists and whole tensors are in
// list_tensor_ops.cpp.
#include "ops/array_ops.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/list_kernel_util.hpp"
#include "ops/shape_fns.hpp"

namespace tagflow::ops {

namespace {

using namespace list_detail;


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
  register_builtin(r, OpDef("EmptyTensorList").shape_fn(shape_fns::scalars)
                          .input("element_shape: shape_type")
                          .input("max_num_elements: int32")
                          .output("handle: variant")
                          .type_attr("element_dtype")
                          .type_attr("shape_type", shape_types)
                          .kernel(make_kernel_factory<EmptyTensorListKernel>()));
  register_builtin(r, OpDef("TensorListReserve").shape_fn(shape_fns::scalars)
                          .input("element_shape: shape_type")
                          .input("num_elements: int32")
                          .output("handle: variant")
                          .type_attr("element_dtype")
                          .type_attr("shape_type", shape_types)
                          .kernel(make_kernel_factory<TensorListReserveKernel>()));
  register_builtin(r, OpDef("TensorListPushBack").shape_fn(shape_fns::scalars)
                          .input("input_handle: variant")
                          .input("tensor: element_dtype")
                          .output("output_handle: variant")
                          .type_attr("element_dtype")
                          .kernel(make_kernel_factory<TensorListPushBackKernel>()));
  register_builtin(r, OpDef("TensorListPushBackBatch").shape_fn(shape_fns::of_input<0>)
                          .input("input_handles: variant")
                          .input("tensor: element_dtype")
                          .output("output_handles: variant")
                          .type_attr("element_dtype")
                          .kernel(make_kernel_factory<TensorListPushBackBatchKernel>()));
  register_builtin(r, OpDef("TensorListPopBack").shape_fn(shape_fns::list_item)
                          .input("input_handle: variant")
                          .input("element_shape: int32")
                          .output("output_handle: variant")
                          .output("tensor: element_dtype")
                          .type_attr("element_dtype")
                          .kernel(make_kernel_factory<TensorListPopBackKernel>()));
  register_builtin(r, OpDef("TensorListLength").shape_fn(shape_fns::scalars)
                          .input("input_handle: variant")
                          .output("length: int32")
                          .kernel(make_kernel_factory<TensorListLengthKernel>()));
  register_builtin(r, OpDef("TensorListElementShape").shape_fn(shape_fns::list_element_shape)
                          .input("input_handle: variant")
                          .output("element_shape: shape_type")
                          .type_attr("shape_type", shape_types)
                          .kernel(make_kernel_factory<TensorListElementShapeKernel>()));
  register_builtin(r, OpDef("TensorListGetItem").shape_fn(shape_fns::list_item)
                          .input("input_handle: variant")
                          .input("index: int32")
                          .input("element_shape: int32")
                          .output("item: element_dtype")
                          .type_attr("element_dtype")
                          .kernel(make_kernel_factory<TensorListGetItemKernel>()));
  register_builtin(r, OpDef("TensorListSetItem").shape_fn(shape_fns::scalars)
                          .input("input_handle: variant")
                          .input("index: int32")
                          .input("item: element_dtype")
                          .output("output_handle: variant")
                          .type_attr("element_dtype")
                          .attr("resize_if_index_out_of_bounds", "bool", false)
                          .kernel(make_kernel_factory<TensorListSetItemKernel>()));
  register_builtin(r, OpDef("TensorListResize").shape_fn(shape_fns::scalars)
                          .input("input_handle: variant")
                          .input("size: int32")
                          .output("output_handle: variant")
                          .kernel(make_kernel_factory<TensorListResizeKernel>()));
  register_list_tensor_ops(r);
}

}  // namespace tagflow::ops
