// While and For lowered: a frame of Enter, Merge, LoopCond, Switch,
// NextIteration and Exit around calls of cond and body
// (graph/functions/lowering_expander.hpp).
#include "graph/functions/lowering_expander.hpp"

namespace tagflow::graph {
inline namespace functions {
namespace lowering_detail {

// A variable a loop body passes through unchanged (loop variable i) is
// read in the body from `invariant`, a loop-invariant Enter, as
// TensorFlow 1's while_loop captures it, so gradients with respect to it
// are summed over the iterations like a captured tensor's. The body reads
// it gated by the Switch's taken output `taken`, so it runs in exactly
// the iterations it ran in before. Returns what the body reads.
NamedEndpoint Lowering::invariant_variable(const Item& x, const std::string& name, size_t i, const std::string& invariant,
                                           NamedEndpoint taken) {
  const std::string k = std::to_string(i);
  const AttrMap t = {{"T", DType::resource}};
  const std::string pivot = add(x, name + "/pivot_" + k, "Identity", t, {taken});
  return {add(x, name + "/read_" + k, "Identity", t, {{invariant, 0}}, {pivot}), 0};
}

Status Lowering::lower_while(size_t index, Item x) {
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
Status Lowering::lower_for(size_t index, Item x) {
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

Status Lowering::check_loop_signatures(const Node& n, const Callee& cond, const Callee& body,
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

}  // namespace lowering_detail
}  // namespace functions
}  // namespace tagflow::graph
