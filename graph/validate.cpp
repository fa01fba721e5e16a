#include "graph/validate.hpp"

#include <algorithm>
#include <optional>

#include "graph/proto/graph_def.pb.h"

namespace tagflow::graph {

namespace {

using ops::OpRole;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string plural(size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// What validate() learns about one node before it commits anything.
struct Resolved {
  const ops::OpDef* def = nullptr;
  bool kept = false;  // resolved by an earlier validate(): left as it is
  std::optional<ops::AttrMap> completed_attrs;  // the node's attrs with defaults added
  bool known_inputs = false;   // input_types is the full signature
  bool known_outputs = false;  // output_types is the full signature
  ops::DTypes input_types;
  ops::DTypes output_types;
};

// The dtypes of a function signature's args, if each is one tensor of a
// type fixed or given by the call's attrs; nullopt when an arg is a list.
std::optional<std::vector<DType>> function_arg_types(
    const google::protobuf::RepeatedPtrField<tensorflow::OpDef::ArgDef>& args,
    const ops::AttrMap& attrs, bool* single_tensors) {
  std::vector<DType> out;
  *single_tensors = true;
  bool typed = true;
  for (const auto& a : args) {
    if (!a.number_attr().empty() || !a.type_list_attr().empty()) {
      *single_tensors = false;
      return std::nullopt;
    }
    auto t = static_cast<DType>(static_cast<int>(a.type()));
    if (!a.type_attr().empty()) {
      auto it = attrs.find(a.type_attr());
      const DType* given = it == attrs.end() ? nullptr : it->second.get_if<DType>();
      t = given != nullptr ? *given : DType::invalid;
    }
    if (t == DType::invalid) typed = false;
    out.push_back(a.is_ref() ? ops::make_ref(t) : t);
  }
  if (!typed) return std::nullopt;
  return out;
}

Status resolve_function_call(const Node& n, const tensorflow::FunctionDef& f, Resolved* r) {
  const auto& sig = f.signature();
  bool single = false;
  auto in = function_arg_types(sig.input_arg(), n.attrs, &single);
  if (single && n.inputs.size() != static_cast<size_t>(sig.input_arg_size()))
    return Status(Error::invalid_graph,
                  "node " + quoted(n.name) + " calls function " + quoted(sig.name()) +
                      ", which takes " + plural(static_cast<size_t>(sig.input_arg_size()), "input") +
                      ", but has " + plural(n.inputs.size(), "data input"));
  if (in) {
    r->known_inputs = true;
    r->input_types = std::move(*in);
  }
  auto out = function_arg_types(sig.output_arg(), n.attrs, &single);
  if (single) {
    // Output count is known even when a type is not; keep invalid as "any".
    r->known_outputs = true;
    if (out) {
      r->output_types = std::move(*out);
    } else {
      r->output_types.assign(static_cast<size_t>(sig.output_arg_size()), DType::invalid);
    }
  }
  return ok_status();
}

Status resolve_op(const Node& n, const ops::OpDef& def, Resolved* r) {
  const std::string where = "node " + quoted(n.name) + " (" + n.op + "): ";
  r->def = &def;
  bool needs_defaults = false;
  TF_RETURN_IF_ERROR(def.check_attrs(n.attrs, &needs_defaults).with_prefix(where));
  if (needs_defaults) {
    r->completed_attrs = n.attrs;
    def.add_default_attrs(*r->completed_attrs);
  }
  const ops::AttrMap& attrs = needs_defaults ? *r->completed_attrs : n.attrs;
  auto in = def.input_types(attrs);
  if (!in.ok()) return in.status().with_prefix(where);
  auto out = def.output_types(attrs);
  if (!out.ok()) return out.status().with_prefix(where);
  r->input_types = std::move(in).value();
  r->output_types = std::move(out).value();
  r->known_inputs = r->known_outputs = true;
  if (n.inputs.size() != r->input_types.size())
    return Status(Error::invalid_graph,
                  "node " + quoted(n.name) + " (" + n.op + ") has " +
                      plural(n.inputs.size(), "data input") + " but op " + n.op + " takes " +
                      std::to_string(r->input_types.size()));
  return ok_status();
}

Status resolve_node(const Graph& g, const Node& n, const ValidateOptions& options,
                    const ops::OpRegistry& registry, Resolved* r) {
  // A node whose dtypes were all known was committed with both lists full;
  // any other is resolved again.
  if (options.keep_resolved && n.def != nullptr && n.input_types.size() == n.inputs.size() &&
      (!n.output_types.empty() || n.def->outputs().empty())) {
    r->def = n.def;
    r->kept = r->known_inputs = r->known_outputs = true;
    return ok_status();
  }
  if (const ops::OpDef* def = registry.find(n.op)) return resolve_op(n, *def, r);
  // allow_unknown_ops reads any graph: function calls are not checked then.
  if (options.allow_unknown_ops) return ok_status();
  if (const tensorflow::FunctionDef* f = g.find_function(n.op))
    return resolve_function_call(n, *f, r);
  return Status(Error::not_found, "unknown op " + quoted(n.op) + " in node " + quoted(n.name));
}

Status check_edges(const Graph& g, const std::vector<Resolved>& resolved) {
  for (NodeId dst = 0; dst < g.num_nodes(); ++dst) {
    const Node& n = g.node(dst);
    const Resolved& rd = resolved[static_cast<size_t>(dst)];
    const ops::DTypes& input_types = rd.kept ? n.input_types : rd.input_types;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Endpoint& e = n.inputs[i];
      const Node& src = g.node(e.node);
      const Resolved& rs = resolved[static_cast<size_t>(e.node)];
      if (!rs.known_outputs) continue;
      const ops::DTypes& output_types = rs.kept ? src.output_types : rs.output_types;
      const size_t outputs = output_types.size();
      if (static_cast<size_t>(e.port) >= outputs)
        return Status(Error::invalid_graph,
                      "node " + quoted(n.name) + " input " + std::to_string(i) + " names port " +
                          quoted(g.endpoint_name(e)) + " but " + src.op + " " +
                          quoted(src.name) + " has " + plural(outputs, "output"));
      if (!rd.known_inputs) continue;
      DType produced = output_types[static_cast<size_t>(e.port)];
      DType expected = input_types[i];
      if (!dtypes_match(produced, expected))
        return Status(Error::invalid_argument,
                      "node " + quoted(n.name) + " (" + n.op + ") input " + std::to_string(i) +
                          " expects " + ops::dtype_name(expected) + " but " +
                          quoted(g.endpoint_name(e)) + " (" + src.op + ") produces " +
                          ops::dtype_name(produced));
    }
  }
  return ok_status();
}

// Iterative depth-first search for a cycle over all edges except
// NextIteration -> Merge ones; returns the nodes of the first cycle found.
std::vector<NodeId> find_cycle(const Graph& g) {
  enum : uint8_t { kNew, kOnStack, kDone };
  std::vector<uint8_t> state(static_cast<size_t>(g.num_nodes()), kNew);
  struct Frame {
    NodeId node;
    size_t next_edge;
    bool next_iteration;  // its edges into Merges are skipped
  };
  auto frame = [&](NodeId id) {
    return Frame{id, 0, node_role(g.node(id)) == OpRole::next_iteration};
  };
  std::vector<Frame> stack;
  for (NodeId root = 0; root < g.num_nodes(); ++root) {
    if (state[static_cast<size_t>(root)] != kNew) continue;
    stack.push_back(frame(root));
    state[static_cast<size_t>(root)] = kOnStack;
    while (!stack.empty()) {
      Frame& top = stack.back();
      const auto& edges = g.out_edges(top.node);
      if (top.next_edge == edges.size()) {
        state[static_cast<size_t>(top.node)] = kDone;
        stack.pop_back();
        continue;
      }
      NodeId dst = edges[top.next_edge++].dst;
      if (top.next_iteration && node_role(g.node(dst)) == OpRole::merge) continue;
      uint8_t& s = state[static_cast<size_t>(dst)];
      if (s == kOnStack) {
        std::vector<NodeId> cycle;
        auto it = std::find_if(stack.begin(), stack.end(),
                               [&](const Frame& f) { return f.node == dst; });
        for (; it != stack.end(); ++it) cycle.push_back(it->node);
        return cycle;
      }
      if (s == kNew) {
        s = kOnStack;
        stack.push_back(frame(dst));
      }
    }
  }
  return {};
}

}  // namespace

bool dtypes_match(DType produced, DType expected) {
  if (produced == DType::invalid || expected == DType::invalid) return true;
  if (ops::is_ref(expected)) return produced == expected;
  return ops::base_dtype(produced) == expected;
}

Status check_cycles(const Graph& g) {
  std::vector<NodeId> cycle = find_cycle(g);
  if (cycle.empty()) return ok_status();
  std::string path;
  for (NodeId id : cycle) path += quoted(g.node(id).name) + " -> ";
  path += quoted(g.node(cycle.front()).name);
  return Status(Error::invalid_graph,
                "cycle that does not pass through a NextIteration -> Merge edge: " + path);
}

Status validate(Graph& g, const ValidateOptions& options) {
  const ops::OpRegistry& registry =
      options.registry != nullptr ? *options.registry : ops::OpRegistry::global();
  std::vector<Resolved> resolved(static_cast<size_t>(g.num_nodes()));
  for (NodeId id = 0; id < g.num_nodes(); ++id)
    TF_RETURN_IF_ERROR(
        resolve_node(g, g.node(id), options, registry, &resolved[static_cast<size_t>(id)]));
  TF_RETURN_IF_ERROR(check_edges(g, resolved));
  TF_RETURN_IF_ERROR(check_cycles(g));
  // Commit only a graph that passed every check.
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    Resolved& r = resolved[static_cast<size_t>(id)];
    if (r.kept) continue;  // untouched: a chunk shared with another graph stays shared
    Node& n = g.mutable_node(id);
    n.def = r.def;
    if (r.completed_attrs) n.attrs = std::move(*r.completed_attrs);
    // A function call keeps the types its signature fixes, if all are known.
    auto all_known = [](const ops::DTypes& types) {
      return std::find(types.begin(), types.end(), DType::invalid) == types.end();
    };
    n.input_types.clear();
    n.output_types.clear();
    if (r.known_inputs && all_known(r.input_types)) n.input_types = std::move(r.input_types);
    if (r.known_outputs && all_known(r.output_types)) n.output_types = std::move(r.output_types);
  }
  if (g.num_nodes() > 0) (void)g.out_edges(0);  // build the consumer lists before sharing
  return ok_status();
}

}  // namespace tagflow::graph
