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
    if constexpr (is_signed_int_v<T>) return unwrap<T>(wrap<T>(x) * wrap<T>(y));
    else return x * y;
  }
};

// Integer division helpers. A zero divisor is rejected before computing
// (check_rhs); they still return 0 for it so that nothing is ever UB, and
// the one overflowing quotient, min / -1, wraps to min.
template <class T>
T truncated_div(T a, T b) {
  if (b == 0) return 0;
  if (b == -1) return static_cast<T>(wrapping_t<T>(0) - static_cast<wrapping_t<T>>(a));
  return a / b;
}

template <class T>
T floor_div(T a, T b) {
  if (b == 0 || b == -1) return truncated_div(a, b);
  T q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}

template <class T>
T floor_mod(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0 || b == -1) return 0;
    T r = a % b;
    return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
  } else {  // as TensorFlow: the remainder takes the sign of the divisor
    T r = std::fmod(a, b);
    return r != 0 && ((b < 0) != (r < 0)) ? r + b : r;
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

// (x - y)^2, the loss term whose gradient is 2 (x - y).
template <class T>
struct SquaredDifferenceOp : SameTypeOp<T> {
  template <class X, class Y>
  static auto eval(const X& x, const Y& y) {
    if constexpr (is_signed_int_v<T>) return unwrap<T>((wrap<T>(x) - wrap<T>(y)).square());
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

// ---- registration ---------------------------------------------------------

template <template <class> class Op>
KernelFactory real_binary(const char* op) {
  return cwise_factory<BinaryKernel, Op, float, double, int32_t, int64_t>(op);
}

void binary_op(OpRegistry& r, const char* name, std::vector<DType> types, const char* output,
               KernelFactory kernel) {
  register_builtin(r, OpDef(name).shape_fn(shape_fns::binary)
                          .input("x: T")
                          .input("y: T")
                          .output(output)
                          .type_attr("T", std::move(types))
                          .kernel(std::move(kernel)));
}

// Equal and NotEqual: with incompatible_shape_error = false, shapes that do
// not broadcast give the scalar `incompatible` instead of an error.
template <template <class> class Op>
KernelFactory equality(const char* op, bool incompatible) {
  return [op, incompatible](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    TF_ASSIGN_OR_RETURN(bool shape_error, init.attr<bool>("incompatible_shape_error"));
    const int value = shape_error ? -1 : incompatible;
    DType t = init.input_types.empty() ? DType::invalid : base_dtype(init.input_types[0]);
    std::unique_ptr<Kernel> k;
    dispatch_among<float, double, int32_t, int64_t, bool>(t, [&](auto tag) {
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
                          .type_attr("T", real_and_bool_types())
                          .attr("incompatible_shape_error", "bool", true)
                          .kernel(std::move(kernel)));
}

void register_binary_ops(OpRegistry& r) {
  binary_op(r, "Add", real_types(), "z: T", real_binary<AddOp>("Add"));
  binary_op(r, "AddV2", real_types(), "z: T", real_binary<AddOp>("AddV2"));
  binary_op(r, "Sub", real_types(), "z: T", real_binary<SubOp>("Sub"));
  binary_op(r, "Mul", real_types(), "z: T", real_binary<MulOp>("Mul"));
  binary_op(r, "RealDiv", real_types(), "z: T", real_binary<RealDivOp>("RealDiv"));
  // The legacy Div: integer quotients truncate toward zero, as TensorFlow's
  // CPU kernel (C++ division) does; a zero divisor is an error.
  binary_op(r, "Div", real_types(), "z: T", real_binary<RealDivOp>("Div"));
  binary_op(r, "FloorDiv", real_types(), "z: T", real_binary<FloorDivOp>("FloorDiv"));
  binary_op(r, "FloorMod", real_types(), "z: T", real_binary<FloorModOp>("FloorMod"));
  binary_op(r, "Pow", real_types(), "z: T", real_binary<PowOp>("Pow"));
  binary_op(r, "Maximum", real_types(), "z: T", real_binary<MaximumOp>("Maximum"));
  binary_op(r, "Minimum", real_types(), "z: T", real_binary<MinimumOp>("Minimum"));
  binary_op(r, "SquaredDifference", real_types(), "z: T",
            real_binary<SquaredDifferenceOp>("SquaredDifference"));

  binary_op(r, "Less", real_types(), "z: bool", real_binary<LessOp>("Less"));
  binary_op(r, "LessEqual", real_types(), "z: bool", real_binary<LessEqualOp>("LessEqual"));
  binary_op(r, "Greater", real_types(), "z: bool", real_binary<GreaterOp>("Greater"));
  binary_op(r, "GreaterEqual", real_types(), "z: bool",
            real_binary<GreaterEqualOp>("GreaterEqual"));
  equality_op(r, "Equal", equality<EqualOp>("Equal", false));
  equality_op(r, "NotEqual", equality<NotEqualOp>("NotEqual", true));

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
