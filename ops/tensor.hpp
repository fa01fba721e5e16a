// Tensor: dtype, shape and immutable, reference-counted element storage.
//
// A Tensor is one pointer (8 bytes) to a representation that holds the
// dtype, the shape, a reference count and the storage; copies share it (a
// copy is a reference-count increment). Once a tensor has been handed to
// anyone else its storage must not change: a kernel that wants to write
// allocates a new tensor, or reuses an input whose storage is unique
// (is_unique()). A tensor seen with another shape or dtype (reshaped(),
// with_dtype()) is a small view holding the original's storage. Fixed-size
// elements are stored as raw little-endian bytes, aligned to 64 bytes;
// string and resource elements are std::string objects; variant elements
// are VariantPtrs, shared pointers to immutable values (a TensorList or an
// Optional, ops/variant.hpp). Small storage (<= 32 bytes, e.g. every
// scalar) lives inside the representation: one allocation per tensor.
//
// A borrowed tensor (Tensor::borrow) shares a representation without
// counting: the executor passes a value some owner keeps alive for longer
// (a Const kernel's tensor) to many inputs without touching the count.
// Copying or moving a borrowed tensor gives a counted one, so a borrowed
// handle never outlives the slot it was put in.
// Thread-safety: like std::shared_ptr — distinct Tensor objects may be used
// from different threads even when they share storage.
#pragma once

#include <atomic>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ops/dtype.hpp"
#include "ops/shape.hpp"
#include "ops/status.hpp"

namespace tagflow::ops {

class VariantValue;  // ops/variant.hpp
// One element of a variant tensor: a shared, immutable value; null in a
// freshly allocated tensor (TensorFlow's empty Variant).
using VariantPtr = std::shared_ptr<const VariantValue>;

namespace detail {
// The part of a tensor's representation every accessor reads inline; the
// rest (the storage, or the tensor a view looks at) is ops/tensor.cpp's.
struct TensorHead {
  std::atomic<int32_t> refs{1};
  DType dtype = DType::invalid;
  bool view = false;  // reshaped() / with_dtype() of `root`'s storage
  Shape shape;
  void* data = nullptr;        // the element storage
  TensorHead* root = nullptr;  // the representation owning the storage (itself if not a view)
};
// Frees a representation whose count reached zero.
void destroy_tensor(TensorHead* head) noexcept;
}  // namespace detail

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

  Tensor(const Tensor& o) noexcept : bits_(reinterpret_cast<uintptr_t>(o.head())) {
    if (bits_ != 0) head()->refs.fetch_add(1, std::memory_order_relaxed);
  }
  Tensor(Tensor&& o) noexcept : bits_(o.bits_) {
    o.bits_ = 0;
    if ((bits_ & kBorrowed) != 0) {
      bits_ &= ~kBorrowed;
      head()->refs.fetch_add(1, std::memory_order_relaxed);
    }
  }
  Tensor& operator=(const Tensor& o) noexcept {
    Tensor t(o);
    std::swap(bits_, t.bits_);
    return *this;
  }
  Tensor& operator=(Tensor&& o) noexcept {
    Tensor t(std::move(o));
    std::swap(bits_, t.bits_);
    return *this;
  }
  ~Tensor() { release(); }

  // `owner` seen without a count of its own: valid only while `owner` (or
  // another counted tensor sharing it) keeps the representation alive. Its
  // copies and moves are counted tensors; it is never unique.
  static Tensor borrow(const Tensor& owner) {
    Tensor t;
    if (owner.bits_ != 0) t.bits_ = reinterpret_cast<uintptr_t>(owner.head()) | kBorrowed;
    return t;
  }
  bool is_borrowed() const { return (bits_ & kBorrowed) != 0; }

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

  bool valid() const { return bits_ != 0; }
  DType dtype() const { return bits_ != 0 ? head()->dtype : DType::invalid; }
  const Shape& shape() const { return bits_ != 0 ? head()->shape : kNoShape; }
  int rank() const { return shape().rank(); }
  int64_t dim(int i) const { return shape().dim(i); }
  int64_t num_elements() const { return shape().num_elements(); }
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
  const void* raw_data() const { return bits_ != 0 ? head()->data : nullptr; }
  void* raw_mutable_data() { return bits_ != 0 ? head()->data : nullptr; }

  // The same buffer seen with another shape of equal element count.
  Expected<Tensor> reshaped(const Shape& shape) const;
  // The same bytes relabelled as another dtype of equal element size
  // (used for ref types and bitcasts); asserts sizes match.
  Tensor with_dtype(DType dtype) const;

  // True if no other Tensor shares this storage (a borrowed tensor never
  // is). Then the storage may be written: everything the other holders did
  // with it before they dropped it happens before (the count is read with
  // an acquire, pairing with the release of their decrements).
  bool is_unique() const {
    if (bits_ == 0 || is_borrowed()) return false;
    const detail::TensorHead* h = head();
    if (h->refs.load(std::memory_order_acquire) != 1) return false;
    return h->root == h || h->root->refs.load(std::memory_order_acquire) == 1;
  }
  bool shares_buffer_with(const Tensor& o) const {
    return bits_ != 0 && o.bits_ != 0 && head()->root == o.head()->root;
  }

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
  static constexpr uintptr_t kBorrowed = 1;
  static constexpr Shape kNoShape{};

  explicit Tensor(detail::TensorHead* h) : bits_(reinterpret_cast<uintptr_t>(h)) {}
  detail::TensorHead* head() const { return reinterpret_cast<detail::TensorHead*>(bits_ & ~kBorrowed); }
  void release() {
    if (bits_ == 0 || is_borrowed()) return;
    detail::TensorHead* h = head();
    // acq_rel: the last holder's destruction sees every other holder's use.
    if (h->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) detail::destroy_tensor(h);
  }
  template <class T>
  bool element_type_matches() const {
    const DType d = dtype();
    if constexpr (std::is_same_v<T, VariantPtr>) return base_dtype(d) == DType::variant;
    else if constexpr (std::is_same_v<T, std::string>)
      return dtype_is_object(d) && base_dtype(d) != DType::variant;
    else return dtype_v<T> == base_dtype(d);
  }

  uintptr_t bits_ = 0;  // the TensorHead, kBorrowed in the low bit
};

// One element of a POD tensor as double (for printing and tests).
double element_as_double(const Tensor& t, int64_t i);

}  // namespace tagflow::ops
