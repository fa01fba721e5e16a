#include "ops/attr_value.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace tagflow::ops {

AttrMap::AttrMap(std::initializer_list<value_type> entries) {
  entries_.reserve(entries.size());
  for (const value_type& e : entries) emplace(e.first, e.second);
}

AttrMap::iterator AttrMap::lower_bound(std::string_view key) {
  return std::lower_bound(entries_.begin(), entries_.end(), key,
                          [](const value_type& e, std::string_view k) { return e.first < k; });
}

AttrMap::iterator AttrMap::find(std::string_view key) {
  iterator it = lower_bound(key);
  return it != entries_.end() && it->first == key ? it : entries_.end();
}

AttrMap::const_iterator AttrMap::find(std::string_view key) const {
  return const_cast<AttrMap*>(this)->find(key);
}

const AttrValue& AttrMap::at(std::string_view key) const {
  const_iterator it = find(key);
  if (it == end()) throw std::out_of_range("AttrMap::at: no attr '" + std::string(key) + "'");
  return it->second;
}

AttrValue& AttrMap::at(std::string_view key) {
  return const_cast<AttrValue&>(static_cast<const AttrMap&>(*this).at(key));
}

AttrValue& AttrMap::operator[](std::string_view key) {
  iterator it = lower_bound(key);
  if (it == entries_.end() || it->first != key) it = entries_.emplace(it, std::string(key), AttrValue());
  return it->second;
}

std::pair<AttrMap::iterator, bool> AttrMap::insert(value_type entry) {
  return emplace(std::move(entry.first), std::move(entry.second));
}

size_t AttrMap::erase(std::string_view key) {
  iterator it = find(key);
  if (it == end()) return 0;
  entries_.erase(it);
  return 1;
}

bool AttrMap::operator==(const AttrMap& o) const { return entries_ == o.entries_; }

bool NameAttrList::operator==(const NameAttrList& o) const {
  return name == o.name && attr == o.attr;
}

bool AttrList::operator==(const AttrList& o) const {
  return s == o.s && i == o.i && f == o.f && b == o.b && type == o.type && shape == o.shape &&
         tensor == o.tensor && func == o.func;
}

size_t AttrList::size() const {
  return s.size() + i.size() + f.size() + b.size() + type.size() + shape.size() +
         tensor.size() + func.size();
}

bool AttrValue::operator==(const AttrValue& o) const { return value_ == o.value_; }

std::string AttrValue::type_name() const {
  struct Visitor {
    std::string operator()(std::monostate) const { return "none"; }
    std::string operator()(const AttrList& l) const {
      if (!l.s.empty()) return "list(string)";
      if (!l.i.empty()) return "list(int)";
      if (!l.f.empty()) return "list(float)";
      if (!l.b.empty()) return "list(bool)";
      if (!l.type.empty()) return "list(type)";
      if (!l.shape.empty()) return "list(shape)";
      if (!l.tensor.empty()) return "list(tensor)";
      if (!l.func.empty()) return "list(func)";
      return "list()";
    }
    std::string operator()(const std::string&) const { return "string"; }
    std::string operator()(int64_t) const { return "int"; }
    std::string operator()(float) const { return "float"; }
    std::string operator()(bool) const { return "bool"; }
    std::string operator()(DType) const { return "type"; }
    std::string operator()(const PartialShape&) const { return "shape"; }
    std::string operator()(const Tensor&) const { return "tensor"; }
    std::string operator()(const NameAttrList&) const { return "func"; }
    std::string operator()(const AttrPlaceholder&) const { return "placeholder"; }
  };
  return visit(Visitor{});
}

std::string AttrValue::to_string() const {
  struct Visitor {
    std::string operator()(std::monostate) const { return "<none>"; }
    std::string operator()(const AttrList& l) const {
      std::ostringstream os;
      os << "[";
      const char* sep = "";
      for (auto& v : l.s) { os << sep << '"' << v << '"'; sep = ","; }
      for (auto v : l.i) { os << sep << v; sep = ","; }
      for (auto v : l.f) { os << sep << v; sep = ","; }
      for (bool v : l.b) { os << sep << (v ? "true" : "false"); sep = ","; }
      for (auto v : l.type) { os << sep << dtype_name(v); sep = ","; }
      for (auto& v : l.shape) { os << sep << v.to_string(); sep = ","; }
      for (auto& v : l.tensor) { os << sep << v.debug_string(8); sep = ","; }
      for (auto& v : l.func) { os << sep << v.name; sep = ","; }
      os << "]";
      return os.str();
    }
    std::string operator()(const std::string& s) const { return '"' + s + '"'; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(float f) const {
      std::ostringstream os;
      os << f;
      return os.str();
    }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(DType t) const { return dtype_name(t); }
    std::string operator()(const PartialShape& s) const { return s.to_string(); }
    std::string operator()(const Tensor& t) const { return t.debug_string(8); }
    std::string operator()(const NameAttrList& f) const { return "func " + f.name; }
    std::string operator()(const AttrPlaceholder& p) const { return "placeholder " + p.name; }
  };
  return visit(Visitor{});
}

size_t heap_bytes(const std::string& s) {
  // libstdc++ keeps up to 15 characters inside the string object.
  return s.capacity() > 15 ? s.capacity() + 1 : 0;
}

namespace {

template <class T>
size_t vector_bytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}

size_t list_heap_bytes(const AttrList& l) {
  size_t n = vector_bytes(l.s) + vector_bytes(l.i) + vector_bytes(l.f) + (l.b.capacity() + 7) / 8 +
             vector_bytes(l.type) + vector_bytes(l.shape) + vector_bytes(l.tensor) +
             vector_bytes(l.func);
  for (const std::string& s : l.s) n += heap_bytes(s);
  for (const PartialShape& s : l.shape) n += vector_bytes(s.dims);
  for (const Tensor& t : l.tensor) n += t.heap_bytes();
  for (const NameAttrList& f : l.func) n += heap_bytes(f.name) + heap_bytes(f.attr);
  return n;
}

struct HeapBytes {
  static constexpr size_t kBox = 2 * sizeof(void*);
  size_t operator()(const AttrList& l) const { return kBox + sizeof(AttrList) + list_heap_bytes(l); }
  size_t operator()(const std::string& s) const { return heap_bytes(s); }
  size_t operator()(const PartialShape& s) const { return vector_bytes(s.dims); }
  // Boxed kinds: the box (a shared_ptr's block) and the value in it.
  size_t operator()(const Tensor& t) const { return kBox + sizeof(Tensor) + t.heap_bytes(); }
  size_t operator()(const NameAttrList& f) const {
    return kBox + sizeof(NameAttrList) + heap_bytes(f.name) + heap_bytes(f.attr);
  }
  size_t operator()(const AttrPlaceholder& p) const { return heap_bytes(p.name); }
  template <class Scalar>
  size_t operator()(const Scalar&) const { return 0; }
};

}  // namespace

size_t AttrValue::heap_bytes() const { return visit(HeapBytes{}); }

size_t heap_bytes(const AttrMap& attrs) {
  size_t n = attrs.capacity() * sizeof(AttrMap::value_type);
  for (const auto& [key, value] : attrs) n += heap_bytes(key) + value.heap_bytes();
  return n;
}

}  // namespace tagflow::ops
