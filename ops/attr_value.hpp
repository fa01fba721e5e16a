// AttrValue: the value of a node attribute, mirroring TensorFlow's AttrValue
// (one of: list, s, i, f, b, type, shape, tensor, func, placeholder) in plain
// C++ types, so that kernels and op rules never see protobuf. graph/ converts
// GraphDef attrs to and from these. Plain values; thread-safe.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ops/dtype.hpp"
#include "ops/shape.hpp"
#include "ops/tensor.hpp"

namespace tagflow::ops {

struct AttrValue;

// A node's attrs by name, in name order: the interface of the std::map it
// replaced, over one sorted vector — a node has a handful of attrs, so this
// is one allocation instead of one per attr, and lookups take a
// string_view without building a std::string. As with any vector,
// inserting may move the entries: keep no pointer into a map that you
// still insert into.
class AttrMap {
 public:
  using key_type = std::string;
  using mapped_type = AttrValue;
  using value_type = std::pair<std::string, AttrValue>;
  using iterator = std::vector<value_type>::iterator;
  using const_iterator = std::vector<value_type>::const_iterator;

  AttrMap() = default;
  AttrMap(std::initializer_list<value_type> entries);  // the first of equal keys wins

  // Defined below AttrValue, which they need complete.
  iterator begin();
  iterator end();
  const_iterator begin() const;
  const_iterator end() const;
  size_t size() const;
  bool empty() const;
  void clear();
  void reserve(size_t n);
  size_t capacity() const;

  iterator find(std::string_view key);
  const_iterator find(std::string_view key) const;
  size_t count(std::string_view key) const;
  // std::out_of_range if there is no such attr.
  const AttrValue& at(std::string_view key) const;
  AttrValue& at(std::string_view key);
  AttrValue& operator[](std::string_view key);  // inserts a none value if missing

  // Inserts unless the key is there; the iterator is the key's entry.
  template <class V>
  std::pair<iterator, bool> emplace(std::string key, V&& value);
  std::pair<iterator, bool> insert(value_type entry);
  size_t erase(std::string_view key);
  iterator erase(const_iterator it);

  bool operator==(const AttrMap& o) const;
  bool operator!=(const AttrMap& o) const { return !(*this == o); }

 private:
  iterator lower_bound(std::string_view key);

  std::vector<value_type> entries_;  // sorted by key, keys unique
};

// A function reference with its own attrs: `func { name: "f" attr {...} }`.
struct NameAttrList {
  std::string name;
  AttrMap attr;
  bool operator==(const NameAttrList& o) const;
};

// `placeholder: "T"` — only inside function bodies.
struct AttrPlaceholder {
  std::string name;
  bool operator==(const AttrPlaceholder& o) const { return name == o.name; }
};

// `list { ... }`: TensorFlow's ListValue keeps one repeated field per kind;
// normally only one of them is non-empty.
struct AttrList {
  std::vector<std::string> s;
  std::vector<int64_t> i;
  std::vector<float> f;
  std::vector<bool> b;
  std::vector<DType> type;
  std::vector<PartialShape> shape;
  std::vector<Tensor> tensor;
  std::vector<NameAttrList> func;
  bool operator==(const AttrList& o) const;
  size_t size() const;  // the number of elements over all kinds
};

// An immutable value on the heap, shared by copies: holds the large and
// rare kinds of attr (lists, tensors, functions) so that an AttrValue is
// 40 bytes instead of the size of its largest kind.
template <class T>
class Boxed {
 public:
  Boxed(T value) : value_(std::make_shared<const T>(std::move(value))) {}  // NOLINT: implicit
  const T& get() const { return *value_; }
  bool operator==(const Boxed& o) const { return value_ == o.value_ || *value_ == *o.value_; }

 private:
  std::shared_ptr<const T> value_;
};

// The kind an AttrValue stores for T: T itself, or Boxed<T>.
template <class T> struct AttrStorage { using type = T; };
template <> struct AttrStorage<AttrList> { using type = Boxed<AttrList>; };
template <> struct AttrStorage<Tensor> { using type = Boxed<Tensor>; };
template <> struct AttrStorage<NameAttrList> { using type = Boxed<NameAttrList>; };

struct AttrValue {
  using Value = std::variant<std::monostate, Boxed<AttrList>, std::string, int64_t, float, bool,
                             DType, PartialShape, Boxed<Tensor>, Boxed<NameAttrList>, AttrPlaceholder>;

  AttrValue() = default;
  template <class T, class = std::enable_if_t<!std::is_same_v<std::decay_t<T>, AttrValue> &&
                                              std::is_constructible_v<Value, T&&>>>
  AttrValue(T&& v) : value_(std::forward<T>(v)) {}
  AttrValue(int v) : value_(int64_t{v}) {}
  AttrValue(const char* v) : value_(std::string(v)) {}

  template <class T> bool is() const { return std::holds_alternative<Stored<T>>(value_); }
  template <class T> const T& get() const { return unbox(std::get<Stored<T>>(value_)); }
  template <class T> const T* get_if() const {
    const Stored<T>* v = std::get_if<Stored<T>>(&value_);
    return v == nullptr ? nullptr : &unbox(*v);
  }
  // f(kind) for the kind held: std::monostate, AttrList, std::string,
  // int64_t, float, bool, DType, PartialShape, Tensor, NameAttrList or
  // AttrPlaceholder.
  template <class F> decltype(auto) visit(F&& f) const {
    return std::visit([&](const auto& v) -> decltype(auto) { return f(unbox(v)); }, value_);
  }

  bool operator==(const AttrValue& o) const;
  bool operator!=(const AttrValue& o) const { return !(*this == o); }
  // The attr type name as in OpDef: "string", "int", "float", "bool",
  // "type", "shape", "tensor", "func", "list(...)", "placeholder", "none".
  std::string type_name() const;
  // Short human-readable form for messages and `tagflow inspect`.
  std::string to_string() const;
  // Heap bytes this value owns beyond sizeof(AttrValue); memory accounting.
  size_t heap_bytes() const;

 private:
  template <class T> using Stored = typename AttrStorage<T>::type;
  template <class T> static const T& unbox(const T& v) { return v; }
  template <class T> static const T& unbox(const Boxed<T>& v) { return v.get(); }

  Value value_;
};

inline AttrMap::iterator AttrMap::begin() { return entries_.begin(); }
inline AttrMap::iterator AttrMap::end() { return entries_.end(); }
inline AttrMap::const_iterator AttrMap::begin() const { return entries_.begin(); }
inline AttrMap::const_iterator AttrMap::end() const { return entries_.end(); }
inline size_t AttrMap::size() const { return entries_.size(); }
inline bool AttrMap::empty() const { return entries_.empty(); }
inline void AttrMap::clear() { entries_.clear(); }
inline void AttrMap::reserve(size_t n) { entries_.reserve(n); }
inline size_t AttrMap::capacity() const { return entries_.capacity(); }
inline size_t AttrMap::count(std::string_view key) const { return find(key) == end() ? 0 : 1; }
inline AttrMap::iterator AttrMap::erase(const_iterator it) { return entries_.erase(it); }

template <class V>
std::pair<AttrMap::iterator, bool> AttrMap::emplace(std::string key, V&& value) {
  iterator it = lower_bound(key);
  if (it != entries_.end() && it->first == key) return {it, false};
  return {entries_.emplace(it, std::move(key), AttrValue(std::forward<V>(value))), true};
}

// Heap bytes of an attr map: its entries and what they own.
size_t heap_bytes(const AttrMap& attrs);
// Heap bytes of a string's characters (0 while they fit inside it).
size_t heap_bytes(const std::string& s);

}  // namespace tagflow::ops
