// The expansion of functional nodes into Switch/Merge/Enter/Exit and
// inlined calls (graph/functions/lower_functional.hpp, FunctionInstantiator): one
// class over three files — lower_functional.cpp (the driver, calls, the
// nodes it adds), lower_branches.cpp (If and Case), lower_loops.cpp
// (While and For). Internal to graph/.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "graph/functions/lowering.hpp"
#include "graph/proto/graph_def.pb.h"

namespace tagflow::graph {
inline namespace functions {
namespace lowering_detail {


using ops::AttrList;
using ops::AttrMap;
using ops::NameAttrList;
using ops::Tensor;

inline std::string quoted(const std::string& s) { return "'" + s + "'"; }

inline std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

inline std::string type_list(const std::vector<DType>& types) {
  std::string s = "(";
  for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + ops::dtype_name(types[i]);
  return s + ")";
}

using Kind = FunctionalKind;

inline Kind kind_of(const Node& n, const FunctionLibrary& lib) { return functional_kind(n, lib); }

// Attr readers for a node that has not been validated yet; `where` names it.
inline Status missing_attr(const std::string& where, const std::string& key, const char* type) {
  return Status(Error::invalid_graph, where + "attr " + quoted(key) + " is missing or not a " + type);
}

inline Expected<DType> type_attr(const Node& n, const std::string& where, const std::string& key) {
  const DType* t = n.attr<DType>(key);
  if (t == nullptr) return missing_attr(where, key, "type");
  return *t;
}

inline Expected<std::vector<DType>> type_list_attr(const Node& n, const std::string& where, const std::string& key) {
  const AttrList* l = n.attr<AttrList>(key);
  if (l == nullptr) return missing_attr(where, key, "list(type)");
  return l->type;
}

// A function a functional node uses, with its signature resolved.
struct Callee {
  NameAttrList func;
  const tensorflow::FunctionDef* def = nullptr;
  std::vector<DType> inputs, outputs;
};

// Whether body `f`, whose inputs and outputs are single tensors, returns
// argument `arg` as its result `result`, directly or through an Identity.
inline bool passes_through(const tensorflow::FunctionDef& f, size_t arg_index, size_t result) {
  const auto& sig = f.signature();
  if (arg_index >= static_cast<size_t>(sig.input_arg_size()) || result >= static_cast<size_t>(sig.output_arg_size()))
    return false;
  for (const auto& a : sig.input_arg())
    if (!a.number_attr().empty() || !a.type_list_attr().empty()) return false;
  for (const auto& a : sig.output_arg())
    if (!a.number_attr().empty() || !a.type_list_attr().empty()) return false;
  const auto ret = f.ret().find(sig.output_arg(static_cast<int>(result)).name());
  if (ret == f.ret().end()) return false;
  const std::string& arg = sig.input_arg(static_cast<int>(arg_index)).name();
  if (ret->second == arg) return true;
  const std::string node = ret->second.substr(0, ret->second.find(':'));
  for (const auto& def : f.node_def())
    if (def.name() == node) return def.op() == "Identity" && def.input_size() >= 1 && def.input(0) == arg;
  return false;
}

class Lowering {
 public:
  // `names` holds every name of the graph being lowered and gets the new
  // ones; `chains` gets the location of each node lowered from a body.
  // `outside` nodes of the graph are not among the items lowered here.
  Lowering(const FunctionLibrary& lib, std::unordered_set<std::string>* names, ChainMap* chains,
           int64_t max_nodes, int64_t outside)
      : lib_(lib), names_(*names), chains_(*chains), max_nodes_(max_nodes), outside_(outside) {}

  // Expands every functional item, and what expanding adds, in order.
  Expected<std::vector<Item>> run(std::vector<Item> items);

 private:
  Status expand(size_t index);

  // A new node name: `base` if free, else base_1, base_2, ...
  std::string fresh(const std::string& base);

  // Appends a node (made by lowering `parent`) and returns its name.
  std::string add(const Item& parent, const std::string& base, const std::string& op,
                  AttrMap attrs, std::vector<NamedEndpoint> inputs,
                  std::vector<std::string> controls = {}, std::string name = {});

  // A call of branch, cond or body `f` of functional node `parent`.
  std::string add_call(const Item& parent, const std::string& base, const std::string& role,
                       const NameAttrList& f, std::vector<NamedEndpoint> inputs,
                       std::vector<std::string> controls = {});

  std::string add_const(const Item& parent, const std::string& base, Tensor value,
                        const std::string& gate);

  // Replaces the functional node by an Identity / IdentityN of its results
  // (a NoOp when there are none) under its own name.
  void finish(size_t index, const Item& x, std::vector<NamedEndpoint> outs,
              const std::vector<DType>& types, std::vector<std::string> controls);

  Expected<Callee> callee(const std::string& role, const NameAttrList& func);

  Status lower_call(size_t index, Item x, const NameAttrList& func);

  // TensorFlow's truthiness of a predicate as a bool scalar (a scalar is
  // true when non-zero, a non-scalar when it has elements): one ToBool node,
  // which waits for `controls`.
  Expected<NamedEndpoint> truthiness(const Item& x, const std::string& base,
                                     NamedEndpoint value, DType t,
                                     const std::vector<std::string>& controls);

  // Checks a branch's signature against the node's Tin / Tout and against
  // the first branch.
  Status check_branch(const Callee& c, const std::string& role,
                      const Callee* first, const std::string& first_role,
                      const std::vector<DType>& tin, const std::vector<DType>& tout);

  Status lower_if(size_t index, Item x);

  // A Merge per output of the branch calls; with no outputs, a Merge of
  // "branch done" signals so that `^node` waits for the branch taken.
  void merge_outputs(size_t index, const Item& x, const std::vector<std::string>& calls,
                     const std::vector<std::string>& pivots, DType pivot_type,
                     const std::vector<DType>& tout);

  // A variable a loop body passes through unchanged (loop variable i) is
  // read in the body from `invariant`, a loop-invariant Enter, as
  // TensorFlow 1's while_loop captures it, so gradients with respect to it
  // are summed over the iterations like a captured tensor's. The body reads
  // it gated by the Switch's taken output `taken`, so it runs in exactly
  // the iterations it ran in before. Returns what the body reads.
  NamedEndpoint invariant_variable(const Item& x, const std::string& name, size_t i, const std::string& invariant,
                                   NamedEndpoint taken);

  Status lower_while(size_t index, Item x);

  // For(start, limit, delta, vars) with body(i, vars) -> vars: a loop over
  // (i, vars) whose predicate is i < limit for a positive delta and
  // i > limit for a negative one; limit and delta are loop invariants. A
  // zero delta fails the step at an Assert before the loop starts, as
  // TensorFlow's For does.
  Status lower_for(size_t index, Item x);

  Status check_loop_signatures(const Node& n, const Callee& cond, const Callee& body,
                               const std::vector<DType>& types);

  Status lower_case(size_t index, Item x);

  const FunctionLibrary& lib_;
  std::unordered_set<std::string>& names_;
  ChainMap& chains_;
  int64_t max_nodes_;  // 0: no limit
  int64_t outside_;
  std::vector<Item> items_;
  std::string where_;  // "If 'cond': ", how errors name the node being expanded
  FunctionalOp op_;     // the node being expanded, read once
};

}  // namespace lowering_detail
}  // namespace functions
}  // namespace tagflow::graph
