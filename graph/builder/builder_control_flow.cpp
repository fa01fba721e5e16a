// GraphBuilder::cond, while_loop and case_: the node patterns of TensorFlow
// 1.x's tf.cond and tf.while_loop (docs/construction.md draws them).
#include <set>

#include "graph/builder/builder.hpp"
#include "graph/builder/builder_context.hpp"

namespace tagflow::graph {
inline namespace builder {

namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string dtype_list(const std::vector<Output>& outs) {
  std::string s = "(";
  for (size_t i = 0; i < outs.size(); ++i)
    s += (i ? ", " : "") + ops::dtype_name(ops::base_dtype(outs[i].dtype));
  return s + ")";
}

}  // namespace

std::vector<Output> GraphBuilder::run_branch(int c, const BranchFn& fn,
                                             const std::string& cond_name, const char* which,
                                             bool* returned_nothing) {
  const int parent = contexts_[static_cast<size_t>(c)].parent;
  const NodeId first = graph_.num_nodes();
  current_ = c;
  std::vector<Output> outs = fn ? fn() : std::vector<Output>{};
  *returned_nothing = outs.empty();
  const std::string where = "cond " + quoted(cond_name) + " (" + which + " branch)";
  std::vector<Output> inner;
  for (size_t i = 0; ok() && i < outs.size(); ++i) {
    Status s = check_input(outs[i], where + " output " + std::to_string(i));
    if (s.ok()) {
      auto x = capture(c, outs[i], where);
      if (x.ok()) inner.push_back(*x); else s = x.status();
    }
    record_error(s);
  }
  if (ok() && outs.empty()) {
    // Nothing returned: an Identity of the pivot that runs after every node
    // of the branch nobody consumes, so the cond's Merge runs after them.
    std::vector<NodeId> sinks;
    for (NodeId id = first; id < graph_.num_nodes(); ++id)
      if (context_of(id) == c && graph_.out_edges(id).empty()) sinks.push_back(id);
    const Context& ctx = contexts_[static_cast<size_t>(c)];
    auto id = add_raw(unique_name(ctx.scope, "Identity"), "Identity", {ctx.pivot},
                      {{"T", DType::boolean}}, c, sinks);
    if (id.ok()) inner.push_back(make_output(*id, 0)); else record_error(id.status());
  }
  current_ = parent;
  return inner;
}

Outputs GraphBuilder::cond(Output pred, const BranchFn& true_fn, const BranchFn& false_fn,
                           const std::string& name) {
  if (GraphBuilder* t = forward_target()) return t->cond(pred, true_fn, false_fn, name);
  if (!ok()) return {};
  if (style_ == Style::tf2) return cond_tf2(pred, true_fn, false_fn, name);
  const std::string scope = unique_name(scope_prefix(), name.empty() ? "cond" : name);
  const std::string where = "cond " + quoted(scope);
  if (Status s = check_input(pred, where + " predicate"); !s.ok()) {
    record_error(s);
    return {};
  }
  if (ops::base_dtype(pred.dtype) != DType::boolean) {
    fail(Error::invalid_argument,
         where + ": the predicate " + quoted(pred.name()) + " is " +
             ops::dtype_name(pred.dtype) + ", not bool");
    return {};
  }
  const int outer = current_;
  scopes_.push_back(scope + "/");
  auto build = [&]() -> Expected<Outputs> {
    TF_ASSIGN_OR_RETURN(Output p, capture(outer, pred, where));
    const std::string prefix = scope + "/";
    ops::AttrMap bool_t{{"T", DType::boolean}};
    TF_ASSIGN_OR_RETURN(NodeId sw, add_raw(unique_name(prefix, "Switch"), "Switch", {p, p}, bool_t, outer));
    Context t{Context::Kind::branch, outer, scope, prefix, {}, {}, 1, {}, 10};
    Context f = t;
    f.branch = 0;
    const int tc = push_context(std::move(t));
    const int fc = push_context(std::move(f));
    TF_ASSIGN_OR_RETURN(NodeId st, add_raw(unique_name(prefix, "switch_t"), "Identity",
                                           {make_output(sw, 1)}, bool_t, tc));
    TF_ASSIGN_OR_RETURN(NodeId sf, add_raw(unique_name(prefix, "switch_f"), "Identity",
                                           {make_output(sw, 0)}, bool_t, fc));
    TF_ASSIGN_OR_RETURN(NodeId pid, add_raw(unique_name(prefix, "pred_id"), "Identity", {p}, bool_t, outer));
    for (int c : {tc, fc}) contexts_[static_cast<size_t>(c)].pred = make_output(pid, 0);
    contexts_[static_cast<size_t>(tc)].pivot = make_output(st, 0);
    contexts_[static_cast<size_t>(fc)].pivot = make_output(sf, 0);

    bool nothing_t = false, nothing_f = false;
    std::vector<Output> res_t = run_branch(tc, true_fn, scope, "true", &nothing_t);
    if (!ok()) return status_;
    std::vector<Output> res_f = run_branch(fc, false_fn, scope, "false", &nothing_f);
    if (!ok()) return status_;
    if (nothing_t != nothing_f || res_t.size() != res_f.size())
      return Status(Error::invalid_argument,
                    where + ": the true branch returns " +
                        std::to_string(nothing_t ? 0 : res_t.size()) +
                        " tensors but the false branch " +
                        std::to_string(nothing_f ? 0 : res_f.size()));
    for (size_t i = 0; i < res_t.size(); ++i)
      if (ops::base_dtype(res_t[i].dtype) != ops::base_dtype(res_f[i].dtype))
        return Status(Error::invalid_argument,
                      where + ": the branches return different dtypes: true " +
                          dtype_list(res_t) + ", false " + dtype_list(res_f) + " (output " +
                          std::to_string(i) + ")");
    std::vector<Output> merges;
    for (size_t i = 0; i < res_t.size(); ++i) {
      const DType t = ops::base_dtype(res_t[i].dtype);
      TF_ASSIGN_OR_RETURN(NodeId m, add_raw(unique_name(prefix, "Merge"), "Merge",
                                            {res_f[i], res_t[i]}, {{"T", t}, {"N", 2}}, outer));
      merges.push_back(make_output(m, 0));
    }
    // A cond whose branches returned nothing is its Merge, as a control handle.
    const Output handle = merges.front().control();
    if (nothing_t) merges.clear();
    return Outputs(merges, handle);
  };
  auto result = build();
  scopes_.pop_back();
  current_ = outer;
  if (!result.ok()) {
    record_error(result.status());
    return {};
  }
  return std::move(result).value();
}

Expected<Outputs> GraphBuilder::build_while(const std::string& scope, const LoopCondFn& cond_fn,
                                            const LoopBodyFn& body_fn,
                                            const std::vector<Output>& loop_vars,
                                            int64_t parallel_iterations) {
  const std::string where = "while loop " + quoted(scope);
  const std::string prefix = scope + "/";
  if (loop_vars.empty())
    return Status(Error::invalid_argument, where + " needs at least one loop variable");
  if (parallel_iterations < 1)
    return Status(Error::invalid_argument, where + ": parallel_iterations must be at least 1, not " +
                                               std::to_string(parallel_iterations));
  const int outer = current_;
  std::vector<Output> vars;
  for (size_t i = 0; i < loop_vars.size(); ++i) {
    TF_RETURN_IF_ERROR(check_input(loop_vars[i], where + " loop variable " + std::to_string(i)));
    TF_ASSIGN_OR_RETURN(Output v, capture(outer, loop_vars[i], where));
    vars.push_back(v);
  }
  Context loop{Context::Kind::loop, outer, scope, prefix, {}, {}, 0,
               prefix + "while_context", parallel_iterations};
  const int wc = push_context(std::move(loop));
  auto t_attr = [](const Output& x) { return ops::AttrMap{{"T", ops::base_dtype(x.dtype)}}; };

  std::vector<Output> enters;
  for (const Output& v : vars) {
    ops::AttrMap attrs = t_attr(v);
    attrs["frame_name"] = prefix + "while_context";
    attrs["is_constant"] = false;
    attrs["parallel_iterations"] = parallel_iterations;
    std::vector<NodeId> control;
    add_pivot_dependency(outer, {v}, &control);
    TF_ASSIGN_OR_RETURN(NodeId e, add_raw(unique_name(prefix, "Enter"), "Enter", {v}, attrs, wc,
                                          std::move(control)));
    enters.push_back(make_output(e, 0));
  }
  std::vector<NodeId> merges;
  std::vector<Output> merged;
  for (const Output& e : enters) {
    ops::AttrMap attrs = t_attr(e);
    attrs["N"] = 2;
    // Input 1 becomes the NextIteration (the back edge) once the body exists.
    TF_ASSIGN_OR_RETURN(NodeId m, add_raw(unique_name(prefix, "Merge"), "Merge", {e, e}, attrs, wc));
    merges.push_back(m);
    merged.push_back(make_output(m, 0));
  }
  contexts_[static_cast<size_t>(wc)].pivot = merged.front();

  current_ = wc;
  Output c = cond_fn ? cond_fn(merged) : Output{};
  if (!ok()) return status_;
  TF_RETURN_IF_ERROR(check_input(c, where + " condition result"));
  if (ops::base_dtype(c.dtype) != DType::boolean)
    return Status(Error::invalid_argument, where + ": the condition returns " +
                                               ops::dtype_name(c.dtype) + ", not bool");
  TF_ASSIGN_OR_RETURN(c, capture(wc, c, where + " condition"));
  TF_ASSIGN_OR_RETURN(NodeId lc, add_raw(unique_name(prefix, "LoopCond"), "LoopCond", {c}, {}, wc));
  std::vector<NodeId> switches;
  std::vector<Output> body_in;
  for (const Output& m : merged) {
    TF_ASSIGN_OR_RETURN(NodeId sw, add_raw(unique_name(prefix, "Switch"), "Switch",
                                           {m, make_output(lc, 0)}, t_attr(m), wc));
    switches.push_back(sw);
  }
  for (NodeId sw : switches) {
    const Output t = make_output(sw, 1);
    TF_ASSIGN_OR_RETURN(NodeId id, add_raw(unique_name(prefix, "Identity"), "Identity", {t},
                                           t_attr(t), wc));
    body_in.push_back(make_output(id, 0));
  }
  contexts_[static_cast<size_t>(wc)].pivot = body_in.front();

  std::vector<Output> next = body_fn ? body_fn(body_in) : std::vector<Output>{};
  if (!ok()) return status_;
  if (next.size() != vars.size())
    return Status(Error::invalid_argument,
                  where + ": the body returns " + std::to_string(next.size()) +
                      " tensors for " + std::to_string(vars.size()) + " loop variables");
  for (size_t i = 0; i < next.size(); ++i) {
    TF_RETURN_IF_ERROR(check_input(next[i], where + " body result " + std::to_string(i)));
    if (ops::base_dtype(next[i].dtype) != ops::base_dtype(vars[i].dtype))
      return Status(Error::invalid_argument,
                    where + ": the body changes loop variable " + std::to_string(i) + " from " +
                        ops::dtype_name(ops::base_dtype(vars[i].dtype)) + " to " +
                        ops::dtype_name(ops::base_dtype(next[i].dtype)));
    TF_ASSIGN_OR_RETURN(Output x, capture(wc, next[i], where + " body"));
    // A loop invariant returned as is would keep the loop going in its last
    // iteration: the pivot edge TensorFlow gives such a NextIteration.
    std::vector<NodeId> control;
    add_pivot_dependency(wc, {x}, &control);
    TF_ASSIGN_OR_RETURN(NodeId ni, add_raw(unique_name(prefix, "NextIteration"), "NextIteration",
                                           {x}, t_attr(x), wc, std::move(control)));
    graph_.mutable_node(merges[i]).inputs[1] = Endpoint{ni, 0};
  }
  current_ = outer;
  std::vector<Output> exits;
  for (NodeId sw : switches) {
    const Output f = make_output(sw, 0);
    TF_ASSIGN_OR_RETURN(NodeId x, add_raw(unique_name(prefix, "Exit"), "Exit", {f}, t_attr(f), outer));
    exits.push_back(make_output(x, 0));
  }
  return Outputs(exits, exits.front().control());
}

Outputs GraphBuilder::while_loop(const LoopCondFn& cond_fn, const LoopBodyFn& body_fn,
                                 const std::vector<Output>& loop_vars, const WhileOptions& options) {
  if (GraphBuilder* t = forward_target()) return t->while_loop(cond_fn, body_fn, loop_vars, options);
  if (!ok()) return {};
  const std::string scope = unique_name(scope_prefix(), options.name.empty() ? "while" : options.name);
  const std::string where = "while loop " + quoted(scope);
  const int outer = current_;
  scopes_.push_back(scope + "/");
  // tf1: a loop frame in name scope `scope`; tf2: a While node named `scope`.
  auto build = [&](const LoopCondFn& c, const LoopBodyFn& b, const std::vector<Output>& v) {
    return style_ == Style::tf2 ? while_tf2(scope, c, b, v, options.parallel_iterations)
                                : build_while(scope, c, b, v, options.parallel_iterations);
  };
  Expected<Outputs> result = Status(Error::internal, "unreachable");
  if (!options.maximum_iterations) {
    result = build(cond_fn, body_fn, loop_vars);
  } else {
    // TensorFlow's form: an int32 counter as loop variable 0, and the
    // condition `counter < maximum_iterations && cond(vars)`.
    Output limit;
    if (const auto* n = std::get_if<int64_t>(&*options.maximum_iterations))
      limit = scalar(static_cast<int32_t>(*n), "maximum_iterations");
    else
      limit = std::get<Output>(*options.maximum_iterations);
    if (ok() && check_input(limit, where + " maximum_iterations").ok() &&
        ops::base_dtype(limit.dtype) != DType::int32)
      fail(Error::invalid_argument, where + ": maximum_iterations must be int32, not " +
                                        ops::dtype_name(limit.dtype));
    if (ok()) record_error(check_input(limit, where + " maximum_iterations"));
    std::vector<Output> vars{scalar(int32_t{0}, "iteration_counter")};
    vars.insert(vars.end(), loop_vars.begin(), loop_vars.end());
    auto rest = [](const std::vector<Output>& v) { return std::vector<Output>(v.begin() + 1, v.end()); };
    auto counted_cond = [&](const std::vector<Output>& v) {
      Output below = less(v[0], limit);
      Output c = cond_fn ? cond_fn(rest(v)) : Output{};
      return logical_and(below, c);
    };
    auto counted_body = [&](const std::vector<Output>& v) {
      std::vector<Output> out{add(v[0], scalar(int32_t{1}))};
      std::vector<Output> next = body_fn ? body_fn(rest(v)) : std::vector<Output>{};
      if (ok() && next.size() != loop_vars.size())
        fail(Error::invalid_argument,
             where + ": the body returns " + std::to_string(next.size()) + " tensors for " +
                 std::to_string(loop_vars.size()) + " loop variables");
      out.insert(out.end(), next.begin(), next.end());
      return out;
    };
    if (ok()) result = build(counted_cond, counted_body, vars);
    if (result.ok()) {
      std::vector<Output> exits(result->begin() + 1, result->end());
      result = Outputs(exits, result->control());
    }
  }
  scopes_.pop_back();
  current_ = outer;
  if (!result.ok()) {
    record_error(result.status());
    return {};
  }
  return std::move(result).value();
}

Outputs GraphBuilder::case_(Output index, const std::vector<BranchFn>& branches,
                            const std::string& name) {
  if (GraphBuilder* t = forward_target()) return t->case_(index, branches, name);
  if (!ok()) return {};
  if (style_ == Style::tf2) return case_tf2(index, branches, name);
  const std::string scope = unique_name(scope_prefix(), name.empty() ? "case" : name);
  const std::string where = "case " + quoted(scope);
  if (Status s = check_input(index, where + " index"); !s.ok()) {
    record_error(s);
    return {};
  }
  if (ops::base_dtype(index.dtype) != DType::int32) {
    fail(Error::invalid_argument, where + ": the branch index " + quoted(index.name()) + " is " +
                                      ops::dtype_name(index.dtype) + ", not int32");
    return {};
  }
  if (branches.empty()) {
    fail(Error::invalid_argument, where + " needs at least one branch");
    return {};
  }
  scopes_.push_back(scope + "/");
  NameScope guard(this);
  if (branches.size() == 1) {
    std::vector<Output> outs = branches[0] ? branches[0]() : std::vector<Output>{};
    return Outputs(outs, outs.empty() ? Output{} : outs.front().control());
  }
  // Branch k runs when index == k; the last also when no other does.
  std::function<Outputs(size_t)> chain = [&](size_t k) -> Outputs {
    Output pred = equal(index, scalar(static_cast<int32_t>(k)));
    BranchFn rest = [&, k]() -> std::vector<Output> {
      if (k + 2 == branches.size()) return branches[k + 1] ? branches[k + 1]() : std::vector<Output>{};
      return chain(k + 1).vector();
    };
    return cond(pred, branches[k], rest, "cond");
  };
  return chain(0);
}

}  // namespace builder
}  // namespace tagflow::graph
