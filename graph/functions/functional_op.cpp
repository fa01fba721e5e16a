#include "graph/functions/functional_op.hpp"

#include "graph/functions/function_library.hpp"

namespace tagflow::graph {
inline namespace functions {

namespace {

using Kind = FunctionalKind;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

FunctionalKind functional_kind(const Node& n, const std::function<bool(const std::string&)>& is_function) {
  if (const ops::OpDef* def = n.def != nullptr ? n.def : ops::OpRegistry::global().find(n.op)) {
    if (def->role() != ops::OpRole::function_call) return Kind::none;
    const std::string& op = n.op;
    if (op == "If" || op == "StatelessIf" || op == "_If") return Kind::if_op;
    if (op == "While" || op == "StatelessWhile" || op == "_While") return Kind::while_op;
    if (op == "Case" || op == "StatelessCase") return Kind::case_op;
    if (op == "For") return Kind::for_op;
    if (op == "PartitionedCall" || op == "StatefulPartitionedCall") return Kind::partitioned_call;
    return Kind::none;  // left for the executor to refuse
  }
  return is_function(n.op) ? Kind::call : Kind::none;
}

FunctionalKind functional_kind(const Node& n, const FunctionLibrary& lib) {
  return functional_kind(n, [&lib](const std::string& op) { return lib.find(op) != nullptr; });
}

bool is_functional(const Node& n, const FunctionLibrary& lib) { return functional_kind(n, lib) != Kind::none; }

const FunctionalCallee* FunctionalOp::callee(const std::string& role) const {
  for (const FunctionalCallee& c : callees)
    if (c.role == role) return &c;
  return nullptr;
}

const FunctionalCallee& FunctionalOp::branch(size_t b) const {
  if (kind == Kind::if_op) return callees[b == 0 ? 1 : 0];
  return callees[b];
}

Expected<FunctionalOp> read_functional_op(const Node& n, FunctionalKind kind) {
  FunctionalOp op;
  op.kind = kind;
  auto missing = [&n](const std::string& key, const char* what) {
    return Status(Error::invalid_graph,
                  n.op + " " + quoted(n.name) + ": attr " + quoted(key) + " is missing or not a " + what);
  };
  auto one = [&](const char* role, const char* key) -> Status {
    const ops::NameAttrList* f = n.attr<ops::NameAttrList>(key);
    if (f == nullptr) return missing(key, "func");
    op.callees.push_back({role, *f});
    return ok_status();
  };
  switch (kind) {
    case Kind::none: break;
    case Kind::call: {
      ops::NameAttrList f;
      f.name = n.op;
      f.attr = n.attrs;
      op.callees.push_back({"function", std::move(f)});
      break;
    }
    case Kind::partitioned_call: TF_RETURN_IF_ERROR(one("function", "f")); break;
    case Kind::if_op:
      op.leading_inputs = 1;
      TF_RETURN_IF_ERROR(one("then_branch", "then_branch"));
      TF_RETURN_IF_ERROR(one("else_branch", "else_branch"));
      break;
    case Kind::case_op: {
      op.leading_inputs = 1;
      const ops::AttrList* l = n.attr<ops::AttrList>("branches");
      if (l == nullptr || l->func.empty()) return missing("branches", "non-empty list(func)");
      for (size_t b = 0; b < l->func.size(); ++b) op.callees.push_back({"branch " + std::to_string(b), l->func[b]});
      break;
    }
    case Kind::while_op:
      TF_RETURN_IF_ERROR(one("cond", "cond"));
      TF_RETURN_IF_ERROR(one("body", "body"));
      break;
    case Kind::for_op:
      op.leading_inputs = 3;
      TF_RETURN_IF_ERROR(one("body", "body"));
      break;
  }
  return op;
}

Expected<FunctionalOp> read_functional_op(const Node& n, const FunctionLibrary& lib) {
  return read_functional_op(n, functional_kind(n, lib));
}

std::string function_instance_key(const ops::NameAttrList& f) {
  std::string key = f.name;
  for (const auto& [name, value] : f.attr)
    if (!name.empty() && name[0] != '_') key += "|" + name + "=" + value.to_string();
  return key;
}

std::string for_zero_delta_message(const std::string& name) {
  return "For " + quoted(name) + ": delta must be non-zero";
}

}  // namespace functions
}  // namespace tagflow::graph
