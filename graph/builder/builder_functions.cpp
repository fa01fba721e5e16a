// GraphBuilder: TensorFlow 2 library functions and the functional ops that
// call them (If/StatelessIf, While/StatelessWhile, For, PartitionedCall).
// A function is built in a builder of its own and written into the graph's
// library with graph/function_def_writer.
#include <algorithm>

#include "graph/builder/builder.hpp"
#include "graph/builder/builder_context.hpp"
#include "graph/functions/function_def_writer.hpp"
#include "graph/proto/graph_def.pb.h"

namespace tagflow::graph {
inline namespace builder {

namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::vector<DType> arg_types(const google::protobuf::RepeatedPtrField<tensorflow::OpDef::ArgDef>& args) {
  std::vector<DType> types;
  for (const auto& a : args) types.push_back(static_cast<DType>(static_cast<int>(a.type())));
  return types;
}

}  // namespace

std::string GraphBuilder::function(const std::string& name, const std::vector<DType>& types,
                                   const FunctionBodyFn& body) {
  if (GraphBuilder* fb = forward_target()) return fb->function(name, types, body);
  if (!ok()) return {};
  std::string unique = name.empty() ? "function" : name;
  for (int k = 1; graph_.find_function(unique) != nullptr; ++k) unique = name + "_" + std::to_string(k);
  const std::string where = "function " + quoted(unique) + ": ";
  GraphBuilder inner(style_, registry_);
  inner.graph_.mutable_library() = graph_.library();
  std::vector<Output> args;
  for (size_t i = 0; i < types.size(); ++i)
    args.push_back(inner.placeholder(types[i], {true, {}}, "arg" + std::to_string(i)));
  std::vector<Output> results = body ? body(inner, args) : std::vector<Output>{};
  for (size_t i = 0; i < results.size() && inner.ok(); ++i)
    inner.record_error(inner.check_input(results[i], "result " + std::to_string(i)));
  auto g = inner.finish();
  if (!g.ok()) {
    record_error(g.status().with_prefix(where));
    return {};
  }
  FunctionDefSpec spec;
  spec.name = unique;
  for (const Output& a : args) spec.args.push_back(a.node);
  for (const Output& r : results) spec.rets.push_back(r.endpoint());
  for (NodeId id = 0; id < g->num_nodes(); ++id) {
    const Node& n = g->node(id);
    const bool stateful = n.def != nullptr ? n.def->is_stateful() : false;
    if (stateful) spec.control_rets.push_back(id);
    spec.stateful = spec.stateful || stateful;
  }
  auto f = function_def_from_graph(*g, spec);
  if (!f.ok()) {
    record_error(f.status());
    return {};
  }
  // The body's own functions, then this one.
  graph_.mutable_library() = g->library();
  *graph_.mutable_library().add_function() = std::move(f).value();
  return unique;
}

Outputs GraphBuilder::call(const std::string& function_name, const std::vector<Output>& args,
                           const NodeOptions& options) {
  if (GraphBuilder* fb = forward_target()) return fb->call(function_name, args, options);
  if (!ok()) return {};
  const tensorflow::FunctionDef* f = graph_.find_function(function_name);
  if (f == nullptr) {
    fail(Error::not_found, "call: no function " + quoted(function_name) + " in the library");
    return {};
  }
  ops::AttrMap attrs{{"Tout", type_list_attr(arg_types(f->signature().output_arg()))}, {"f", func_attr(function_name)}};
  const bool stateful = f->signature().is_stateful();
  return op(stateful ? "StatefulPartitionedCall" : "PartitionedCall", args, std::move(attrs), options);
}

Outputs GraphBuilder::functional_if(Output pred, const std::string& then_fn, const std::string& else_fn,
                                    const std::vector<Output>& args, const NodeOptions& options) {
  if (GraphBuilder* fb = forward_target()) return fb->functional_if(pred, then_fn, else_fn, args, options);
  if (!ok()) return {};
  const tensorflow::FunctionDef* t = graph_.find_function(then_fn);
  const tensorflow::FunctionDef* e = graph_.find_function(else_fn);
  for (const auto& [f, role, fname] : {std::tuple{t, "then", &then_fn}, std::tuple{e, "else", &else_fn}})
    if (f == nullptr) {
      fail(Error::not_found, std::string("If: no ") + role + " function " + quoted(*fname) + " in the library");
      return {};
    }
  const std::vector<DType> tout = arg_types(t->signature().output_arg());
  if (arg_types(e->signature().output_arg()) != tout) {
    fail(Error::invalid_argument, "If: then function " + quoted(then_fn) + " and else function " + quoted(else_fn) +
                                      " return different dtypes");
    return {};
  }
  const bool stateful = t->signature().is_stateful() || e->signature().is_stateful();
  std::vector<Output> in{pred};
  in.insert(in.end(), args.begin(), args.end());
  return op(stateful ? "If" : "StatelessIf", in,
            {{"Tout", type_list_attr(tout)}, {"then_branch", func_attr(then_fn)}, {"else_branch", func_attr(else_fn)}}, options);
}

Outputs GraphBuilder::functional_case(Output index, const std::vector<std::string>& branch_fns,
                                      const std::vector<Output>& args, const NodeOptions& options) {
  if (GraphBuilder* fb = forward_target()) return fb->functional_case(index, branch_fns, args, options);
  if (!ok()) return {};
  if (branch_fns.empty()) {
    fail(Error::invalid_argument, "Case: no branch functions");
    return {};
  }
  ops::AttrList branches;
  std::vector<DType> tout;
  bool stateful = false;
  for (size_t b = 0; b < branch_fns.size(); ++b) {
    const tensorflow::FunctionDef* f = graph_.find_function(branch_fns[b]);
    if (f == nullptr) {
      fail(Error::not_found, "Case: no function " + quoted(branch_fns[b]) + " in the library (branch " +
                                 std::to_string(b) + ")");
      return {};
    }
    const std::vector<DType> types = arg_types(f->signature().output_arg());
    if (b == 0) tout = types;
    if (types != tout) {
      fail(Error::invalid_argument, "Case: branch " + std::to_string(b) + " " + quoted(branch_fns[b]) +
                                        " returns other dtypes than branch 0 " + quoted(branch_fns[0]));
      return {};
    }
    stateful = stateful || f->signature().is_stateful();
    branches.func.push_back(func_attr(branch_fns[b]));
  }
  std::vector<Output> in{index};
  in.insert(in.end(), args.begin(), args.end());
  return op(stateful ? "Case" : "StatelessCase", in, {{"Tout", type_list_attr(tout)}, {"branches", branches}}, options);
}

Outputs GraphBuilder::functional_while(const std::string& cond_fn, const std::string& body_fn,
                                       const std::vector<Output>& vars, int64_t parallel_iterations,
                                       const NodeOptions& options) {
  if (GraphBuilder* fb = forward_target()) return fb->functional_while(cond_fn, body_fn, vars, parallel_iterations, options);
  if (!ok()) return {};
  const tensorflow::FunctionDef* c = graph_.find_function(cond_fn);
  const tensorflow::FunctionDef* b = graph_.find_function(body_fn);
  if (c == nullptr || b == nullptr) {
    fail(Error::not_found, "While: no function " + quoted(c == nullptr ? cond_fn : body_fn) + " in the library");
    return {};
  }
  const bool stateful = c->signature().is_stateful() || b->signature().is_stateful();
  return op(stateful ? "While" : "StatelessWhile", vars,
            {{"cond", func_attr(cond_fn)}, {"body", func_attr(body_fn)}, {"parallel_iterations", parallel_iterations}},
            options);
}

Outputs GraphBuilder::for_loop(Output start, Output limit, Output delta, const std::string& body_fn,
                               const std::vector<Output>& vars, const NodeOptions& options) {
  if (GraphBuilder* fb = forward_target()) return fb->for_loop(start, limit, delta, body_fn, vars, options);
  if (!ok()) return {};
  if (graph_.find_function(body_fn) == nullptr) {
    fail(Error::not_found, "For: no body function " + quoted(body_fn) + " in the library");
    return {};
  }
  std::vector<Output> in{start, limit, delta};
  in.insert(in.end(), vars.begin(), vars.end());
  return op("For", in, {{"body", func_attr(body_fn)}}, options);
}

}  // namespace builder
}  // namespace tagflow::graph
