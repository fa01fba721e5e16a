#include "ops/variant.hpp"

#include <fmt/format.h>

#include <atomic>

namespace tagflow::ops {

namespace {

size_t tensors_heap_bytes(const std::vector<Tensor>& ts) {
  size_t n = ts.capacity() * sizeof(Tensor);
  for (const Tensor& t : ts) n += t.heap_bytes();
  return n;
}

bool tensors_equal(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].equals(b[i])) return false;
  return true;
}

// use_count() == 1 with an acquire: what the other holders did with the
// value before they dropped it happens before our writes (ThreadSanitizer does not model
// fences: its builds take a reference instead, an acq_rel increment).
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TAGFLOW_HAS_TSAN_FEATURE 1
#endif
#endif
#ifndef TAGFLOW_HAS_TSAN_FEATURE
#define TAGFLOW_HAS_TSAN_FEATURE 0
#endif

bool value_is_unique(const VariantPtr& v) {
  if (v == nullptr || v.use_count() != 1) return false;
#if defined(__SANITIZE_THREAD__) || TAGFLOW_HAS_TSAN_FEATURE
  VariantPtr probe = v;
#else
  std::atomic_thread_fence(std::memory_order_acquire);
#endif
  return true;
}

}  // namespace

std::string TensorList::debug_string() const {
  return fmt::format("TensorList<{}>[{} element{}]", dtype_name(element_dtype), elements.size(),
                     elements.size() == 1 ? "" : "s");
}

size_t TensorList::heap_bytes() const {
  // make_shared: the control block and the list in one block.
  return sizeof(TensorList) + 2 * sizeof(void*) + element_shape.dims.capacity() * sizeof(int64_t) +
         tensors_heap_bytes(elements);
}

bool TensorList::equals(const VariantValue& o) const {
  if (o.kind() != Kind::tensor_list) return false;
  const auto& l = static_cast<const TensorList&>(o);
  return element_dtype == l.element_dtype && element_shape == l.element_shape &&
         max_num_elements == l.max_num_elements && tensors_equal(elements, l.elements);
}

std::string OptionalValue::debug_string() const {
  if (!has_value) return "Optional<none>";
  return fmt::format("Optional[{} component{}]", components.size(), components.size() == 1 ? "" : "s");
}

size_t OptionalValue::heap_bytes() const {
  return sizeof(OptionalValue) + 2 * sizeof(void*) + tensors_heap_bytes(components);
}

bool OptionalValue::equals(const VariantValue& o) const {
  if (o.kind() != Kind::optional) return false;
  const auto& v = static_cast<const OptionalValue&>(o);
  return has_value == v.has_value && tensors_equal(components, v.components);
}

std::string variant_debug_string(const VariantPtr& v) {
  return v == nullptr ? "<empty variant>" : v->debug_string();
}

bool variants_equal(const VariantPtr& a, const VariantPtr& b) {
  if (a == nullptr || b == nullptr) return a == b;
  return a == b || a->equals(*b);
}

Tensor variant_scalar(VariantPtr value) {
  Tensor t(DType::variant, Shape{});
  *t.mutable_data<VariantPtr>() = std::move(value);
  return t;
}

namespace {

template <class V>
Expected<const V*> value_of(const Tensor& t, const char* what, VariantValue::Kind kind, const char* noun) {
  if (!t.valid() || base_dtype(t.dtype()) != DType::variant || !t.shape().is_scalar())
    return Status(Error::invalid_argument,
                  fmt::format("{} must be a scalar variant tensor holding {}, got {}", what, noun,
                              t.valid() ? dtype_name(t.dtype()) + t.shape().to_string() : "an invalid tensor"));
  const VariantPtr& v = t.data<VariantPtr>()[0];
  if (v == nullptr || v->kind() != kind)
    return Status(Error::invalid_argument,
                  fmt::format("{} is not {}: it holds {}", what, noun, variant_debug_string(v)));
  return static_cast<const V*>(v.get());
}

}  // namespace

Expected<const TensorList*> list_of(const Tensor& t, const char* what) {
  return value_of<TensorList>(t, what, VariantValue::Kind::tensor_list, "a TensorList");
}

Expected<const OptionalValue*> optional_of(const Tensor& t, const char* what) {
  return value_of<OptionalValue>(t, what, VariantValue::Kind::optional, "an Optional");
}

TensorList* writable_list(Tensor* t) {
  if (!t->is_unique()) return nullptr;
  VariantPtr& v = t->mutable_data<VariantPtr>()[0];
  if (!value_is_unique(v) || v->kind() != VariantValue::Kind::tensor_list) return nullptr;
  // Every list is made non-const (make_shared<TensorList>), so writing
  // through the const pointer's target is allowed once no one shares it.
  return const_cast<TensorList*>(static_cast<const TensorList*>(v.get()));
}

std::pair<Tensor, TensorList*> copy_list(const TensorList& l) {
  auto copy = std::make_shared<TensorList>(l);
  TensorList* raw = copy.get();
  return {variant_scalar(std::move(copy)), raw};
}

bool shape_compatible(const PartialShape& p, const Shape& s) {
  if (p.unknown_rank) return true;
  if (static_cast<int>(p.dims.size()) != s.rank()) return false;
  for (int i = 0; i < s.rank(); ++i)
    if (p.dims[static_cast<size_t>(i)] >= 0 && p.dims[static_cast<size_t>(i)] != s.dim(i)) return false;
  return true;
}

Expected<PartialShape> merge_shapes(const PartialShape& a, const PartialShape& b) {
  if (a.unknown_rank) return b;
  if (b.unknown_rank) return a;
  auto incompatible = [&] {
    return Status(Error::invalid_argument,
                  fmt::format("incompatible shapes {} and {}", a.to_string(), b.to_string()));
  };
  if (a.dims.size() != b.dims.size()) return incompatible();
  PartialShape out{false, a.dims};
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (a.dims[i] < 0) out.dims[i] = b.dims[i];
    else if (b.dims[i] >= 0 && b.dims[i] != a.dims[i]) return incompatible();
  }
  return out;
}

bool fully_defined(const PartialShape& p) {
  if (p.unknown_rank) return false;
  for (int64_t d : p.dims)
    if (d < 0) return false;
  return true;
}

PartialShape partial_of(const Shape& s) { return PartialShape{false, s.dims()}; }

Expected<Shape> shape_of(const PartialShape& p) {
  if (!fully_defined(p))
    return Status(Error::invalid_argument, "shape " + p.to_string() + " is not fully defined");
  return Shape::make(p.dims);
}

}  // namespace tagflow::ops
