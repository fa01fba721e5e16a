// Array ops that create tensors, pass them through or relabel their shape:
// Const, Placeholder, PlaceholderWithDefault, Identity, IdentityN, NoOp,
// StopGradient and PreventGradient (identities to the kernel: they matter
// only to gradient construction), Reshape, Fill, ZerosLike, OnesLike,
// Range, ExpandDims, Squeeze. Relabelling kernels share the input buffer
// (any dtype, strings included); the others allocate. Signatures follow
// TensorFlow's core/ops/array_ops.cc and math_ops.cc (Range).
#include "ops/array_ops.hpp"
#include "ops/kernel_factory.hpp"

#include <cmath>
#include <sstream>

#include "ops/index_args.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_copy.hpp"
#include "ops/variant.hpp"

namespace tagflow::ops {

namespace {

// --- Const, Placeholder, identities ------------------------------------

class ConstKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(value_, init.attr<Tensor>("value"));
    TF_ASSIGN_OR_RETURN(DType dtype, init.attr<DType>("dtype"));
    if (!value_.valid())
      return Status(Error::invalid_argument, "Const has no value tensor");
    if (base_dtype(value_.dtype()) != base_dtype(dtype))
      return Status(Error::invalid_argument, "Const value is " + dtype_name(value_.dtype()) +
                                                 " but its dtype attr is " + dtype_name(dtype));
    return ok_status();
  }
  Status compute(KernelContext& ctx) const override {
    ctx.set_output(0, value_);
    return ok_status();
  }
  bool holds_outputs() const override { return true; }

 private:
  Tensor value_;
};

// The executor feeds placeholders; running the kernel means no feed came.
class PlaceholderKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(DType dtype, init.attr<DType>("dtype"));
    TF_ASSIGN_OR_RETURN(PartialShape shape, init.attr<PartialShape>("shape"));
    message_ = "You must feed a value for placeholder tensor '" + init.node_name +
               "' with dtype " + dtype_name(dtype) +
               (shape.unknown_rank ? std::string() : " and shape " + shape.to_string());
    return ok_status();
  }
  Status compute(KernelContext&) const override { return Status(Error::not_found, message_); }

 private:
  std::string message_;
};

Status identity(KernelContext& ctx) {
  ctx.set_output(0, ctx.input(0));
  return ok_status();
}

Status identity_n(KernelContext& ctx) {
  if (ctx.num_inputs() != ctx.num_outputs())
    return Status(Error::invalid_argument,
                  "IdentityN has " + std::to_string(ctx.num_inputs()) + " inputs but " +
                      std::to_string(ctx.num_outputs()) + " outputs");
  for (int i = 0; i < ctx.num_inputs(); ++i) ctx.set_output(i, ctx.input(i));
  return ok_status();
}

Status no_op(KernelContext&) { return ok_status(); }

// --- Reshape, ExpandDims, Squeeze ---------------------------------------

Status reshape(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  const Tensor& shape = ctx.input(1);
  // TensorFlow still accepts a scalar for a one-dimensional target shape.
  if (shape.valid() && shape.rank() > 1)
    return Status(Error::invalid_argument, "Reshape shape must be a vector, got shape " +
                                               shape.shape().to_string());
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, read_int_values(shape, "Reshape shape"));
  int unknown = -1;
  int64_t product = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == -1) {
      if (unknown >= 0)
        return Status(Error::invalid_argument,
                      "Reshape shape " + ints_to_string(dims) +
                          ": only one dimension may be -1, not both " + std::to_string(unknown) +
                          " and " + std::to_string(i));
      unknown = static_cast<int>(i);
    } else if (dims[i] < 0) {
      return Status(Error::invalid_argument, "Reshape shape " + ints_to_string(dims) +
                                                 " has a negative dimension " +
                                                 std::to_string(dims[i]));
    } else if (__builtin_mul_overflow(product, dims[i], &product)) {
      return Status(Error::invalid_argument,
                    "Reshape shape " + ints_to_string(dims) + " has too many elements");
    }
  }
  const int64_t n = in.num_elements();
  if (unknown >= 0) {
    if (product == 0)
      return Status(Error::invalid_argument,
                    "Reshape cannot infer the -1 dimension of " + ints_to_string(dims) +
                        " when another dimension is 0");
    if (n % product != 0)
      return Status(Error::invalid_argument,
                    "Input to Reshape is a tensor with " + std::to_string(n) +
                        " values, but the requested shape " + ints_to_string(dims) +
                        " requires a multiple of " + std::to_string(product));
    dims[static_cast<size_t>(unknown)] = n / product;
  } else if (product != n) {
    return Status(Error::invalid_argument,
                  "Input to Reshape is a tensor with " + std::to_string(n) +
                      " values, but the requested shape " + ints_to_string(dims) + " has " +
                      std::to_string(product));
  }
  TF_ASSIGN_OR_RETURN(Shape out_shape, Shape::make(dims));
  TF_ASSIGN_OR_RETURN(Tensor out, in.reshaped(out_shape));
  ctx.set_output(0, std::move(out));
  return ok_status();
}

Status expand_dims(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  TF_ASSIGN_OR_RETURN(int64_t dim, read_int_scalar(ctx.input(1), "ExpandDims dim"));
  TF_ASSIGN_OR_RETURN(int axis, canonical_axis(dim, in.rank() + 1, "ExpandDims dim"));
  std::vector<int64_t> dims = in.shape().dims();
  dims.insert(dims.begin() + axis, 1);
  TF_ASSIGN_OR_RETURN(Shape out_shape, Shape::make(dims));
  TF_ASSIGN_OR_RETURN(Tensor out, in.reshaped(out_shape));
  ctx.set_output(0, std::move(out));
  return ok_status();
}

class SqueezeKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(AttrList dims, init.attr<AttrList>("squeeze_dims"));
    squeeze_dims_ = dims.i;
    return ok_status();
  }
  Status compute(KernelContext& ctx) const override {
    const Tensor& in = ctx.input(0);
    const int rank = in.rank();
    std::vector<bool> squeeze(static_cast<size_t>(rank), false);
    for (int64_t d : squeeze_dims_) {
      TF_ASSIGN_OR_RETURN(int axis, canonical_axis(d, rank, "Squeeze dim"));
      if (in.dim(axis) != 1)
        return Status(Error::invalid_argument,
                      "Can not squeeze dim[" + std::to_string(axis) +
                          "], expected a dimension of 1, got " + std::to_string(in.dim(axis)) +
                          " in shape " + in.shape().to_string());
      squeeze[static_cast<size_t>(axis)] = true;
    }
    std::vector<int64_t> dims;
    for (int i = 0; i < rank; ++i) {
      const bool drop = squeeze_dims_.empty() ? in.dim(i) == 1 : squeeze[static_cast<size_t>(i)];
      if (!drop) dims.push_back(in.dim(i));
    }
    TF_ASSIGN_OR_RETURN(Shape out_shape, Shape::make(dims));
    TF_ASSIGN_OR_RETURN(Tensor out, in.reshaped(out_shape));
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  std::vector<int64_t> squeeze_dims_;
};

// --- Fill, ZerosLike, OnesLike --------------------------------------------

Status fill(KernelContext& ctx) {
  const Tensor& value = ctx.input(1);
  if (!value.valid() || value.rank() != 0)
    return Status(Error::invalid_argument, "Fill value must be a scalar, got shape " +
                                               value.shape().to_string());
  TF_ASSIGN_OR_RETURN(Shape shape, shape_from_tensor(ctx.input(0), "Fill dims"));
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_uninitialized(value.dtype(), shape));
  fill_elements(value, 0, out, 0, out.num_elements());
  ctx.set_output(0, std::move(out));
  return ok_status();
}

Status zeros_like(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  // A TensorList's zeros (a list gradient to start from): as many unset
  // elements, which read as zeros, of the same dtype and shape.
  if (base_dtype(in.dtype()) == DType::variant && in.shape().is_scalar()) {
    TF_ASSIGN_OR_RETURN(const TensorList* l, list_of(in, "x"));
    auto zeros = std::make_shared<TensorList>(l->element_dtype, l->element_shape, l->max_num_elements);
    zeros->elements.resize(l->elements.size());
    ctx.set_output(0, variant_scalar(std::move(zeros)));
    return ok_status();
  }
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(in.dtype(), in.shape()));
  ctx.set_output(0, std::move(out));
  return ok_status();
}

Status ones_like(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(in.dtype(), in.shape()));
  const bool handled = dispatch_pod(base_dtype(in.dtype()), [&](auto tag) {
    using T = decltype(tag);
    T* p = out.mutable_data<T>();
    std::fill(p, p + out.num_elements(), T(1));
  });
  if (!handled)
    return Status(Error::unimplemented, "OnesLike has no kernel for " + dtype_name(in.dtype()));
  ctx.set_output(0, std::move(out));
  return ok_status();
}

// --- Range ----------------------------------------------------------------

template <class T>
double as_double(T v) {
  if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>)
    return static_cast<double>(static_cast<float>(v));
  else
    return static_cast<double>(v);
}

template <class T>
std::string number_string(T v) {
  if constexpr (std::is_integral_v<T>) return std::to_string(static_cast<int64_t>(v));
  std::ostringstream os;
  os << as_double(v);
  return os.str();
}

// The number of elements of Range(start, limit, delta), or an error.
template <class T>
Expected<int64_t> range_size(T start, T limit, T delta) {
  const T zero = static_cast<T>(0);
  const std::string values = number_string(start) + "/" + number_string(limit);
  if (delta == zero) return Status(Error::invalid_argument, "Range requires delta != 0");
  if (delta > zero && start > limit)
    return Status(Error::invalid_argument,
                  "Range requires start <= limit when delta > 0: " + values);
  if (delta < zero && start < limit)
    return Status(Error::invalid_argument,
                  "Range requires start >= limit when delta < 0: " + values);
  if constexpr (std::is_integral_v<T>) {
    // Wide enough for any int64 span, so no overflow.
    const __int128 span = static_cast<__int128>(limit) - static_cast<__int128>(start);
    const __int128 step = static_cast<__int128>(delta);
    const __int128 abs_span = span < 0 ? -span : span;
    const __int128 abs_step = step < 0 ? -step : step;
    return static_cast<int64_t>((abs_span + abs_step - 1) / abs_step);
  } else {
    const double n =
        std::ceil(std::abs((as_double(limit) - as_double(start)) / as_double(delta)));
    if (!(n <= static_cast<double>(int64_t{1} << 62)))
      return Status(Error::invalid_argument,
                    "Range requires (limit - start) / delta to be a finite count, got " + values +
                        " with delta " + number_string(delta));
    return static_cast<int64_t>(n);
  }
}

template <class T>
Status range_typed(KernelContext& ctx) {
  const T start = ctx.input(0).scalar_value<T>();
  const T limit = ctx.input(1).scalar_value<T>();
  const T delta = ctx.input(2).scalar_value<T>();
  TF_ASSIGN_OR_RETURN(int64_t n, range_size(start, limit, delta));
  TF_ASSIGN_OR_RETURN(Shape shape, Shape::make({n}));
  TF_ASSIGN_OR_RETURN(Tensor out, allocate_tensor(dtype_v<T>, shape));
  T* p = out.mutable_data<T>();
  if constexpr (std::is_integral_v<T>) {
    __int128 value = start;  // never overflows, even one step past limit
    for (int64_t i = 0; i < n; ++i, value += delta) p[i] = static_cast<T>(value);
  } else {
    // Accumulated as TensorFlow does, so floating-point values match it.
    T value = start;
    for (int64_t i = 0; i < n; ++i) {
      p[i] = value;
      value = static_cast<T>(value + delta);
    }
  }
  ctx.set_output(0, std::move(out));
  return ok_status();
}

Status range(KernelContext& ctx) {
  static const char* const kNames[] = {"start", "limit", "delta"};
  const DType t = base_dtype(ctx.input(0).dtype());
  for (int i = 0; i < 3; ++i) {
    const Tensor& x = ctx.input(i);
    if (!x.valid() || x.num_elements() != 1)
      return Status(Error::invalid_argument, std::string("Range ") + kNames[i] +
                                                 " must be a scalar, got shape " +
                                                 x.shape().to_string());
    if (base_dtype(x.dtype()) != t)
      return Status(Error::invalid_argument, std::string("Range ") + kNames[i] + " is " +
                                                 dtype_name(x.dtype()) + ", start is " +
                                                 dtype_name(t));
  }
  switch (t) {
    case DType::float32: return range_typed<float>(ctx);
    case DType::float64: return range_typed<double>(ctx);
    case DType::int32: return range_typed<int32_t>(ctx);
    case DType::int64: return range_typed<int64_t>(ctx);
    case DType::int8: return range_typed<int8_t>(ctx);
    case DType::int16: return range_typed<int16_t>(ctx);
    case DType::uint16: return range_typed<uint16_t>(ctx);
    case DType::uint32: return range_typed<uint32_t>(ctx);
    case DType::half: return range_typed<Eigen::half>(ctx);
    case DType::bfloat16: return range_typed<Eigen::bfloat16>(ctx);
    default:
      return Status(Error::unimplemented, "Range has no kernel for " + dtype_name(t));
  }
}

}  // namespace

void register_array_ops(OpRegistry& r) {
  register_builtin(r, OpDef("Const").shape_fn(shape_fns::constant)
                          .output("output: dtype")
                          .attr("value", "tensor")
                          .type_attr("dtype")
                          .kernel(make_kernel_factory<ConstKernel>()));
  register_builtin(r, OpDef("Placeholder").shape_fn(shape_fns::placeholder)
                          .output("output: dtype")
                          .type_attr("dtype")
                          .attr("shape", "shape", PartialShape{true, {}})
                          .kernel(make_kernel_factory<PlaceholderKernel>()));
  register_builtin(r, OpDef("PlaceholderWithDefault").shape_fn(shape_fns::placeholder)
                          .input("input: dtype")
                          .output("output: dtype")
                          .type_attr("dtype")
                          .attr("shape", "shape")
                          .kernel_fn(identity));
  register_builtin(r, OpDef("Identity").shape_fn(shape_fns::identity)
                          .input("input: T")
                          .output("output: T")
                          .type_attr("T")
                          .kernel_fn(identity));
  register_builtin(r, OpDef("StopGradient").shape_fn(shape_fns::identity)
                          .input("input: T")
                          .output("output: T")
                          .type_attr("T")
                          .kernel_fn(identity));
  register_builtin(r, OpDef("PreventGradient").shape_fn(shape_fns::identity)
                          .input("input: T")
                          .output("output: T")
                          .type_attr("T")
                          .attr("message", "string", "")
                          .kernel_fn(identity));
  register_builtin(r, OpDef("IdentityN").shape_fn(shape_fns::identity_n)
                          .input("input: T")
                          .output("output: T")
                          .attr("T", "list(type)")
                          .kernel_fn(identity_n));
  register_builtin(r, OpDef("NoOp").shape_fn(shape_fns::none).kernel_fn(no_op));
  register_builtin(r, OpDef("Reshape").shape_fn(shape_fns::reshape)
                          .input("tensor: T")
                          .input("shape: Tshape")
                          .output("output: T")
                          .type_attr("T")
                          .type_attr("Tshape", index_dtypes(), DType::int32)
                          .kernel_fn(reshape));
  register_builtin(r, OpDef("Fill").shape_fn(shape_fns::from_input<0>)
                          .input("dims: index_type")
                          .input("value: T")
                          .output("output: T")
                          .type_attr("T")
                          .type_attr("index_type", index_dtypes(), DType::int32)
                          .kernel_fn(fill));
  register_builtin(r, OpDef("ZerosLike").shape_fn(shape_fns::unary)
                          .input("x: T")
                          .output("y: T")
                          .type_attr("T")
                          .kernel_fn(zeros_like));
  register_builtin(r, OpDef("OnesLike").shape_fn(shape_fns::unary)
                          .input("x: T")
                          .output("y: T")
                          .type_attr("T", {DType::bfloat16, DType::half, DType::float32,
                                           DType::float64, DType::int8, DType::uint8,
                                           DType::int16, DType::uint16, DType::int32,
                                           DType::uint32, DType::int64, DType::uint64,
                                           DType::complex64, DType::complex128, DType::boolean})
                          .kernel_fn(ones_like));
  register_builtin(r, OpDef("Range").shape_fn(shape_fns::range)
                          .input("start: Tidx")
                          .input("limit: Tidx")
                          .input("delta: Tidx")
                          .output("output: Tidx")
                          .type_attr("Tidx",
                                     {DType::bfloat16, DType::half, DType::float32,
                                      DType::float64, DType::int8, DType::int16, DType::int32,
                                      DType::int64, DType::uint16, DType::uint32},
                                     DType::int32)
                          .kernel_fn(range));
  register_builtin(r, OpDef("ExpandDims").shape_fn(shape_fns::expand_dims)
                          .input("input: T")
                          .input("dim: Tdim")
                          .output("output: T")
                          .type_attr("T")
                          .type_attr("Tdim", index_dtypes(), DType::int32)
                          .kernel_fn(expand_dims));
  register_builtin(r, OpDef("Squeeze").shape_fn(shape_fns::squeeze)
                          .input("input: T")
                          .output("output: T")
                          .type_attr("T")
                          .attr("squeeze_dims", "list(int)", AttrList{}, 0)
                          .kernel(make_kernel_factory<SqueezeKernel>()));
  register_shape_ops(r);
  register_array_layout_ops(r);
  register_array_slice_ops(r);
  register_array_gather_ops(r);
  register_pad_ops(r);
  register_reverse_sequence_op(r);
  register_string_ops(r);
  register_list_ops(r);
  register_optional_ops(r);
  register_scatter_nd_op(r);
  register_reverse_op(r);
  register_linspace_empty_ops(r);
  register_unique_op(r);
  register_summary_ops(r);
  register_parsing_ops(r);
  register_audio_ops(r);
  register_image_ops(r);
  register_lookup_ops(r);
}

}  // namespace tagflow::ops
