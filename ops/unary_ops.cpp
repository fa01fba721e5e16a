// The unary math functions (Neg, Abs, Square, Sign, Reciprocal, Sqrt,
// Rsqrt, Exp, Log, Tanh, Sigmoid, Floor), the predicate IsFinite and,
// beside their functions, the gradient ops TensorFlow expresses through the
// function's output y: SigmoidGrad,
// TanhGrad, SqrtGrad, RsqrtGrad and ReciprocalGrad, each (y, dy) -> z as in
// TensorFlow's math_ops.cc (no broadcasting; y and dy have as many elements).
// Integer Neg, Abs and Square wrap on overflow (ops/cwise_kernel.hpp).
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
    if constexpr (is_signed_int_v<T>) return unwrap<T>(wrap<T>(x).square());
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
struct ExpOp : SameTypeOp<T> {
  template <class X>
  static auto eval(const X& x) { return x.exp(); }
};
template <class T>
struct LogOp : SameTypeOp<T> {
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
struct TanhOp : SameTypeOp<T> {
  template <class X>
  static auto eval(const X& x) { return x.tanh(); }
};
template <class T>
struct SigmoidOp : SameTypeOp<T> {
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
    return x.unaryExpr([](T a) { return static_cast<bool>(std::isfinite(a)); });
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

template <template <class> class Op>
KernelFactory real_unary(const char* op) {
  return cwise_factory<UnaryKernel, Op, float, double, int32_t, int64_t>(op);
}
template <template <class> class Op>
KernelFactory float_unary(const char* op) {
  return cwise_factory<UnaryKernel, Op, float, double>(op);
}

void unary_op(OpRegistry& r, const char* name, std::vector<DType> types, KernelFactory kernel) {
  register_builtin(r, OpDef(name).shape_fn(shape_fns::unary)
                          .input("x: T")
                          .output("y: T")
                          .type_attr("T", std::move(types))
                          .kernel(std::move(kernel)));
}

template <template <class> class Op>
void unary_grad_op(OpRegistry& r, const char* name) {
  register_builtin(r, OpDef(name).shape_fn(shape_fns::same_shape_pair)
                          .input("y: T")
                          .input("dy: T")
                          .output("z: T")
                          .type_attr("T", float_types())
                          .kernel(cwise_factory<CwiseGradKernel, Op, float, double>(name)));
}

}  // namespace

void register_unary_ops(OpRegistry& r) {
  unary_op(r, "Neg", real_types(), real_unary<NegOp>("Neg"));
  unary_op(r, "Abs", real_types(), real_unary<AbsOp>("Abs"));
  unary_op(r, "Square", real_types(), real_unary<SquareOp>("Square"));
  unary_op(r, "Sign", real_types(), real_unary<SignOp>("Sign"));
  unary_op(r, "Reciprocal", float_types(), float_unary<ReciprocalOp>("Reciprocal"));
  unary_op(r, "Sqrt", float_types(), float_unary<SqrtOp>("Sqrt"));
  unary_op(r, "Rsqrt", float_types(), float_unary<RsqrtOp>("Rsqrt"));
  unary_op(r, "Exp", float_types(), float_unary<ExpOp>("Exp"));
  unary_op(r, "Log", float_types(), float_unary<LogOp>("Log"));
  unary_op(r, "Sin", float_types(), float_unary<SinOp>("Sin"));
  unary_op(r, "Cos", float_types(), float_unary<CosOp>("Cos"));
  unary_op(r, "Tanh", float_types(), float_unary<TanhOp>("Tanh"));
  unary_op(r, "Sigmoid", float_types(), float_unary<SigmoidOp>("Sigmoid"));
  unary_op(r, "Floor", float_types(), float_unary<FloorOp>("Floor"));
  register_builtin(r, OpDef("IsFinite").shape_fn(shape_fns::unary)
                          .input("x: T")
                          .output("y: bool")
                          .type_attr("T", float_types())
                          .kernel(float_unary<IsFiniteOp>("IsFinite")));
  unary_grad_op<SigmoidGradOp>(r, "SigmoidGrad");
  unary_grad_op<TanhGradOp>(r, "TanhGrad");
  unary_grad_op<SqrtGradOp>(r, "SqrtGrad");
  unary_grad_op<RsqrtGradOp>(r, "RsqrtGrad");
  unary_grad_op<ReciprocalGradOp>(r, "ReciprocalGrad");
}

}  // namespace tagflow::ops
