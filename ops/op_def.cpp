#include "ops/op_def.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>

namespace tagflow::ops {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// The fixed dtype spelled as in TensorFlow op specs, or invalid.
DType fixed_type_named(std::string_view s) {
  static const std::pair<const char*, DType> kNames[] = {
      {"float", DType::float32},   {"double", DType::float64}, {"int32", DType::int32},
      {"int64", DType::int64},     {"bool", DType::boolean},   {"string", DType::string},
      {"resource", DType::resource}, {"variant", DType::variant}, {"uint8", DType::uint8},
      {"int8", DType::int8},       {"int16", DType::int16},    {"half", DType::half},
      {"bfloat16", DType::bfloat16},
  };
  for (auto& [name, t] : kNames)
    if (s == name) return t;
  return DType::invalid;
}

// Parses "name: [N *] type" or "name: Ref(type)". Malformed specs are a
// programming error in a registration and reported by validate().
ArgSpec parse_arg(std::string_view spec) {
  ArgSpec a;
  size_t colon = spec.find(':');
  a.name = std::string(trim(spec.substr(0, colon)));
  std::string_view type = colon == std::string_view::npos ? "" : trim(spec.substr(colon + 1));
  if (type.substr(0, 4) == "Ref(" && type.back() == ')') {
    a.is_ref = true;
    type = trim(type.substr(4, type.size() - 5));
  }
  size_t star = type.find('*');
  if (star != std::string_view::npos) {
    a.number_attr = std::string(trim(type.substr(0, star)));
    type = trim(type.substr(star + 1));
  }
  a.fixed_type = fixed_type_named(type);
  if (a.fixed_type == DType::invalid) a.type_attr = std::string(type);
  return a;
}

bool value_has_type(const AttrValue& v, const std::string& type) {
  if (type.rfind("list(", 0) == 0) {
    const AttrList* l = v.get_if<AttrList>();
    if (l == nullptr) return false;
    // An empty list fits any list type; a non-empty one must match.
    return l->size() == 0 || v.type_name() == type;
  }
  return v.type_name() == type;
}

}  // namespace

OpDef& OpDef::input(std::string_view spec) {
  inputs_.push_back(parse_arg(spec));
  return *this;
}

OpDef& OpDef::output(std::string_view spec) {
  outputs_.push_back(parse_arg(spec));
  return *this;
}

OpDef& OpDef::type_attr(std::string name, std::vector<DType> allowed,
                        std::optional<AttrValue> default_value) {
  AttrSpec s;
  s.name = std::move(name);
  s.type = "type";
  s.allowed_types = std::move(allowed);
  s.default_value = std::move(default_value);
  attrs_.push_back(std::move(s));
  return *this;
}

OpDef& OpDef::attr(std::string name, std::string type, std::optional<AttrValue> default_value,
                   std::optional<int64_t> minimum) {
  AttrSpec s;
  s.name = std::move(name);
  s.type = std::move(type);
  s.default_value = std::move(default_value);
  s.minimum = minimum;
  attrs_.push_back(std::move(s));
  return *this;
}

OpDef& OpDef::kernel_fn(FunctionKernel::Fn fn) {
  kernel_ = [fn](const KernelInit&) -> Expected<std::unique_ptr<Kernel>> {
    return std::unique_ptr<Kernel>(new FunctionKernel(fn));
  };
  return *this;
}

const AttrSpec* OpDef::find_attr(std::string_view name) const {
  for (const AttrSpec& a : attrs_)
    if (a.name == name) return &a;
  return nullptr;
}

Status OpDef::validate() const {
  auto check_args = [&](const std::vector<ArgSpec>& args) -> Status {
    for (const ArgSpec& a : args) {
      if (a.name.empty())
        return Status(Error::internal, "op " + name_ + ": an argument has no name");
      if (!a.number_attr.empty()) {
        const AttrSpec* n = find_attr(a.number_attr);
        if (n == nullptr || n->type != "int")
          return Status(Error::internal, "op " + name_ + ": argument '" + a.name +
                                             "' needs int attr '" + a.number_attr + "'");
      }
      if (!a.type_attr.empty()) {
        const AttrSpec* t = find_attr(a.type_attr);
        if (t == nullptr || (t->type != "type" && t->type != "list(type)"))
          return Status(Error::internal, "op " + name_ + ": argument '" + a.name +
                                             "' needs type attr '" + a.type_attr + "'");
        if (t->type == "list(type)" && !a.number_attr.empty())
          return Status(Error::internal, "op " + name_ + ": argument '" + a.name +
                                             "' mixes N * with a type list");
      }
    }
    return ok_status();
  };
  TF_RETURN_IF_ERROR(check_args(inputs_));
  return check_args(outputs_);
}

namespace {

Status check_attr(const std::string& op, const AttrSpec& spec, const AttrValue& v) {
  if (!value_has_type(v, spec.type))
    return Status(Error::invalid_argument, "attr '" + spec.name + "' of op " + op + " must be " +
                                               spec.type + ", got " + v.type_name() + " " +
                                               v.to_string());
  if (!spec.allowed_types.empty()) {
    auto check = [&](DType t) {
      if (std::find(spec.allowed_types.begin(), spec.allowed_types.end(), base_dtype(t)) !=
          spec.allowed_types.end())
        return ok_status();
      std::string names;
      for (DType a : spec.allowed_types) names += (names.empty() ? "" : ", ") + dtype_name(a);
      return Status(Error::invalid_argument, "attr '" + spec.name + "' of op " + op + " is " +
                                                 dtype_name(t) + ", which is not one of {" +
                                                 names + "}");
    };
    if (const DType* t = v.get_if<DType>()) TF_RETURN_IF_ERROR(check(*t));
    if (const AttrList* l = v.get_if<AttrList>())
      for (DType t : l->type) TF_RETURN_IF_ERROR(check(t));
  }
  if (spec.minimum) {
    // The int value, or the length of a list; nothing for other kinds.
    std::optional<int64_t> n;
    if (const int64_t* i = v.get_if<int64_t>()) n = *i;
    if (const AttrList* l = v.get_if<AttrList>()) n = static_cast<int64_t>(l->size());
    if (n && *n < *spec.minimum)
      return Status(Error::invalid_argument, "attr '" + spec.name + "' of op " + op + " is " +
                                                 std::to_string(*n) + ", less than the minimum " +
                                                 std::to_string(*spec.minimum));
  }
  return ok_status();
}

}  // namespace

Status OpDef::check_attrs(const AttrMap& attrs, bool* needs_defaults) const {
  *needs_defaults = false;
  for (const AttrSpec& spec : attrs_) {
    auto it = attrs.find(spec.name);
    if (it == attrs.end()) {
      if (!spec.default_value)
        return Status(Error::invalid_argument, "op " + name_ + " needs attr '" + spec.name +
                                                   "' of type " + spec.type);
      *needs_defaults = true;
    }
    TF_RETURN_IF_ERROR(check_attr(name_, spec, it == attrs.end() ? *spec.default_value : it->second));
  }
  return ok_status();
}

void OpDef::add_default_attrs(AttrMap& attrs) const {
  for (const AttrSpec& spec : attrs_)
    if (spec.default_value) attrs.emplace(spec.name, *spec.default_value);
}

Status OpDef::check_and_complete_attrs(AttrMap& attrs) const {
  bool needs_defaults = false;
  TF_RETURN_IF_ERROR(check_attrs(attrs, &needs_defaults));
  if (needs_defaults) add_default_attrs(attrs);
  return ok_status();
}

Expected<std::vector<DType>> OpDef::arg_types(const std::vector<ArgSpec>& args,
                                              const AttrMap& attrs) const {
  std::vector<DType> out;
  for (const ArgSpec& a : args) {
    if (a.fixed_type != DType::invalid) {
      DType t = a.is_ref ? make_ref(a.fixed_type) : a.fixed_type;
      int64_t n = 1;
      if (!a.number_attr.empty()) {
        auto it = attrs.find(a.number_attr);
        if (it == attrs.end() || !it->second.is<int64_t>())
          return Status(Error::invalid_argument, "op " + name_ + " needs int attr '" + a.number_attr + "'");
        n = it->second.get<int64_t>();
      }
      out.insert(out.end(), static_cast<size_t>(std::max<int64_t>(n, 0)), t);
      continue;
    }
    auto it = attrs.find(a.type_attr);
    if (it == attrs.end())
      return Status(Error::invalid_argument, "op " + name_ + " needs attr '" + a.type_attr +
                                                 "' for argument '" + a.name + "'");
    if (const AttrList* l = it->second.get_if<AttrList>()) {
      for (DType t : l->type) out.push_back(a.is_ref ? make_ref(t) : t);
      continue;
    }
    const DType* t = it->second.get_if<DType>();
    if (t == nullptr)
      return Status(Error::invalid_argument, "attr '" + a.type_attr + "' of op " + name_ +
                                                 " must be a type");
    int64_t n = 1;
    if (!a.number_attr.empty()) {
      auto nit = attrs.find(a.number_attr);
      if (nit == attrs.end() || !nit->second.is<int64_t>())
        return Status(Error::invalid_argument, "op " + name_ + " needs int attr '" + a.number_attr + "'");
      n = nit->second.get<int64_t>();
    }
    out.insert(out.end(), static_cast<size_t>(std::max<int64_t>(n, 0)), a.is_ref ? make_ref(*t) : *t);
  }
  return out;
}

Expected<std::vector<DType>> OpDef::input_types(const AttrMap& attrs) const {
  return arg_types(inputs_, attrs);
}

Expected<std::vector<DType>> OpDef::output_types(const AttrMap& attrs) const {
  return arg_types(outputs_, attrs);
}

Expected<std::unique_ptr<Kernel>> OpDef::make_kernel(const KernelInit& init) const {
  if (!kernel_) return Status(Error::unimplemented, "op " + name_ + " has no kernel");
  return kernel_(init);
}

Status OpRegistry::add(OpDef def) {
  TF_RETURN_IF_ERROR(def.validate());
  std::string name = def.name();
  if (ops_.count(name) != 0)
    return Status(Error::internal, "op " + name + " is registered twice");
  ops_.emplace(name, std::make_unique<OpDef>(std::move(def)));
  return ok_status();
}

const OpDef* OpRegistry::find(std::string_view name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : it->second.get();
}

std::vector<const OpDef*> OpRegistry::all() const {
  std::vector<const OpDef*> out;
  for (auto& [name, def] : ops_) out.push_back(def.get());
  return out;
}

void register_builtin(OpRegistry& r, OpDef def) {
  Status s = r.add(std::move(def));
  if (!s.ok()) {
    std::fprintf(stderr, "tagflow: broken built-in op registration: %s\n", s.to_string().c_str());
    std::abort();
  }
}

const OpRegistry& OpRegistry::global() {
  static const OpRegistry* registry = [] {
    auto* r = new OpRegistry;
    register_array_ops(*r);
    register_math_ops(*r);
    register_nn_ops(*r);
    register_control_flow_ops(*r);
    register_state_ops(*r);
    register_training_ops(*r);
    return r;
  }();
  return *registry;
}

}  // namespace tagflow::ops
