// Elementwise (coefficient-wise) kernels: the templates behind the unary and
// binary math ops, Relu, and the gradient ops of elementwise functions. An op is a small struct naming its tensor
// element types and an `eval` on Eigen 1-d array expressions; the kernels
// here do the dtype checks, buffer reuse and NumPy broadcasting around it.
//
// The same-shape and scalar paths cost one output allocation (none when an
// input buffer is reused) and no string building: they run once per node
// instance in the executor's inner loop. Kernels are immutable after
// construction, so compute() may run on several threads at once.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <type_traits>

#include <Eigen/Core>

#include "ops/broadcast.hpp"
#include "ops/cpu/isa_kernels.hpp"
#include "ops/cpu/parallel.hpp"
#include "ops/kernel.hpp"
#include "ops/tensor.hpp"
#include "ops/type_list.hpp"

namespace tagflow::ops {

// Calls f(begin, count) over [0, n): once, or, for large n, over ranges
// split across the session's threads (ops/cpu/parallel.hpp). Ranges start
// at multiples of 64 bytes of elements: buffers are 64-byte aligned, so
// every range is vectorised exactly as the whole array would be and the
// values are bitwise those of one call.
template <class T, class F>
void for_element_ranges(int64_t n, F&& f) {
  constexpr int64_t kGrain = 64 / sizeof(T) > 0 ? 64 / sizeof(T) : 1;
  const int blocks = cpu::parallel_blocks(n, n / kGrain);
  if (blocks <= 1) {
    f(int64_t{0}, n);
    return;
  }
  const int64_t grains = (n + kGrain - 1) / kGrain;
  cpu::parallel_run(blocks, [&](int i) {
    const int64_t b = grains * i / blocks * kGrain;
    const int64_t e = std::min(n, grains * (i + 1) / blocks * kGrain);
    if (b < e) f(b, e - b);
  });
}

// Eigen views of tensor elements as 1-d arrays.
template <class T>
using ArrayMap = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using ConstArrayMap = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;
template <class T>
using ConstArray = typename Eigen::Array<T, Eigen::Dynamic, 1>::ConstantReturnType;

template <class T>
inline constexpr bool is_signed_int_v =
    std::is_integral_v<T> && std::is_signed_v<T> && !std::is_same_v<T, bool>;

// The unsigned twin of a signed integer type, T itself otherwise. Integer
// arithmetic that may overflow is done in it, so that overflow wraps (as
// TensorFlow's kernels do on every real machine) instead of being UB.
template <class T, bool = is_signed_int_v<T>>
struct wrapping { using type = T; };
template <class T>
struct wrapping<T, true> { using type = std::make_unsigned_t<T>; };
template <class T>
using wrapping_t = typename wrapping<T>::type;

// 8- and 16-bit integers, which C++ promotes to int before computing: the
// product of two 16-bit values can overflow int.
template <class T>
inline constexpr bool is_narrow_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) < sizeof(int);

// a * b for narrow integers, computed in unsigned int so that it wraps
// (the low bits are those of the exact product, for signed and unsigned T).
template <class T>
struct WrappingProduct {
  T operator()(T a, T b) const {
    return static_cast<T>(static_cast<unsigned>(a) * static_cast<unsigned>(b));
  }
};

// x cast to the wrapping type of T, and back.
template <class T, class X>
auto wrap(const X& x) { return x.template cast<wrapping_t<T>>(); }
template <class T, class X>
auto unwrap(const X& x) { return x.template cast<T>(); }

template <class T>
struct type_tag { using type = T; };

// Calls f(type_tag<T>{}) for the T among Ts whose dtype is `t`; returns
// false if none is.
template <class... Ts, class F>
bool dispatch_among(DType t, F&& f) {
  return ((t == dtype_v<Ts> ? (f(type_tag<Ts>{}), true) : false) || ...);
}

// The same for the types of a TypeList.
template <class... Ts, class F>
bool dispatch_among(TypeList<Ts...>, DType t, F&& f) {
  return dispatch_among<Ts...>(t, std::forward<F>(f));
}

// True if `t` holds elements of type T (a ref dtype counts as its base).
template <class T>
bool holds(const Tensor& t) {
  return t.dtype() == dtype_v<T> || base_dtype(t.dtype()) == dtype_v<T>;
}

// The elements of a tensor already checked with holds<T>: Tensor::data
// checks the dtype again, which the per-node fast paths skip.
template <class T>
const T* elements(const Tensor& t) {
  return static_cast<const T*>(t.raw_data());
}

// "Add expects float32 inputs, got float32 and int32". Cold path.
Status input_dtype_error(const char* op, DType expected, const Tensor* const* inputs, int n);
// "Add has no kernel for dtype string".
Status no_kernel_error(const char* op, DType t);

// The output buffer of an elementwise op: input i's when no one else holds
// it and it has the output's dtype and shape, else a fresh one.
template <class Out>
Tensor reuse_or_allocate(KernelContext& ctx, std::initializer_list<int> candidates,
                         const Shape& shape) {
  if constexpr (!std::is_same_v<Out, std::string>) {  // object elements are never reused
    for (int i : candidates) {
      const Tensor& in = ctx.input(i);
      if (in.dtype() == dtype_v<Out> && in.is_unique() && in.shape() == shape)
        return ctx.take_input(i);
    }
  }
  return Tensor::uninitialized(dtype_v<Out>, shape);
}

// Base of op structs; an op that must see its second operand before
// computing (integer division by zero) sets kChecksRhs and defines
// `static const char* check_rhs(const In* y, int64_t n)`, returning an
// error message or nullptr.
struct CwiseOp {
  static constexpr bool kChecksRhs = false;
};

// The base of an op whose output has its inputs' element type.
template <class T>
struct SameTypeOp : CwiseOp {
  using In = T;
  using Out = T;
};

// A unary Op whose float form is a kernel of the instruction-set table
// (ops/cpu/isa_kernels.hpp) derives from IsaFloat<T, &IsaKernels::f>: for
// T = float it names the kernel (kIsa), which UnaryKernel runs instead of
// its own eval (the same Eigen expression, built for the machine).
template <class T, cpu::FloatMap cpu::IsaKernels::*F>
struct IsaFloat {};
template <cpu::FloatMap cpu::IsaKernels::*F>
struct IsaFloat<float, F> {
  static constexpr cpu::FloatMap cpu::IsaKernels::*kIsa = F;
};

template <class Op, class = void>
inline constexpr bool has_isa_kernel_v = false;
template <class Op>
inline constexpr bool has_isa_kernel_v<Op, std::void_t<decltype(Op::kIsa)>> = true;

// Op: `using In, Out` (tensor element types) and
// `static auto eval(const X&)` on an Eigen array expression of In.
template <class Op>
class UnaryKernel final : public Kernel {
 public:
  using In = typename Op::In;
  using Out = typename Op::Out;

  explicit UnaryKernel(const char* op) : op_(op) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (!holds<In>(x)) {
      const Tensor* inputs[] = {&x};
      return input_dtype_error(op_, dtype_v<In>, inputs, 1);
    }
    const In* xp = elements<In>(x);
    const int64_t n = x.num_elements();
    const Shape shape = x.shape();
    Tensor out = reuse_or_allocate<Out>(ctx, {0}, shape);
    Out* op = static_cast<Out*>(out.raw_mutable_data());
    if constexpr (has_isa_kernel_v<Op>) {
      const cpu::FloatMap f = cpu::isa_kernels().*Op::kIsa;
      for_element_ranges<Out>(n, [&](int64_t b, int64_t len) { f(xp + b, op + b, len); });
    } else if (n == 1) {
      Eigen::Map<Eigen::Array<Out, 1, 1>> dst(op);
      dst = Op::eval(Eigen::Map<const Eigen::Array<In, 1, 1>>(xp));
    } else if (n > 0) {
      for_element_ranges<Out>(n, [&](int64_t b, int64_t len) {
        ArrayMap<Out>(op + b, len) = Op::eval(ConstArrayMap<In>(xp + b, len));
      });
    }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  const char* op_;
};

// Op: `using In, Out` and `static auto eval(const X&, const Y&)` on two
// Eigen array expressions of In of equal length.
template <class Op>
class BinaryKernel final : public Kernel {
 public:
  using In = typename Op::In;
  using Out = typename Op::Out;

  // incompatible_value: for Equal/NotEqual with incompatible_shape_error =
  // false, the scalar result when the shapes do not broadcast (-1: error).
  explicit BinaryKernel(const char* op, int incompatible_value = -1)
      : op_(op), incompatible_value_(incompatible_value) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& y = ctx.input(1);
    if (!holds<In>(x) || !holds<In>(y)) {
      const Tensor* inputs[] = {&x, &y};
      return input_dtype_error(op_, dtype_v<In>, inputs, 2);
    }
    const In* xp = elements<In>(x);
    const In* yp = elements<In>(y);
    const int64_t xn = x.num_elements();
    const int64_t yn = y.num_elements();
    if constexpr (Op::kChecksRhs) {
      if (const char* e = Op::check_rhs(yp, yn))
        return Status(Error::invalid_argument, std::string(op_) + ": " + e);
    }
    if (x.shape() == y.shape()) {
      // A reference stays valid when x moves into `out`: the shape lives
      // with the storage.
      const Shape& shape = x.shape();
      Tensor out = reuse_or_allocate<Out>(ctx, {0, 1}, shape);
      Out* op = static_cast<Out*>(out.raw_mutable_data());
      if (xn == 1) {
        using One = Eigen::Map<const Eigen::Array<In, 1, 1>>;
        Eigen::Map<Eigen::Array<Out, 1, 1>> dst(op);
        dst = Op::eval(One(xp), One(yp));
      } else if (xn > 0) {
        for_element_ranges<Out>(xn, [&](int64_t b, int64_t len) {
          ArrayMap<Out>(op + b, len) = Op::eval(ConstArrayMap<In>(xp + b, len), ConstArrayMap<In>(yp + b, len));
        });
      }
      ctx.set_output(0, std::move(out));
      return ok_status();
    }
    if (yn == 1 && y.rank() <= x.rank()) {  // a scalar right-hand side
      const In s = *yp;
      const Shape shape = x.shape();
      Tensor out = reuse_or_allocate<Out>(ctx, {0}, shape);
      Out* op = static_cast<Out*>(out.raw_mutable_data());
      for_element_ranges<Out>(xn, [&](int64_t b, int64_t len) {
        ArrayMap<Out>(op + b, len) = Op::eval(ConstArrayMap<In>(xp + b, len), ConstArray<In>::Constant(len, s));
      });
      ctx.set_output(0, std::move(out));
      return ok_status();
    }
    if (xn == 1 && x.rank() <= y.rank()) {  // a scalar left-hand side
      const In s = *xp;
      const Shape shape = y.shape();
      Tensor out = reuse_or_allocate<Out>(ctx, {1}, shape);
      Out* op = static_cast<Out*>(out.raw_mutable_data());
      for_element_ranges<Out>(yn, [&](int64_t b, int64_t len) {
        ArrayMap<Out>(op + b, len) = Op::eval(ConstArray<In>::Constant(len, s), ConstArrayMap<In>(yp + b, len));
      });
      ctx.set_output(0, std::move(out));
      return ok_status();
    }
    return compute_broadcast(ctx, xp, yp);
  }

 private:
  Status compute_broadcast(KernelContext& ctx, const In* xp, const In* yp) const {
    Expected<Broadcast> b = Broadcast::make(ctx.input(0).shape(), ctx.input(1).shape());
    if (!b.ok()) {
      if (incompatible_value_ < 0)
        return Status(b.status().code(), std::string(op_) + ": " + b.status().message());
      ctx.set_output(0, Tensor::scalar<bool>(incompatible_value_ != 0));
      return ok_status();
    }
    Tensor out = Tensor::uninitialized(dtype_v<Out>, b->output_shape());
    Out* op = out.mutable_data<Out>();
    const int last = b->rank() - 1;
    const int64_t len = b->dim(last);
    const bool x_repeats = b->stride(0, last) == 0;
    const bool y_repeats = b->stride(1, last) == 0;
    // With two operands at most one repeats along the innermost dimension:
    // a collapsed dimension exists only where some operand has it.
    b->for_each_row([&](int64_t o, const int64_t* in) {
      ArrayMap<Out> dst(op + o, len);
      if (x_repeats)
        dst = Op::eval(ConstArray<In>::Constant(len, xp[in[0]]), ConstArrayMap<In>(yp + in[1], len));
      else if (y_repeats)
        dst = Op::eval(ConstArrayMap<In>(xp + in[0], len), ConstArray<In>::Constant(len, yp[in[1]]));
      else
        dst = Op::eval(ConstArrayMap<In>(xp + in[0], len), ConstArrayMap<In>(yp + in[1], len));
    });
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

  const char* op_;
  int incompatible_value_;
};

// The base of the gradient ops of elementwise functions (SigmoidGrad(y, dy),
// ReluGrad(gradients, features), ...). As in TensorFlow they do not
// broadcast: the operands have equal element counts, or equal shapes when
// kSameShape, and the output takes the first one's shape.
template <class T>
struct CwiseGradOp : SameTypeOp<T> {
  static constexpr bool kSameShape = false;
};

// Op: a CwiseGradOp with `static auto eval(const X&, const Y&)`.
template <class Op>
class CwiseGradKernel final : public Kernel {
 public:
  using In = typename Op::In;
  using Out = typename Op::Out;

  explicit CwiseGradKernel(const char* op) : op_(op) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const Tensor& y = ctx.input(1);
    if (!holds<In>(x) || !holds<In>(y)) {
      const Tensor* inputs[] = {&x, &y};
      return input_dtype_error(op_, dtype_v<In>, inputs, 2);
    }
    const int64_t n = x.num_elements();
    if (Op::kSameShape ? x.shape() != y.shape() : n != y.num_elements())
      return Status(Error::invalid_argument,
                    std::string(op_) + " expects inputs of the same " +
                        (Op::kSameShape ? "shape" : "number of elements") + ", got shapes " +
                        x.shape().to_string() + " and " + y.shape().to_string());
    const In* xp = elements<In>(x);
    const In* yp = elements<In>(y);
    const Shape shape = x.shape();
    Tensor out = reuse_or_allocate<Out>(ctx, {0, 1}, shape);
    if (n > 0)
      ArrayMap<Out>(static_cast<Out*>(out.raw_mutable_data()), n) =
          Op::eval(ConstArrayMap<In>(xp, n), ConstArrayMap<In>(yp, n));
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  const char* op_;
};

// Kernel factories for op structs templated on the element type: the
// kernel for the node's first input dtype among Ts.
template <template <class> class Kern, template <class> class Op, class... Ts>
KernelFactory cwise_factory(const char* op) {
  return [op](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    DType t = init.input_types.empty() ? DType::invalid : base_dtype(init.input_types[0]);
    std::unique_ptr<Kernel> k;
    dispatch_among<Ts...>(t, [&](auto tag) {
      k = std::make_unique<Kern<Op<typename decltype(tag)::type>>>(op);
    });
    if (!k) return no_kernel_error(op, t);
    return k;
  };
}

// The same for the types of a TypeList (ops/type_list.hpp), which also
// gives the op's allowed dtypes.
template <template <class> class Kern, template <class> class Op, class... Ts>
KernelFactory cwise_factory(TypeList<Ts...>, const char* op) {
  return cwise_factory<Kern, Op, Ts...>(op);
}

}  // namespace tagflow::ops
