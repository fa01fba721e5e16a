#include "ops/dtype.hpp"

namespace tagflow::ops {

namespace {

struct DTypeInfo {
  const char* name;
  const char* enum_name;
  int size;
};

// Indexed by TensorFlow's DataType number; 24..32 are the newer 8/4/2-bit
// types, which tagflow can name but not store.
const DTypeInfo kInfo[] = {
    {"invalid", "DT_INVALID", 0},
    {"float32", "DT_FLOAT", 4},
    {"float64", "DT_DOUBLE", 8},
    {"int32", "DT_INT32", 4},
    {"uint8", "DT_UINT8", 1},
    {"int16", "DT_INT16", 2},
    {"int8", "DT_INT8", 1},
    {"string", "DT_STRING", 0},
    {"complex64", "DT_COMPLEX64", 8},
    {"int64", "DT_INT64", 8},
    {"bool", "DT_BOOL", 1},
    {"qint8", "DT_QINT8", 1},
    {"quint8", "DT_QUINT8", 1},
    {"qint32", "DT_QINT32", 4},
    {"bfloat16", "DT_BFLOAT16", 2},
    {"qint16", "DT_QINT16", 2},
    {"quint16", "DT_QUINT16", 2},
    {"uint16", "DT_UINT16", 2},
    {"complex128", "DT_COMPLEX128", 16},
    {"half", "DT_HALF", 2},
    {"resource", "DT_RESOURCE", 0},
    {"variant", "DT_VARIANT", 0},
    {"uint32", "DT_UINT32", 4},
    {"uint64", "DT_UINT64", 8},
    {"float8_e5m2", "DT_FLOAT8_E5M2", 1},
    {"float8_e4m3fn", "DT_FLOAT8_E4M3FN", 1},
    {"float8_e4m3fnuz", "DT_FLOAT8_E4M3FNUZ", 1},
    {"float8_e4m3b11fnuz", "DT_FLOAT8_E4M3B11FNUZ", 1},
    {"float8_e5m2fnuz", "DT_FLOAT8_E5M2FNUZ", 1},
    {"int4", "DT_INT4", 1},
    {"uint4", "DT_UINT4", 1},
    {"int2", "DT_INT2", 1},
    {"uint2", "DT_UINT2", 1},
};
constexpr int kNumInfo = sizeof(kInfo) / sizeof(kInfo[0]);

const DTypeInfo* info(DType t) {
  int n = static_cast<int>(base_dtype(t));
  return n >= 0 && n < kNumInfo ? &kInfo[n] : nullptr;
}

}  // namespace

bool is_known_dtype_number(int n) {
  if (n > kRefOffset) n -= kRefOffset;
  return n >= 1 && n < kNumInfo;
}

DType base_dtype(DType t) {
  int n = static_cast<int>(t);
  return n > kRefOffset ? static_cast<DType>(n - kRefOffset) : t;
}

bool is_ref(DType t) { return static_cast<int>(t) > kRefOffset; }

DType make_ref(DType t) {
  return is_ref(t) ? t : static_cast<DType>(static_cast<int>(t) + kRefOffset);
}

std::string dtype_name(DType t) {
  const DTypeInfo* i = info(t);
  if (i == nullptr) return "dtype(" + std::to_string(static_cast<int>(t)) + ")";
  return std::string(i->name) + (is_ref(t) ? "_ref" : "");
}

std::string dtype_enum_name(DType t) {
  const DTypeInfo* i = info(t);
  if (i == nullptr) return std::to_string(static_cast<int>(t));
  return std::string(i->enum_name) + (is_ref(t) ? "_REF" : "");
}

int dtype_size(DType t) {
  const DTypeInfo* i = info(t);
  return i == nullptr ? 0 : i->size;
}

bool dtype_is_object(DType t) {
  DType b = base_dtype(t);
  return b == DType::string || b == DType::resource || b == DType::variant;
}

bool dtype_is_floating(DType t) {
  switch (base_dtype(t)) {
    case DType::float32: case DType::float64: case DType::half: case DType::bfloat16:
      return true;
    default:
      return false;
  }
}

bool dtype_is_integer(DType t) {
  switch (base_dtype(t)) {
    case DType::int32: case DType::int64: case DType::uint8: case DType::int8:
    case DType::int16: case DType::uint16: case DType::uint32: case DType::uint64:
      return true;
    default:
      return false;
  }
}

bool dtype_is_numeric(DType t) {
  DType b = base_dtype(t);
  return b == DType::float32 || b == DType::float64 || b == DType::int32 ||
         b == DType::int64;
}

}  // namespace tagflow::ops
