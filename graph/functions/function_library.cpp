#include "graph/functions/function_library.hpp"

#include <algorithm>
#include <optional>
#include <unordered_set>
#include <utility>

#include "graph/io/import.hpp"
#include "graph/io/tensor_proto.hpp"
#include "graph/proto/graph_def.pb.h"

namespace tagflow::graph {
inline namespace functions {

namespace {

using ArgDefs = google::protobuf::RepeatedPtrField<tensorflow::OpDef::ArgDef>;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

bool all_digits(std::string_view s) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

int to_int(std::string_view s) {
  int v = 0;
  for (char c : s) v = v * 10 + (c - '0');
  return v;
}

const ops::AttrValue* find_attr(const ops::AttrMap& attrs, const std::string& name) {
  auto it = attrs.find(name);
  return it == attrs.end() ? nullptr : &it->second;
}

// The dtypes of one signature argument, one per tensor.
Expected<std::vector<DType>> arg_def_types(const tensorflow::OpDef::ArgDef& a,
                                           const ops::AttrMap& attrs, const std::string& where) {
  auto need = [&](const std::string& attr) {
    return Status(Error::invalid_graph, where + "argument " + quoted(a.name()) + " needs attr " +
                                            quoted(attr) + ", which the call does not give");
  };
  if (!a.type_list_attr().empty()) {
    const ops::AttrValue* v = find_attr(attrs, a.type_list_attr());
    const ops::AttrList* list = v ? v->get_if<ops::AttrList>() : nullptr;
    if (list == nullptr) return need(a.type_list_attr());
    return list->type;
  }
  auto type = static_cast<DType>(static_cast<int>(a.type()));
  if (!a.type_attr().empty()) {
    const ops::AttrValue* v = find_attr(attrs, a.type_attr());
    const DType* t = v ? v->get_if<DType>() : nullptr;
    if (t == nullptr) return need(a.type_attr());
    type = *t;
  }
  if (a.is_ref()) type = ops::make_ref(type);
  size_t count = 1;
  if (!a.number_attr().empty()) {
    const ops::AttrValue* v = find_attr(attrs, a.number_attr());
    const int64_t* n = v ? v->get_if<int64_t>() : nullptr;
    if (n == nullptr || *n < 0) return need(a.number_attr());
    count = static_cast<size_t>(*n);
  }
  return std::vector<DType>(count, type);
}

Expected<std::vector<DType>> arg_defs_types(const ArgDefs& args, const ops::AttrMap& attrs,
                                            const std::string& where) {
  std::vector<DType> out;
  for (const auto& a : args) {
    TF_ASSIGN_OR_RETURN(std::vector<DType> t, arg_def_types(a, attrs, where));
    out.insert(out.end(), t.begin(), t.end());
  }
  return out;
}

// Replaces `placeholder: "T"` (also inside func attrs) by the call's attr.
Status substitute_placeholders(ops::AttrValue& v, const ops::AttrMap& call_attrs,
                               const std::string& where) {
  if (const auto* ph = v.get_if<ops::AttrPlaceholder>()) {
    const ops::AttrValue* given = find_attr(call_attrs, ph->name);
    if (given == nullptr)
      return Status(Error::invalid_graph, where + "attr placeholder " + quoted(ph->name) +
                                              " is not given by the call");
    v = *given;
    return ok_status();
  }
  if (v.is<ops::NameAttrList>()) {
    auto f = v.get<ops::NameAttrList>();
    for (auto& [key, inner] : f.attr) TF_RETURN_IF_ERROR(substitute_placeholders(inner, call_attrs, where));
    v = std::move(f);
  }
  return ok_status();
}

// The output arguments of a body node: (name, number of tensors) in order;
// nullopt when the op is unknown (its outputs cannot be named).
std::string layout_names(const OutputLayout& layout) {
  std::string s;
  for (const auto& [name, count] : layout) s += (s.empty() ? "" : ", ") + name;
  return s.empty() ? "none" : s;
}

// Resolves body references for one instantiation.
class BodyResolver {
 public:
  BodyResolver(const FunctionLibrary& lib, const tensorflow::FunctionDef& f,
               const std::vector<NamedEndpoint>& args, const std::vector<size_t>& arg_sizes,
               std::string where)
      : lib_(lib), where_(std::move(where)), args_(&args), arg_sizes_(arg_sizes) {
    size_t flat = 0;
    for (int i = 0; i < f.signature().input_arg_size(); ++i) {
      arg_index_[f.signature().input_arg(i).name()] = static_cast<size_t>(i);
      arg_first_.push_back(flat);
      flat += arg_sizes[static_cast<size_t>(i)];
    }
  }

  void add_node(const std::string& body_name, const std::string& new_name, const Node* n) {
    nodes_[body_name] = Entry{new_name, n, {}, false};
  }

  bool is_node(const std::string& name) const { return nodes_.count(name) != 0; }
  const std::string& new_name(const std::string& body_name) const {
    return nodes_.at(body_name).new_name;
  }

  // Appends the tensors `ref` names; `what` says where it is written.
  Status resolve(const std::string& ref, const std::string& what, std::vector<NamedEndpoint>* out) {
    std::vector<std::string_view> parts;
    std::string_view rest(ref);
    for (size_t colon; (colon = rest.find(':')) != std::string_view::npos;) {
      parts.push_back(rest.substr(0, colon));
      rest.remove_prefix(colon + 1);
    }
    parts.push_back(rest);
    const std::string head(parts[0]);
    auto bad = [&](const std::string& why) {
      return Status(Error::invalid_graph, where_ + what + " " + quoted(ref) + " " + why);
    };
    if (parts.size() > 3) return bad("is malformed (expected node:out_arg:index)");
    auto arg = arg_index_.find(head);
    if (arg != arg_index_.end()) {
      size_t first = arg_first_[arg->second], size = arg_sizes_[arg->second];
      if (parts.size() == 1) {
        for (size_t i = 0; i < size; ++i) out->push_back((*args_)[first + i]);
        return ok_status();
      }
      if (parts.size() == 2 && all_digits(parts[1])) {
        size_t i = static_cast<size_t>(to_int(parts[1]));
        if (i >= size)
          return bad("names element " + std::to_string(i) + " of argument " + quoted(head) +
                     ", which has " + std::to_string(size));
        out->push_back((*args_)[first + i]);
        return ok_status();
      }
      return bad("is malformed (an argument is named alone or as arg:index)");
    }
    auto it = nodes_.find(head);
    if (it == nodes_.end()) return bad("names no node or argument " + quoted(head));
    Entry& e = it->second;
    if (parts.size() == 1) {  // GraphDef style, port 0
      out->push_back({e.new_name, 0});
      return ok_status();
    }
    if (parts.size() == 2 && all_digits(parts[1])) {
      out->push_back({e.new_name, to_int(parts[1])});
      return ok_status();
    }
    if (!e.layout_known) {
      TF_ASSIGN_OR_RETURN(std::optional<OutputLayout> layout, output_layout(*e.node, lib_, where_));
      if (!layout) return bad("names an output of " + quoted(head) + ", whose op " +
                              quoted(e.node->op) + " is not known");
      e.layout = std::move(*layout);
      e.layout_known = true;
    }
    const std::string out_arg(parts[1]);
    int first = 0;
    for (const auto& [name, count] : e.layout) {
      if (name == out_arg) {
        if (parts.size() == 2) {
          for (int i = 0; i < count; ++i) out->push_back({e.new_name, first + i});
          return ok_status();
        }
        if (!all_digits(parts[2])) return bad("has a malformed index");
        int idx = to_int(parts[2]);
        if (idx >= count)
          return bad("names index " + std::to_string(idx) + " of output " + quoted(out_arg) +
                     " of " + quoted(head) + ", which has " + std::to_string(count) +
                     (count == 1 ? " tensor" : " tensors"));
        out->push_back({e.new_name, first + idx});
        return ok_status();
      }
      first += count;
    }
    return bad("names no output " + quoted(out_arg) + " of " + quoted(head) + " (" +
               e.node->op + " has outputs: " + layout_names(e.layout) + ")");
  }

 private:
  struct Entry {
    std::string new_name;
    const Node* node = nullptr;
    OutputLayout layout;
    bool layout_known = false;
  };
  const FunctionLibrary& lib_;
  std::string where_;
  const std::vector<NamedEndpoint>* args_;
  std::unordered_map<std::string, size_t> arg_index_;
  std::vector<size_t> arg_sizes_;
  std::vector<size_t> arg_first_;
  std::unordered_map<std::string, Entry> nodes_;
};

Expected<Node> body_node(const tensorflow::NodeDef& def, const ops::AttrMap& call_attrs,
                         const std::string& where) {
  if (def.name().empty() || def.op().empty())
    return Status(Error::invalid_graph, where + "a body node has no name or no op");
  Node n;
  n.name = def.name();
  n.op = def.op();
  n.device = def.device();
  const std::string at = where + "node " + quoted(n.name) + " ";
  for (const auto& [key, value] : def.attr()) {
    auto v = attr_from_proto(value);
    if (!v.ok()) return v.status().with_prefix(at + "attr " + quoted(key) + ": ");
    TF_RETURN_IF_ERROR(substitute_placeholders(*v, call_attrs, at + "attr " + quoted(key) + ": "));
    n.attrs.emplace(key, std::move(v).value());
  }
  n.debug_info = debug_info_from_proto(def);
  return n;
}

}  // namespace

Expected<std::optional<OutputLayout>> output_layout(const Node& n, const FunctionLibrary& lib,
                                                    const std::string& where) {
  OutputLayout layout;
  if (const ops::OpDef* def = ops::OpRegistry::global().find(n.op)) {
    ops::AttrMap attrs = n.attrs;
    for (const ops::AttrSpec& s : def->attrs())
      if (s.default_value && attrs.count(s.name) == 0) attrs.emplace(s.name, *s.default_value);
    for (const ops::ArgSpec& a : def->outputs()) {
      // `N * T` counts N; a type list (which an OpDef may spell `x: T` when
      // T is a list(type) attr) counts its types.
      int count = 1;
      auto missing = [&](const std::string& key) {
        return Status(Error::invalid_graph, where + "node " + quoted(n.name) + " (" + n.op +
                                                ") has no attr " + quoted(key));
      };
      if (!a.number_attr.empty()) {
        const ops::AttrValue* v = find_attr(attrs, a.number_attr);
        const int64_t* num = v ? v->get_if<int64_t>() : nullptr;
        if (num == nullptr) return missing(a.number_attr);
        count = static_cast<int>(*num);
      } else {
        const std::string& key = a.type_list_attr.empty() ? a.type_attr : a.type_list_attr;
        const ops::AttrValue* v = key.empty() ? nullptr : find_attr(attrs, key);
        const ops::AttrList* list = v ? v->get_if<ops::AttrList>() : nullptr;
        if (list != nullptr) {
          count = static_cast<int>(list->type.size());
        } else if (!a.type_list_attr.empty()) {
          return missing(a.type_list_attr);
        }
      }
      layout.emplace_back(a.name, count);
    }
    return std::optional<OutputLayout>(std::move(layout));
  }
  if (const tensorflow::FunctionDef* f = lib.find(n.op)) {
    ops::AttrMap attrs = with_signature_defaults(*f, n.attrs);
    for (const auto& a : f->signature().output_arg()) {
      TF_ASSIGN_OR_RETURN(std::vector<DType> t,
                          arg_def_types(a, attrs, where + "node " + quoted(n.name) + " calls " +
                                                      quoted(n.op) + ": "));
      layout.emplace_back(a.name(), static_cast<int>(t.size()));
    }
    return std::optional<OutputLayout>(std::move(layout));
  }
  return std::optional<OutputLayout>();
}

std::vector<std::string> nodes_run_for_effect(const FunctionBody& body, const FunctionLibrary& lib) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  auto add = [&](const std::string& name) {
    if (seen.insert(name).second) out.push_back(name);
  };
  std::unordered_set<std::string> control_rets(body.control_rets.begin(), body.control_rets.end());
  for (const NodeSpec& spec : body.nodes) {
    const Node& n = spec.node;
    const ops::OpDef* def = ops::OpRegistry::global().find(n.op);
    const bool stateful = def != nullptr ? def->is_stateful() : lib.find(n.op) != nullptr;
    if (control_rets.count(n.name) || (stateful && n.op != "_Arg" && n.op != "_Retval")) add(n.name);
  }
  // control results that name no body node are the instantiation's to report
  for (const std::string& c : body.control_rets) add(c);
  return out;
}

ops::AttrMap with_signature_defaults(const tensorflow::FunctionDef& f, ops::AttrMap attrs) {
  for (const auto& a : f.signature().attr()) {
    if (!a.has_default_value() || attrs.count(a.name()) != 0) continue;
    auto v = attr_from_proto(a.default_value());
    if (v.ok()) attrs.emplace(a.name(), std::move(v).value());
  }
  return attrs;
}

FunctionLibrary::FunctionLibrary(const tensorflow::FunctionDefLibrary& library) {
  for (const auto& f : library.function()) by_name_.emplace(f.signature().name(), &f);
}

const tensorflow::FunctionDef* FunctionLibrary::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : it->second;
}

Expected<std::vector<DType>> FunctionLibrary::input_types(const tensorflow::FunctionDef& f,
                                                          const ops::AttrMap& attrs) const {
  return arg_defs_types(f.signature().input_arg(), with_signature_defaults(f, attrs),
                        "function " + quoted(f.signature().name()) + ": ");
}

Expected<std::vector<DType>> FunctionLibrary::output_types(const tensorflow::FunctionDef& f,
                                                           const ops::AttrMap& attrs) const {
  return arg_defs_types(f.signature().output_arg(), with_signature_defaults(f, attrs),
                        "function " + quoted(f.signature().name()) + ": ");
}

Expected<FunctionBody> FunctionLibrary::instantiate(
    const tensorflow::FunctionDef& f, const ops::AttrMap& call_attrs,
    const std::vector<NamedEndpoint>& args,
    const std::function<std::string(const std::string&)>& name_of) const {
  const auto& sig = f.signature();
  const std::string where = "function " + quoted(sig.name()) + ": ";
  const ops::AttrMap attrs = with_signature_defaults(f, call_attrs);
  std::vector<size_t> sizes;
  size_t flat = 0;
  for (const auto& a : sig.input_arg()) {
    TF_ASSIGN_OR_RETURN(std::vector<DType> t, arg_def_types(a, attrs, where));
    sizes.push_back(t.size());
    flat += t.size();
  }
  if (flat != args.size())
    return Status(Error::invalid_graph, where + "takes " + std::to_string(flat) +
                                            " input tensors but is given " + std::to_string(args.size()));
  FunctionBody body;
  body.nodes.reserve(static_cast<size_t>(f.node_def_size()));
  BodyResolver resolver(*this, f, args, sizes, where);
  // Every body node first: an input may name a node listed later.
  for (const auto& def : f.node_def()) {
    TF_ASSIGN_OR_RETURN(Node n, body_node(def, attrs, where));
    if (resolver.is_node(n.name))
      return Status(Error::invalid_graph, where + "node " + quoted(n.name) + " is defined twice");
    NodeSpec spec;
    spec.node = std::move(n);
    spec.node.name = name_of(def.name());
    body.nodes.push_back(std::move(spec));
  }
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    Node& n = body.nodes[i].node;
    std::string original = f.node_def(static_cast<int>(i)).name();
    resolver.add_node(original, n.name, &n);
  }
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    const auto& def = f.node_def(static_cast<int>(i));
    NodeSpec& spec = body.nodes[i];
    for (int k = 0; k < def.input_size(); ++k) {
      const std::string& in = def.input(k);
      const std::string what = "node " + quoted(def.name()) + " input " + std::to_string(k);
      if (!in.empty() && in[0] == '^') {
        const std::string target = in.substr(1);
        if (!resolver.is_node(target))
          return Status(Error::invalid_graph,
                        where + what + " " + quoted(in) + " names no node " + quoted(target));
        spec.control_inputs.push_back(resolver.new_name(target));
        continue;
      }
      if (!spec.control_inputs.empty())
        return Status(Error::invalid_graph,
                      where + what + " " + quoted(in) + " is a data input after a control input");
      TF_RETURN_IF_ERROR(resolver.resolve(in, what, &spec.inputs));
    }
  }
  TF_ASSIGN_OR_RETURN(body.ret_types, arg_defs_types(sig.output_arg(), attrs, where));
  for (const auto& a : sig.output_arg()) {
    auto it = f.ret().find(a.name());
    if (it == f.ret().end())
      return Status(Error::invalid_graph, where + "output " + quoted(a.name()) + " has no ret");
    const size_t before = body.rets.size();
    TF_RETURN_IF_ERROR(resolver.resolve(it->second, "ret " + quoted(a.name()), &body.rets));
    TF_ASSIGN_OR_RETURN(std::vector<DType> t, arg_def_types(a, attrs, where));
    if (body.rets.size() - before != t.size())
      return Status(Error::invalid_graph, where + "ret " + quoted(a.name()) + " " +
                                              quoted(it->second) + " gives " +
                                              std::to_string(body.rets.size() - before) +
                                              " tensors but the output has " + std::to_string(t.size()));
  }
  // In signature order when it lists them, else in the map's (sorted) order.
  std::vector<std::pair<std::string, std::string>> control;
  for (const auto& [name, node] : f.control_ret()) control.emplace_back(name, node);
  std::sort(control.begin(), control.end());
  for (const auto& [name, node] : control) {
    std::string target = node;
    if (!target.empty() && target[0] == '^') target.erase(0, 1);
    if (target.find(':') != std::string::npos) target.erase(target.find(':'));
    if (!resolver.is_node(target))
      return Status(Error::invalid_graph, where + "control_ret " + quoted(name) + " " +
                                              quoted(node) + " names no node");
    body.control_rets.push_back(resolver.new_name(target));
  }
  return body;
}

}  // namespace functions
}  // namespace tagflow::graph
