// AttrValue: the value of a node attribute, mirroring TensorFlow's AttrValue
// (one of: list, s, i, f, b, type, shape, tensor, func, placeholder) in plain
// C++ types, so that kernels and op rules never see protobuf. graph/ converts
// GraphDef attrs to and from these. Plain values; thread-safe.
#pragma once

#include <map>
#include <string>
#include <variant>
#include <vector>

#include "ops/dtype.hpp"
#include "ops/shape.hpp"
#include "ops/tensor.hpp"

namespace tagflow::ops {

struct AttrValue;
using AttrMap = std::map<std::string, AttrValue>;

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

struct AttrValue {
  using Value = std::variant<std::monostate, AttrList, std::string, int64_t, float, bool,
                             DType, PartialShape, Tensor, NameAttrList, AttrPlaceholder>;
  Value value;

  AttrValue() = default;
  template <class T, class = std::enable_if_t<std::is_constructible_v<Value, T&&> &&
                                              !std::is_same_v<std::decay_t<T>, AttrValue>>>
  AttrValue(T&& v) : value(std::forward<T>(v)) {}
  AttrValue(int v) : value(int64_t{v}) {}
  AttrValue(const char* v) : value(std::string(v)) {}

  template <class T> bool is() const { return std::holds_alternative<T>(value); }
  template <class T> const T& get() const { return std::get<T>(value); }
  template <class T> const T* get_if() const { return std::get_if<T>(&value); }

  bool operator==(const AttrValue& o) const;
  bool operator!=(const AttrValue& o) const { return !(*this == o); }
  // The attr type name as in OpDef: "string", "int", "float", "bool",
  // "type", "shape", "tensor", "func", "list(...)", "placeholder", "none".
  std::string type_name() const;
  // Short human-readable form for messages and `tagflow inspect`.
  std::string to_string() const;
  // Heap bytes this value owns beyond sizeof(AttrValue); memory accounting.
  size_t heap_bytes() const;
};

// Heap bytes of an attr map: its entries and what they own.
size_t heap_bytes(const AttrMap& attrs);
// Heap bytes of a string's characters (0 while they fit inside it).
size_t heap_bytes(const std::string& s);

}  // namespace tagflow::ops
