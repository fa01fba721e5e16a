// The elementwise binary math ops (arithmetic with NumPy broadcasting,
// comparisons, logical ops; LogicalNot with them) and register_math_ops,
// which also registers the rest of the family (ops/math_ops.hpp).
//
// Signed integer arithmetic wraps on overflow (it is done in the unsigned
// twin type) and integer division by zero is an error, so no input can make
// a kernel run into undefined behaviour.
#include <cmath>
#include <limits>

#include "ops/cwise_kernel.hpp"
#include "ops/math_ops.hpp"
#include "ops/shape_fns.hpp"

namespace tagflow::ops {

namespace {

template <class T>
struct PredicateOp : CwiseOp {
  using In = T;
  using Out = bool;
};

// ---- arithmetic -----------------------------------------------------------

template <class T>
struct AddOp : SameTypeOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) {
    if constexpr (is_signed_int_v<T>) return unwrap<T>(wrap<T>(x) + wrap<T>(y));
    else return x + y;
  }
};

template <class T>
struct SubOp : SameTypeOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) {
    if constexpr (is_signed_int_v<T>) return unwrap<T>(wrap<T>(x) - wrap<T>(y));
    else return x - y;
  }
};

template <class T>
struct MulOp : SameTypeOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) {
    if constexpr (is_narrow_int_v<T>) return x.binaryExpr(y, WrappingProduct<T>());
    else if constexpr (is_signed_int_v<T>) return unwrap<T>(wrap<T>(x) * wrap<T>(y));
    else return x * y;
  }
};

// Integer division helpers. A zero divisor is rejected before computing
// (check_rhs); they still return 0 for it so that nothing is ever UB, and
// the one overflowing quotient, min / -1, wraps to min.
template <class T>
T truncated_div(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return static_cast<T>(wrapping_t<T>(0) - static_cast<wrapping_t<T>>(a));
  }
  return static_cast<T>(a / b);
}

template <class T>
T floor_div(T a, T b) {
  if constexpr (std::is_signed_v<T>) {
    if (b == 0 || b == -1) return truncated_div(a, b);
    T q = a / b;
    if (a % b != 0 && ((a < 0) != (b < 0))) --q;
    return q;
  } else {
    return b == 0 ? T(0) : static_cast<T>(a / b);
  }
}

template <class T>
T floor_mod(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_signed_v<T>) {
      if (b == 0 || b == -1) return 0;
    } else {
      if (b == 0) return 0;
    }
    T r = a % b;
    return r != 0 && ((r < 0) != (b < 0)) ? static_cast<T>(r + b) : r;
  } else {  // as TensorFlow: the remainder takes the sign of the divisor
    // half and bfloat16 compute in float, rounding once.
    using F = std::conditional_t<is_half_v<T>, float, T>;
    const F fb = static_cast<F>(b);
    F r = std::fmod(static_cast<F>(a), fb);
    if (r != F(0) && ((fb < 0) != (r < 0))) r += fb;
    return static_cast<T>(r);
  }
}

// The second operand of an integer division must hold no zero.
template <class T>
struct DivisionOp : SameTypeOp<T> {
  static constexpr bool kChecksRhs = std::is_integral_v<T>;
  static const char* check_rhs(const T* y, int64_t n) {
    return (ConstArrayMap<T>(y, n) == T(0)).any() ? "integer division by zero" : nullptr;
  }
};

template <class T>
struct RealDivOp : DivisionOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) {
    if constexpr (std::is_integral_v<T>) return x.binaryExpr(y, [](T a, T b) { return truncated_div(a, b); });
    else return x / y;
  }
};

template <class T>
struct FloorDivOp : DivisionOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) {
    if constexpr (std::is_integral_v<T>) return x.binaryExpr(y, [](T a, T b) { return floor_div(a, b); });
    else return (x / y).floor();
  }
};

template <class T>
struct FloorModOp : DivisionOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) {
    return x.binaryExpr(y, [](T a, T b) { return floor_mod(a, b); });
  }
};

// Integer powers by squaring in the wrapping type; negative exponents are
// an error, as in TensorFlow.
template <class T>
T int_pow(T base, T exponent) {
  using U = wrapping_t<T>;
  U result = 1;
  U b = static_cast<U>(base);
  for (T e = exponent; e > 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

template <class T>
struct PowOp : SameTypeOp<T> {
  static constexpr bool kChecksRhs = std::is_integral_v<T>;
  static const char* check_rhs(const T* y, int64_t n) {
    return (ConstArrayMap<T>(y, n) < T(0)).any()
               ? "integers to negative integer powers are not allowed"
               : nullptr;
  }
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) {
    if constexpr (std::is_integral_v<T>) return x.binaryExpr(y, [](T a, T b) { return int_pow(a, b); });
    else return Eigen::pow(x, y);
  }
};

// (x - y)^2, the loss term whose gradient is 2 (x - y); for complex
// numbers (x - y) conj(x - y), as TensorFlow defines it.
template <class T>
struct SquaredDifferenceOp : SameTypeOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) {
    if constexpr (is_signed_int_v<T>) return unwrap<T>((wrap<T>(x) - wrap<T>(y)).square());
    else if constexpr (is_complex_number_v<T>) return (x - y) * (x - y).conjugate();
    else return (x - y).square();
  }
};

// Maximum and Minimum propagate NaN, as TensorFlow's do.
template <class T>
struct MaximumOp : SameTypeOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) {
    return x.binaryExpr(y, Eigen::internal::scalar_max_op<T, T, Eigen::PropagateNaN>());
  }
};

template <class T>
struct MinimumOp : SameTypeOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) {
    return x.binaryExpr(y, Eigen::internal::scalar_min_op<T, T, Eigen::PropagateNaN>());
  }
};

// ---- comparisons and logic ------------------------------------------------

template <class T>
struct LessOp : PredicateOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) { return x < y; }
};
template <class T>
struct LessEqualOp : PredicateOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) { return x <= y; }
};
template <class T>
struct GreaterOp : PredicateOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) { return x > y; }
};
template <class T>
struct GreaterEqualOp : PredicateOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) { return x >= y; }
};
template <class T>
struct EqualOp : PredicateOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) { return x == y; }
};
template <class T>
struct NotEqualOp : PredicateOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) { return x != y; }
};
template <class T>
struct LogicalAndOp : SameTypeOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) { return x && y; }
};
template <class T>
struct LogicalOrOp : SameTypeOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) { return x || y; }
};

template <class T>
struct LogicalNotOp : SameTypeOp<T> {
  template <class X>
  static auto eval(const X& x) { return !x; }
};

// ---- strings ------------------------------------------------------------------

// Add on strings concatenates, Equal and NotEqual compare, with NumPy
// broadcasting. Elements are objects, not Eigen scalars: these walk the
// broadcast rows one element at a time.
struct ConcatStrings {
  using Out = std::string;
  std::string operator()(const std::string& a, const std::string& b) const { return a + b; }
};
template <bool kEqual>
struct CompareStrings {
  using Out = bool;
  bool operator()(const std::string& a, const std::string& b) const { return (a == b) == kEqual; }
};

template <class F>
class StringBinaryKernel final : public Kernel {
 public:
  using Out = typename F::Out;
  explicit StringBinaryKernel(const char* op, int incompatible_value = -1)
      : op_(op), incompatible_value_(incompatible_value) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& y = ctx.input(1);
    if (!holds<std::string>(x) || !holds<std::string>(y)) {
      const Tensor* inputs[] = {&x, &y};
      return input_dtype_error(op_, DType::string, inputs, 2);
    }
    Expected<Broadcast> b = Broadcast::make(x.shape(), y.shape());
    if (!b.ok()) {
      if (incompatible_value_ < 0)
        return Status(b.status().code(), std::string(op_) + ": " + b.status().message());
      ctx.set_output(0, Tensor::scalar<bool>(incompatible_value_ != 0));
      return ok_status();
    }
    Tensor out(dtype_v<Out>, b->output_shape());
    Out* o = out.mutable_data<Out>();
    const std::string* xs = x.data<std::string>();
    const std::string* ys = y.data<std::string>();
    const int last = b->rank() - 1;
    const int64_t len = b->dim(last);
    const int64_t sx = b->stride(0, last), sy = b->stride(1, last);
    F f;
    b->for_each_row([&](int64_t at, const int64_t* in) {
      for (int64_t j = 0; j < len; ++j) o[at + j] = f(xs[in[0] + j * sx], ys[in[1] + j * sy]);
    });
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  const char* op_;
  int incompatible_value_;
};

// ---- registration ---------------------------------------------------------

// The dtypes of TensorFlow's CPU kernels, op by op (its cwise_op_*.cc).
using AddTypes = NumberTypes;                                   // and string: Add, AddV2
using DivTypes = decltype(FloatAndComplexTypes{} + IntTypes{});  // integers truncate
using PowTypes = decltype(FloatAndComplexTypes{} + TypeList<int32_t, int64_t>{});
using SquaredDifferenceTypes = decltype(FloatAndComplexTypes{} + TypeList<int32_t, int64_t>{});
using EqualityTypes = decltype(NumberTypes{} + TypeList<bool>{});  // and string

template <class... Ts>
std::vector<DType> with_string(TypeList<Ts...> types) {
  std::vector<DType> d = types.dtypes();
  d.push_back(DType::string);
  return d;
}

template <template <class> class Op, class... Ts>
void binary_op(OpRegistry& r, const char* name, TypeList<Ts...> types, const char* output) {
  register_builtin(r, OpDef(name).shape_fn(shape_fns::binary)
                          .input("x: T")
                          .input("y: T")
                          .output(output)
                          .type_attr("T", types.dtypes())
                          .kernel(cwise_factory<BinaryKernel, Op>(types, name)));
}

// Add and AddV2: numbers add, strings concatenate.
void add_op(OpRegistry& r, const char* name) {
  KernelFactory numbers = cwise_factory<BinaryKernel, AddOp>(AddTypes{}, name);
  register_builtin(r, OpDef(name).shape_fn(shape_fns::binary)
                          .input("x: T")
                          .input("y: T")
                          .output("z: T")
                          .type_attr("T", with_string(AddTypes{}))
                          .kernel([name, numbers](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
                            if (!init.input_types.empty() && base_dtype(init.input_types[0]) == DType::string)
                              return std::unique_ptr<Kernel>(std::make_unique<StringBinaryKernel<ConcatStrings>>(name));
                            return numbers(init);
                          }));
}

// Equal and NotEqual: with incompatible_shape_error = false, shapes that do
// not broadcast give the scalar `incompatible` instead of an error.
template <template <class> class Op, bool kEqual>
KernelFactory equality(const char* op, bool incompatible) {
  return [op, incompatible](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    TF_ASSIGN_OR_RETURN(bool shape_error, init.attr<bool>("incompatible_shape_error"));
    const int value = shape_error ? -1 : incompatible;
    DType t = init.input_types.empty() ? DType::invalid : base_dtype(init.input_types[0]);
    std::unique_ptr<Kernel> k;
    if (t == DType::string) k = std::make_unique<StringBinaryKernel<CompareStrings<kEqual>>>(op, value);
    dispatch_among(EqualityTypes{}, t, [&](auto tag) {
      k = std::make_unique<BinaryKernel<Op<typename decltype(tag)::type>>>(op, value);
    });
    if (!k) return no_kernel_error(op, t);
    return k;
  };
}

void equality_op(OpRegistry& r, const char* name, KernelFactory kernel) {
  register_builtin(r, OpDef(name).shape_fn(shape_fns::binary)
                          .input("x: T")
                          .input("y: T")
                          .output("z: bool")
                          .type_attr("T", with_string(EqualityTypes{}))
                          .attr("incompatible_shape_error", "bool", true)
                          .kernel(std::move(kernel)));
}

void register_binary_ops(OpRegistry& r) {
  add_op(r, "Add");
  add_op(r, "AddV2");
  binary_op<SubOp>(r, "Sub", NumberTypes{}, "z: T");
  binary_op<MulOp>(r, "Mul", NumberTypes{}, "z: T");
  binary_op<RealDivOp>(r, "RealDiv", DivTypes{}, "z: T");
  // The legacy Div: integer quotients truncate toward zero, as TensorFlow's
  // CPU kernel (C++ division) does; a zero divisor is an error.
  binary_op<RealDivOp>(r, "Div", DivTypes{}, "z: T");
  binary_op<FloorDivOp>(r, "FloorDiv", RealTypes{}, "z: T");
  binary_op<FloorModOp>(r, "FloorMod", RealTypes{}, "z: T");
  binary_op<PowOp>(r, "Pow", PowTypes{}, "z: T");
  binary_op<MaximumOp>(r, "Maximum", RealTypes{}, "z: T");
  binary_op<MinimumOp>(r, "Minimum", RealTypes{}, "z: T");
  binary_op<SquaredDifferenceOp>(r, "SquaredDifference", SquaredDifferenceTypes{}, "z: T");

  binary_op<LessOp>(r, "Less", RealTypes{}, "z: bool");
  binary_op<LessEqualOp>(r, "LessEqual", RealTypes{}, "z: bool");
  binary_op<GreaterOp>(r, "Greater", RealTypes{}, "z: bool");
  binary_op<GreaterEqualOp>(r, "GreaterEqual", RealTypes{}, "z: bool");
  equality_op(r, "Equal", equality<EqualOp, true>("Equal", false));
  equality_op(r, "NotEqual", equality<NotEqualOp, false>("NotEqual", true));

  register_builtin(r, OpDef("LogicalAnd").shape_fn(shape_fns::binary)
                          .input("x: bool").input("y: bool").output("z: bool")
                          .kernel(cwise_factory<BinaryKernel, LogicalAndOp, bool>("LogicalAnd")));
  register_builtin(r, OpDef("LogicalOr").shape_fn(shape_fns::binary).input("x: bool").input("y: bool").output("z: bool")
                          .kernel(cwise_factory<BinaryKernel, LogicalOrOp, bool>("LogicalOr")));
  register_builtin(r, OpDef("LogicalNot").shape_fn(shape_fns::unary).input("x: bool").output("y: bool").kernel(
                          cwise_factory<UnaryKernel, LogicalNotOp, bool>("LogicalNot")));
}

}  // namespace

void register_math_ops(OpRegistry& r) {
  register_binary_ops(r);
  register_unary_ops(r);
  register_add_n_op(r);
  register_select_ops(r);
  register_cast_op(r);
  register_reduction_ops(r);
  register_matmul_ops(r);
  register_segment_ops(r);
  register_random_ops(r);
}

}  // namespace tagflow::ops
