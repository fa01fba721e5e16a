// Tensor: dtype, shape and an immutable, reference-counted buffer.
//
// Copies share the buffer (a copy is a reference-count increment). Once a
// tensor has been handed to anyone else its buffer must not change: a kernel
// that wants to write allocates a new tensor, or reuses an input whose
// buffer is unique (is_unique()). Fixed-size elements are stored as raw
// little-endian bytes, aligned to 64 bytes; string and resource elements are
// std::string objects; variant elements are VariantPtrs, shared pointers to
// immutable values (a TensorList or an Optional, ops/variant.hpp). Small
// buffers (<= 32 bytes, e.g. every scalar) live inside the buffer object:
// one allocation per tensor.
// Thread-safety: like std::shared_ptr — distinct Tensor objects may be used
// from different threads even when they share a buffer.
#pragma once

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/dtype.hpp"
#include "ops/shape.hpp"
#include "ops/status.hpp"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TAGFLOW_HAS_TSAN_FEATURE 1
#endif
#endif
#ifndef TAGFLOW_HAS_TSAN_FEATURE
#define TAGFLOW_HAS_TSAN_FEATURE 0
#endif

namespace tagflow::ops {

class TensorBuffer;
class VariantValue;  // ops/variant.hpp
// One element of a variant tensor: a shared, immutable value; null in a
// freshly allocated tensor (TensorFlow's empty Variant).
using VariantPtr = std::shared_ptr<const VariantValue>;

class Tensor {
 public:
  // An empty, invalid tensor (dtype invalid); the value of dead outputs.
  Tensor() = default;
  // Allocates num_elements of `dtype`, zero-filled (empty strings, null
  // variants).
  Tensor(DType dtype, const Shape& shape);
  // Allocates like Tensor(dtype, shape) but leaves fixed-size elements
  // unset (object elements are still empty or null): only for a kernel
  // that writes every element before the tensor leaves it.
  static Tensor uninitialized(DType dtype, const Shape& shape);

  template <class T>
  static Tensor scalar(T value) {
    Tensor t(dtype_v<T>, Shape{});
    *t.mutable_data<T>() = std::move(value);
    return t;
  }
  // Asserts values.size() == shape.num_elements().
  template <class T>
  static Tensor from_vector(const Shape& shape, const std::vector<T>& values) {
    Tensor t(dtype_v<T>, shape);
    assert(static_cast<int64_t>(values.size()) == shape.num_elements());
    T* out = t.mutable_data<T>();
    for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
    return t;
  }
  template <class T>
  static Tensor vector(const std::vector<T>& values) {
    return from_vector<T>(Shape{static_cast<int64_t>(values.size())}, values);
  }
  static Tensor string_scalar(std::string s) { return scalar<std::string>(std::move(s)); }

  bool valid() const { return buffer_ != nullptr; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  int64_t dim(int i) const { return shape_.dim(i); }
  int64_t num_elements() const { return shape_.num_elements(); }
  size_t byte_size() const;  // of the element storage (0 for object dtypes)
  // Heap bytes of the buffer (its object, its storage and any strings; for
  // variants, the values' element tensors), counted in full even when other
  // tensors share it; for memory accounting.
  size_t heap_bytes() const;

  // Typed element access. T must match dtype() (asserted): std::string
  // for string and resource, VariantPtr for variant.
  template <class T>
  const T* data() const {
    assert(element_type_matches<T>());
    return static_cast<const T*>(raw_data());
  }
  // Only for a tensor its caller just allocated or holds uniquely.
  template <class T>
  T* mutable_data() {
    assert(element_type_matches<T>());
    return static_cast<T*>(raw_mutable_data());
  }
  template <class T>
  const T& scalar_value() const { return data<T>()[0]; }

  // The element storage: raw bytes of fixed-size elements, the
  // std::string or VariantPtr array of object dtypes.
  const void* raw_data() const;
  void* raw_mutable_data();

  // The same buffer seen with another shape of equal element count.
  Expected<Tensor> reshaped(const Shape& shape) const;
  // The same bytes relabelled as another dtype of equal element size
  // (used for ref types and bitcasts); asserts sizes match.
  Tensor with_dtype(DType dtype) const;

  // True if no other Tensor shares this buffer. Then the buffer may be
  // written: everything the other holders did with it before they dropped
  // it happens before (an acquire; use_count() alone is a relaxed load).
  bool is_unique() const {
    if (buffer_ == nullptr || buffer_.use_count() != 1) return false;
    acquire_unique();
    return true;
  }
  bool shares_buffer_with(const Tensor& o) const { return buffer_ && buffer_ == o.buffer_; }

  // Same dtype, shape and element values (bitwise for floats except that
  // NaN == NaN; -0.0 == 0.0).
  bool equals(const Tensor& o) const;
  bool operator==(const Tensor& o) const { return equals(o); }
  bool operator!=(const Tensor& o) const { return !equals(o); }
  // "float32[2,2] [[1,2],[3,4]]"; at most max_elements values are shown.
  std::string debug_string(int64_t max_elements = 64) const;
  // The values alone, nested: "[[1,2],[3,4]]", "3", "true", "\"abc\"".
  std::string values_string(int64_t max_elements = 64) const;

 private:
  template <class T>
  bool element_type_matches() const {
    if constexpr (std::is_same_v<T, VariantPtr>) return base_dtype(dtype_) == DType::variant;
    else if constexpr (std::is_same_v<T, std::string>)
      return dtype_is_object(dtype_) && base_dtype(dtype_) != DType::variant;
    else return dtype_v<T> == base_dtype(dtype_);
  }
  // The acquire of is_unique(): a fence pairs with the release of the
  // last other holder's decrement. ThreadSanitizer does not model fences,
  // so its builds take a reference instead (an acq_rel increment it does).
  void acquire_unique() const {
#if defined(__SANITIZE_THREAD__) || TAGFLOW_HAS_TSAN_FEATURE
    std::shared_ptr<TensorBuffer> probe = buffer_;
#else
    std::atomic_thread_fence(std::memory_order_acquire);
#endif
  }
  DType dtype_ = DType::invalid;
  Shape shape_;
  std::shared_ptr<TensorBuffer> buffer_;
};

// One element of a POD tensor as double (for printing and tests).
double element_as_double(const Tensor& t, int64_t i);

}  // namespace tagflow::ops
