#include "graph/functions/run_as_written.hpp"

#include <set>
#include <string>
#include <unordered_map>

#include "graph/functions/body_graph.hpp"
#include "graph/functions/function_library.hpp"
#include "graph/functions/functional_op.hpp"
#include "ops/op_def.hpp"

namespace tagflow::graph {
inline namespace functions {

namespace {

// Decides for one graph, remembering each function instance's answer.
class Decider {
 public:
  Decider(const Graph& whole, const RunAsWrittenOptions& options)
      : whole_(whole), lib_(whole.library()), options_(options) {}

  bool node(const Node& n) {
    auto op = read_functional_op(n, lib_);
    if (!op.ok() || op->kind == FunctionalKind::none) return false;
    for (const FunctionalCallee& c : op->callees)
      if (!function(c.func)) return false;
    return true;
  }

 private:
  bool function(const ops::NameAttrList& f) {
    const std::string key = function_instance_key(f);
    if (auto it = known_.find(key); it != known_.end()) return it->second;
    // A function that (through others) calls itself is lowered, which says so.
    if (!visiting_.insert(key).second) return false;
    bool ok = false;
    auto body = body_graph(lib_, f, whole_);
    if (body.ok()) {
      ok = true;
      for (const Node& n : body->graph.nodes()) {
        if (!body_node(n)) {
          ok = false;
          break;
        }
      }
    }
    visiting_.erase(key);
    known_[key] = ok;
    return ok;
  }

  bool body_node(const Node& n) {
    if (options_.several_devices && !n.device.empty()) return false;
    if (n.op == "_Arg" || n.op == "_Retval") return true;
    const ops::OpDef* def = n.def != nullptr ? n.def : ops::OpRegistry::global().find(n.op);
    if (def == nullptr) return lib_.find(n.op) != nullptr && node(n);  // a call of a library function
    if (def->is_blocking()) return false;
    switch (def->role()) {
      case ops::OpRole::ordinary:
      case ops::OpRole::switch_op:
      case ops::OpRole::merge: return true;
      case ops::OpRole::function_call: return node(n);
      default: return false;
    }
  }

  const Graph& whole_;
  FunctionLibrary lib_;
  const RunAsWrittenOptions& options_;
  std::unordered_map<std::string, bool> known_;
  std::set<std::string> visiting_;
};

}  // namespace

bool may_run_as_written(const Node& n, const Graph& whole, const RunAsWrittenOptions& options) {
  return Decider(whole, options).node(n);
}

int mark_run_as_written(Graph* g, const RunAsWrittenOptions& options) {
  Decider decide(*g, options);
  FunctionLibrary lib(g->library());
  std::vector<std::pair<NodeId, bool>> marks;
  for (NodeId id = 0; id < g->num_nodes(); ++id)
    if (is_functional(g->node(id), lib)) marks.emplace_back(id, decide.node(g->node(id)));
  int marked = 0;
  for (const auto& [id, as_written] : marks) {
    Node& n = g->mutable_node(id);
    if (as_written) {
      n.attrs[kRunAsWrittenAttr] = true;
      ++marked;
    } else {
      n.attrs.erase(kRunAsWrittenAttr);
    }
  }
  return marked;
}

bool marked_run_as_written(const Node& n) {
  const bool* b = n.attr<bool>(kRunAsWrittenAttr);
  return b != nullptr && *b;
}

}  // namespace functions
}  // namespace tagflow::graph
