#include "graph/builder/infer_attrs.hpp"

namespace tagflow::graph {
inline namespace builder {

using ops::DType;
using ops::Error;
using ops::Status;
using ops::ok_status;

namespace {

// An input argument that takes a list of tensors (`N * T`, a type list).
bool is_list_arg(const ops::OpDef& def, const ops::ArgSpec& arg) {
  if (!arg.number_attr.empty() || !arg.type_list_attr.empty()) return true;
  if (arg.type_attr.empty()) return false;
  const ops::AttrSpec* spec = def.find_attr(arg.type_attr);
  return spec != nullptr && spec->type == "list(type)";
}

const std::string& list_type_attr(const ops::ArgSpec& arg) {
  return arg.type_list_attr.empty() ? arg.type_attr : arg.type_list_attr;
}

}  // namespace

Status infer_type_attrs(const ops::OpDef& def, const std::vector<DType>& inputs, ops::AttrMap& attrs,
                        const std::string& where) {
  // How many inputs each argument takes: 1, a count its attr gives, or (for
  // at most one list argument without attr) what the others leave.
  const auto& args = def.inputs();
  std::vector<int64_t> counts(args.size(), 1);
  int open = -1;
  int64_t known = 0;
  for (size_t a = 0; a < args.size(); ++a) {
    if (!is_list_arg(def, args[a])) {
      known += 1;
      continue;
    }
    auto n = attrs.find(args[a].number_attr);
    auto l = attrs.find(list_type_attr(args[a]));
    if (!args[a].number_attr.empty() && n != attrs.end() && n->second.is<int64_t>()) {
      counts[a] = n->second.get<int64_t>();
    } else if (args[a].number_attr.empty() && l != attrs.end() && l->second.is<ops::AttrList>()) {
      counts[a] = static_cast<int64_t>(l->second.get<ops::AttrList>().type.size());
    } else if (open < 0) {
      open = static_cast<int>(a);
      continue;
    } else {
      return Status(Error::invalid_argument,
                    where + " has two list arguments ('" + args[static_cast<size_t>(open)].name +
                        "', '" + args[a].name + "'): give the length of one as an attr");
    }
    known += counts[a];
  }
  const auto given = static_cast<int64_t>(inputs.size());
  if (open >= 0) {
    if (given < known)
      return Status(Error::invalid_argument, where + " takes at least " + std::to_string(known) +
                                                 " inputs but was given " + std::to_string(given));
    counts[static_cast<size_t>(open)] = given - known;
  } else if (given != known) {
    return Status(Error::invalid_argument, where + " takes " + std::to_string(known) +
                                               " inputs but was given " + std::to_string(given));
  }
  // Type attrs from the inputs (the checks come when the attrs are complete).
  size_t next = 0;
  for (size_t a = 0; a < args.size(); ++a) {
    const ops::ArgSpec& arg = args[a];
    const auto count = static_cast<size_t>(counts[a]);
    if (!arg.number_attr.empty()) attrs.emplace(arg.number_attr, counts[a]);
    if (arg.fixed_type == DType::invalid) {
      if (is_list_arg(def, arg) && arg.number_attr.empty()) {
        ops::AttrList types;
        for (size_t i = 0; i < count; ++i)
          types.type.push_back(ops::base_dtype(inputs[next + i]));
        attrs.emplace(list_type_attr(arg), std::move(types));
      } else if (count > 0) {
        attrs.emplace(arg.type_attr, ops::base_dtype(inputs[next]));
      }
    }
    next += count;
  }
  return ok_status();
}

}  // namespace builder
}  // namespace tagflow::graph
