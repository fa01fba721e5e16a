// Gradients of While / StatelessWhile as functional ops, built as
// TensorFlow 2's while_v2 builds them (graph/autodiff/functional_gradients.hpp,
// docs/gradients.md "Functional ops").
//
// The body is instantiated as a graph and differentiated there, once: the
// gradient of one iteration, from the gradients of the loop variables after
// it to their gradients before it. The forward While is rewritten to record
// what that gradient reads: an iteration counter (int32, 0, +1 per
// iteration) and, per forward value read, a TensorList accumulator become
// extra loop variables, the body pushing the value every iteration. The
// gradient is a While whose loop variables are a counter running the
// forward count down to 0, the loop variables' gradients, the accumulators
// (popped, last iteration first) and the loop-invariant forward values read
// (the loop variables the body passes through, which are the forward
// node's inputs). A loop variable the body passes through has its own
// gradient added to what each iteration gives it, so it gets the sum over
// the iterations; with no iteration, the gradients pass through unchanged.
#include <algorithm>
#include <map>
#include <set>

#include "graph/autodiff/functional_gradients.hpp"
#include "graph/autodiff/functional_gradients_internal.hpp"
#include "graph/functions/function_library.hpp"
#include "graph/functions/lowering.hpp"
#include "graph/proto/graph_def.pb.h"

namespace tagflow::graph {
inline namespace autodiff {

namespace {

using namespace functional_detail;

// What the gradient loop needs of the forward loop.
struct Plan {
  std::vector<DType> types;           // the forward loop variables'
  std::vector<int> grads;             // loop variables given a gradient loop variable
  std::vector<Endpoint> accumulated;  // body values pushed every iteration
  std::vector<DType> accumulated_types;
  std::vector<int> invariants;        // passed-through loop variables the gradient reads
  // Resource loop variables (captured variables) whose reads in the body
  // get a gradient: summed over the iterations by a loop variable of the
  // gradient While, of the variable's value dtype.
  std::vector<int> resources;
  std::vector<DType> resource_types;
};

// Whether the body returns argument i as result i, directly or through an
// Identity (as lowering decides it, graph/functions/lower_functional.cpp).
bool passes_through(const Body& b, size_t i) {
  const Endpoint arg{b.args[i], 0};
  const Endpoint r = b.rets[i];
  if (r == arg) return true;
  const Node& n = b.g.node(r.node);
  return n.op == "Identity" && r.port == 0 && n.inputs.size() == 1 && n.inputs[0] == arg;
}

ops::AttrMap int32_const(int32_t v) {
  return {{"dtype", DType::int32}, {"value", ops::Tensor::scalar<int32_t>(v)}};
}

Expected<tensorflow::FunctionDef> write(Writer& w, FunctionDefSpec spec, const std::vector<std::string>& control_rets,
                                        const GradientOptions& options) {
  TF_RETURN_IF_ERROR(validate_with(w.out, options, false).with_prefix("function " + quoted(spec.name) + ": "));
  for (const std::string& c : control_rets) spec.control_rets.push_back(w.out.find(c));
  return function_def_from_graph(w.out, spec);
}

// One Placeholder argument per dtype, named `base`.
Status add_args(Writer& w, const std::vector<DType>& types, const std::string& base, FunctionDefSpec* spec) {
  for (DType t : types) {
    TF_ASSIGN_OR_RETURN(NodeId id, w.add(base, "Placeholder", {{"dtype", t}}));
    spec->args.push_back(id);
  }
  return ok_status();
}

// The forward cond taking (and ignoring) the extra loop variables.
Expected<tensorflow::FunctionDef> forward_cond(const Graph& outer, const ops::NameAttrList& cond,
                                               const std::vector<DType>& extra, const std::string& name,
                                               const GradientOptions& options) {
  TF_ASSIGN_OR_RETURN(Body c, instantiate_body(outer, cond, options));
  if (c.rets.size() != 1)
    return Status(Error::invalid_graph, "cond " + quoted(cond.name) + " returns " + std::to_string(c.rets.size()) +
                                            " results, not one predicate");
  c.forward = c.g.num_nodes();
  Writer w = writer_for(c, outer);
  TF_ASSIGN_OR_RETURN(auto at, copy_forward(c, w));
  FunctionDefSpec spec;
  spec.name = name;
  spec.stateful = c.stateful;
  for (NodeId a : c.args) spec.args.push_back(at.at(a));
  TF_RETURN_IF_ERROR(add_args(w, extra, "unused", &spec));
  spec.rets.push_back({at.at(c.rets[0].node), c.rets[0].port});
  return write(w, std::move(spec), c.control_rets, options);
}

// The forward body also counting its iterations and pushing the
// accumulated values.
Expected<tensorflow::FunctionDef> forward_body(const Body& b, const Plan& p, const Graph& outer,
                                               const std::string& name, const GradientOptions& options) {
  Writer w = writer_for(b, outer);
  TF_ASSIGN_OR_RETURN(auto at, copy_forward(b, w));
  auto here = [&at](Endpoint e) { return Endpoint{at.at(e.node), e.port}; };
  FunctionDefSpec spec;
  spec.name = name;
  spec.stateful = b.stateful;
  for (NodeId a : b.args) spec.args.push_back(at.at(a));
  for (const Endpoint& r : b.rets) spec.rets.push_back(here(r));
  TF_ASSIGN_OR_RETURN(NodeId counter, w.add("iteration_counter", "Placeholder", {{"dtype", DType::int32}}));
  spec.args.push_back(counter);
  TF_ASSIGN_OR_RETURN(NodeId one, w.add("one", "Const", int32_const(1)));
  TF_ASSIGN_OR_RETURN(NodeId next, w.add("next_iteration_counter", "AddV2", {{"T", DType::int32}},
                                         {{counter, 0}, {one, 0}}));
  spec.rets.push_back({next, 0});
  for (size_t j = 0; j < p.accumulated.size(); ++j) {
    const Endpoint v = p.accumulated[j];
    TF_ASSIGN_OR_RETURN(NodeId acc, w.add("accumulator", "Placeholder", {{"dtype", DType::variant}}));
    spec.args.push_back(acc);
    TF_ASSIGN_OR_RETURN(NodeId push, w.add(b.g.node(v.node).name + "_push", "TensorListPushBack",
                                           {{"element_dtype", p.accumulated_types[j]}}, {{acc, 0}, here(v)}));
    spec.rets.push_back({push, 0});
  }
  return write(w, std::move(spec), b.control_rets, options);
}

// The gradient body: one forward iteration's gradient, last iteration
// first. Loop variables: the counter, the gradients, the accumulators, the
// invariants.
Expected<tensorflow::FunctionDef> gradient_body(const Body& b, const Plan& p, const Graph& outer,
                                                const std::string& name, const GradientOptions& options) {
  Writer w = writer_for(b, outer);
  GradientCopy copy(b, w);
  FunctionDefSpec spec;
  spec.name = name;
  TF_ASSIGN_OR_RETURN(NodeId counter, w.add("counter", "Placeholder", {{"dtype", DType::int32}}));
  spec.args.push_back(counter);
  std::vector<NodeId> dvs;
  for (size_t k = 0; k < p.grads.size(); ++k) {
    TF_ASSIGN_OR_RETURN(NodeId id, w.add("dy", "Placeholder", {{"dtype", out_type(b.g, {b.dys[k], 0})}}));
    spec.args.push_back(id);
    copy.seen[{b.dys[k], 0}] = {id, 0};
    dvs.push_back(id);
  }
  std::vector<NodeId> lists;
  for (size_t j = 0; j < p.accumulated.size(); ++j) {
    TF_ASSIGN_OR_RETURN(NodeId id, w.add("accumulator", "Placeholder", {{"dtype", DType::variant}}));
    spec.args.push_back(id);
    lists.push_back(id);
  }
  std::vector<NodeId> invariants;
  for (int i : p.invariants) {
    TF_ASSIGN_OR_RETURN(NodeId id, w.add("invariant", "Placeholder", {{"dtype", p.types[static_cast<size_t>(i)]}}));
    spec.args.push_back(id);
    copy.seen[{b.args[static_cast<size_t>(i)], 0}] = {id, 0};
    invariants.push_back(id);
  }
  TF_ASSIGN_OR_RETURN(NodeId one, w.add("one", "Const", int32_const(1)));
  TF_ASSIGN_OR_RETURN(NodeId next, w.add("next_counter", "Sub", {{"T", DType::int32}}, {{counter, 0}, {one, 0}}));
  spec.rets.push_back({next, 0});
  std::vector<NodeId> pops;
  if (!p.accumulated.empty()) {
    TF_ASSIGN_OR_RETURN(NodeId unknown, w.add("element_shape", "Const", int32_const(-1)));
    for (size_t j = 0; j < p.accumulated.size(); ++j) {
      const Endpoint v = p.accumulated[j];
      TF_ASSIGN_OR_RETURN(NodeId pop, w.add(b.g.node(v.node).name + "_pop", "TensorListPopBack",
                                            {{"element_dtype", p.accumulated_types[j]}},
                                            {{lists[j], 0}, {unknown, 0}}));
      copy.seen[{v.node, v.port}] = {pop, 1};
      pops.push_back(pop);
    }
  }
  TF_RETURN_IF_ERROR(copy.copy());
  for (size_t k = 0; k < p.grads.size(); ++k) {
    const Endpoint dx = b.dxs[static_cast<size_t>(p.grads[k])];
    if (dx.node != kNoNode) {
      TF_ASSIGN_OR_RETURN(Endpoint r, copy.resolve(dx));
      spec.rets.push_back(r);
      continue;
    }
    // The loop variable's value before the iteration does not reach its
    // results: its gradient there is zero.
    TF_ASSIGN_OR_RETURN(NodeId zeros, w.add("zeros_" + std::to_string(p.grads[k]), "ZerosLike",
                                            {{"T", out_type(b.g, {b.dys[k], 0})}}, {{dvs[k], 0}}));
    spec.rets.push_back({zeros, 0});
  }
  for (NodeId pop : pops) spec.rets.push_back({pop, 0});
  for (NodeId id : invariants) spec.rets.push_back({id, 0});
  for (size_t k = 0; k < p.resources.size(); ++k) {
    const DType t = p.resource_types[k];
    TF_ASSIGN_OR_RETURN(NodeId sum, w.add("variable_gradient", "Placeholder", {{"dtype", t}}));
    spec.args.push_back(sum);
    const Endpoint body_dx = b.dxs[static_cast<size_t>(p.resources[k])];
    if (body_dx.node == kNoNode) {  // the body does not read it: the sum passes through
      spec.rets.push_back({sum, 0});
      continue;
    }
    TF_ASSIGN_OR_RETURN(Endpoint dx, copy.resolve(body_dx));
    TF_ASSIGN_OR_RETURN(NodeId added, w.add("variable_gradient_sum", "AddV2", {{"T", t}}, {{sum, 0}, dx}));
    spec.rets.push_back({added, 0});
  }
  return finish_function(w.out, std::move(spec), options);
}

// The gradient cond: counter > 0.
Expected<tensorflow::FunctionDef> gradient_cond(const Body& b, const std::vector<DType>& types, const Graph& outer,
                                                const std::string& name, const GradientOptions& options) {
  Writer w = writer_for(b, outer);
  FunctionDefSpec spec;
  spec.name = name;
  TF_RETURN_IF_ERROR(add_args(w, types, "loop_var", &spec));
  TF_ASSIGN_OR_RETURN(NodeId zero, w.add("zero", "Const", int32_const(0)));
  TF_ASSIGN_OR_RETURN(NodeId more, w.add("more", "Greater", {{"T", DType::int32}}, {{spec.args[0], 0}, {zero, 0}}));
  spec.rets.push_back({more, 0});
  return write(w, std::move(spec), {}, options);
}

Status add_function(Graph& g, Expected<tensorflow::FunctionDef> f) {
  if (!f.ok()) return f.status();
  *g.mutable_library().add_function() = std::move(f).value();
  return ok_status();
}

// For's body as a While body: loop variables (vars..., i, limit, delta),
// results (body(i, vars)..., i + delta, limit, delta).
Expected<tensorflow::FunctionDef> for_body_as_while(Body& b, const Graph& outer, const std::string& name,
                                                    const GradientOptions& options) {
  b.forward = b.g.num_nodes();
  Writer w = writer_for(b, outer);
  TF_ASSIGN_OR_RETURN(auto at, copy_forward(b, w));
  FunctionDefSpec spec;
  spec.name = name;
  spec.stateful = b.stateful;
  for (size_t k = 1; k < b.args.size(); ++k) spec.args.push_back(at.at(b.args[k]));
  const NodeId i = at.at(b.args[0]);
  TF_ASSIGN_OR_RETURN(NodeId limit, w.add("limit", "Placeholder", {{"dtype", DType::int32}}));
  TF_ASSIGN_OR_RETURN(NodeId delta, w.add("delta", "Placeholder", {{"dtype", DType::int32}}));
  spec.args.insert(spec.args.end(), {i, limit, delta});
  for (const Endpoint& r : b.rets) spec.rets.push_back({at.at(r.node), r.port});
  TF_ASSIGN_OR_RETURN(NodeId next, w.add("next_index", "AddV2", {{"T", DType::int32}}, {{i, 0}, {delta, 0}}));
  spec.rets.insert(spec.rets.end(), {{next, 0}, {limit, 0}, {delta, 0}});
  return write(w, std::move(spec), b.control_rets, options);
}

// For's condition: i < limit counting up, i > limit counting down; a zero
// delta fails the step at an Assert, as the For does, instead of never
// ending.
Expected<tensorflow::FunctionDef> for_cond_as_while(const Body& b, const std::vector<DType>& types, const Graph& outer,
                                                    const std::string& for_node, const std::string& name,
                                                    const GradientOptions& options) {
  Writer w = writer_for(b, outer);
  FunctionDefSpec spec;
  spec.name = name;
  TF_RETURN_IF_ERROR(add_args(w, types, "loop_var", &spec));
  const size_t n = types.size();
  const Endpoint i{spec.args[n - 3], 0}, limit{spec.args[n - 2], 0}, delta{spec.args[n - 1], 0};
  const ops::AttrMap i32{{"T", DType::int32}};
  TF_ASSIGN_OR_RETURN(NodeId zero, w.add("zero", "Const", int32_const(0)));
  TF_ASSIGN_OR_RETURN(NodeId up, w.add("counts_up", "Greater", i32, {delta, {zero, 0}}));
  TF_ASSIGN_OR_RETURN(NodeId down, w.add("counts_down", "LogicalNot", {}, {{up, 0}}));
  TF_ASSIGN_OR_RETURN(NodeId below, w.add("below_limit", "Less", i32, {i, limit}));
  TF_ASSIGN_OR_RETURN(NodeId above, w.add("above_limit", "Greater", i32, {i, limit}));
  TF_ASSIGN_OR_RETURN(NodeId more_up, w.add("more_up", "LogicalAnd", {}, {{up, 0}, {below, 0}}));
  TF_ASSIGN_OR_RETURN(NodeId more_down, w.add("more_down", "LogicalAnd", {}, {{down, 0}, {above, 0}}));
  TF_ASSIGN_OR_RETURN(NodeId more, w.add("more", "LogicalOr", {}, {{more_up, 0}, {more_down, 0}}));
  TF_ASSIGN_OR_RETURN(NodeId nonzero, w.add("delta_nonzero", "NotEqual", i32, {delta, {zero, 0}}));
  const ops::Tensor text = ops::Tensor::string_scalar(for_zero_delta_message(for_node));
  TF_ASSIGN_OR_RETURN(NodeId message, w.add("delta_message", "Const", {{"dtype", DType::string}, {"value", text}}));
  TF_ASSIGN_OR_RETURN(NodeId check, w.add("assert_delta", "Assert",
                                          {{"T", type_list({DType::string})}, {"summarize", int64_t{3}}},
                                          {{nonzero, 0}, {message, 0}}));
  TF_ASSIGN_OR_RETURN(NodeId checked, w.add("checked", "Identity", {{"T", DType::boolean}}, {{more, 0}}));
  w.out.mutable_node(checked).control_inputs.push_back(check);
  spec.rets.push_back({checked, 0});
  return finish_function(w.out, std::move(spec), options);
}

}  // namespace

Status for_gradient(GradContext& ctx, const GradientOptions& options) {
  Graph& g = ctx.graph();
  const Node forward = ctx.node();
  const int n = ctx.num_outputs();
  const ops::NameAttrList* body = forward.attr<ops::NameAttrList>("body");
  if (body == nullptr)
    return Status(Error::invalid_graph, "node " + quoted(forward.name) + " has no body function attr");
  if (ctx.num_inputs() != n + 3)
    return Status(Error::invalid_graph, "it has " + std::to_string(ctx.num_inputs()) + " inputs for " +
                                            std::to_string(n) + " loop variables and start, limit, delta");
  const std::string where = "body " + quoted(body->name) + ": ";
  auto instantiated = instantiate_body(g, *body, options);
  if (!instantiated.ok()) return instantiated.status().with_prefix(where);
  Body b = std::move(instantiated).value();
  if (static_cast<int>(b.args.size()) != n + 1 || static_cast<int>(b.rets.size()) != n)
    return Status(Error::invalid_graph, where + "takes " + std::to_string(b.args.size()) + " arguments and returns " +
                                            std::to_string(b.rets.size()) + " results for " + std::to_string(n) +
                                            " loop variables");
  // The For becomes the While it is, with the loop variables first so its
  // outputs keep their ports: (vars..., i, limit, delta).
  std::vector<DType> types;
  for (int k = 0; k < n; ++k) types.push_back(ctx.input_type(3 + k));
  types.insert(types.end(), 3, DType::int32);
  const std::string while_body = unique_function(g, body->name + "_as_while");
  TF_RETURN_IF_ERROR(add_function(g, for_body_as_while(b, g, while_body, options)).with_prefix(where));
  const std::string while_cond = unique_function(g, body->name + "_as_while_cond");
  TF_RETURN_IF_ERROR(add_function(g, for_cond_as_while(b, types, g, forward.name, while_cond, options)));
  const std::string op = "While";  // its cond asserts
  const ops::OpDef* def = (options.ops ? options.ops : &ops::OpRegistry::global())->find(op);
  if (def == nullptr) return Status(Error::internal, "op " + op + " is not registered");
  {
    Node& fw = ctx.mutable_node();
    std::vector<Endpoint> inputs(fw.inputs.begin() + 3, fw.inputs.end());
    inputs.insert(inputs.end(), fw.inputs.begin(), fw.inputs.begin() + 3);
    fw.inputs.assign(inputs.begin(), inputs.end());
    std::vector<DType> input_types(fw.input_types.begin() + 3, fw.input_types.end());
    input_types.insert(input_types.end(), fw.input_types.begin(), fw.input_types.begin() + 3);
    fw.input_types = input_types;
    fw.output_types = types;
    // The For's other attrs (its placement hints, say) stay.
    fw.attrs["T"] = type_list(types);
    fw.attrs["cond"] = func(while_cond);
    fw.attrs["body"] = func(while_body);
    fw.op = op;
    fw.def = def;
  }
  return while_gradient(ctx, options);
}

Status while_gradient(GradContext& ctx, const GradientOptions& options) {
  Graph& g = ctx.graph();
  const Node forward = ctx.node();  // a copy: the node is rewritten below
  const int n = ctx.num_inputs();
  if (ctx.num_outputs() != n)
    return Status(Error::invalid_graph, "it has " + std::to_string(n) + " inputs but " +
                                            std::to_string(ctx.num_outputs()) + " outputs");
  const ops::NameAttrList* cond = forward.attr<ops::NameAttrList>("cond");
  const ops::NameAttrList* body = forward.attr<ops::NameAttrList>("body");
  if (cond == nullptr || body == nullptr)
    return Status(Error::invalid_graph, "node " + quoted(forward.name) + " has no cond or body function attr");

  Plan p;
  std::vector<std::optional<Endpoint>> dys;
  bool any = false;
  for (int i = 0; i < n; ++i) {
    p.types.push_back(ctx.input_type(i));
    dys.push_back(ctx.dy(i));
    any = any || dys.back().has_value();
    // Variant loop variables (lists, optionals) carry a gradient only when
    // their output has one: their zeros have no meaning.
    if (is_differentiable(p.types.back()) || (p.types.back() == DType::variant && dys.back()))
      p.grads.push_back(i);
  }
  if (!any) return ok_status();
  if (p.grads.empty()) {
    // No loop variable carries a gradient through the body: what reads of
    // a variable's handle after the loop give is the handle's gradient.
    for (int i = 0; i < n; ++i)
      if (p.types[static_cast<size_t>(i)] == DType::resource && dys[static_cast<size_t>(i)])
        ctx.set(i, *dys[static_cast<size_t>(i)]);
    return ok_status();
  }

  const std::string where = "body " + quoted(body->name) + ": ";
  const std::set<int> resources = wanted_resources(ctx, 0);
  // A list loop variable whose output has no gradient may still carry one
  // from an iteration to the one before (a gradient While differentiated
  // again pushes what it popped): it then starts from zeros of the list,
  // and the body is differentiated again with it.
  Body b;
  for (int attempt = 0;; ++attempt) {
    auto instantiated = instantiate_body(g, *body, options);
    if (!instantiated.ok()) return instantiated.status().with_prefix(where);
    b = std::move(instantiated).value();
    if (static_cast<int>(b.args.size()) != n || static_cast<int>(b.rets.size()) != n)
      return Status(Error::invalid_graph, where + "takes " + std::to_string(b.args.size()) + " arguments and returns " +
                                              std::to_string(b.rets.size()) + " results for " + std::to_string(n) +
                                              " loop variables");
    TF_RETURN_IF_ERROR(differentiate(b, p.grads, options, resources).with_prefix(where));
    bool added = false;
    for (int i = 0; i < n; ++i) {
      if (b.dxs[static_cast<size_t>(i)].node == kNoNode || resources.count(i) ||
          std::find(p.grads.begin(), p.grads.end(), i) != p.grads.end())
        continue;
      if (p.types[static_cast<size_t>(i)] != DType::variant || attempt > 0)
        return Status(Error::unimplemented,
                      where + "loop variable " + std::to_string(i) + " (" +
                          ops::dtype_name(p.types[static_cast<size_t>(i)]) +
                          ") carries a gradient from one iteration to the one before, but its output has none to "
                          "start from");
      p.grads.insert(std::upper_bound(p.grads.begin(), p.grads.end(), i), i);
      added = true;
    }
    if (!added) break;
  }
  g.mutable_library() = b.g.library();  // with the functions its gradient made

  for (int i : resources) {
    const Endpoint dx = b.dxs[static_cast<size_t>(i)];
    const std::optional<Endpoint>& dy = dys[static_cast<size_t>(i)];  // a read of the While's output
    if (dx.node == kNoNode && !dy) continue;
    if (!passes_through(b, static_cast<size_t>(i)))
      return Status(Error::unimplemented, where + "resource loop variable " + std::to_string(i) +
                                              " is not passed through unchanged: its gradient is not built");
    p.resources.push_back(i);
    p.resource_types.push_back(dx.node != kNoNode ? out_type(b.g, dx) : ctx.type_of(*dy));
  }
  for (const Endpoint& e : b.intermediates) p.accumulated.push_back(e);
  for (int i : b.read_args) {
    if (passes_through(b, static_cast<size_t>(i))) {
      p.invariants.push_back(i);
    } else {
      p.accumulated.push_back({b.args[static_cast<size_t>(i)], 0});
    }
  }
  for (const Endpoint& e : p.accumulated) p.accumulated_types.push_back(out_type(b.g, e));

  // The forward While: counter and accumulators as extra loop variables.
  std::vector<DType> extra{DType::int32};
  extra.insert(extra.end(), p.accumulated.size(), DType::variant);
  const std::string fwd_cond = unique_function(g, cond->name + "_fwd");
  TF_RETURN_IF_ERROR(add_function(g, forward_cond(g, *cond, extra, fwd_cond, options)));
  const std::string fwd_body = unique_function(g, body->name + "_fwd");
  TF_RETURN_IF_ERROR(add_function(g, forward_body(b, p, g, fwd_body, options)).with_prefix(where));
  std::vector<Endpoint> initial;
  TF_ASSIGN_OR_RETURN(Endpoint zero, ctx.constant(ops::Tensor::scalar<int32_t>(0), "iteration_counter"));
  initial.push_back(zero);
  if (!p.accumulated.empty()) {
    TF_ASSIGN_OR_RETURN(Endpoint unknown, ctx.constant(ops::Tensor::scalar<int32_t>(-1), "element_shape"));
    for (DType t : p.accumulated_types) {
      TF_ASSIGN_OR_RETURN(Endpoint list, ctx.op1("EmptyTensorList", {unknown, unknown}, {{"element_dtype", t}},
                                                 "accumulator"));
      initial.push_back(list);
    }
  }
  {
    Node& fw = ctx.mutable_node();
    for (const Endpoint& e : initial) fw.inputs.push_back(e);
    for (DType t : extra) {
      fw.input_types.push_back(t);
      fw.output_types.push_back(t);
    }
    std::vector<DType> all = p.types;
    all.insert(all.end(), extra.begin(), extra.end());
    fw.attrs["T"] = type_list(all);
    if (const ops::AttrList* shapes = fw.attr<ops::AttrList>("output_shapes"); shapes && !shapes->shape.empty()) {
      ops::AttrList s = *shapes;
      s.shape.resize(all.size(), ops::PartialShape{true, {}});
      fw.attrs["output_shapes"] = s;
    }
    fw.attrs["cond"] = func(fwd_cond);
    fw.attrs["body"] = func(fwd_body);
  }

  // The gradient While.
  std::vector<Endpoint> inputs;
  std::vector<DType> types{DType::int32};
  TF_ASSIGN_OR_RETURN(Endpoint count, ctx.output(n));
  inputs.push_back(count);
  for (int i : p.grads) {
    const auto& d = dys[static_cast<size_t>(i)];
    if (d) {
      inputs.push_back(*d);
    } else {
      TF_ASSIGN_OR_RETURN(Endpoint out, ctx.output(i));
      TF_ASSIGN_OR_RETURN(Endpoint zeros, ctx.op1("ZerosLike", {out}));
      inputs.push_back(zeros);
    }
    types.push_back(p.types[static_cast<size_t>(i)]);
  }
  for (size_t j = 0; j < p.accumulated.size(); ++j) {
    TF_ASSIGN_OR_RETURN(Endpoint list, ctx.output(n + 1 + static_cast<int>(j)));
    inputs.push_back(list);
    types.push_back(DType::variant);
  }
  for (int i : p.invariants) {
    TF_ASSIGN_OR_RETURN(Endpoint v, ctx.input(i));
    inputs.push_back(v);
    types.push_back(p.types[static_cast<size_t>(i)]);
  }
  for (size_t k = 0; k < p.resources.size(); ++k) {
    // The sum starts from what reads of the While's output of the handle
    // give, else zeros like the variable's value.
    types.push_back(p.resource_types[k]);
    if (const std::optional<Endpoint>& dy = dys[static_cast<size_t>(p.resources[k])]) {
      inputs.push_back(*dy);
      continue;
    }
    TF_ASSIGN_OR_RETURN(Endpoint handle, ctx.input(p.resources[k]));
    TF_ASSIGN_OR_RETURN(Endpoint value, ctx.op1("ReadVariableOp", {handle}, {{"dtype", p.resource_types[k]}}));
    TF_ASSIGN_OR_RETURN(Endpoint zeros, ctx.op1("ZerosLike", {value}));
    inputs.push_back(zeros);
  }
  const std::string grad_body = unique_function(g, body->name + "_grad");
  TF_RETURN_IF_ERROR(add_function(g, gradient_body(b, p, g, grad_body, options)).with_prefix(where));
  const std::string grad_cond = unique_function(g, body->name + "_grad_cond");
  TF_RETURN_IF_ERROR(add_function(g, gradient_cond(b, types, g, grad_cond, options)));
  const bool stateful = FunctionLibrary(g.library()).find(grad_body)->signature().is_stateful();
  const std::string op = stateful ? "While" : "StatelessWhile";
  ops::AttrMap attrs{{"T", type_list(types)}, {"cond", func(grad_cond)}, {"body", func(grad_body)}};
  if (const int64_t* pi = forward.attr<int64_t>("parallel_iterations")) attrs["parallel_iterations"] = *pi;
  TF_ASSIGN_OR_RETURN(std::vector<Endpoint> outs, ctx.op(op, inputs, std::move(attrs), op));
  for (size_t k = 0; k < p.grads.size(); ++k) ctx.set(p.grads[k], outs[1 + k]);
  const size_t first_resource = 1 + p.grads.size() + p.accumulated.size() + p.invariants.size();
  for (size_t k = 0; k < p.resources.size(); ++k) ctx.set(p.resources[k], outs[first_resource + k]);
  return ok_status();
}

}  // namespace autodiff
}  // namespace tagflow::graph
