// If and Case lowered: Switches on the predicate or the branch index, a
// call of each branch, Merges of their results (graph/functions/lowering_expander.hpp).
#include "graph/functions/lowering_expander.hpp"

namespace tagflow::graph {
inline namespace functions {
namespace lowering_detail {

// TensorFlow's truthiness of a predicate as a bool scalar (a scalar is
// true when non-zero, a non-scalar when it has elements): one ToBool node,
// which waits for `controls`.
Expected<NamedEndpoint> Lowering::truthiness(const Item& x, const std::string& base,
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
Status Lowering::check_branch(const Callee& c, const std::string& role,
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

Status Lowering::lower_if(size_t index, Item x) {
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
void Lowering::merge_outputs(size_t index, const Item& x, const std::vector<std::string>& calls,
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

Status Lowering::lower_case(size_t index, Item x) {
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

}  // namespace lowering_detail
}  // namespace functions
}  // namespace tagflow::graph
