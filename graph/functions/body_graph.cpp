#include "graph/functions/body_graph.hpp"

#include <unordered_map>
#include <unordered_set>

#include "graph/functions/lowering.hpp"
#include "graph/proto/graph_def.pb.h"
#include "graph/validate.hpp"

namespace tagflow::graph {
inline namespace functions {

namespace {

// The body's items that run: those its results and the nodes it runs for
// their effect (nodes_run_for_effect, the rule lowering follows too)
// need; the arguments always.
std::vector<Item> reachable(std::vector<Item> items, const std::vector<std::string>& effects) {
  std::unordered_map<std::string, size_t> by_name;
  for (size_t i = 0; i < items.size(); ++i) by_name.emplace(items[i].spec.node.name, i);
  std::vector<bool> keep(items.size(), false);
  std::vector<size_t> work;
  auto mark = [&](const std::string& name) {
    auto it = by_name.find(name);
    if (it != by_name.end() && !keep[it->second]) {
      keep[it->second] = true;
      work.push_back(it->second);
    }
  };
  for (const std::string& e : effects) mark(e);
  for (Item& item : items)
    if (item.spec.node.op == "_Retval" || item.spec.node.op == "_Arg") mark(item.spec.node.name);
  while (!work.empty()) {
    const Item& item = items[work.back()];
    work.pop_back();
    for (const NamedEndpoint& e : item.spec.inputs) mark(e.node);
    for (const std::string& c : item.spec.control_inputs) mark(c);
  }
  std::vector<Item> out;
  for (size_t i = 0; i < items.size(); ++i)
    if (keep[i]) out.push_back(std::move(items[i]));
  return out;
}

}  // namespace

Expected<BodyGraph> body_graph(const FunctionLibrary& lib, const ops::NameAttrList& f, const Graph& whole,
                               const BodyGraphOptions& options) {
  const tensorflow::FunctionDef* def = lib.find(f.name);
  if (def == nullptr)
    return Status(Error::not_found, "no function '" + f.name + "' in the graph's library");
  const ops::AttrMap attrs = with_signature_defaults(*def, f.attr);
  TF_ASSIGN_OR_RETURN(std::vector<DType> in_types, lib.input_types(*def, attrs));
  TF_ASSIGN_OR_RETURN(std::vector<DType> out_types, lib.output_types(*def, attrs));
  std::unordered_set<std::string> taken;
  for (const auto& n : def->node_def()) taken.insert(n.name());
  auto io_node = [](std::string name, const char* op, DType t, size_t index) {
    Item item;
    item.spec.node.name = std::move(name);
    item.spec.node.op = op;
    item.spec.node.attrs["T"] = t;
    item.spec.node.attrs["index"] = static_cast<int64_t>(index);
    item.spec.node.attrs["_step_io"] = true;
    return item;
  };
  std::vector<NamedEndpoint> args;
  std::vector<Item> items;
  for (size_t i = 0; i < in_types.size(); ++i) {
    Item item;
    if (options.make_arg) {
      item.spec.node = options.make_arg(i, in_types[i]);
    } else {
      item = io_node("_arg/" + std::to_string(i), "_Arg", in_types[i], i);
    }
    while (taken.count(item.spec.node.name) != 0) item.spec.node.name += "_";
    taken.insert(item.spec.node.name);
    args.push_back({item.spec.node.name, 0});
    items.push_back(std::move(item));
  }
  TF_ASSIGN_OR_RETURN(FunctionBody fb,
                      lib.instantiate(*def, attrs, args, [](const std::string& name) { return name; }));
  const std::vector<std::string> effects = options.prune ? nodes_run_for_effect(fb, lib) : std::vector<std::string>{};
  for (NodeSpec& spec : fb.nodes) {
    Item item;
    item.spec = std::move(spec);
    items.push_back(std::move(item));
  }
  if (options.retvals) {
    for (size_t i = 0; i < fb.rets.size(); ++i) {
      const DType t = i < out_types.size() ? out_types[i] : DType::invalid;
      Item ret = io_node("_ret/" + std::to_string(i), "_Retval", t, i);
      ret.spec.inputs.push_back(fb.rets[i]);
      items.push_back(std::move(ret));
    }
  }
  if (options.prune) items = reachable(std::move(items), effects);
  TF_ASSIGN_OR_RETURN(Graph g, build_graph(items, whole));
  if (options.validate) {
    ValidateOptions vo;
    vo.allow_unknown_ops = options.allow_unknown_ops;
    TF_RETURN_IF_ERROR(validate(g, vo));
  }
  BodyGraph out;
  for (const NamedEndpoint& a : args) out.args.push_back(g.find(a.node));
  for (const NamedEndpoint& r : fb.rets) out.rets.push_back({g.find(r.node), r.port});
  out.control_rets = fb.control_rets;
  out.stateful = def->signature().is_stateful();
  out.graph = std::move(g);
  out.num_args = static_cast<int>(in_types.size());
  out.num_rets = static_cast<int>(fb.rets.size());
  return out;
}

}  // namespace functions
}  // namespace tagflow::graph
