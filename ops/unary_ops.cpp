// The unary math functions (Neg, Abs, Square, Sign, Reciprocal, Sqrt,
// Rsqrt, Exp, Log, Tanh, Sigmoid, Floor), the predicate IsFinite and,
// beside their functions, the gradient ops TensorFlow expresses through the
// function's output y: SigmoidGrad,
// TanhGrad, SqrtGrad, RsqrtGrad and ReciprocalGrad, each (y, dy) -> z as in
// TensorFlow's math_ops.cc (no broadcasting; y and dy have as many elements).
// Integer Neg, Abs and Square wrap on overflow (ops/cwise_kernel.hpp).
// Float Exp, Log, Tanh and Sigmoid run the same Eigen expressions compiled
// for the machine's instruction set (ops/cpu/isa_kernels.hpp).
#include <cmath>

#include "ops/cwise_kernel.hpp"
#include "ops/math_ops.hpp"
#include "ops/shape_fns.hpp"

namespace tagflow::ops {

namespace {

template <class T>
struct NegOp : SameTypeOp<T> {
  template <class X>
  static auto eval(const X& x) {
    if constexpr (is_signed_int_v<T>) return unwrap<T>(-wrap<T>(x));
    else return -x;
  }
};

template <class T>
struct AbsOp : SameTypeOp<T> {
  template <class X>
  static auto eval(const X& x) {
    if constexpr (is_signed_int_v<T>) {  // |min| wraps to min
      using U = wrapping_t<T>;
      return x.unaryExpr([](T a) { return a < 0 ? static_cast<T>(U(0) - static_cast<U>(a)) : a; });
    } else {
      return x.abs();
    }
  }
};

template <class T>
struct SquareOp : SameTypeOp<T> {
  template <class X>
  static auto eval(const X& x) {
    if constexpr (is_narrow_int_v<T>) return x.unaryExpr([](T a) { return WrappingProduct<T>()(a, a); });
    else if constexpr (is_signed_int_v<T>) return unwrap<T>(wrap<T>(x).square());
    else return x.square();
  }
};

template <class T>
struct SqrtOp : SameTypeOp<T> {
  template <class X>
  static auto eval(const X& x) { return x.sqrt(); }
};
template <class T>
struct RsqrtOp : SameTypeOp<T> {
  template <class X>
  static auto eval(const X& x) { return x.rsqrt(); }
};
template <class T>
struct ExpOp : SameTypeOp<T>, IsaFloat<T, &cpu::IsaKernels::exp> {
  template <class X>
  static auto eval(const X& x) { return x.exp(); }
};
template <class T>
struct LogOp : SameTypeOp<T>, IsaFloat<T, &cpu::IsaKernels::log> {
  template <class X>
  static auto eval(const X& x) { return x.log(); }
};
template <class T>
struct SinOp : SameTypeOp<T> {
  template <class X>
  static auto eval(const X& x) { return x.sin(); }
};
template <class T>
struct CosOp : SameTypeOp<T> {
  template <class X>
  static auto eval(const X& x) { return x.cos(); }
};
template <class T>
struct TanhOp : SameTypeOp<T>, IsaFloat<T, &cpu::IsaKernels::tanh> {
  template <class X>
  static auto eval(const X& x) { return x.tanh(); }
};
template <class T>
struct SigmoidOp : SameTypeOp<T>, IsaFloat<T, &cpu::IsaKernels::sigmoid> {
  template <class X>
  static auto eval(const X& x) { return x.logistic(); }
};

// -1, 0 or 1 (Eigen's sign).
template <class T>
struct SignOp : SameTypeOp<T> {
  template <class X>
  static auto eval(const X& x) { return x.sign(); }
};
template <class T>
struct ReciprocalOp : SameTypeOp<T> {
  template <class X>
  static auto eval(const X& x) { return x.inverse(); }
};

// True where x is neither infinite nor NaN.
template <class T>
struct IsFiniteOp : CwiseOp {
  using In = T;
  using Out = bool;
  template <class X>
  static auto eval(const X& x) {
    return x.unaryExpr([](T a) { return static_cast<bool>((Eigen::numext::isfinite)(a)); });
  }
};

// The largest integer not greater than x (NaN and infinities unchanged).
template <class T>
struct FloorOp : SameTypeOp<T> {
  template <class X>
  static auto eval(const X& x) { return x.floor(); }
};

// ---- gradients through the output y -----------------------------------------

// d sigmoid = y (1 - y)
template <class T>
struct SigmoidGradOp : CwiseGradOp<T> {
  template <class Y, class D>
  static auto eval(const Y& y, const D& dy) { return dy * y * (T(1) - y); }
};
// d tanh = 1 - y^2
template <class T>
struct TanhGradOp : CwiseGradOp<T> {
  template <class Y, class D>
  static auto eval(const Y& y, const D& dy) { return dy * (T(1) - y * y); }
};
// d sqrt = 0.5 / y
template <class T>
struct SqrtGradOp : CwiseGradOp<T> {
  template <class Y, class D>
  static auto eval(const Y& y, const D& dy) { return dy * T(0.5) / y; }
};
// d rsqrt = -0.5 y^3
template <class T>
struct RsqrtGradOp : CwiseGradOp<T> {
  template <class Y, class D>
  static auto eval(const Y& y, const D& dy) { return T(-0.5) * (dy * y) * (y * y); }
};
// d (1/x) = -y^2
template <class T>
struct ReciprocalGradOp : CwiseGradOp<T> {
  template <class Y, class D>
  static auto eval(const Y& y, const D& dy) { return -dy * (y * y); }
};

// ---- registration -----------------------------------------------------------

// The dtypes of TensorFlow's CPU kernels (its cwise_op_*.cc).
using NegTypes = decltype(FloatTypes{} + SignedIntTypes{} + ComplexTypes{});
using AbsTypes = decltype(FloatTypes{} + SignedIntTypes{});

template <template <class> class Op, class... Ts>
void unary_op(OpRegistry& r, const char* name, TypeList<Ts...> types) {
  register_builtin(r, OpDef(name).shape_fn(shape_fns::unary)
                          .input("x: T")
                          .output("y: T")
                          .type_attr("T", types.dtypes())
                          .kernel(cwise_factory<UnaryKernel, Op>(types, name)));
}

template <template <class> class Op>
void unary_grad_op(OpRegistry& r, const char* name) {
  register_builtin(r, OpDef(name).shape_fn(shape_fns::same_shape_pair)
                          .input("y: T")
                          .input("dy: T")
                          .output("z: T")
                          .type_attr("T", FloatTypes::dtypes())
                          .kernel(cwise_factory<CwiseGradKernel, Op>(FloatTypes{}, name)));
}

}  // namespace

void register_unary_ops(OpRegistry& r) {
  unary_op<NegOp>(r, "Neg", NegTypes{});
  unary_op<AbsOp>(r, "Abs", AbsTypes{});
  unary_op<SquareOp>(r, "Square", NumberTypes{});
  unary_op<SignOp>(r, "Sign", NegTypes{});
  unary_op<ReciprocalOp>(r, "Reciprocal", FloatAndComplexTypes{});
  unary_op<SqrtOp>(r, "Sqrt", FloatAndComplexTypes{});
  unary_op<RsqrtOp>(r, "Rsqrt", FloatAndComplexTypes{});
  unary_op<ExpOp>(r, "Exp", FloatAndComplexTypes{});
  unary_op<LogOp>(r, "Log", FloatAndComplexTypes{});
  unary_op<SinOp>(r, "Sin", FloatAndComplexTypes{});
  unary_op<CosOp>(r, "Cos", FloatAndComplexTypes{});
  unary_op<TanhOp>(r, "Tanh", FloatAndComplexTypes{});
  unary_op<SigmoidOp>(r, "Sigmoid", FloatAndComplexTypes{});
  unary_op<FloorOp>(r, "Floor", FloatTypes{});
  register_builtin(r, OpDef("IsFinite").shape_fn(shape_fns::unary)
                          .input("x: T")
                          .output("y: bool")
                          .type_attr("T", FloatTypes::dtypes())
                          .kernel(cwise_factory<UnaryKernel, IsFiniteOp>(FloatTypes{}, "IsFinite")));
  unary_grad_op<SigmoidGradOp>(r, "SigmoidGrad");
  unary_grad_op<TanhGradOp>(r, "TanhGrad");
  unary_grad_op<SqrtGradOp>(r, "SqrtGrad");
  unary_grad_op<RsqrtGradOp>(r, "RsqrtGrad");
  unary_grad_op<ReciprocalGradOp>(r, "ReciprocalGrad");
}

}  // namespace tagflow::ops
