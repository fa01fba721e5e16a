#include "graph/functions/implementation_selection.hpp"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/proto/graph_def.pb.h"

namespace tagflow::graph {
inline namespace functions {

namespace {

enum class FunctionKind { inference, forward, backward };

struct ApiInfo {
  std::string interface;  // api_implements
  std::string device;     // api_preferred_device, upper case
  FunctionKind kind = FunctionKind::inference;
  const tensorflow::FunctionDef* def = nullptr;
};

std::string upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return s;
}

const std::string* string_attr(const tensorflow::FunctionDef& f, const char* key) {
  auto it = f.attr().find(key);
  if (it == f.attr().end() || it->second.value_case() != tensorflow::AttrValue::kS) return nullptr;
  return &it->second.s();
}

bool same_arg(const tensorflow::OpDef::ArgDef& a, const tensorflow::OpDef::ArgDef& b) {
  return a.type() == b.type() && a.type_attr() == b.type_attr() && a.number_attr() == b.number_attr() &&
         a.type_list_attr() == b.type_list_attr() && a.is_ref() == b.is_ref();
}

template <typename Args>
bool same_args(const Args& a, const Args& b) {
  if (a.size() != b.size()) return false;
  for (int i = 0; i < a.size(); ++i)
    if (!same_arg(a[i], b[i])) return false;
  return true;
}

bool same_signature(const tensorflow::FunctionDef& a, const tensorflow::FunctionDef& b) {
  return same_args(a.signature().input_arg(), b.signature().input_arg()) &&
         same_args(a.signature().output_arg(), b.signature().output_arg());
}

bool runs_here(const ApiInfo& f) { return f.device.empty() || f.device == "CPU"; }

// The library's implementations by function name, and the target each
// function's calls should have instead (only where it differs).
std::map<std::string, std::string> replacements(const tensorflow::FunctionDefLibrary& library) {
  std::map<std::string, ApiInfo> info;
  std::map<std::pair<std::string, FunctionKind>, std::vector<const ApiInfo*>> groups;
  for (const auto& f : library.function()) {
    const std::string* interface = string_attr(f, "api_implements");
    if (interface == nullptr || interface->empty()) continue;
    ApiInfo a;
    a.interface = *interface;
    if (const std::string* d = string_attr(f, "api_preferred_device")) a.device = upper(*d);
    if (string_attr(f, "forward_function_name") != nullptr) a.kind = FunctionKind::backward;
    if (string_attr(f, "backward_function_name") != nullptr) a.kind = FunctionKind::forward;
    a.def = &f;
    info[f.signature().name()] = std::move(a);
  }
  for (const auto& [name, a] : info) groups[{a.interface, a.kind}].push_back(&a);
  std::map<std::string, std::string> out;
  for (const auto& [key, members] : groups) {
    if (members.size() < 2) continue;
    // The preferred target: a CPU implementation, else one for any device,
    // first in library order (the map is by name: take the library's).
    const ApiInfo* best = nullptr;
    for (const auto& f : library.function()) {
      auto it = info.find(f.signature().name());
      if (it == info.end() || it->second.interface != key.first || it->second.kind != key.second) continue;
      const ApiInfo& a = it->second;
      if (a.device == "CPU") {
        best = &a;
        break;
      }
      if (best == nullptr && a.device.empty()) best = &a;
    }
    if (best == nullptr) continue;
    for (const ApiInfo* m : members)
      if (!runs_here(*m) && same_signature(*m->def, *best->def))
        out[m->def->signature().name()] = best->def->signature().name();
  }
  return out;
}

// Points the calls of one node at their replacements (attr values are
// immutable: a changed one is replaced).
int rewrite_func_attrs(ops::AttrMap& attrs, const std::map<std::string, std::string>& to) {
  int n = 0;
  auto swap = [&](ops::NameAttrList& f) {
    auto it = to.find(f.name);
    if (it == to.end()) return false;
    f.name = it->second;
    ++n;
    return true;
  };
  for (auto& [key, value] : attrs) {
    if (const auto* f = value.get_if<ops::NameAttrList>()) {
      ops::NameAttrList copy = *f;
      if (swap(copy)) value = std::move(copy);
    } else if (const auto* list = value.get_if<ops::AttrList>()) {
      ops::AttrList copy = *list;
      bool changed = false;
      for (ops::NameAttrList& g : copy.func) changed = swap(g) || changed;
      if (changed) value = std::move(copy);
    }
  }
  return n;
}

int rewrite_proto_attrs(google::protobuf::Map<std::string, tensorflow::AttrValue>& attrs,
                        const std::map<std::string, std::string>& to) {
  int n = 0;
  for (auto& [key, value] : attrs) {
    if (value.has_func()) {
      auto it = to.find(value.func().name());
      if (it != to.end()) {
        value.mutable_func()->set_name(it->second);
        ++n;
      }
    } else if (value.has_list()) {
      for (auto& f : *value.mutable_list()->mutable_func()) {
        auto it = to.find(f.name());
        if (it != to.end()) {
          f.set_name(it->second);
          ++n;
        }
      }
    }
  }
  return n;
}

}  // namespace

int select_implementations(Graph* g) {
  if (g->library().function_size() < 2) return 0;
  const std::map<std::string, std::string> to = replacements(g->library());
  if (to.empty()) return 0;
  int swapped = 0;
  for (NodeId id = 0; id < g->num_nodes(); ++id) {
    const Node& n = g->node(id);
    bool calls = to.count(n.op) != 0;
    for (const auto& [key, value] : n.attrs) {
      if (const auto* f = value.get_if<ops::NameAttrList>()) calls = calls || to.count(f->name) != 0;
      if (const auto* list = value.get_if<ops::AttrList>())
        for (const ops::NameAttrList& f : list->func) calls = calls || to.count(f.name) != 0;
    }
    if (!calls) continue;
    Node& m = g->mutable_node(id);
    if (auto it = to.find(m.op); it != to.end()) {
      m.op = it->second;
      ++swapped;
    }
    swapped += rewrite_func_attrs(m.attrs, to);
  }
  for (auto& f : *g->mutable_library().mutable_function())
    for (auto& node : *f.mutable_node_def()) {
      if (auto it = to.find(node.op()); it != to.end()) {
        node.set_op(it->second);
        ++swapped;
      }
      swapped += rewrite_proto_attrs(*node.mutable_attr(), to);
    }
  return swapped;
}

}  // namespace functions
}  // namespace tagflow::graph
