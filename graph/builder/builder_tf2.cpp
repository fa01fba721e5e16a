// GraphBuilder's TensorFlow 2 style: cond(), while_loop() and case_() as
// StatelessIf/If, StatelessWhile/While and StatelessCase/Case nodes over
// library functions, each branch or body built by a function builder of its
// own (nodes made on the outer builder while it runs are forwarded there)
// and written with graph/function_def_writer. Values of enclosing builders
// used in a function are captured as tf.function captures them: an argument
// of every function of the construct, an extra input of its node.
#include <cctype>
#include <set>

#include "graph/builder/builder.hpp"
#include "graph/builder/builder_context.hpp"
#include "graph/functions/function_def_writer.hpp"
#include "graph/proto/graph_def.pb.h"

namespace tagflow::graph {
inline namespace builder {

namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

using CaptureKey = std::tuple<const GraphBuilder*, NodeId, int>;

CaptureKey key_of(const Output& x) { return {x.builder, x.node, x.port}; }

std::vector<DType> dtypes_of(const std::vector<Output>& outs) {
  std::vector<DType> types;
  for (const Output& x : outs) types.push_back(ops::base_dtype(x.dtype));
  return types;
}

std::string dtype_list(const std::vector<DType>& types) {
  std::string s = "(";
  for (size_t i = 0; i < types.size(); ++i) s += (i ? ", " : "") + ops::dtype_name(types[i]);
  return s + ")";
}

}  // namespace

struct GraphBuilder::FunctionBody {
  GraphBuilder* fb = nullptr;
  std::vector<Output> args;     // the explicit arguments (loop variables)
  std::vector<Output> results;  // Outputs of fb
};

GraphBuilder* GraphBuilder::forward_target() const {
  GraphBuilder* t = active_;
  while (t != nullptr && t->active_ != nullptr) t = t->active_;
  return t;
}

Expected<Output> GraphBuilder::resolve(const Output& x) {
  if (!x.valid() || x.builder == this || enclosing_ == nullptr) return x;
  bool outside = false;
  for (const GraphBuilder* b = enclosing_; b != nullptr && !outside; b = b->enclosing_) outside = b == x.builder;
  if (!outside) return x;  // check_input names the mistake
  if (x.port == kControlPort)
    return Status(Error::invalid_argument,
                  "a control input from " + quoted(x.node_name()) +
                      ", made outside the function being built; a function can use outside values, not "
                      "outside nodes as control inputs");
  const CaptureKey key = key_of(x);
  if (auto it = fn_captures_.find(key); it != fn_captures_.end()) return it->second;
  ops::AttrMap attrs{{"dtype", ops::base_dtype(x.dtype)}, {"shape", ops::PartialShape{true, {}}}};
  TF_ASSIGN_OR_RETURN(NodeId id, add_raw(unique_name("", "capture"), "Placeholder", {}, std::move(attrs), 0));
  const Output arg = make_output(id, 0);
  fn_captures_.emplace(key, arg);
  capture_order_.push_back(x);
  return arg;
}

std::string GraphBuilder::new_function_name(const std::string& base) {
  GraphBuilder* root = this;
  while (root->enclosing_ != nullptr) root = root->enclosing_;
  std::string clean = base;
  for (char& c : clean)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  std::string name;
  do {
    name = clean + "_" + std::to_string(root->function_counter_++);
  } while (root->function_names_.count(name) != 0 || graph_.find_function(name) != nullptr ||
           root->graph_.find_function(name) != nullptr);
  root->function_names_.insert(name);
  return name;
}

GraphBuilder::FunctionBody GraphBuilder::run_function(
    const std::vector<DType>& arg_types, const std::function<std::vector<Output>(const std::vector<Output>&)>& fn) {
  function_builders_.push_back(std::make_unique<GraphBuilder>(style_, registry_));
  FunctionBody body;
  body.fb = function_builders_.back().get();
  GraphBuilder& fb = *body.fb;
  fb.enclosing_ = this;
  fb.graph_.mutable_library() = graph_.library();
  for (size_t i = 0; i < arg_types.size(); ++i)
    body.args.push_back(fb.placeholder(arg_types[i], {true, {}}, "arg" + std::to_string(i)));
  active_ = &fb;
  std::vector<Output> outs = fn(body.args);
  active_ = nullptr;
  // Functions the body defined (nested constructs) join this library.
  graph_.mutable_library() = fb.graph_.library();
  for (size_t i = 0; i < outs.size() && fb.ok(); ++i) {
    auto r = fb.resolve(outs[i]);
    Status s = r.ok() ? fb.check_input(*r, "result " + std::to_string(i)) : r.status();
    fb.record_error(s);
    if (s.ok()) body.results.push_back(*r);
  }
  return body;
}

Status GraphBuilder::write_function(GraphBuilder& fb, const std::string& name, const std::vector<Output>& args,
                                    const std::vector<Output>& rets) {
  auto g = fb.finish();
  if (!g.ok()) return g.status();
  FunctionDefSpec spec;
  spec.name = name;
  for (const Output& a : args) spec.args.push_back(a.node);
  for (const Output& r : rets) spec.rets.push_back(r.endpoint());
  for (NodeId id = 0; id < g->num_nodes(); ++id) {
    const Node& n = g->node(id);
    if (n.def != nullptr && n.def->is_stateful()) {
      spec.control_rets.push_back(id);
      spec.stateful = true;
    }
  }
  auto f = function_def_from_graph(*g, spec);
  if (!f.ok()) return f.status().with_prefix("function " + quoted(name) + ": ");
  *graph_.mutable_library().add_function() = std::move(f).value();
  return ok_status();
}

namespace {

// The outside values the functions of one construct captured (their
// capture orders), each once, in order: the extra inputs of its node.
std::vector<Output> union_of_captures(const std::vector<std::vector<Output>>& orders) {
  std::vector<Output> all;
  std::set<CaptureKey> seen;
  for (const auto& order : orders)
    for (const Output& x : order)
      if (seen.insert(key_of(x)).second) all.push_back(x);
  return all;
}

bool is_stateful_function(const Graph& g, const std::string& name) {
  for (const auto& f : g.library().function())
    if (f.signature().name() == name) return f.signature().is_stateful();
  return false;
}

}  // namespace

Outputs GraphBuilder::cond_tf2(Output pred, const BranchFn& true_fn, const BranchFn& false_fn,
                               const std::string& name) {
  const std::string node = unique_name(scope_prefix(), name.empty() ? "cond" : name);
  const std::string where = "cond " + quoted(node);
  auto build = [&]() -> Expected<Outputs> {
    TF_ASSIGN_OR_RETURN(Output p, resolve(pred));
    TF_RETURN_IF_ERROR(check_input(p, where + " predicate"));
    if (ops::base_dtype(p.dtype) != DType::boolean)
      return Status(Error::invalid_argument, where + ": the predicate " + quoted(p.name()) + " is " +
                                                 ops::dtype_name(p.dtype) + ", not bool");
    std::vector<FunctionBody> bodies;
    for (const auto& [fn, which] : {std::pair{&true_fn, "true"}, std::pair{&false_fn, "false"}}) {
      const BranchFn& branch = *fn;
      bodies.push_back(run_function({}, [&branch](const std::vector<Output>&) {
        return branch ? branch() : std::vector<Output>{};
      }));
      if (!bodies.back().fb->ok())
        return bodies.back().fb->status().with_prefix(where + " (" + which + " branch): ");
      if (!ok()) return status_;
    }
    const std::vector<DType> tout = dtypes_of(bodies[0].results);
    const std::vector<DType> fout = dtypes_of(bodies[1].results);
    if (tout.size() != fout.size())
      return Status(Error::invalid_argument, where + ": the true branch returns " + std::to_string(tout.size()) +
                                                 " tensors but the false branch " + std::to_string(fout.size()));
    if (tout != fout)
      return Status(Error::invalid_argument, where + ": the branches return different dtypes: true " +
                                                 dtype_list(tout) + ", false " + dtype_list(fout));
    const std::vector<Output> captured =
        union_of_captures({bodies[0].fb->capture_order_, bodies[1].fb->capture_order_});
    std::vector<std::string> names;
    const char* suffixes[] = {"_true", "_false"};
    for (size_t i = 0; i < 2; ++i) {
      std::vector<Output> args;
      for (const Output& x : captured) {
        TF_ASSIGN_OR_RETURN(Output a, bodies[i].fb->resolve(x));
        args.push_back(a);
      }
      names.push_back(new_function_name(node + suffixes[i]));
      TF_RETURN_IF_ERROR(write_function(*bodies[i].fb, names.back(), args, bodies[i].results).with_prefix(where + ": "));
    }
    const bool stateful = is_stateful_function(graph_, names[0]) || is_stateful_function(graph_, names[1]);
    std::vector<Output> inputs{p};
    inputs.insert(inputs.end(), captured.begin(), captured.end());
    Outputs out = add_op(node, stateful ? "If" : "StatelessIf", inputs,
                         {{"Tout", type_list_attr(tout)}, {"then_branch", func_attr(names[0])}, {"else_branch", func_attr(names[1])}},
                         {});
    if (!ok()) return status_;
    // Branches that return nothing: the If node, as a control handle.
    return Outputs(out.vector(), out.control());
  };
  auto result = build();
  if (!result.ok()) {
    record_error(result.status());
    return {};
  }
  return std::move(result).value();
}

Expected<Outputs> GraphBuilder::while_tf2(const std::string& node, const LoopCondFn& cond_fn,
                                          const LoopBodyFn& body_fn, const std::vector<Output>& loop_vars,
                                          int64_t parallel_iterations) {
  const std::string where = "while loop " + quoted(node);
  if (loop_vars.empty()) return Status(Error::invalid_argument, where + " needs at least one loop variable");
  if (parallel_iterations < 1)
    return Status(Error::invalid_argument, where + ": parallel_iterations must be at least 1, not " +
                                               std::to_string(parallel_iterations));
  std::vector<Output> vars;
  for (size_t i = 0; i < loop_vars.size(); ++i) {
    TF_ASSIGN_OR_RETURN(Output v, resolve(loop_vars[i]));
    TF_RETURN_IF_ERROR(check_input(v, where + " loop variable " + std::to_string(i)));
    vars.push_back(v);
  }
  const std::vector<DType> types = dtypes_of(vars);
  FunctionBody c = run_function(types, [&cond_fn](const std::vector<Output>& v) {
    return std::vector<Output>{cond_fn ? cond_fn(v) : Output{}};
  });
  if (!c.fb->ok()) return c.fb->status().with_prefix(where + " (condition): ");
  if (!ok()) return status_;
  if (ops::base_dtype(c.results[0].dtype) != DType::boolean)
    return Status(Error::invalid_argument, where + ": the condition returns " +
                                               ops::dtype_name(c.results[0].dtype) + ", not bool");
  FunctionBody b = run_function(types, [&body_fn](const std::vector<Output>& v) {
    return body_fn ? body_fn(v) : std::vector<Output>{};
  });
  if (!b.fb->ok()) return b.fb->status().with_prefix(where + " (body): ");
  if (!ok()) return status_;
  if (b.results.size() != vars.size())
    return Status(Error::invalid_argument, where + ": the body returns " + std::to_string(b.results.size()) +
                                               " tensors for " + std::to_string(vars.size()) + " loop variables");
  for (size_t i = 0; i < vars.size(); ++i)
    if (ops::base_dtype(b.results[i].dtype) != types[i])
      return Status(Error::invalid_argument,
                    where + ": the body changes loop variable " + std::to_string(i) + " from " +
                        ops::dtype_name(types[i]) + " to " + ops::dtype_name(ops::base_dtype(b.results[i].dtype)));
  // Captured values are loop variables the body passes on unchanged.
  const std::vector<Output> captured = union_of_captures({c.fb->capture_order_, b.fb->capture_order_});
  std::vector<Output> cond_args = c.args, body_args = b.args, body_rets = b.results;
  for (const Output& x : captured) {
    TF_ASSIGN_OR_RETURN(Output ca, c.fb->resolve(x));
    TF_ASSIGN_OR_RETURN(Output ba, b.fb->resolve(x));
    cond_args.push_back(ca);
    body_args.push_back(ba);
    body_rets.push_back(ba);
  }
  const std::string cond_name = new_function_name(node + "_cond");
  const std::string body_name = new_function_name(node + "_body");
  TF_RETURN_IF_ERROR(write_function(*c.fb, cond_name, cond_args, c.results).with_prefix(where + ": "));
  TF_RETURN_IF_ERROR(write_function(*b.fb, body_name, body_args, body_rets).with_prefix(where + ": "));
  const bool stateful = is_stateful_function(graph_, cond_name) || is_stateful_function(graph_, body_name);
  std::vector<Output> inputs = vars;
  inputs.insert(inputs.end(), captured.begin(), captured.end());
  Outputs out = add_op(node, stateful ? "While" : "StatelessWhile", inputs,
                       {{"cond", func_attr(cond_name)},
                        {"body", func_attr(body_name)},
                        {"parallel_iterations", parallel_iterations}},
                       {});
  if (!ok()) return status_;
  std::vector<Output> results(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(vars.size()));
  return Outputs(results, out.control());
}

Outputs GraphBuilder::case_tf2(Output index, const std::vector<BranchFn>& branches, const std::string& name) {
  const std::string node = unique_name(scope_prefix(), name.empty() ? "case" : name);
  const std::string where = "case " + quoted(node);
  auto build = [&]() -> Expected<Outputs> {
    TF_ASSIGN_OR_RETURN(Output k, resolve(index));
    TF_RETURN_IF_ERROR(check_input(k, where + " index"));
    if (ops::base_dtype(k.dtype) != DType::int32)
      return Status(Error::invalid_argument, where + ": the branch index " + quoted(k.name()) + " is " +
                                                 ops::dtype_name(k.dtype) + ", not int32");
    if (branches.empty()) return Status(Error::invalid_argument, where + " needs at least one branch");
    std::vector<FunctionBody> bodies;
    std::vector<std::vector<Output>> orders;
    for (size_t i = 0; i < branches.size(); ++i) {
      const BranchFn& branch = branches[i];
      bodies.push_back(run_function({}, [&branch](const std::vector<Output>&) {
        return branch ? branch() : std::vector<Output>{};
      }));
      if (!bodies.back().fb->ok())
        return bodies.back().fb->status().with_prefix(where + " (branch " + std::to_string(i) + "): ");
      if (!ok()) return status_;
      const std::vector<DType> first = dtypes_of(bodies[0].results), these = dtypes_of(bodies[i].results);
      if (these != first)
        return Status(Error::invalid_argument, where + ": branch " + std::to_string(i) + " returns " +
                                                   dtype_list(these) + " but branch 0 " + dtype_list(first));
      orders.push_back(bodies[i].fb->capture_order_);
    }
    const std::vector<Output> captured = union_of_captures(orders);
    ops::AttrList fns;
    bool stateful = false;
    for (size_t i = 0; i < bodies.size(); ++i) {
      std::vector<Output> args;
      for (const Output& x : captured) {
        TF_ASSIGN_OR_RETURN(Output a, bodies[i].fb->resolve(x));
        args.push_back(a);
      }
      const std::string fname = new_function_name(node + "_branch" + std::to_string(i));
      TF_RETURN_IF_ERROR(write_function(*bodies[i].fb, fname, args, bodies[i].results).with_prefix(where + ": "));
      stateful = stateful || is_stateful_function(graph_, fname);
      fns.func.push_back(func_attr(fname));
    }
    std::vector<Output> inputs{k};
    inputs.insert(inputs.end(), captured.begin(), captured.end());
    Outputs out = add_op(node, stateful ? "Case" : "StatelessCase", inputs,
                         {{"Tout", type_list_attr(dtypes_of(bodies[0].results))}, {"branches", fns}}, {});
    if (!ok()) return status_;
    return Outputs(out.vector(), out.control());
  };
  auto result = build();
  if (!result.ok()) {
    record_error(result.status());
    return {};
  }
  return std::move(result).value();
}

}  // namespace builder
}  // namespace tagflow::graph
