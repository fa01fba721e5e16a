// Reductions — Sum, Mean, Prod, Max, Min over a set of axes, and All / Any
// of bool tensors — and ArgMax / ArgMin along one axis.
//
// Axes may be negative (counted from the end) and repeat; an empty axis
// list returns the input unchanged. Reducing an empty set of elements gives
// the reduction's identity, as in TensorFlow: 0 for Sum, 1 for Prod, NaN for
// a float Mean (0 for an integer one), -inf / +inf for a float Max / Min,
// the integer type's lowest / highest value for an integer one, true for
// All and false for Any.
//
// The input is first collapsed into alternating groups of kept and reduced
// dimensions; the common patterns (all, rows, columns) run as Eigen
// reductions, others as a strided loop with the same Eigen functor.
#include <cmath>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include "ops/cwise_kernel.hpp"
#include "ops/math_ops.hpp"
#include "ops/shape_fns.hpp"

namespace tagflow::ops {

namespace {

// The output shape of a reduction and the input seen as groups of
// neighbouring dimensions that are all kept or all reduced (size-1
// dimensions dropped).
struct ReductionLayout {
  Shape output;
  int num_groups = 0;
  std::array<int64_t, Shape::kMaxRank> groups{};
  std::array<bool, Shape::kMaxRank> reduced{};
};

// The axes in `axes` (a scalar or vector of int32 or int64) as a bitmap
// over the input's dimensions.
Expected<std::array<bool, Shape::kMaxRank>> reduction_axes(const char* op, const Shape& in,
                                                           const Tensor& axes) {
  std::array<bool, Shape::kMaxRank> bitmap{};
  if (!holds<int32_t>(axes) && !holds<int64_t>(axes))
    return Status(Error::invalid_argument, std::string(op) +
                                               ": reduction_indices must be int32 or int64, got " +
                                               dtype_name(axes.dtype()));
  if (axes.rank() > 1)
    return Status(Error::invalid_argument,
                  std::string(op) + ": reduction_indices must be a scalar or a vector, got shape " +
                      axes.shape().to_string());
  for (int64_t i = 0; i < axes.num_elements(); ++i) {
    const int64_t axis = holds<int32_t>(axes) ? axes.data<int32_t>()[i] : axes.data<int64_t>()[i];
    if (axis < -in.rank() || axis >= in.rank())
      return Status(Error::invalid_argument,
                    std::string(op) + ": axis " + std::to_string(axis) +
                        " is out of range for an input of shape " + in.to_string() + " (rank " +
                        std::to_string(in.rank()) + ")");
    bitmap[axis < 0 ? axis + in.rank() : axis] = true;
  }
  return bitmap;
}

Expected<ReductionLayout> reduction_layout(const char* op, const Shape& in, const Tensor& axes,
                                           bool keep_dims) {
  TF_ASSIGN_OR_RETURN(auto bitmap, reduction_axes(op, in, axes));
  ReductionLayout l;
  for (int d = 0; d < in.rank(); ++d) {
    if (!bitmap[d]) l.output.add_dim(in.dim(d));
    else if (keep_dims) l.output.add_dim(1);
    if (in.dim(d) == 1) continue;
    if (l.num_groups > 0 && l.reduced[l.num_groups - 1] == bitmap[d]) {
      l.groups[l.num_groups - 1] *= in.dim(d);
    } else {
      l.reduced[l.num_groups] = bitmap[d];
      l.groups[l.num_groups++] = in.dim(d);
    }
  }
  return l;
}

template <class T>
constexpr auto kNaNPropagation = is_float_v<T> ? Eigen::PropagateNaN : Eigen::PropagateFast;

// A reducer: the type C it accumulates in, its Eigen functor, its identity,
// and finish(acc, count) turning an accumulator over `count` elements into
// the output value.
template <class T>
struct SumReducer {
  using C = wrapping_t<T>;
  using Functor = Eigen::internal::scalar_sum_op<C, C>;
  static C identity() { return C(0); }
  static constexpr bool kFinishes = false;
};

template <class T>
struct MeanReducer : SumReducer<T> {
  using C = wrapping_t<T>;
  static constexpr bool kFinishes = true;
  static T finish(C acc, int64_t count) {
    if constexpr (std::is_floating_point_v<T>) {
      return count == 0 ? std::numeric_limits<T>::quiet_NaN() : acc / static_cast<T>(count);
    } else if constexpr (is_complex_number_v<T>) {
      using R = typename T::value_type;
      const R nan = std::numeric_limits<R>::quiet_NaN();
      return count == 0 ? T(nan, nan) : acc / static_cast<R>(count);
    } else if constexpr (std::is_unsigned_v<T>) {
      return count == 0 ? T(0) : static_cast<T>(acc / static_cast<T>(count));
    } else {
      return count == 0 ? T(0) : static_cast<T>(static_cast<int64_t>(static_cast<T>(acc)) / count);
    }
  }
};

template <class T>
struct ProdReducer {
  using C = wrapping_t<T>;
  using Functor = std::conditional_t<is_narrow_int_v<C>, WrappingProduct<C>, Eigen::internal::scalar_product_op<C, C>>;
  static C identity() { return C(1); }
  static constexpr bool kFinishes = false;
};

template <class T>
struct MaxReducer {
  using C = T;
  using Functor = Eigen::internal::scalar_max_op<T, T, kNaNPropagation<T>>;
  static C identity() {
    if constexpr (is_float_v<T>) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
  static constexpr bool kFinishes = false;
};

template <class T>
struct MinReducer {
  using C = T;
  using Functor = Eigen::internal::scalar_min_op<T, T, kNaNPropagation<T>>;
  static C identity() {
    if constexpr (is_float_v<T>) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
  }
  static constexpr bool kFinishes = false;
};

// All and Any (scalar functors: Eigen's boolean ones have no reduction
// packet ops).
struct LogicalAndFunctor {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct LogicalOrFunctor {
  bool operator()(bool a, bool b) const { return a || b; }
};

template <class T>
struct AllReducer {
  using C = bool;
  using Functor = LogicalAndFunctor;
  static C identity() { return true; }
  static constexpr bool kFinishes = false;
};

template <class T>
struct AnyReducer {
  using C = bool;
  using Functor = LogicalOrFunctor;
  static C identity() { return false; }
  static constexpr bool kFinishes = false;
};

// Reduces the non-empty input `in` laid out as `l` into `acc`, one
// accumulator per output element.
template <class R>
void reduce_into(const ReductionLayout& l, const typename R::C* in, int64_t n,
                 typename R::C* acc, int64_t n_out) {
  using C = typename R::C;
  using Matrix = Eigen::Matrix<C, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  typename R::Functor f;
  if (l.num_groups == 1) {  // everything reduced
    acc[0] = ConstArrayMap<C>(in, n).redux(f);
  } else if (l.num_groups == 2 && l.reduced[1]) {  // rows
    Eigen::Map<Eigen::Matrix<C, Eigen::Dynamic, 1>>(acc, n_out) =
        Eigen::Map<const Matrix>(in, l.groups[0], l.groups[1]).rowwise().redux(f);
  } else if (l.num_groups == 2) {  // columns
    Eigen::Map<Eigen::Matrix<C, 1, Eigen::Dynamic>>(acc, n_out) =
        Eigen::Map<const Matrix>(in, l.groups[0], l.groups[1]).colwise().redux(f);
  } else {  // three or more alternating groups: walk rows of the last one
    ArrayMap<C>(acc, n_out).setConstant(R::identity());
    const int g = l.num_groups;
    std::array<int64_t, Shape::kMaxRank> out_stride{};
    for (int i = g - 1, s = 1; i >= 0; --i) {
      out_stride[i] = l.reduced[i] ? 0 : s;
      if (!l.reduced[i]) s *= l.groups[i];
    }
    std::array<int64_t, Shape::kMaxRank> index{};
    const int64_t len = l.groups[g - 1];
    const int64_t step = out_stride[g - 1];
    int64_t o = 0;
    for (int64_t i = 0; i < n; i += len) {
      for (int64_t j = 0; j < len; ++j) acc[o + j * step] = f(acc[o + j * step], in[i + j]);
      for (int d = g - 2; d >= 0; --d) {
        o += out_stride[d];
        if (++index[d] < l.groups[d]) break;
        o -= out_stride[d] * l.groups[d];
        index[d] = 0;
      }
    }
  }
}

// Reduces the n elements of `in`, laid out as `l`, into the n_out of `out`
// (both T, which the reducer R computes in).
template <class R, class T>
void reduce(const ReductionLayout& l, const T* in, int64_t n, T* out, int64_t n_out) {
  using C = typename R::C;
  C* acc = reinterpret_cast<C*>(out);
  if (n == 0) ArrayMap<C>(acc, n_out).setConstant(R::identity());
  else reduce_into<R>(l, reinterpret_cast<const C*>(in), n, acc, n_out);
  if constexpr (R::kFinishes) {
    const int64_t count = n / n_out;
    for (int64_t i = 0; i < n_out; ++i) out[i] = R::finish(acc[i], count);
  }
}

// The type a reduction of T computes in. A Mean of integers sums in the
// 64-bit integer of their signedness and divides there, as TensorFlow's
// does (a uint8 mean of 200 and 200 is 200). half and bfloat16 reduce in
// float — each element converted once, the result rounded once — where
// TensorFlow accumulates most of their reductions in the 16-bit type (all
// but a bfloat16 Sum): long half reductions can differ from TensorFlow's,
// tagflow's being the more accurate.
template <template <class> class Reducer>
inline constexpr bool kWidensIntegers = false;
template <>
inline constexpr bool kWidensIntegers<MeanReducer> = true;

template <template <class> class Reducer, class T>
using accumulation_t =
    std::conditional_t<is_half_v<T>, float,
                       std::conditional_t<kWidensIntegers<Reducer> && std::is_integral_v<T>,
                                          std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>, T>>;

template <template <class> class Reducer, class T>
class ReductionKernel final : public Kernel {
 public:
  ReductionKernel(const char* op, bool keep_dims) : op_(op), keep_dims_(keep_dims) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (!holds<T>(x)) {
      const Tensor* inputs[] = {&x};
      return input_dtype_error(op_, dtype_v<T>, inputs, 1);
    }
    TF_ASSIGN_OR_RETURN(ReductionLayout l, reduction_layout(op_, x.shape(), ctx.input(1), keep_dims_));
    const int64_t n = x.num_elements();
    const int64_t n_out = l.output.num_elements();
    if (n == n_out) {  // nothing to reduce (or empty either way): the input itself
      ctx.set_output(0, x.with_dtype(dtype_v<T>).reshaped(l.output).value());
      return ok_status();
    }
    Tensor out(dtype_v<T>, l.output);
    if (n_out == 0) {
      ctx.set_output(0, std::move(out));
      return ok_status();
    }
    using A = accumulation_t<Reducer, T>;
    if constexpr (!std::is_same_v<A, T>) {
      std::vector<A> in(static_cast<size_t>(n)), acc(static_cast<size_t>(n_out));
      ArrayMap<A>(in.data(), n) = ConstArrayMap<T>(x.data<T>(), n).template cast<A>();
      reduce<Reducer<A>>(l, in.data(), n, acc.data(), n_out);
      ArrayMap<T>(out.mutable_data<T>(), n_out) = ArrayMap<A>(acc.data(), n_out).template cast<T>();
    } else {
      reduce<Reducer<T>>(l, x.data<T>(), n, out.mutable_data<T>(), n_out);
    }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  const char* op_;
  bool keep_dims_;
};

// The kernel of Reducer for the node's input dtype among Ts.
template <template <class> class Reducer, class... Ts>
KernelFactory reduction_factory(const char* op) {
  return [op](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    TF_ASSIGN_OR_RETURN(bool keep_dims, init.attr<bool>("keep_dims"));
    DType t = init.input_types.empty() ? DType::invalid : base_dtype(init.input_types[0]);
    std::unique_ptr<Kernel> k;
    dispatch_among<Ts...>(t, [&](auto tag) {
      k = std::make_unique<ReductionKernel<Reducer, typename decltype(tag)::type>>(op, keep_dims);
    });
    if (!k) return no_kernel_error(op, t);
    return k;
  };
}

// ---- ArgMax / ArgMin --------------------------------------------------------

// True if v should replace best; NaN wins over numbers (and the first
// NaN stays), ties keep the first index.
template <class T, bool kMax>
bool better(T v, T best) {
  if constexpr (is_float_v<T>) {
    if ((Eigen::numext::isnan)(best)) return false;
    if ((Eigen::numext::isnan)(v)) return true;
  }
  return kMax ? v > best : v < best;
}

template <class T, class Index, bool kMax>
class ArgKernel final : public Kernel {
 public:
  explicit ArgKernel(const char* op) : op_(op) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& dim = ctx.input(1);
    if (!holds<T>(x)) {
      const Tensor* inputs[] = {&x};
      return input_dtype_error(op_, dtype_v<T>, inputs, 1);
    }
    if ((!holds<int32_t>(dim) && !holds<int64_t>(dim)) || dim.rank() != 0)
      return Status(Error::invalid_argument,
                    std::string(op_) + ": dimension must be an int32 or int64 scalar, got " +
                        dtype_name(dim.dtype()) + dim.shape().to_string());
    const int64_t axis0 = holds<int32_t>(dim) ? dim.scalar_value<int32_t>() : dim.scalar_value<int64_t>();
    const Shape& in = x.shape();
    if (axis0 < -in.rank() || axis0 >= in.rank())
      return Status(Error::invalid_argument, std::string(op_) + ": dimension " +
                                                 std::to_string(axis0) +
                                                 " is out of range for an input of shape " +
                                                 in.to_string());
    const int axis = static_cast<int>(axis0 < 0 ? axis0 + in.rank() : axis0);
    Shape out_shape;
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < in.rank(); ++d) {
      if (d == axis) continue;
      out_shape.add_dim(in.dim(d));
      (d < axis ? outer : inner) *= in.dim(d);
    }
    const int64_t len = in.dim(axis);
    if (out_shape.num_elements() > 0 && len == 0)
      return Status(Error::invalid_argument, std::string(op_) + ": dimension " +
                                                 std::to_string(axis) + " is empty in shape " +
                                                 in.to_string());
    Tensor out(dtype_v<Index>, out_shape);
    const T* xp = x.data<T>();
    Index* op = out.mutable_data<Index>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const T* p = xp + o * len * inner + i;
        int64_t best = 0;
        for (int64_t k = 1; k < len; ++k)
          if (better<T, kMax>(p[k * inner], p[best * inner])) best = k;
        op[o * inner + i] = static_cast<Index>(best);
      }
    }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  const char* op_;
};

template <bool kMax>
KernelFactory arg_factory(const char* op) {
  return [op](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    DType t = init.input_types.empty() ? DType::invalid : base_dtype(init.input_types[0]);
    DType index = init.output_types.empty() ? DType::invalid : init.output_types[0];
    std::unique_ptr<Kernel> k;
    dispatch_among(RealTypes{}, t, [&](auto tag) {
      dispatch_among<int32_t, int64_t>(index, [&](auto itag) {
        using T = typename decltype(tag)::type;
        using I = typename decltype(itag)::type;
        k = std::make_unique<ArgKernel<T, I, kMax>>(op);
      });
    });
    if (!k) return no_kernel_error(op, t);
    return k;
  };
}

// Sum, Mean and Prod take every number, Max and Min the ordered ones, as
// TensorFlow's CPU kernels (reduction_ops_*.cc).
template <template <class> class Reducer, class... Ts>
void reduction_op(OpRegistry& r, const char* name, TypeList<Ts...> types) {
  register_builtin(r, OpDef(name).shape_fn(shape_fns::reduction)
                          .input("input: T")
                          .input("reduction_indices: Tidx")
                          .output("output: T")
                          .attr("keep_dims", "bool", false)
                          .type_attr("T", types.dtypes())
                          .type_attr("Tidx", {DType::int32, DType::int64}, DType::int32)
                          .kernel(reduction_factory<Reducer, Ts...>(name)));
}

void arg_op(OpRegistry& r, const char* name, KernelFactory kernel) {
  register_builtin(r, OpDef(name).shape_fn(shape_fns::arg_reduce)
                          .input("input: T")
                          .input("dimension: Tidx")
                          .output("output: output_type")
                          .type_attr("T", RealTypes::dtypes())
                          .type_attr("Tidx", {DType::int32, DType::int64}, DType::int32)
                          .type_attr("output_type", {DType::int32, DType::int64}, DType::int64)
                          .kernel(std::move(kernel)));
}

}  // namespace

void register_reduction_ops(OpRegistry& r) {
  reduction_op<SumReducer>(r, "Sum", NumberTypes{});
  reduction_op<MeanReducer>(r, "Mean", NumberTypes{});
  reduction_op<ProdReducer>(r, "Prod", NumberTypes{});
  reduction_op<MaxReducer>(r, "Max", RealTypes{});
  reduction_op<MinReducer>(r, "Min", RealTypes{});
  for (auto [name, kernel] : {std::pair{"All", reduction_factory<AllReducer, bool>("All")},
                              std::pair{"Any", reduction_factory<AnyReducer, bool>("Any")}})
    register_builtin(r, OpDef(name).shape_fn(shape_fns::reduction)
                            .input("input: bool")
                            .input("reduction_indices: Tidx")
                            .output("output: bool")
                            .attr("keep_dims", "bool", false)
                            .type_attr("Tidx", {DType::int32, DType::int64}, DType::int32)
                            .kernel(std::move(kernel)));
  arg_op(r, "ArgMax", arg_factory<true>("ArgMax"));
  arg_op(r, "ArgMin", arg_factory<false>("ArgMin"));
}

}  // namespace tagflow::ops
