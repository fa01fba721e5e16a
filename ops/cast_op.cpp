// Cast: converts between every fixed-size dtype — the computable ones, the
// storage-only ones (bool, half, bfloat16, the narrow and unsigned
// integers) and complex.
//
// Conversions follow TensorFlow where it defines them: to bool is x != 0,
// from bool is 0/1, complex to real keeps the real part, narrowing integers
// wrap. Where C++ leaves it undefined tagflow saturates: a float out of an
// integer type's range becomes its min or max, NaN becomes 0. Truncate =
// true drops the mantissa bits a narrower float type cannot hold instead of
// rounding them, as TensorFlow does.
#include <cmath>
#include <cstring>
#include <limits>

#include "ops/cwise_kernel.hpp"
#include "ops/math_ops.hpp"
#include "ops/shape_fns.hpp"

namespace tagflow::ops {

namespace {

template <class T>
inline constexpr bool is_complex_v =
    std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;
template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>;

// Mantissa bits stored by a floating type (0 for the rest).
template <class T>
constexpr int mantissa_bits() {
  if constexpr (std::is_same_v<T, double>) return 52;
  else if constexpr (std::is_same_v<T, float>) return 23;
  else if constexpr (std::is_same_v<T, Eigen::half>) return 10;
  else if constexpr (std::is_same_v<T, Eigen::bfloat16>) return 7;
  else return 0;
}

// v with its `bits` lowest mantissa bits cleared; NaN is left alone so
// that it stays NaN.
template <class F>
F clear_low_mantissa(F v, int bits) {
  if (std::isnan(v)) return v;
  using Bits = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  Bits b;
  std::memcpy(&b, &v, sizeof b);
  b &= ~((Bits{1} << bits) - 1);
  std::memcpy(&v, &b, sizeof b);
  return v;
}

// A float or double to an integer type, saturating where C++ is undefined.
template <class Dst, class Src>
Dst saturate(Src v) {
  if (std::isnan(v)) return 0;
  const Src hi = std::ldexp(Src(1), std::numeric_limits<Dst>::digits);  // max + 1
  if (v >= hi) return std::numeric_limits<Dst>::max();
  if constexpr (std::is_signed_v<Dst>) {
    if (v < -hi) return std::numeric_limits<Dst>::min();
  } else {
    if (v <= Src(-1)) return 0;
  }
  return static_cast<Dst>(v);
}

template <class Dst, class Src>
Dst convert(Src v) {
  if constexpr (std::is_same_v<Dst, bool>) {
    return v != Src(0);
  } else if constexpr (is_complex_v<Dst>) {
    using R = typename Dst::value_type;
    if constexpr (is_complex_v<Src>) return Dst(static_cast<R>(v.real()), static_cast<R>(v.imag()));
    else return Dst(convert<R>(v), R(0));
  } else if constexpr (is_complex_v<Src>) {
    return convert<Dst>(v.real());
  } else if constexpr (is_half_v<Src>) {
    return convert<Dst>(static_cast<float>(v));
  } else if constexpr (is_half_v<Dst>) {
    return Dst(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<Dst> && std::is_floating_point_v<Src>) {
    return saturate<Dst>(v);
  } else {
    return static_cast<Dst>(v);
  }
}

template <class Src, class Dst>
class CastKernel final : public Kernel {
 public:
  explicit CastKernel(bool truncate) : truncate_(truncate) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (!holds<Src>(x)) {
      const Tensor* inputs[] = {&x};
      return input_dtype_error("Cast", dtype_v<Src>, inputs, 1);
    }
    if constexpr (std::is_same_v<Src, Dst>) {
      ctx.set_output(0, x.with_dtype(dtype_v<Dst>));  // shares the buffer
    } else {
      const int64_t n = x.num_elements();
      Tensor out(dtype_v<Dst>, x.shape());
      if (n > 0) {
        auto in = ConstArrayMap<Src>(x.data<Src>(), n);
        auto dst = ArrayMap<Dst>(out.mutable_data<Dst>(), n);
        constexpr int dropped = mantissa_bits<Src>() - mantissa_bits<Dst>();
        if constexpr (std::is_floating_point_v<Src> && mantissa_bits<Dst>() > 0 && dropped > 0) {
          if (truncate_) {
            dst = in.unaryExpr([](Src v) { return convert<Dst>(clear_low_mantissa(v, dropped)); });
            ctx.set_output(0, std::move(out));
            return ok_status();
          }
        }
        dst = in.unaryExpr([](Src v) { return convert<Dst>(v); });
      }
      ctx.set_output(0, std::move(out));
    }
    return ok_status();
  }

 private:
  bool truncate_;
};

template <class F>
bool dispatch_cast_type(DType t, F&& f) {
  return dispatch_among<float, double, int32_t, int64_t, bool, uint8_t, int8_t, int16_t, uint16_t,
                        uint32_t, uint64_t, Eigen::half, Eigen::bfloat16, std::complex<float>,
                        std::complex<double>>(t, f);
}

Expected<std::unique_ptr<Kernel>> make_cast_kernel(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(DType src, init.attr<DType>("SrcT"));
  TF_ASSIGN_OR_RETURN(DType dst, init.attr<DType>("DstT"));
  TF_ASSIGN_OR_RETURN(bool truncate, init.attr<bool>("Truncate"));
  std::unique_ptr<Kernel> k;
  dispatch_cast_type(base_dtype(src), [&](auto s) {
    dispatch_cast_type(base_dtype(dst), [&](auto d) {
      using S = typename decltype(s)::type;
      using D = typename decltype(d)::type;
      k = std::make_unique<CastKernel<S, D>>(truncate);
    });
  });
  if (!k)
    return Status(Error::unimplemented,
                  "Cast has no kernel from " + dtype_name(src) + " to " + dtype_name(dst));
  return k;
}

std::vector<DType> cast_types() {
  return {DType::float32,  DType::float64, DType::int32,     DType::int64,    DType::boolean,
          DType::uint8,    DType::int8,    DType::int16,     DType::uint16,   DType::uint32,
          DType::uint64,   DType::half,    DType::bfloat16,  DType::complex64, DType::complex128};
}

}  // namespace

void register_cast_op(OpRegistry& r) {
  register_builtin(r, OpDef("Cast").shape_fn(shape_fns::cast)
                          .input("x: SrcT")
                          .output("y: DstT")
                          .type_attr("SrcT", cast_types())
                          .type_attr("DstT", cast_types())
                          .attr("Truncate", "bool", false)
                          .kernel(make_cast_kernel));
}

}  // namespace tagflow::ops
