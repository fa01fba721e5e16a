#include "graph/functions/function_def_writer.hpp"

#include <set>
#include <unordered_map>

#include "graph/functions/function_library.hpp"
#include "graph/io/tensor_proto.hpp"
#include "graph/proto/graph_def.pb.h"

namespace tagflow::graph {
inline namespace functions {

namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// TensorFlow's rule for argument names: [a-z][a-z0-9_]*.
bool valid_arg_name(const std::string& s) {
  if (s.empty() || s[0] < 'a' || s[0] > 'z') return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

tensorflow::DataType proto_dtype(DType t) { return static_cast<tensorflow::DataType>(static_cast<int>(t)); }

// The dtype an argument node gives: a Placeholder's dtype, an _Arg's T,
// else its validated output type.
Expected<DType> arg_dtype(const Node& n) {
  for (const char* key : {"dtype", "T"})
    if (const DType* t = n.attr<DType>(key)) return ops::base_dtype(*t);
  if (n.output_types.size() == 1) return ops::base_dtype(n.output_types[0]);
  return Status(Error::invalid_argument, "argument node " + quoted(n.name) + " (" + n.op + ") has no dtype");
}

// Writes a body's references to node outputs as TensorFlow does.
class Namer {
 public:
  Namer(const Graph& g, const FunctionLibrary& lib, const std::string& where) : g_(g), lib_(lib), where_(where) {}

  void add_arg(NodeId id, std::string name) { args_.emplace(id, std::move(name)); }
  bool is_arg(NodeId id) const { return args_.count(id) != 0; }

  Expected<std::string> name(const Endpoint& e) {
    auto arg = args_.find(e.node);
    if (arg != args_.end()) {
      if (e.port != 0)
        return Status(Error::invalid_argument,
                      where_ + "argument node " + quoted(g_.node(e.node).name) + " has one output, not port " +
                          std::to_string(e.port));
      return arg->second;
    }
    const Node& n = g_.node(e.node);
    auto layout = layouts_.find(e.node);
    if (layout == layouts_.end()) {
      TF_ASSIGN_OR_RETURN(std::optional<OutputLayout> l, output_layout(n, lib_, where_));
      if (!l)
        return Status(Error::not_found, where_ + "node " + quoted(n.name) + ": unknown op " + quoted(n.op) +
                                            " (its outputs cannot be named)");
      layout = layouts_.emplace(e.node, std::move(*l)).first;
    }
    int port = e.port;
    for (const auto& [arg_name, count] : layout->second) {
      if (port < count) return n.name + ":" + arg_name + ":" + std::to_string(port);
      port -= count;
    }
    return Status(Error::invalid_argument,
                  where_ + "node " + quoted(n.name) + " (" + n.op + ") has no output " + std::to_string(e.port));
  }

 private:
  const Graph& g_;
  const FunctionLibrary& lib_;
  std::string where_;
  std::unordered_map<NodeId, std::string> args_;
  std::unordered_map<NodeId, OutputLayout> layouts_;
};

}  // namespace

Expected<tensorflow::FunctionDef> function_def_from_graph(const Graph& g, const FunctionDefSpec& spec) {
  const std::string where = "function " + quoted(spec.name) + ": ";
  if (!spec.arg_names.empty() && spec.arg_names.size() != spec.args.size())
    return Status(Error::invalid_argument, where + "gives " + std::to_string(spec.arg_names.size()) +
                                               " argument names for " + std::to_string(spec.args.size()) +
                                               " arguments");
  if (!spec.ret_names.empty() && spec.ret_names.size() != spec.rets.size())
    return Status(Error::invalid_argument, where + "gives " + std::to_string(spec.ret_names.size()) +
                                               " result names for " + std::to_string(spec.rets.size()) + " results");
  FunctionLibrary lib(g.library());
  Namer namer(g, lib, where);
  tensorflow::FunctionDef f;
  auto* sig = f.mutable_signature();
  sig->set_name(spec.name);
  sig->set_is_stateful(spec.stateful);
  std::set<std::string> used;
  for (size_t i = 0; i < spec.args.size(); ++i) {
    const NodeId id = spec.args[i];
    const Node& n = g.node(id);
    if (!n.inputs.empty() || !n.control_inputs.empty())
      return Status(Error::invalid_argument, where + "argument node " + quoted(n.name) + " has inputs");
    const std::string name = spec.arg_names.empty() ? "arg" + std::to_string(i) : spec.arg_names[i];
    if (!valid_arg_name(name) || !used.insert(name).second)
      return Status(Error::invalid_argument,
                    where + "argument name " + quoted(name) + " is not a fresh [a-z][a-z0-9_]* name");
    TF_ASSIGN_OR_RETURN(DType t, arg_dtype(n));
    auto* a = sig->add_input_arg();
    a->set_name(name);
    a->set_type(proto_dtype(t));
    namer.add_arg(id, name);
  }
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    if (namer.is_arg(id)) continue;
    const Node& n = g.node(id);
    auto* def = f.add_node_def();
    def->set_name(n.name);
    def->set_op(n.op);
    def->set_device(n.device);
    for (const Endpoint& e : n.inputs) {
      TF_ASSIGN_OR_RETURN(std::string in, namer.name(e));
      def->add_input(std::move(in));
    }
    for (NodeId c : n.control_inputs) {
      if (namer.is_arg(c))
        return Status(Error::invalid_argument, where + "node " + quoted(n.name) + " has a control input from argument " +
                                                   quoted(g.node(c).name) + " (a function body cannot say that)");
      def->add_input("^" + g.node(c).name);
    }
    auto& attrs = *def->mutable_attr();
    for (const auto& [key, value] : n.attrs) attr_to_proto(value, &attrs[key]);
  }
  for (size_t i = 0; i < spec.rets.size(); ++i) {
    const Endpoint& e = spec.rets[i];
    const Node& n = g.node(e.node);
    const std::string name = spec.ret_names.empty() ? "output" + std::to_string(i) : spec.ret_names[i];
    if (!valid_arg_name(name) || !used.insert(name).second)
      return Status(Error::invalid_argument,
                    where + "result name " + quoted(name) + " is not a fresh [a-z][a-z0-9_]* name");
    DType t = DType::invalid;
    if (namer.is_arg(e.node)) {
      TF_ASSIGN_OR_RETURN(t, arg_dtype(n));
    } else if (e.port >= 0 && static_cast<size_t>(e.port) < n.output_types.size()) {
      t = ops::base_dtype(n.output_types[static_cast<size_t>(e.port)]);
    } else {
      return Status(Error::invalid_argument, where + "result " + std::to_string(i) + " " + quoted(g.endpoint_name(e)) +
                                                 ": the graph is not validated or has no such output");
    }
    auto* a = sig->add_output_arg();
    a->set_name(name);
    a->set_type(proto_dtype(t));
    TF_ASSIGN_OR_RETURN(std::string ref, namer.name(e));
    (*f.mutable_ret())[name] = std::move(ref);
  }
  for (NodeId id : spec.control_rets) {
    const Node& n = g.node(id);
    if (namer.is_arg(id))
      return Status(Error::invalid_argument, where + "control result " + quoted(n.name) + " is an argument");
    sig->add_control_output(n.name);
    (*f.mutable_control_ret())[n.name] = n.name;
  }
  return f;
}

}  // namespace functions
}  // namespace tagflow::graph
