// DType: the element types of tensors, numbered exactly as TensorFlow's
// DataType enum so that GraphDef values convert by number. Reference types
// (base + 100) appear only in op signatures of Ref* ops and ref variables.
// Plain values; thread-safe.
#pragma once

#include <complex>
#include <cstdint>
#include <string>
#include <string_view>

#include <Eigen/Core>  // Eigen::half, Eigen::bfloat16

#include "ops/small_vector.hpp"

namespace tagflow::ops {

enum class DType : int {
  invalid = 0,
  float32 = 1,
  float64 = 2,
  int32 = 3,
  uint8 = 4,
  int16 = 5,
  int8 = 6,
  string = 7,
  complex64 = 8,
  int64 = 9,
  boolean = 10,
  qint8 = 11,
  quint8 = 12,
  qint32 = 13,
  bfloat16 = 14,
  qint16 = 15,
  quint16 = 16,
  uint16 = 17,
  complex128 = 18,
  half = 19,
  resource = 20,
  variant = 21,
  uint32 = 22,
  uint64 = 23,
};

// The dtypes of a node's inputs or outputs: nearly always a few, kept
// inline.
using DTypes = SmallVector<DType, 4>;


constexpr int kRefOffset = 100;

// True for the numbers TensorFlow defines (1..32, and 101..132 as refs).
bool is_known_dtype_number(int n);
// Strips the reference offset: float32_ref (101) -> float32.
DType base_dtype(DType t);
bool is_ref(DType t);
DType make_ref(DType t);

// "float32", "int32", ..., "float32_ref"; for unknown numbers "dtype(42)".
std::string dtype_name(DType t);
// TensorFlow's enum spelling: "DT_FLOAT", "DT_INT32_REF".
std::string dtype_enum_name(DType t);

// Bytes per element of the storage, 0 for string/resource/variant (objects).
int dtype_size(DType t);
// True when elements are objects, not raw bytes: std::string for string
// and resource, VariantPtr (ops/tensor.hpp) for variant.
bool dtype_is_object(DType t);
// True if a kernel may compute with it (storage-only types return false).
bool dtype_is_numeric(DType t);
bool dtype_is_floating(DType t);
bool dtype_is_integer(DType t);

// Maps a C++ element type to its DType.
template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::float32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::float64; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::int32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::int64; };
template <> struct dtype_of<bool> { static constexpr DType value = DType::boolean; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = DType::uint8; };
template <> struct dtype_of<int8_t> { static constexpr DType value = DType::int8; };
template <> struct dtype_of<int16_t> { static constexpr DType value = DType::int16; };
template <> struct dtype_of<uint16_t> { static constexpr DType value = DType::uint16; };
template <> struct dtype_of<uint32_t> { static constexpr DType value = DType::uint32; };
template <> struct dtype_of<uint64_t> { static constexpr DType value = DType::uint64; };
template <> struct dtype_of<Eigen::half> { static constexpr DType value = DType::half; };
template <> struct dtype_of<Eigen::bfloat16> { static constexpr DType value = DType::bfloat16; };
template <> struct dtype_of<std::complex<float>> { static constexpr DType value = DType::complex64; };
template <> struct dtype_of<std::complex<double>> { static constexpr DType value = DType::complex128; };
template <> struct dtype_of<std::string> { static constexpr DType value = DType::string; };
template <class T> inline constexpr DType dtype_v = dtype_of<T>::value;

// Calls f(T{}) with T the C++ type of `t` for the computable numeric types
// float32, float64, int32, int64 (and bool when with_bool). Returns false if
// `t` is not one of them.
template <class F>
bool dispatch_real(DType t, F&& f) {
  switch (t) {
    case DType::float32: f(float{}); return true;
    case DType::float64: f(double{}); return true;
    case DType::int32: f(int32_t{}); return true;
    case DType::int64: f(int64_t{}); return true;
    default: return false;
  }
}

// Like dispatch_real, plus the narrow integers, half and bfloat16 and bool:
// every fixed-size type (used by kernels that only move bytes or cast).
template <class F>
bool dispatch_pod(DType t, F&& f) {
  switch (t) {
    case DType::float32: f(float{}); return true;
    case DType::float64: f(double{}); return true;
    case DType::int32: f(int32_t{}); return true;
    case DType::int64: f(int64_t{}); return true;
    case DType::boolean: f(bool{}); return true;
    case DType::uint8: f(uint8_t{}); return true;
    case DType::int8: f(int8_t{}); return true;
    case DType::int16: f(int16_t{}); return true;
    case DType::uint16: f(uint16_t{}); return true;
    case DType::uint32: f(uint32_t{}); return true;
    case DType::uint64: f(uint64_t{}); return true;
    case DType::half: f(Eigen::half{}); return true;
    case DType::bfloat16: f(Eigen::bfloat16{}); return true;
    case DType::complex64: f(std::complex<float>{}); return true;
    case DType::complex128: f(std::complex<double>{}); return true;
    default: return false;
  }
}

}  // namespace tagflow::ops
