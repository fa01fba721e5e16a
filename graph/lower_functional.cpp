#include "graph/lower_functional.hpp"

#include <algorithm>

#include "graph/implementation_selection.hpp"
#include "graph/lowering.hpp"
#include "graph/proto/graph_def.pb.h"

namespace tagflow::graph {

namespace {

using ops::AttrList;
using ops::AttrMap;
using ops::NameAttrList;
using ops::Tensor;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string type_list(const std::vector<DType>& types) {
  std::string s = "(";
  for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + ops::dtype_name(types[i]);
  return s + ")";
}

using Kind = FunctionalKind;

Kind kind_of(const Node& n, const FunctionLibrary& lib) { return functional_kind(n, lib); }

// Attr readers for a node that has not been validated yet; `where` names it.
Status missing_attr(const std::string& where, const std::string& key, const char* type) {
  return Status(Error::invalid_graph, where + "attr " + quoted(key) + " is missing or not a " + type);
}

Expected<DType> type_attr(const Node& n, const std::string& where, const std::string& key) {
  const DType* t = n.attr<DType>(key);
  if (t == nullptr) return missing_attr(where, key, "type");
  return *t;
}

Expected<std::vector<DType>> type_list_attr(const Node& n, const std::string& where, const std::string& key) {
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
bool passes_through(const tensorflow::FunctionDef& f, size_t arg_index, size_t result) {
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
  Expected<std::vector<Item>> run(std::vector<Item> items) {
    items_ = std::move(items);
    // Expansions append their nodes, which this loop reaches in turn. Calls
    // inlined in calls can grow a small graph exponentially: stop at the limit.
    for (size_t i = 0; i < items_.size(); ++i) {
      const size_t before = items_.size();
      TF_RETURN_IF_ERROR(expand(i));
      if (max_nodes_ > 0 && outside_ + static_cast<int64_t>(items_.size()) > max_nodes_)
        return Status(Error::resource_exhausted,
                      "lowering functional ops: inlining node " + quoted(items_[i].spec.node.name) +
                          " (" + std::to_string(items_.size() - before) + " nodes) takes the graph past the limit of " +
                          std::to_string(max_nodes_) + " nodes (--max-nodes, [tagflow] max-nodes)");
    }
    return std::move(items_);
  }

 private:
  Status expand(size_t index) {
    Item x = items_[index];
    const Node& n = x.spec.node;
    const Kind kind = kind_of(n, lib_);
    if (kind == Kind::none) return ok_status();
    const std::string own = n.op + " " + quoted(n.name) + ": ";
    where_ = x.chain.empty() ? own : location(x.chain, x.original) + " (" + n.op + "): ";
    auto op = read_functional_op(n, kind);
    if (!op.ok()) {
      // The view names the node as written at the top; inside a body,
      // where_ says where it is written.
      std::string m = op.status().message();
      if (m.rfind(own, 0) == 0) m = m.substr(own.size());
      return Status(op.status().code(), where_ + m);
    }
    op_ = std::move(op).value();
    switch (kind) {
      case Kind::none: return ok_status();
      case Kind::call:
      case Kind::partitioned_call: {
        const NameAttrList f = op_.callees[0].func;
        return lower_call(index, std::move(x), f);
      }
      case Kind::if_op: return lower_if(index, std::move(x));
      case Kind::while_op: return lower_while(index, std::move(x));
      case Kind::case_op: return lower_case(index, std::move(x));
      case Kind::for_op: return lower_for(index, std::move(x));
    }
    return ok_status();
  }

  // A new node name: `base` if free, else base_1, base_2, ...
  std::string fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; names_.count(name) != 0; ++k) name = base + "_" + std::to_string(k);
    names_.insert(name);
    return name;
  }

  // Appends a node (made by lowering `parent`) and returns its name.
  std::string add(const Item& parent, const std::string& base, const std::string& op,
                  AttrMap attrs, std::vector<NamedEndpoint> inputs,
                  std::vector<std::string> controls = {}, std::string name = {}) {
    Item item;
    item.chain = parent.chain;
    item.original = parent.original;
    item.spec.node.name = name.empty() ? fresh(base) : std::move(name);
    item.spec.node.op = op;
    item.spec.node.device = parent.spec.node.device;
    item.spec.node.attrs = std::move(attrs);
    item.spec.inputs = std::move(inputs);
    item.spec.control_inputs = std::move(controls);
    if (!parent.chain.empty())
      chains_[item.spec.node.name] = ChainEntry{location(parent.chain, parent.original), true};
    items_.push_back(std::move(item));
    return items_.back().spec.node.name;
  }

  // A call of branch, cond or body `f` of functional node `parent`.
  std::string add_call(const Item& parent, const std::string& base, const std::string& role,
                       const NameAttrList& f, std::vector<NamedEndpoint> inputs,
                       std::vector<std::string> controls = {}) {
    std::string name = add(parent, base, f.name, f.attr, std::move(inputs), std::move(controls));
    items_.back().call_as = Link{parent.original, role, f.name};
    return name;
  }

  std::string add_const(const Item& parent, const std::string& base, Tensor value,
                        const std::string& gate) {
    DType t = value.dtype();
    return add(parent, base, "Const", {{"dtype", t}, {"value", std::move(value)}}, {}, {gate});
  }

  // Replaces the functional node by an Identity / IdentityN of its results
  // (a NoOp when there are none) under its own name.
  void finish(size_t index, const Item& x, std::vector<NamedEndpoint> outs,
              const std::vector<DType>& types, std::vector<std::string> controls) {
    Item out;
    out.chain = x.chain;
    out.original = x.original;
    out.spec.node.name = x.spec.node.name;
    out.spec.node.device = x.spec.node.device;
    if (outs.empty()) {
      out.spec.node.op = "NoOp";
    } else if (outs.size() == 1) {
      out.spec.node.op = "Identity";
      out.spec.node.attrs["T"] = ops::base_dtype(types[0]);
    } else {
      AttrList list;
      for (DType t : types) list.type.push_back(ops::base_dtype(t));
      out.spec.node.op = "IdentityN";
      out.spec.node.attrs["T"] = std::move(list);
    }
    out.spec.inputs = std::move(outs);
    out.spec.control_inputs = std::move(controls);
    items_[index] = std::move(out);
  }

  Expected<Callee> callee(const std::string& role, const NameAttrList& func) {
    Callee c;
    c.func = func;
    c.def = lib_.find(func.name);
    const std::string what = role.empty() ? "calls function " : role + " ";
    if (c.def == nullptr)
      return Status(Error::not_found, where_ + what + quoted(func.name) +
                                          ", which is not in the function library");
    const std::string at = where_ + what + quoted(func.name) + ": ";
    auto in = lib_.input_types(*c.def, func.attr);
    if (!in.ok()) return in.status().with_prefix(at);
    auto out = lib_.output_types(*c.def, func.attr);
    if (!out.ok()) return out.status().with_prefix(at);
    c.inputs = std::move(in).value();
    c.outputs = std::move(out).value();
    return c;
  }

  Status lower_call(size_t index, Item x, const NameAttrList& func) {
    const Node& n = x.spec.node;
    const std::string& name = n.name;
    const Link link = x.call_as ? *x.call_as : Link{x.original, "function", func.name};
    auto cycle = std::find_if(x.chain.begin(), x.chain.end(),
                              [&](const Link& l) { return l.function == func.name; });
    if (cycle != x.chain.end()) {
      std::string path;
      for (auto it = cycle; it != x.chain.end(); ++it) path += quoted(it->function) + " -> ";
      return Status(Error::invalid_graph, "recursion in the function library: " + path +
                                              quoted(func.name) + " (through node " +
                                              quoted(name) + ")");
    }
    TF_ASSIGN_OR_RETURN(Callee c, callee("", func));
    if (c.inputs.size() != x.spec.inputs.size())
      return Status(Error::invalid_graph,
                    where_ + "calls function " + quoted(func.name) + " with " +
                        plural(x.spec.inputs.size(), "input") + " but it takes " +
                        std::to_string(c.inputs.size()));
    // Each input through an Identity that waits for the call's control
    // inputs; body nodes without inputs wait for all of them (input_control),
    // so a call on a dead path leaves its whole body dead.
    std::vector<NamedEndpoint> args;
    std::vector<std::string> arg_nodes;
    const auto& sig_args = c.def->signature().input_arg();
    const bool one_per_arg = static_cast<size_t>(sig_args.size()) == c.inputs.size();
    size_t flat = 0;
    for (DType t : c.inputs) {
      const std::string base =
          name + "/" + (one_per_arg ? sig_args[static_cast<int>(flat)].name() : "arg_" + std::to_string(flat));
      std::string arg = add(x, base, "Identity", {{"T", ops::base_dtype(t)}},
                            {x.spec.inputs[flat]}, x.spec.control_inputs);
      args.push_back({arg, 0});
      arg_nodes.push_back(arg);
      ++flat;
    }
    std::string input_control;
    if (!arg_nodes.empty() || !x.spec.control_inputs.empty())
      input_control = add(x, name + "/input_control", "NoOp", {}, {},
                          arg_nodes.empty() ? x.spec.control_inputs : arg_nodes);
    std::vector<std::string> originals;
    auto body = lib_.instantiate(*c.def, func.attr, args, [&](const std::string& b) {
      originals.push_back(b);
      return fresh(name + "/" + b);
    });
    std::vector<Link> chain = x.chain;
    chain.push_back(link);
    if (!body.ok()) {
      // "function 'f': node 'y' ..." said from the caller's side.
      std::string m = body.status().message();
      const std::string own = "function " + quoted(func.name) + ": ";
      if (m.compare(0, own.size(), own) == 0) m.erase(0, own.size());
      return Status(body.status().code(), location(x.chain, x.original) + " → " + link.role + " " +
                                              quoted(func.name) + " → " + m);
    }
    // The call's results wait for what its body runs for effect, so that
    // those run whenever the call does, as they do as written.
    std::vector<std::string> controls = nodes_run_for_effect(*body, lib_);
    for (size_t i = 0; i < body->nodes.size(); ++i) {
      NodeSpec& spec = body->nodes[i];
      if (spec.inputs.empty() && spec.control_inputs.empty() && !input_control.empty())
        spec.control_inputs.push_back(input_control);
      if (spec.node.device.empty()) spec.node.device = n.device;
      chains_[spec.node.name] = ChainEntry{location(chain, originals[i]), false};
      items_.push_back(Item{std::move(spec), chain, originals[i], std::nullopt});
    }
    if (body->rets.empty() && !input_control.empty()) controls.push_back(input_control);
    finish(index, x, std::move(body->rets), body->ret_types, std::move(controls));
    return ok_status();
  }

  // TensorFlow's truthiness of a predicate as a bool scalar (a scalar is
  // true when non-zero, a non-scalar when it has elements): one ToBool node,
  // which waits for `controls`.
  Expected<NamedEndpoint> truthiness(const Item& x, const std::string& base,
                                     NamedEndpoint value, DType t,
                                     const std::vector<std::string>& controls) {
    t = ops::base_dtype(t);
    if (t == DType::resource || t == DType::variant || t == DType::invalid)
      return Status(Error::unimplemented,
                    where_ + "a predicate of type " + ops::dtype_name(t) +
                        " has no truth value");
    const std::string truthy = add(x, base, "ToBool", {{"T", t}}, {value}, controls);
    return NamedEndpoint{truthy, 0};
  }

  // Checks a branch's signature against the node's Tin / Tout and against
  // the first branch.
  Status check_branch(const Callee& c, const std::string& role,
                      const Callee* first, const std::string& first_role,
                      const std::vector<DType>& tin, const std::vector<DType>& tout) {
    const std::string at = where_ + role + " " + quoted(c.func.name);
    if (first != nullptr && c.outputs != first->outputs)
      return Status(Error::invalid_argument,
                    at + " returns " + type_list(c.outputs) + " but " + first_role + " " +
                        quoted(first->func.name) + " returns " + type_list(first->outputs));
    if (c.outputs != tout)
      return Status(Error::invalid_argument,
                    at + " returns " + type_list(c.outputs) + " but Tout is " + type_list(tout));
    if (c.inputs != tin)
      return Status(Error::invalid_argument,
                    at + " takes " + type_list(c.inputs) + " but Tin is " + type_list(tin));
    return ok_status();
  }

  Status lower_if(size_t index, Item x) {
    const Node& n = x.spec.node;
    const std::string name = n.name;
    TF_ASSIGN_OR_RETURN(DType tcond, type_attr(n, where_, "Tcond"));
    TF_ASSIGN_OR_RETURN(std::vector<DType> tin, type_list_attr(n, where_, "Tin"));
    TF_ASSIGN_OR_RETURN(std::vector<DType> tout, type_list_attr(n, where_, "Tout"));
    if (x.spec.inputs.size() != 1 + tin.size())
      return Status(Error::invalid_graph, where_ + "has " + plural(x.spec.inputs.size(), "data input") +
                                              " but takes the predicate and " +
                                              plural(tin.size(), "input") + " (Tin)");
    const NameAttrList then_f = op_.callee("then_branch")->func;
    const NameAttrList else_f = op_.callee("else_branch")->func;
    TF_ASSIGN_OR_RETURN(Callee then_c, callee("then_branch", then_f));
    TF_ASSIGN_OR_RETURN(Callee else_c, callee("else_branch", else_f));
    TF_RETURN_IF_ERROR(check_branch(then_c, "then_branch", nullptr, "", tin, tout));
    TF_RETURN_IF_ERROR(check_branch(else_c, "else_branch", &then_c, "then_branch", tin, tout));

    TF_ASSIGN_OR_RETURN(NamedEndpoint pred, truthiness(x, name + "/predicate", x.spec.inputs[0],
                                                        tcond, x.spec.control_inputs));
    const AttrMap bool_t = {{"T", DType::boolean}};
    const std::string sw = add(x, name + "/switch_pred", "Switch", bool_t, {pred, pred});
    const std::string pivot_f = add(x, name + "/pivot_f", "Identity", bool_t, {{sw, 0}});
    const std::string pivot_t = add(x, name + "/pivot_t", "Identity", bool_t, {{sw, 1}});
    std::vector<NamedEndpoint> then_in, else_in;
    for (size_t i = 0; i < tin.size(); ++i) {
      const std::string s = add(x, name + "/switch_" + std::to_string(i), "Switch",
                                {{"T", ops::base_dtype(tin[i])}}, {x.spec.inputs[1 + i], pred},
                                x.spec.control_inputs);
      else_in.push_back({s, 0});
      then_in.push_back({s, 1});
    }
    const std::string then_call = add_call(x, name + "/then", "then_branch", then_f, then_in, {pivot_t});
    const std::string else_call = add_call(x, name + "/else", "else_branch", else_f, else_in, {pivot_f});
    merge_outputs(index, x, {else_call, then_call}, {pivot_f, pivot_t}, DType::boolean, tout);
    return ok_status();
  }

  // A Merge per output of the branch calls; with no outputs, a Merge of
  // "branch done" signals so that `^node` waits for the branch taken.
  void merge_outputs(size_t index, const Item& x, const std::vector<std::string>& calls,
                     const std::vector<std::string>& pivots, DType pivot_type,
                     const std::vector<DType>& tout) {
    const std::string& name = x.spec.node.name;
    const int64_t n = static_cast<int64_t>(calls.size());
    std::vector<NamedEndpoint> outs;
    for (size_t k = 0; k < tout.size(); ++k) {
      std::vector<NamedEndpoint> in;
      for (const std::string& c : calls) in.push_back({c, static_cast<int>(k)});
      outs.push_back({add(x, name + "/merge_" + std::to_string(k), "Merge",
                          {{"T", ops::base_dtype(tout[k])}, {"N", n}}, in),
                      0});
    }
    if (!outs.empty()) return finish(index, x, std::move(outs), tout, {});
    std::vector<NamedEndpoint> done;
    for (size_t b = 0; b < calls.size(); ++b)
      done.push_back({add(x, calls[b] + "_done", "Identity", {{"T", pivot_type}}, {{pivots[b], 0}},
                          {calls[b]}),
                      0});
    const std::string executed =
        add(x, name + "/branch_executed", "Merge", {{"T", pivot_type}, {"N", n}}, done);
    finish(index, x, {}, {}, {executed});
  }

  // A variable a loop body passes through unchanged (loop variable i) is
  // read in the body from `invariant`, a loop-invariant Enter, as
  // TensorFlow 1's while_loop captures it, so gradients with respect to it
  // are summed over the iterations like a captured tensor's. The body reads
  // it gated by the Switch's taken output `taken`, so it runs in exactly
  // the iterations it ran in before. Returns what the body reads.
  NamedEndpoint invariant_variable(const Item& x, const std::string& name, size_t i, const std::string& invariant,
                                   NamedEndpoint taken) {
    const std::string k = std::to_string(i);
    const AttrMap t = {{"T", DType::resource}};
    const std::string pivot = add(x, name + "/pivot_" + k, "Identity", t, {taken});
    return {add(x, name + "/read_" + k, "Identity", t, {{invariant, 0}}, {pivot}), 0};
  }

  Status lower_while(size_t index, Item x) {
    const Node& n = x.spec.node;
    const std::string name = n.name;
    TF_ASSIGN_OR_RETURN(std::vector<DType> types, type_list_attr(n, where_, "T"));
    if (x.spec.inputs.size() != types.size())
      return Status(Error::invalid_graph, where_ + "has " + plural(x.spec.inputs.size(), "data input") +
                                              " but T lists " + plural(types.size(), "loop variable"));
    if (types.empty())
      return Status(Error::invalid_graph, where_ + "has no loop variables");
    const NameAttrList cond_f = op_.callee("cond")->func;
    const NameAttrList body_f = op_.callee("body")->func;
    TF_ASSIGN_OR_RETURN(Callee cond, callee("cond", cond_f));
    TF_ASSIGN_OR_RETURN(Callee body, callee("body", body_f));
    TF_RETURN_IF_ERROR(check_loop_signatures(n, cond, body, types));
    int64_t parallel = 10;
    if (const int64_t* p = n.attr<int64_t>("parallel_iterations")) parallel = *p;
    if (parallel < 1)
      return Status(Error::invalid_argument, where_ + "parallel_iterations must be at least 1");

    auto enter_of = [&](size_t i, const std::string& base, bool invariant) {
      const AttrMap attrs = {{"T", ops::base_dtype(types[i])},
                             {"frame_name", name},
                             {"is_constant", invariant},
                             {"parallel_iterations", parallel}};
      return add(x, base, "Enter", attrs, {x.spec.inputs[i]}, x.spec.control_inputs);
    };
    std::vector<NamedEndpoint> merges;
    std::vector<std::string> next_names;
    for (size_t i = 0; i < types.size(); ++i) {
      const std::string k = std::to_string(i);
      const AttrMap t = {{"T", ops::base_dtype(types[i])}};
      const std::string enter = enter_of(i, name + "/enter_" + k, false);
      next_names.push_back(fresh(name + "/next_iteration_" + k));
      AttrMap merge_attrs = t;
      merge_attrs["N"] = int64_t{2};
      merges.push_back({add(x, name + "/merge_" + k, "Merge", merge_attrs,
                            {{enter, 0}, {next_names.back(), 0}}),
                        0});
    }
    const std::string cond_call = add_call(x, name + "/cond", "cond", cond_f, merges);
    TF_ASSIGN_OR_RETURN(NamedEndpoint pred,
                        truthiness(x, name + "/predicate", {cond_call, 0}, cond.outputs[0], {}));
    const std::string loop_cond = add(x, name + "/loop_cond", "LoopCond", {}, {pred});
    std::vector<NamedEndpoint> exits, body_in;
    for (size_t i = 0; i < types.size(); ++i) {
      const std::string k = std::to_string(i);
      const AttrMap t = {{"T", ops::base_dtype(types[i])}};
      const std::string sw = add(x, name + "/switch_" + k, "Switch", t, {merges[i], {loop_cond, 0}});
      exits.push_back({add(x, name + "/exit_" + k, "Exit", t, {{sw, 0}}), 0});
      body_in.push_back({sw, 1});
    }
    for (size_t i = 0; i < types.size(); ++i)
      if (ops::base_dtype(types[i]) == DType::resource && passes_through(*body.def, i, i))
        body_in[i] = invariant_variable(x, name, i, enter_of(i, name + "/invariant_" + std::to_string(i), true),
                                        body_in[i]);
    const std::string body_call = add_call(x, name + "/body", "body", body_f, body_in);
    for (size_t i = 0; i < types.size(); ++i)
      add(x, "", "NextIteration", {{"T", ops::base_dtype(types[i])}},
          {{body_call, static_cast<int>(i)}}, {}, next_names[i]);
    finish(index, x, std::move(exits), types, {});
    return ok_status();
  }

  // For(start, limit, delta, vars) with body(i, vars) -> vars: a loop over
  // (i, vars) whose predicate is i < limit for a positive delta and
  // i > limit for a negative one; limit and delta are loop invariants. A
  // zero delta fails the step at an Assert before the loop starts, as
  // TensorFlow's For does.
  Status lower_for(size_t index, Item x) {
    const Node& n = x.spec.node;
    const std::string name = n.name;
    TF_ASSIGN_OR_RETURN(std::vector<DType> types, type_list_attr(n, where_, "T"));
    if (x.spec.inputs.size() != 3 + types.size())
      return Status(Error::invalid_graph, where_ + "has " + plural(x.spec.inputs.size(), "data input") +
                                              " but takes start, limit, delta and " +
                                              plural(types.size(), "loop variable") + " (T)");
    const NameAttrList body_f = op_.callee("body")->func;
    TF_ASSIGN_OR_RETURN(Callee body, callee("body", body_f));
    if (body.inputs.size() != 1 + types.size() || body.inputs[0] != DType::int32)
      return Status(Error::invalid_argument,
                    where_ + "body " + quoted(body_f.name) + " must take the int32 index and " +
                        plural(types.size(), "loop variable") + " (T); it takes " + type_list(body.inputs));
    if (body.outputs != std::vector<DType>(types.begin(), types.end()))
      return Status(Error::invalid_argument, where_ + "body " + quoted(body_f.name) + " returns " +
                                                 type_list(body.outputs) + " but the loop variables are " +
                                                 type_list(types));
    const AttrMap i32 = {{"T", DType::int32}};
    const NamedEndpoint start = x.spec.inputs[0], limit = x.spec.inputs[1];
    // Outside the loop: delta != 0 (asserted) and delta > 0. Constants
    // take delta's frame through a control edge from its Identity.
    const NamedEndpoint delta{add(x, name + "/delta_value", "Identity", i32, {x.spec.inputs[2]}, x.spec.control_inputs),
                              0};
    const std::string zero = add_const(x, name + "/zero", ops::Tensor::scalar<int32_t>(0), delta.node);
    const std::string nonzero = add(x, name + "/delta_nonzero", "NotEqual", i32, {delta, {zero, 0}});
    const std::string message = add_const(
        x, name + "/delta_message", ops::Tensor::string_scalar(for_zero_delta_message(name)),
        delta.node);
    AttrList assert_types;
    assert_types.type = {DType::string};
    const std::string check = add(x, name + "/assert_delta", "Assert", {{"T", assert_types}, {"summarize", int64_t{3}}},
                                  {{nonzero, 0}, {message, 0}});
    const std::string up = add(x, name + "/counts_up", "Greater", i32, {delta, {zero, 0}});
    std::vector<std::string> controls = x.spec.control_inputs;
    controls.push_back(check);

    int64_t parallel = 10;
    auto enter = [&](const std::string& base, DType t, NamedEndpoint in, bool constant) {
      AttrMap a = {{"T", ops::base_dtype(t)}};
      a["frame_name"] = name;
      a["is_constant"] = constant;
      a["parallel_iterations"] = parallel;
      return add(x, base, "Enter", a, {in}, controls);
    };
    const std::string limit_in = enter(name + "/limit", DType::int32, limit, true);
    const std::string delta_in = enter(name + "/delta", DType::int32, delta, true);
    const std::string up_in = enter(name + "/counts_up", DType::boolean, {up, 0}, true);
    std::vector<DType> all = {DType::int32};
    all.insert(all.end(), types.begin(), types.end());
    std::vector<NamedEndpoint> merges;
    std::vector<std::string> next_names;
    for (size_t i = 0; i < all.size(); ++i) {
      const std::string k = i == 0 ? "index" : std::to_string(i - 1);
      const std::string e = enter(name + "/enter_" + k, all[i], i == 0 ? start : x.spec.inputs[2 + i], false);
      next_names.push_back(fresh(name + "/next_iteration_" + k));
      AttrMap merge_attrs = {{"T", ops::base_dtype(all[i])}, {"N", int64_t{2}}};
      merges.push_back({add(x, name + "/merge_" + k, "Merge", merge_attrs, {{e, 0}, {next_names.back(), 0}}), 0});
    }
    // i < limit when counting up, i > limit when counting down.
    const std::string below = add(x, name + "/below_limit", "Less", i32, {merges[0], {limit_in, 0}});
    const std::string above = add(x, name + "/above_limit", "Greater", i32, {merges[0], {limit_in, 0}});
    const std::string pred = add(x, name + "/predicate", "SelectV2", {{"T", DType::boolean}},
                                 {{up_in, 0}, {below, 0}, {above, 0}});
    const std::string loop_cond = add(x, name + "/loop_cond", "LoopCond", {}, {{pred, 0}});
    std::vector<NamedEndpoint> exits, body_in;
    for (size_t i = 0; i < all.size(); ++i) {
      const std::string k = i == 0 ? "index" : std::to_string(i - 1);
      const AttrMap t = {{"T", ops::base_dtype(all[i])}};
      const std::string sw = add(x, name + "/switch_" + k, "Switch", t, {merges[i], {loop_cond, 0}});
      const std::string exit = add(x, name + "/exit_" + k, "Exit", t, {{sw, 0}});
      exits.push_back({exit, 0});
      body_in.push_back({sw, 1});
    }
    for (size_t i = 0; i < types.size(); ++i)
      if (ops::base_dtype(types[i]) == DType::resource && passes_through(*body.def, i + 1, i))
        body_in[i + 1] = invariant_variable(
            x, name, i, enter(name + "/invariant_" + std::to_string(i), DType::resource, x.spec.inputs[3 + i], true),
            body_in[i + 1]);
    const std::string body_call = add_call(x, name + "/body", "body", body_f, body_in);
    const std::string next_index = add(x, name + "/next_index", "AddV2", i32, {body_in[0], {delta_in, 0}});
    add(x, "", "NextIteration", i32, {{next_index, 0}}, {}, next_names[0]);
    for (size_t i = 0; i < types.size(); ++i)
      add(x, "", "NextIteration", {{"T", ops::base_dtype(types[i])}}, {{body_call, static_cast<int>(i)}}, {},
          next_names[i + 1]);
    // The index's Exit is not an output; with no loop variables it is
    // what makes the loop run when the For's control output is needed.
    const std::string index_exit = exits[0].node;
    exits.erase(exits.begin());
    finish(index, x, std::move(exits), types, {index_exit});
    return ok_status();
  }

  Status check_loop_signatures(const Node& n, const Callee& cond, const Callee& body,
                               const std::vector<DType>& types) {
    auto arity = [&](const Callee& c, const char* role, const char* verb, size_t got) {
      return Status(Error::invalid_argument,
                    where_ + role + " " + quoted(c.func.name) + " " + verb + " " +
                        std::to_string(got) + " but the " + n.op + " has " +
                        plural(types.size(), "loop variable") + " (T)");
    };
    if (cond.inputs.size() != types.size()) return arity(cond, "cond", "takes inputs:", cond.inputs.size());
    if (body.inputs.size() != types.size()) return arity(body, "body", "takes inputs:", body.inputs.size());
    if (body.outputs.size() != types.size())
      return arity(body, "body", "returns outputs:", body.outputs.size());
    if (cond.outputs.size() != 1)
      return Status(Error::invalid_argument,
                    where_ + "cond " + quoted(cond.func.name) + " returns " +
                        plural(cond.outputs.size(), "output") + "; it must return one predicate");
    for (size_t i = 0; i < types.size(); ++i) {
      const std::string var = "loop variable " + std::to_string(i);
      const std::string want = ops::dtype_name(types[i]);
      if (cond.inputs[i] != types[i])
        return Status(Error::invalid_argument, where_ + "cond " + quoted(cond.func.name) +
                                                   " takes " + ops::dtype_name(cond.inputs[i]) +
                                                   " for " + var + ", which is " + want);
      if (body.inputs[i] != types[i])
        return Status(Error::invalid_argument, where_ + "body " + quoted(body.func.name) +
                                                   " takes " + ops::dtype_name(body.inputs[i]) +
                                                   " for " + var + ", which is " + want);
      if (body.outputs[i] != types[i])
        return Status(Error::invalid_argument,
                      where_ + "body " + quoted(body.func.name) + " changes the dtype of " +
                          var + " from " + want + " to " + ops::dtype_name(body.outputs[i]));
    }
    return ok_status();
  }

  Status lower_case(size_t index, Item x) {
    const Node& n = x.spec.node;
    const std::string name = n.name;
    TF_ASSIGN_OR_RETURN(std::vector<DType> tin, type_list_attr(n, where_, "Tin"));
    TF_ASSIGN_OR_RETURN(std::vector<DType> tout, type_list_attr(n, where_, "Tout"));
    if (x.spec.inputs.size() != 1 + tin.size())
      return Status(Error::invalid_graph, where_ + "has " + plural(x.spec.inputs.size(), "data input") +
                                              " but takes the branch index and " +
                                              plural(tin.size(), "input") + " (Tin)");
    std::vector<Callee> branches;
    for (size_t b = 0; b < op_.callees.size(); ++b) {
      const std::string& role = op_.callees[b].role;
      TF_ASSIGN_OR_RETURN(Callee c, callee(role, op_.callees[b].func));
      TF_RETURN_IF_ERROR(check_branch(c, role, b == 0 ? nullptr : &branches[0], "branch 0", tin, tout));
      branches.push_back(std::move(c));
    }
    const auto count = static_cast<int32_t>(branches.size());
    const AttrMap int_t = {{"T", DType::int32}};
    const std::string index_value = add(x, name + "/branch_index", "Identity", int_t,
                                        {x.spec.inputs[0]}, x.spec.control_inputs);
    const std::string zero = add_const(x, name + "/zero", Tensor::scalar<int32_t>(0), index_value);
    const std::string num = add_const(x, name + "/num_branches", Tensor::scalar<int32_t>(count), index_value);
    const std::string last = add_const(x, name + "/last_branch", Tensor::scalar<int32_t>(count - 1), index_value);
    const std::string above = add(x, name + "/not_negative", "GreaterEqual", int_t, {{index_value, 0}, {zero, 0}});
    const std::string below = add(x, name + "/below_count", "Less", int_t, {{index_value, 0}, {num, 0}});
    const std::string in_range = add(x, name + "/in_range", "LogicalAnd", {}, {{above, 0}, {below, 0}});
    // Out of range takes the last branch, as TensorFlow's Case does.
    const std::string branch = add(x, name + "/branch", "SelectV2", int_t,
                                   {{in_range, 0}, {index_value, 0}, {last, 0}});
    auto switch_n = [&](const std::string& base, DType t, NamedEndpoint data) {
      return add(x, base, "_SwitchN", {{"T", ops::base_dtype(t)}, {"num_outs", int64_t{count}}},
                 {data, {branch, 0}});
    };
    const std::string pivot_switch = switch_n(name + "/switch_branch", DType::int32, {branch, 0});
    std::vector<std::string> input_switches;
    for (size_t i = 0; i < tin.size(); ++i)
      input_switches.push_back(switch_n(name + "/switch_" + std::to_string(i), tin[i], x.spec.inputs[1 + i]));
    std::vector<std::string> calls, pivots;
    for (int32_t b = 0; b < count; ++b) {
      const std::string k = std::to_string(b);
      pivots.push_back(add(x, name + "/pivot_" + k, "Identity", int_t, {{pivot_switch, b}}));
      std::vector<NamedEndpoint> in;
      for (const std::string& s : input_switches) in.push_back({s, b});
      const NameAttrList& f = branches[static_cast<size_t>(b)].func;
      calls.push_back(add_call(x, name + "/branch_" + k, "branch " + k, f, in, {pivots.back()}));
    }
    merge_outputs(index, x, calls, pivots, DType::int32, tout);
    return ok_status();
  }

  const FunctionLibrary& lib_;
  std::unordered_set<std::string>& names_;
  ChainMap& chains_;
  int64_t max_nodes_;  // 0: no limit
  int64_t outside_;
  std::vector<Item> items_;
  std::string where_;  // "If 'cond': ", how errors name the node being expanded
  FunctionalOp op_;     // the node being expanded, read once
};

}  // namespace

std::string location(const std::vector<Link>& chain, const std::string& original) {
  std::string s;
  for (const Link& l : chain) s += "node " + quoted(l.node) + " → " + l.role + " " + quoted(l.function) + " → ";
  return s + "node " + quoted(original);
}

Item item_of(const Graph& g, const Node& n) {
  Item item;
  item.original = n.name;
  item.spec.node = n;
  item.spec.node.inputs.clear();
  item.spec.node.control_inputs.clear();
  for (const Endpoint& e : n.inputs) item.spec.inputs.push_back({g.node(e.node).name, e.port});
  for (NodeId c : n.control_inputs) item.spec.control_inputs.push_back(g.node(c).name);
  return item;
}

Expected<Graph> build_graph(const std::vector<Item>& items, const Graph& g) {
  Graph out;
  out.reserve(static_cast<NodeId>(items.size()));
  for (const Item& item : items) {
    auto id = out.add_node(item.spec.node);
    if (!id.ok()) return id.status().with_prefix("lowering functional ops: ");
  }
  for (NodeId id = 0; id < out.num_nodes(); ++id) {
    const NodeSpec& spec = items[static_cast<size_t>(id)].spec;
    Node& n = out.mutable_node(id);
    auto find = [&](const std::string& name) -> Expected<NodeId> {
      NodeId src = out.find(name);
      if (src == kNoNode)
        return Status(Error::invalid_graph,
                      "node " + quoted(n.name) + " names a missing node " + quoted(name));
      return src;
    };
    for (const NamedEndpoint& e : spec.inputs) {
      TF_ASSIGN_OR_RETURN(NodeId src, find(e.node));
      n.inputs.push_back({src, e.port});
    }
    for (const std::string& c : spec.control_inputs) {
      TF_ASSIGN_OR_RETURN(NodeId src, find(c));
      n.control_inputs.push_back(src);
    }
  }
  out.set_versions(g.versions());
  out.mutable_library() = g.library();
  return out;
}

std::string with_chain(const ChainMap& chains, const std::string& message) {
  for (size_t open = message.find('\''); open != std::string::npos;) {
    const size_t close = message.find('\'', open + 1);
    if (close == std::string::npos) break;
    auto it = chains.find(message.substr(open + 1, close - open - 1));
    if (it == chains.end()) {
      open = message.find('\'', close + 1);
      continue;
    }
    const ChainEntry& e = it->second;
    const std::string quoted_name = message.substr(open, close - open + 1);
    const bool after_node = open >= 5 && message.compare(open - 5, 5, "node ") == 0;
    if (after_node)
      return message.substr(0, open - 5) + e.location + (e.helper ? " (lowered as " + quoted_name + ")" : "") +
             message.substr(close + 1);
    return message.substr(0, close + 1) + " (" + e.location + ")" + message.substr(close + 1);
  }
  return message;
}

Expected<std::vector<Item>> expand_functional(const FunctionLibrary& lib, std::vector<Item> items,
                                              std::unordered_set<std::string>* names, ChainMap* chains,
                                              int64_t max_nodes, int64_t outside) {
  Lowering lowering(lib, names, chains, max_nodes, outside);
  auto expanded = lowering.run(std::move(items));
  if (!expanded.ok()) return Status(expanded.status().code(), with_chain(*chains, expanded.status().message()));
  return expanded;
}

bool has_functional_ops(const Graph& g) {
  FunctionLibrary lib(g.library());
  for (const Node& n : g.nodes())
    if (kind_of(n, lib) != Kind::none) return true;
  return false;
}

Status lower_functional_ops(Graph* g, int64_t max_nodes) {
  if (!has_functional_ops(*g)) return ok_status();
  select_implementations(g);
  FunctionLibrary lib(g->library());
  std::unordered_set<std::string> names;
  std::vector<Item> items;
  for (const Node& n : g->nodes()) {
    names.insert(n.name);
    items.push_back(item_of(*g, n));
  }
  ChainMap chains;
  TF_ASSIGN_OR_RETURN(std::vector<Item> lowered, expand_functional(lib, std::move(items), &names, &chains, max_nodes, 0));
  TF_ASSIGN_OR_RETURN(Graph out, build_graph(lowered, *g));
  *g = std::move(out);
  return ok_status();
}

}  // namespace tagflow::graph
