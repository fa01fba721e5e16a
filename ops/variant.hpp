// Variant values: what an element of a DT_VARIANT tensor holds — a
// TensorList (TensorFlow 2's list of tensors: the accumulators of while_v2
// loops and TF2's TensorArray) or an OptionalValue (a value or none: cond_v2
// intermediates, tf.data optionals).
//
// A value is immutable once a tensor holds it, and shared: copies of the
// tensor, and tensors built from it, point to the same value (VariantPtr),
// and a list's element tensors are shared like any tensor. A kernel that
// changes a list makes a new one (copying the vector of element tensors,
// not their buffers), except when it holds both the tensor buffer and the
// value uniquely: then nobody else can see the value and it is changed in
// place (writable_list), which makes a push in a loop O(1).
// Thread-safety: values are immutable while shared; a uniquely held one
// belongs to the one kernel call that holds it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ops/dtype.hpp"
#include "ops/shape.hpp"
#include "ops/status.hpp"
#include "ops/tensor.hpp"

namespace tagflow::ops {

// The most elements a list may hold (Reserve, Resize, SetItem and Scatter
// refuse larger requests rather than exhaust memory).
inline constexpr int64_t kMaxTensorListSize = int64_t{1} << 24;

class VariantValue {
 public:
  // Numbered as on the wire (docs/protocol.md, "Variant tensors"); 0 there
  // is a null element.
  enum class Kind : uint8_t { tensor_list = 1, optional = 2 };

  virtual ~VariantValue() = default;
  virtual Kind kind() const = 0;
  // "TensorList<float32>[3 elements]", "Optional[2 components]",
  // "Optional<none>".
  virtual std::string debug_string() const = 0;
  // The value object and the heap bytes of its element tensors (counted in
  // full even when shared).
  virtual size_t heap_bytes() const = 0;
  virtual bool equals(const VariantValue& o) const = 0;
};

// TensorFlow's TensorList: element dtype, element shape (possibly partial),
// the elements — an invalid Tensor is an unset element, which reads as
// zeros when the element shape is known — and the most elements it may
// hold (-1: no bound). Plain data; the immutability is the holder's
// (const through VariantPtr).
class TensorList final : public VariantValue {
 public:
  TensorList(DType element_dtype, PartialShape element_shape, int64_t max_num_elements = -1)
      : element_dtype(element_dtype), element_shape(std::move(element_shape)),
        max_num_elements(max_num_elements) {}

  Kind kind() const override { return Kind::tensor_list; }
  std::string debug_string() const override;
  size_t heap_bytes() const override;
  bool equals(const VariantValue& o) const override;

  DType element_dtype;
  PartialShape element_shape;
  int64_t max_num_elements;
  std::vector<Tensor> elements;
};

// TensorFlow's OptionalVariant: none, or a value of one or more tensors.
class OptionalValue final : public VariantValue {
 public:
  OptionalValue() = default;  // none
  explicit OptionalValue(std::vector<Tensor> components)
      : has_value(true), components(std::move(components)) {}

  Kind kind() const override { return Kind::optional; }
  std::string debug_string() const override;
  size_t heap_bytes() const override;
  bool equals(const VariantValue& o) const override;

  bool has_value = false;
  std::vector<Tensor> components;
};

// "<empty variant>" for a null element, else the value's debug_string.
std::string variant_debug_string(const VariantPtr& v);
// Both null, or equal values (Tensor::equals for their elements).
bool variants_equal(const VariantPtr& a, const VariantPtr& b);

// A scalar variant tensor holding `value`.
Tensor variant_scalar(VariantPtr value);

// The list a scalar variant tensor holds; an error (invalid_argument)
// naming `what` (e.g. "input_handle") if `t` is not a scalar variant tensor
// holding a TensorList.
Expected<const TensorList*> list_of(const Tensor& t, const char* what = "input_handle");
// The same for an OptionalValue.
Expected<const OptionalValue*> optional_of(const Tensor& t, const char* what = "optional");

// The list `*t` holds, writable, when no one else can see it: the tensor's
// buffer is unique and so is the value in it. Otherwise nullptr (the
// caller copies the list: copy_list). `*t` must hold a list (list_of).
TensorList* writable_list(Tensor* t);
// A new tensor holding a copy of `l` (the element tensors are shared), and
// the copy, writable until the tensor is handed to anyone.
std::pair<Tensor, TensorList*> copy_list(const TensorList& l);

// Shapes of list elements (TensorFlow's PartialTensorShape rules).
// True if `s` fits `p`: unknown rank, or the same rank with every known
// dimension equal.
bool shape_compatible(const PartialShape& p, const Shape& s);
// The most specific shape both fit; an error naming both if they disagree.
Expected<PartialShape> merge_shapes(const PartialShape& a, const PartialShape& b);
// Known rank and every dimension known.
bool fully_defined(const PartialShape& p);
PartialShape partial_of(const Shape& s);
// The shape of a fully defined PartialShape (Shape::make's checks).
Expected<Shape> shape_of(const PartialShape& p);

}  // namespace tagflow::ops
