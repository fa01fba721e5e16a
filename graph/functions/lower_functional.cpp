#include "graph/functions/lower_functional.hpp"

#include <algorithm>

#include "graph/functions/implementation_selection.hpp"
#include "graph/functions/lowering.hpp"
#include "graph/functions/lowering_expander.hpp"
#include "graph/proto/graph_def.pb.h"

namespace tagflow::graph {
inline namespace functions {

namespace lowering_detail {

// Expands every functional item, and what expanding adds, in order.
Expected<std::vector<Item>> Lowering::run(std::vector<Item> items) {
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

Status Lowering::expand(size_t index) {
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
std::string Lowering::fresh(const std::string& base) {
  std::string name = base;
  for (int k = 1; names_.count(name) != 0; ++k) name = base + "_" + std::to_string(k);
  names_.insert(name);
  return name;
}

// Appends a node (made by lowering `parent`) and returns its name.
std::string Lowering::add(const Item& parent, const std::string& base, const std::string& op,
                          AttrMap attrs, std::vector<NamedEndpoint> inputs,
                          std::vector<std::string> controls, std::string name) {
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
std::string Lowering::add_call(const Item& parent, const std::string& base, const std::string& role,
                               const NameAttrList& f, std::vector<NamedEndpoint> inputs,
                               std::vector<std::string> controls) {
  std::string name = add(parent, base, f.name, f.attr, std::move(inputs), std::move(controls));
  items_.back().call_as = Link{parent.original, role, f.name};
  return name;
}

std::string Lowering::add_const(const Item& parent, const std::string& base, Tensor value,
                                const std::string& gate) {
  DType t = value.dtype();
  return add(parent, base, "Const", {{"dtype", t}, {"value", std::move(value)}}, {}, {gate});
}

// Replaces the functional node by an Identity / IdentityN of its results
// (a NoOp when there are none) under its own name.
void Lowering::finish(size_t index, const Item& x, std::vector<NamedEndpoint> outs,
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

Expected<Callee> Lowering::callee(const std::string& role, const NameAttrList& func) {
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

Status Lowering::lower_call(size_t index, Item x, const NameAttrList& func) {
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

}  // namespace lowering_detail

using lowering_detail::quoted;
using lowering_detail::Kind;
using lowering_detail::kind_of;


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
  lowering_detail::Lowering lowering(lib, names, chains, max_nodes, outside);
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

}  // namespace functions
}  // namespace tagflow::graph
