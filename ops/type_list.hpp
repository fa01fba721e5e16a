// TypeList: the element types an op's kernels are built for, written once
// so that the dtypes the op accepts and the kernels it has cannot drift
// apart: `Numbers::dtypes()` is the op's allowed list, and
// `cwise_factory<Kern, Op>(Numbers{}, "Add")` instantiates one kernel per
// type of the same list.
//
// The families follow TensorFlow's type groups (tensorflow/core/framework/
// types.h): floats include half and bfloat16, which are real 16-bit types
// (Eigen::half, Eigen::bfloat16) whose arithmetic, as in TensorFlow's CPU
// kernels, is done in float and rounded once per operation.
#pragma once

#include <complex>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "ops/dtype.hpp"

namespace tagflow::ops {

template <class... Ts>
struct TypeList {
  static std::vector<DType> dtypes() { return {dtype_v<Ts>...}; }
};

template <class... A, class... B>
constexpr TypeList<A..., B...> operator+(TypeList<A...>, TypeList<B...>) {
  return {};
}

using FloatTypes = TypeList<float, double, Eigen::half, Eigen::bfloat16>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using ComplexTypes = TypeList<std::complex<float>, std::complex<double>>;
using IntTypes = decltype(SignedIntTypes{} + UnsignedIntTypes{});
// Ordered numbers: every type a comparison or Max takes.
using RealTypes = decltype(FloatTypes{} + IntTypes{});
using NumberTypes = decltype(RealTypes{} + ComplexTypes{});
// What a float function (Exp, Tanh, ...) takes: floats and complex numbers.
using FloatAndComplexTypes = decltype(FloatTypes{} + ComplexTypes{});

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>;
// float, double, half, bfloat16.
template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_v<T>;
template <class T>
struct is_complex : std::false_type {};
template <class R>
struct is_complex<std::complex<R>> : std::true_type {};
template <class T>
inline constexpr bool is_complex_number_v = is_complex<T>::value;

}  // namespace tagflow::ops
