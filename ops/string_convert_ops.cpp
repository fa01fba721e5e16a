// The string ops that convert numbers to text and back (TensorFlow's
// AsString of string_ops.cc and StringToNumber of parsing_ops.cc).
// Registered by register_string_ops.
//
// AsString formats each element as C's printf does with the format
// "%<fill><width>.<precision><conversion>" its attrs describe; `fill` is
// a printf flag (one of " +-0#"), so it never reaches printf as anything
// but a flag. StringToNumber parses as TensorFlow's safe_strto* functions:
// integers are decimal digits with an optional '-' and ASCII whitespace
// around them; floats also take '+', a fraction and an exponent, "0x"
// hexadecimal integers, "inf" and "nan" in any case; a float's text must be
// shorter than 32 bytes.
#include <fmt/format.h>
#include <locale.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "ops/array_ops.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/number_text.hpp"
#include "ops/op_def.hpp"
#include "ops/shape_fns.hpp"

namespace tagflow::ops {

namespace {

// --- AsString ------------------------------------------------------------------

// printf into a string (formats are built by AsStringKernel::init only).
template <class... A>
std::string printf_string(const std::string& format, A... args) {
  const int n = std::snprintf(nullptr, 0, format.c_str(), args...);
  if (n <= 0) return std::string();
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), format.c_str(), args...);
  out.resize(static_cast<size_t>(n));
  return out;
}

bool takes_float_format(DType t) {
  return dtype_is_floating(t) || t == DType::complex64 || t == DType::complex128;
}

// The int32 value of an int attr (printf's '*' arguments are ints).
Expected<int> int32_attr(const KernelInit& init, const std::string& name) {
  TF_ASSIGN_OR_RETURN(int64_t v, init.attr<int64_t>(name));
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    return Status(Error::invalid_argument, fmt::format("attr {} has value {} out of range for an int32", name, v));
  return static_cast<int>(v);
}

class AsStringKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    dtype_ = init.input_types[0];
    TF_ASSIGN_OR_RETURN(precision_, int32_attr(init, "precision"));
    TF_ASSIGN_OR_RETURN(width_, int32_attr(init, "width"));
    TF_ASSIGN_OR_RETURN(bool scientific, init.attr<bool>("scientific"));
    TF_ASSIGN_OR_RETURN(bool shortest, init.attr<bool>("shortest"));
    TF_ASSIGN_OR_RETURN(std::string fill, init.attr<std::string>("fill"));
    if (dtype_ == DType::variant)
      return Status(Error::unimplemented, "AsString of variant tensors is not supported");
    if (dtype_ != DType::string && !takes_float_format(dtype_)) {
      if (scientific || shortest)
        return Status(Error::invalid_argument,
                      "scientific and shortest format not supported for datatype " + dtype_name(dtype_));
      if (precision_ >= 0)
        return Status(Error::invalid_argument, "precision not supported for datatype " + dtype_name(dtype_));
    }
    if (fill.size() > 1) return Status(Error::invalid_argument, "Fill string must be one or fewer characters");
    if (scientific && shortest)
      return Status(Error::invalid_argument, "Cannot select both scientific and shortest notation");
    if (!fill.empty() && std::string_view(" +-0#").find(fill[0]) == std::string_view::npos)
      return Status(Error::invalid_argument,
                    "Fill argument not supported: \"" + fill + "\" (one of ' ', '+', '-', '0', '#')");
    width_ = std::max(width_, 0);
    left_ = fill == "-";
    const char* conversion = shortest ? "g" : scientific ? "e" : "f";
    if (dtype_ == DType::uint8 || dtype_ == DType::uint16 || dtype_ == DType::uint32 || dtype_ == DType::uint64)
      conversion = "llu";
    else if (dtype_is_integer(dtype_))
      conversion = "lld";
    format_ = "%" + fill + "*.*" + conversion;
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    const Tensor& in = ctx.input(0);
    if (dtype_ == DType::string && width_ == 0) {  // nothing to pad: the strings as they are
      ctx.set_output(0, in);
      return ok_status();
    }
    Tensor out(DType::string, in.shape());
    std::string* o = out.mutable_data<std::string>();
    for (int64_t i = 0; i < in.num_elements(); ++i) o[i] = format(in, i);
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  std::string number(double v) const { return printf_string(format_, width_, precision_, v); }

  // A string padded with spaces to the width (fill '-': on the right) and
  // cut to the precision, as TensorFlow's absl formatting pads strings.
  std::string padded(const std::string& s) const {
    std::string text = precision_ >= 0 ? s.substr(0, static_cast<size_t>(precision_)) : s;
    const size_t width = static_cast<size_t>(width_);
    if (text.size() >= width) return text;
    return left_ ? text + std::string(width - text.size(), ' ') : std::string(width - text.size(), ' ') + text;
  }

  template <class C>
  std::string complex(const Tensor& in, int64_t i) const {
    const C c = in.data<C>()[i];
    return "(" + number(c.real()) + "," + number(c.imag()) + ")";
  }

  std::string format(const Tensor& in, int64_t i) const {
    switch (dtype_) {
      case DType::boolean: return in.data<bool>()[i] ? "true" : "false";
      case DType::string: return padded(in.data<std::string>()[i]);
      case DType::float32: return number(in.data<float>()[i]);
      case DType::float64: return number(in.data<double>()[i]);
      case DType::half: return number(static_cast<float>(in.data<Eigen::half>()[i]));
      case DType::bfloat16: return number(static_cast<float>(in.data<Eigen::bfloat16>()[i]));
      case DType::complex64: return complex<std::complex<float>>(in, i);
      case DType::complex128: return complex<std::complex<double>>(in, i);
      case DType::uint8: return printf_string(format_, width_, precision_, 0ULL + in.data<uint8_t>()[i]);
      case DType::uint16: return printf_string(format_, width_, precision_, 0ULL + in.data<uint16_t>()[i]);
      case DType::uint32: return printf_string(format_, width_, precision_, 0ULL + in.data<uint32_t>()[i]);
      case DType::uint64: return printf_string(format_, width_, precision_, 0ULL + in.data<uint64_t>()[i]);
      case DType::int8: return printf_string(format_, width_, precision_, 0LL + in.data<int8_t>()[i]);
      case DType::int16: return printf_string(format_, width_, precision_, 0LL + in.data<int16_t>()[i]);
      case DType::int32: return printf_string(format_, width_, precision_, 0LL + in.data<int32_t>()[i]);
      case DType::int64: return printf_string(format_, width_, precision_, 0LL + in.data<int64_t>()[i]);
      default: return std::string();  // the op's type list allows no other
    }
  }

  DType dtype_ = DType::invalid;
  int precision_ = -1;
  int width_ = 0;
  bool left_ = false;
  std::string format_;
};

// --- StringToNumber --------------------------------------------------------------

template <class T>
bool parse_number(std::string_view s, T* value) {
  if constexpr (std::is_floating_point_v<T>) return number_text::parse_float(s, value);
  else return number_text::parse_integer(s, value);
}

template <class T>
Status strings_to_numbers(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor out(dtype_v<T>, in.shape());
  T* o = out.mutable_data<T>();
  const std::string* s = in.data<std::string>();
  for (int64_t i = 0; i < in.num_elements(); ++i)
    if (!parse_number(s[i], &o[i]))
      return Status(Error::invalid_argument,
                    "StringToNumberOp could not correctly convert string: " + abbreviate(s[i]));
  ctx.set_output(0, std::move(out));
  return ok_status();
}

class StringToNumberKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    switch (init.output_types[0]) {
      case DType::float32: convert_ = strings_to_numbers<float>; break;
      case DType::float64: convert_ = strings_to_numbers<double>; break;
      case DType::int32: convert_ = strings_to_numbers<int32_t>; break;
      case DType::int64: convert_ = strings_to_numbers<int64_t>; break;
      case DType::uint32: convert_ = strings_to_numbers<uint32_t>; break;
      case DType::uint64: convert_ = strings_to_numbers<uint64_t>; break;
      default:
        return Status(Error::unimplemented, "StringToNumber to " + dtype_name(init.output_types[0]));
    }
    if (number_text::c_numeric() == locale_t{}) return Status(Error::internal, "the C locale cannot be made");
    return ok_status();
  }
  Status compute(KernelContext& ctx) const override { return convert_(ctx); }

 private:
  Status (*convert_)(KernelContext&) = nullptr;
};

}  // namespace

void register_string_convert_ops(OpRegistry& r) {
  register_builtin(r, OpDef("AsString").shape_fn(shape_fns::unary)
                          .input("input: T")
                          .output("output: string")
                          .type_attr("T", {DType::float32, DType::float64, DType::int32, DType::uint8,
                                           DType::int16, DType::int8, DType::int64, DType::bfloat16,
                                           DType::uint16, DType::half, DType::uint32, DType::uint64,
                                           DType::complex64, DType::complex128, DType::boolean,
                                           DType::variant, DType::string})
                          .attr("precision", "int", int64_t{-1})
                          .attr("scientific", "bool", false)
                          .attr("shortest", "bool", false)
                          .attr("width", "int", int64_t{-1})
                          .attr("fill", "string", std::string())
                          .kernel(make_kernel_factory<AsStringKernel>()));
  register_builtin(r, OpDef("StringToNumber").shape_fn(shape_fns::unary)
                          .input("string_tensor: string")
                          .output("output: out_type")
                          .type_attr("out_type", {DType::float32, DType::float64, DType::int32, DType::int64,
                                                  DType::uint32, DType::uint64},
                                     DType::float32)
                          .kernel(make_kernel_factory<StringToNumberKernel>()));
}

}  // namespace tagflow::ops
