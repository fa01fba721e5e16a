// Gradients of function calls, If and Case as functional ops
// (graph/autodiff/functional_gradients.hpp, docs/gradients.md "Functional ops"), and
// what they share with those of While (graph/autodiff/functional_gradients_internal.hpp).
//
// Per called function: its body is instantiated as a graph (one
// Placeholder per argument), a Placeholder per result that has a gradient
// is added, and gradients() differentiates the results with respect to the
// arguments there. The nodes it adds are the gradient function's body;
// what they read of the forward body is either an argument (the forward
// node's input is passed to the gradient op), a constant (copied) or an
// intermediate (returned by the rewritten forward function).
#include "graph/autodiff/functional_gradients.hpp"

#include <map>
#include <set>

#include "graph/analysis/control_flow.hpp"
#include "graph/autodiff/functional_gradients_internal.hpp"
#include "graph/functions/body_graph.hpp"
#include "graph/functions/function_def_writer.hpp"
#include "graph/functions/function_library.hpp"
#include "graph/functions/lowering.hpp"
#include "graph/proto/graph_def.pb.h"
#include "graph/validate.hpp"

namespace tagflow::graph {
inline namespace autodiff {

namespace functional_detail {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

ops::NameAttrList func(const std::string& name) {
  ops::NameAttrList f;
  f.name = name;
  return f;
}

ops::AttrList type_list(const std::vector<DType>& types) {
  ops::AttrList l;
  l.type = types;
  return l;
}

std::string unique_function(const Graph& g, const std::string& base) {
  std::string name = base;
  for (int k = 1; g.has_function(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

DType out_type(const Graph& g, Endpoint e) {
  const Node& n = g.node(e.node);
  return e.port >= 0 && static_cast<size_t>(e.port) < n.output_types.size()
             ? ops::base_dtype(n.output_types[static_cast<size_t>(e.port)])
             : DType::invalid;
}

bool gradient_flows(DType t) { return is_differentiable(t) || ops::base_dtype(t) == DType::variant; }

Status validate_with(Graph& g, const GradientOptions& options, bool keep_resolved) {
  ValidateOptions vo;
  vo.registry = options.ops;
  vo.keep_resolved = keep_resolved;
  return validate(g, vo);
}

Expected<Body> instantiate_body(const Graph& outer, const ops::NameAttrList& callee, const GradientOptions& options) {
  FunctionLibrary lib(outer.library());
  if (lib.find(callee.name) == nullptr)
    return Status(Error::not_found, "no function " + quoted(callee.name) + " in the library");
  // Every node kept, arguments as Placeholders: the body is written back
  // as the forward function with its intermediates.
  BodyGraphOptions bo;
  bo.make_arg = [](size_t i, DType type) {
    Node n;
    n.name = "arg_" + std::to_string(i);
    n.op = "Placeholder";
    n.attrs = {{"dtype", type}};
    return n;
  };
  bo.retvals = false;
  bo.prune = false;
  bo.validate = false;
  TF_ASSIGN_OR_RETURN(BodyGraph bg, body_graph(lib, callee, outer, bo));
  Body b;
  b.g = std::move(bg.graph);
  TF_RETURN_IF_ERROR(validate_with(b.g, options, false));
  b.args = bg.args;
  for (size_t i = 0; i < b.args.size(); ++i) b.arg_index[b.args[i]] = static_cast<int>(i);
  b.rets = bg.rets;
  b.control_rets = bg.control_rets;
  b.stateful = bg.stateful;
  return b;
}

std::set<int> wanted_resources(const GradContext& ctx, int first) {
  std::set<int> out;
  for (int i = first; i < ctx.num_inputs(); ++i)
    if (ctx.input_type(i) == DType::resource && ctx.wants(i)) out.insert(i - first);
  return out;
}

Status differentiate(Body& b, const std::vector<int>& dy_ports, const GradientOptions& options,
                     const std::set<int>& resources) {
  TF_ASSIGN_OR_RETURN(ControlFlowInfo cf, analyze_control_flow(b.g));
  if (cf.frames.size() > 1)
    return Status(Error::unimplemented,
                  "the body holds a while loop of Enter/Exit nodes (frame " + quoted(cf.frames[1].name) +
                      "): its functional gradient is not built; lower the graph first");
  b.forward = b.g.num_nodes();
  std::vector<Endpoint> ys, grad_ys;
  for (int port : dy_ports) {
    const Endpoint r = b.rets[static_cast<size_t>(port)];
    Node p;
    p.name = "dy_" + std::to_string(port);
    while (b.g.find(p.name) != kNoNode) p.name += "_";
    p.op = "Placeholder";
    p.attrs = {{"dtype", out_type(b.g, r)}};
    TF_ASSIGN_OR_RETURN(NodeId id, b.g.add_node(std::move(p)));
    b.dys.push_back(id);
    ys.push_back(r);
    grad_ys.push_back({id, 0});
  }
  TF_RETURN_IF_ERROR(validate_with(b.g, options, true));
  b.dxs.assign(b.args.size(), Endpoint{kNoNode, 0});
  std::vector<Endpoint> xs;
  std::vector<size_t> which;
  for (size_t i = 0; i < b.args.size(); ++i) {
    const DType t = out_type(b.g, {b.args[i], 0});
    if (!gradient_flows(t) && !(t == DType::resource && resources.count(static_cast<int>(i)))) continue;
    xs.push_back({b.args[i], 0});
    which.push_back(i);
  }
  if (xs.empty() || ys.empty()) return ok_status();
  GradientOptions o;
  o.functional = true;
  o.registry = options.registry;
  o.ops = options.ops;
  TF_ASSIGN_OR_RETURN(GradientResult r, gradients(b.g, ys, xs, grad_ys, o));
  for (size_t k = 0; k < which.size(); ++k) b.dxs[which[k]] = r.dxs[k];

  // The nodes nested functional ops' gradients added for their forward
  // nodes to read (a While's initial accumulators) join the forward body.
  std::vector<NodeId> todo;
  auto reach = [&](NodeId id) {
    if (id >= b.forward && b.forward_extra.insert(id).second) todo.push_back(id);
  };
  for (NodeId id = 0; id < b.forward; ++id) {
    for (const Endpoint& e : b.g.node(id).inputs) reach(e.node);
    for (NodeId c : b.g.node(id).control_inputs) reach(c);
  }
  while (!todo.empty()) {
    const NodeId id = todo.back();
    todo.pop_back();
    if (id < b.first_gradient())
      return Status(Error::internal, "the forward body reads the gradient Placeholder " + quoted(b.g.node(id).name));
    for (const Endpoint& e : b.g.node(id).inputs) reach(e.node);
    for (NodeId c : b.g.node(id).control_inputs) reach(c);
  }

  // What the gradient reads of the forward body.
  auto read = [&](Endpoint e) {
    if (!b.is_forward(e.node)) return;
    if (auto a = b.arg_index.find(e.node); a != b.arg_index.end()) {
      b.read_args.insert(a->second);
      return;
    }
    const Node& n = b.g.node(e.node);
    if (n.op == "Const" && n.inputs.empty()) return;  // copied
    if (std::find(b.intermediates.begin(), b.intermediates.end(), e) == b.intermediates.end())
      b.intermediates.push_back(e);
  };
  for (NodeId id = b.first_gradient(); id < b.g.num_nodes(); ++id)
    if (b.is_gradient(id))
      for (const Endpoint& e : b.g.node(id).inputs) read(e);
  for (const Endpoint& dx : b.dxs)
    if (dx.node != kNoNode) read(dx);
  return ok_status();
}

std::string Writer::fresh(const std::string& base) const {
  std::string name = base;
  for (int k = 1; body.find(name) != kNoNode || out.find(name) != kNoNode; ++k)
    name = base + "_" + std::to_string(k);
  return name;
}

Expected<NodeId> Writer::add(const std::string& base, const std::string& op, ops::AttrMap attrs,
                             std::vector<Endpoint> inputs) {
  Node n;
  n.name = fresh(base);
  n.op = op;
  n.attrs = std::move(attrs);
  n.inputs.assign(inputs.begin(), inputs.end());
  return out.add_node(std::move(n));
}

Writer writer_for(const Body& b, const Graph& outer) {
  Writer w{Graph(), b.g};
  w.out.mutable_library() = outer.library();
  w.out.set_versions(outer.versions());
  return w;
}

Expected<std::map<NodeId, NodeId>> copy_forward(const Body& b, Writer& w) {
  std::vector<NodeId> nodes;
  for (NodeId id = 0; id < b.forward; ++id) nodes.push_back(id);
  nodes.insert(nodes.end(), b.forward_extra.begin(), b.forward_extra.end());
  std::map<NodeId, NodeId> at;
  for (NodeId id : nodes) {
    Node n = b.g.node(id);
    n.inputs.clear();
    n.control_inputs.clear();
    TF_ASSIGN_OR_RETURN(at[id], w.out.add_node(std::move(n)));
  }
  for (NodeId id : nodes) {
    const Node& src = b.g.node(id);
    Node& dst = w.out.mutable_node(at.at(id));
    for (const Endpoint& e : src.inputs) dst.inputs.push_back({at.at(e.node), e.port});
    for (NodeId c : src.control_inputs) dst.control_inputs.push_back(at.at(c));
  }
  return at;
}

Expected<Endpoint> GradientCopy::resolve(Endpoint e) {
  if (b_.is_gradient(e.node)) return Endpoint{copied_.at(e.node), e.port};
  if (auto it = seen.find({e.node, e.port}); it != seen.end()) return it->second;
  const Node& n = b_.g.node(e.node);
  if (n.op == "Const" && n.inputs.empty()) {
    TF_ASSIGN_OR_RETURN(NodeId c, w_.add(n.name, "Const", n.attrs));
    seen[{e.node, e.port}] = {c, e.port};
    return Endpoint{c, e.port};
  }
  return Status(Error::internal, "the gradient reads " + quoted(b_.g.endpoint_name(e)) + ", which it is not given");
}

Status GradientCopy::copy() {
  const NodeId first = b_.first_gradient();
  for (NodeId id = first; id < b_.g.num_nodes(); ++id) {
    if (!b_.is_gradient(id)) continue;
    Node n = b_.g.node(id);
    n.inputs.clear();
    n.control_inputs.clear();
    TF_ASSIGN_OR_RETURN(copied_[id], w_.out.add_node(std::move(n)));
  }
  for (NodeId id = first; id < b_.g.num_nodes(); ++id) {
    if (!b_.is_gradient(id)) continue;
    const Node& src = b_.g.node(id);
    std::vector<Endpoint> inputs;
    for (const Endpoint& e : src.inputs) {
      TF_ASSIGN_OR_RETURN(Endpoint r, resolve(e));
      inputs.push_back(r);
    }
    std::vector<NodeId> control;
    for (NodeId c : src.control_inputs)
      if (b_.is_gradient(c)) control.push_back(copied_.at(c));
    Node& dst = w_.out.mutable_node(copied_.at(id));
    dst.inputs.assign(inputs.begin(), inputs.end());
    dst.control_inputs = std::move(control);
  }
  return ok_status();
}

Expected<tensorflow::FunctionDef> finish_function(Graph& g, FunctionDefSpec spec, const GradientOptions& options) {
  TF_RETURN_IF_ERROR(validate_with(g, options, false).with_prefix("function " + quoted(spec.name) + ": "));
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    const Node& n = g.node(id);
    if (n.def != nullptr && n.def->is_stateful() && n.op != "Placeholder") {
      spec.control_rets.push_back(id);
      spec.stateful = true;
    }
  }
  return function_def_from_graph(g, spec);
}

}  // namespace functional_detail

namespace {

using namespace functional_detail;

using Kind = FunctionalKind;

Kind kind_of(const Node& n, const Graph& g) {
  return functional_kind(n, [&g](const std::string& op) { return g.has_function(op); });
}

bool branches_kind(Kind k) { return k == Kind::if_op || k == Kind::case_op; }

// An intermediate passed from the forward node to its gradient.
struct Slot {
  size_t body;
  Endpoint value;
  DType type;
};

struct Layout {
  Kind kind;
  std::vector<int> dy_ports;
  std::vector<Slot> slots;
  std::vector<int> read_args;   // arguments passed to the gradient op
  std::vector<int> grad_args;   // arguments it returns gradients for
  std::vector<DType> arg_types;
  std::vector<DType> grad_types;  // arg_types, with a resource's value dtype
  bool optionals() const { return branches_kind(kind); }
};

ops::AttrMap optional_get_attrs(DType t) {
  ops::AttrList shapes;
  shapes.shape.push_back(ops::PartialShape{true, {}});
  return {{"output_types", type_list({t})}, {"output_shapes", shapes}};
}

// The gradient function of body `index`: inputs the results' gradients,
// the slots, the read arguments; results the gradients of grad_args.
Expected<tensorflow::FunctionDef> gradient_function(const Body& b, size_t index, const Layout& l,
                                                    const Graph& outer, const std::string& name,
                                                    const GradientOptions& options) {
  Writer w = writer_for(b, outer);
  GradientCopy copy(b, w);
  FunctionDefSpec spec;
  spec.name = name;
  for (size_t k = 0; k < b.dys.size(); ++k) {
    TF_ASSIGN_OR_RETURN(NodeId id, w.add("dy", "Placeholder", {{"dtype", out_type(b.g, {b.dys[k], 0})}}));
    spec.args.push_back(id);
    copy.seen[{b.dys[k], 0}] = {id, 0};
  }
  for (const Slot& s : l.slots) {
    const DType t = l.optionals() ? DType::variant : s.type;
    TF_ASSIGN_OR_RETURN(NodeId id, w.add("intermediate", "Placeholder", {{"dtype", t}}));
    spec.args.push_back(id);
    if (s.body != index) continue;
    if (!l.optionals()) {
      copy.seen[{s.value.node, s.value.port}] = {id, 0};
      continue;
    }
    TF_ASSIGN_OR_RETURN(NodeId get, w.add(b.g.node(s.value.node).name + "_value", "OptionalGetValue",
                                          optional_get_attrs(s.type), {{id, 0}}));
    copy.seen[{s.value.node, s.value.port}] = {get, 0};
  }
  for (int a : l.read_args) {
    TF_ASSIGN_OR_RETURN(NodeId id, w.add("arg", "Placeholder", {{"dtype", l.arg_types[static_cast<size_t>(a)]}}));
    spec.args.push_back(id);
    copy.seen[{b.args[static_cast<size_t>(a)], 0}] = {id, 0};
  }
  TF_RETURN_IF_ERROR(copy.copy());
  for (int a : l.grad_args) {
    const Endpoint dx = b.dxs[static_cast<size_t>(a)];
    if (dx.node != kNoNode) {
      TF_ASSIGN_OR_RETURN(Endpoint r, copy.resolve(dx));
      spec.rets.push_back(r);
      continue;
    }
    // This branch gives the argument no gradient: zeros (for an Optional,
    // none — the branch that reads it is not the one that ran).
    const DType t = l.arg_types[static_cast<size_t>(a)];
    NodeId zeros = kNoNode;
    if (t == DType::variant) {
      TF_ASSIGN_OR_RETURN(zeros, w.add("zeros_" + std::to_string(a), "OptionalNone", {}));
    } else if (t == DType::resource) {
      const DType value = l.grad_types[static_cast<size_t>(a)];
      TF_ASSIGN_OR_RETURN(Endpoint arg, copy.resolve({b.args[static_cast<size_t>(a)], 0}));
      TF_ASSIGN_OR_RETURN(NodeId read, w.add("read_" + std::to_string(a), "ReadVariableOp", {{"dtype", value}}, {arg}));
      TF_ASSIGN_OR_RETURN(zeros, w.add("zeros_" + std::to_string(a), "ZerosLike", {{"T", value}}, {{read, 0}}));
    } else {
      TF_ASSIGN_OR_RETURN(Endpoint arg, copy.resolve({b.args[static_cast<size_t>(a)], 0}));
      TF_ASSIGN_OR_RETURN(zeros, w.add("zeros_" + std::to_string(a), "ZerosLike", {{"T", t}}, {arg}));
    }
    spec.rets.push_back({zeros, 0});
  }
  return finish_function(w.out, std::move(spec), options);
}

// The forward function of body `index` rewritten to return the slots too.
Expected<tensorflow::FunctionDef> forward_function(const Body& b, size_t index, const Layout& l, const Graph& outer,
                                                   const std::string& name, const GradientOptions& options) {
  Writer w = writer_for(b, outer);
  TF_ASSIGN_OR_RETURN(auto at, copy_forward(b, w));
  auto here = [&](Endpoint e) { return Endpoint{at.at(e.node), e.port}; };
  FunctionDefSpec spec;
  spec.name = name;
  for (NodeId a : b.args) spec.args.push_back(at.at(a));
  for (const Endpoint& r : b.rets) spec.rets.push_back(here(r));
  spec.stateful = b.stateful;
  for (const Slot& s : l.slots) {
    if (!l.optionals()) {
      spec.rets.push_back(here(s.value));
      continue;
    }
    const std::string base = s.body == index ? b.g.node(s.value.node).name + "_optional" : "optional_none";
    NodeId id = kNoNode;
    if (s.body == index) {
      TF_ASSIGN_OR_RETURN(id, w.add(base, "OptionalFromValue", {{"Toutput_types", type_list({s.type})}}, {here(s.value)}));
    } else {
      TF_ASSIGN_OR_RETURN(id, w.add(base, "OptionalNone", {}));
    }
    spec.rets.push_back({id, 0});
  }
  TF_RETURN_IF_ERROR(validate_with(w.out, options, false).with_prefix("function " + quoted(name) + ": "));
  for (const std::string& c : b.control_rets) spec.control_rets.push_back(w.out.find(c));
  return function_def_from_graph(w.out, spec);
}

}  // namespace

bool is_functional_gradient_op(const Node& n, const Graph& g) {
  return kind_of(n, g) != Kind::none;
}

Status functional_gradient(GradContext& ctx, const GradientOptions& options) {
  switch (kind_of(ctx.node(), ctx.graph())) {
    case Kind::while_op: return while_gradient(ctx, options);
    case Kind::for_op: return for_gradient(ctx, options);
    default: break;
  }
  Graph& g = ctx.graph();
  const Node forward = ctx.node();  // a copy: the node is rewritten below
  Layout l;
  l.kind = kind_of(forward, g);
  const int selector = branches_kind(l.kind) ? 1 : 0;
  const int num_out = ctx.num_outputs();
  const int num_args = ctx.num_inputs() - selector;
  TF_ASSIGN_OR_RETURN(const FunctionalOp called, read_functional_op(forward, l.kind));

  std::vector<Endpoint> dy_values;
  for (int p = 0; p < num_out; ++p)
    if (std::optional<Endpoint> d = ctx.dy(p)) {
      if (ctx.output_type(p) == DType::resource)
        return Status(Error::unimplemented,
                      "output " + std::to_string(p) +
                          " is a variable handle the function returns, and a gradient reaches it through a read "
                          "after the call; read the variable inside the function instead");
      l.dy_ports.push_back(p);
      dy_values.push_back(*d);
    }
  if (l.dy_ports.empty() || num_args <= 0) return ok_status();
  for (int a = 0; a < num_args; ++a) l.arg_types.push_back(ctx.input_type(selector + a));
  l.grad_types = l.arg_types;
  const std::set<int> resources = wanted_resources(ctx, selector);

  std::vector<Body> bodies;
  for (const FunctionalCallee& c : called.callees) {
    const ops::NameAttrList& callee = c.func;
    const std::string where = c.role + " " + quoted(callee.name) + ": ";
    auto b = instantiate_body(g, callee, options);
    if (!b.ok()) return b.status().with_prefix(where);
    if (static_cast<int>(b->args.size()) != num_args)
      return Status(Error::invalid_graph, where + "takes " + std::to_string(b->args.size()) + " arguments, given " +
                                              std::to_string(num_args));
    if (static_cast<int>(b->rets.size()) > num_out)
      return Status(Error::invalid_graph, where + "returns " + std::to_string(b->rets.size()) +
                                              " results, the node has " + std::to_string(num_out) + " outputs");
    TF_RETURN_IF_ERROR(differentiate(*b, l.dy_ports, options, resources).with_prefix(where));
    g.mutable_library() = b->g.library();  // with the functions its gradient made
    bodies.push_back(std::move(b).value());
  }

  std::set<int> read;
  for (int a = 0; a < num_args; ++a) {
    bool any = false;
    for (const Body& b : bodies) {
      const Endpoint dx = b.dxs[static_cast<size_t>(a)];
      if (dx.node == kNoNode) continue;
      any = true;
      l.grad_types[static_cast<size_t>(a)] = out_type(b.g, dx);  // a resource's: its value's
    }
    if (!any) continue;
    l.grad_args.push_back(a);
    for (const Body& b : bodies)
      if (b.dxs[static_cast<size_t>(a)].node == kNoNode && l.arg_types[static_cast<size_t>(a)] != DType::variant)
        read.insert(a);
  }
  if (l.grad_args.empty()) return ok_status();
  for (size_t i = 0; i < bodies.size(); ++i) {
    read.insert(bodies[i].read_args.begin(), bodies[i].read_args.end());
    for (const Endpoint& e : bodies[i].intermediates) l.slots.push_back({i, e, out_type(bodies[i].g, e)});
  }
  l.read_args.assign(read.begin(), read.end());

  // The gradient functions, and the forward functions returning the slots.
  std::vector<std::string> grad_fns, forward_fns;
  for (size_t i = 0; i < bodies.size(); ++i) {
    const std::string& base = called.callees[i].func.name;
    const std::string name = unique_function(g, base + "_grad");
    TF_ASSIGN_OR_RETURN(tensorflow::FunctionDef f, gradient_function(bodies[i], i, l, g, name, options));
    *g.mutable_library().add_function() = std::move(f);
    grad_fns.push_back(name);
  }
  if (!l.slots.empty()) {
    for (size_t i = 0; i < bodies.size(); ++i) {
      const std::string name = unique_function(g, called.callees[i].func.name + "_fwd");
      TF_ASSIGN_OR_RETURN(tensorflow::FunctionDef f, forward_function(bodies[i], i, l, g, name, options));
      *g.mutable_library().add_function() = std::move(f);
      forward_fns.push_back(name);
    }
    Node& n = ctx.mutable_node();
    std::vector<DType> added;
    for (const Slot& s : l.slots) added.push_back(l.optionals() ? DType::variant : s.type);
    for (DType t : added) n.output_types.push_back(t);
    if (const ops::AttrList* tout = n.attr<ops::AttrList>("Tout")) {
      ops::AttrList t = *tout;
      t.type.insert(t.type.end(), added.begin(), added.end());
      n.attrs["Tout"] = t;
    }
    if (n.attrs.count("output_shapes")) n.attrs["output_shapes"] = ops::AttrList{};
    switch (l.kind) {
      case Kind::call: n.op = forward_fns[0]; break;
      case Kind::partitioned_call: n.attrs["f"] = func(forward_fns[0]); break;
      case Kind::if_op:
        n.attrs["then_branch"] = func(forward_fns[0]);
        n.attrs["else_branch"] = func(forward_fns[1]);
        break;
      case Kind::case_op: {
        ops::AttrList branches;
        for (const std::string& f : forward_fns) branches.func.push_back(func(f));
        n.attrs["branches"] = branches;
        break;
      }
      case Kind::while_op:
      case Kind::for_op:
      case Kind::none: break;
    }
  }

  // The gradient op: the same selector, the results' gradients, the slots,
  // the arguments read.
  std::vector<Endpoint> inputs;
  if (selector) {
    TF_ASSIGN_OR_RETURN(Endpoint s, ctx.input(0));
    inputs.push_back(s);
  }
  inputs.insert(inputs.end(), dy_values.begin(), dy_values.end());
  for (size_t s = 0; s < l.slots.size(); ++s) {
    TF_ASSIGN_OR_RETURN(Endpoint v, ctx.output(num_out + static_cast<int>(s)));
    inputs.push_back(v);
  }
  for (int a : l.read_args) {
    TF_ASSIGN_OR_RETURN(Endpoint v, ctx.input(selector + a));
    inputs.push_back(v);
  }
  std::vector<DType> tout;
  for (int a : l.grad_args) tout.push_back(l.grad_types[static_cast<size_t>(a)]);
  bool stateful = false;
  for (const std::string& f : grad_fns) {
    FunctionLibrary lib(g.library());
    stateful = stateful || lib.find(f)->signature().is_stateful();
  }
  std::string op;
  ops::AttrMap attrs{{"Tout", type_list(tout)}};
  switch (l.kind) {
    case Kind::call:
    case Kind::partitioned_call:
      op = stateful ? "StatefulPartitionedCall" : "PartitionedCall";
      attrs["f"] = func(grad_fns[0]);
      break;
    case Kind::if_op:
      op = stateful ? "If" : "StatelessIf";
      attrs["then_branch"] = func(grad_fns[0]);
      attrs["else_branch"] = func(grad_fns[1]);
      break;
    case Kind::case_op: {
      op = stateful ? "Case" : "StatelessCase";
      ops::AttrList branches;
      for (const std::string& f : grad_fns) branches.func.push_back(func(f));
      attrs["branches"] = branches;
      break;
    }
    case Kind::while_op:
    case Kind::for_op:
    case Kind::none: return Status(Error::internal, "not a call, If or Case");
  }
  TF_ASSIGN_OR_RETURN(std::vector<Endpoint> outs, ctx.op(op, inputs, std::move(attrs), op));
  for (size_t k = 0; k < l.grad_args.size(); ++k) ctx.set(selector + l.grad_args[k], outs[k]);
  return ok_status();
}

}  // namespace autodiff
}  // namespace tagflow::graph
