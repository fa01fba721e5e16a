#include "graph/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <functional>
#include <set>

#include "graph/functions/function_library.hpp"
#include "graph/functions/implementation_selection.hpp"
#include "graph/proto/graph_def.pb.h"
#include "graph/step_graph.hpp"

namespace tagflow::graph {

namespace {

bool is_role(const Node& n, ops::OpRole role) { return n.def != nullptr && n.def->role() == role; }

// True if a value reaching `enter` passes through a cond's Switch on its
// way from the frame's parent: walk back from the Enter's inputs within the
// parent frame, stopping at Merges (a Merge's output is after the cond)
// and at loop Switches (those whose predicate is a LoopCond).
bool enter_is_in_cond(const Graph& g, const ControlFlowInfo& cf, NodeId enter) {
  FrameId outer = cf.frame_of[static_cast<size_t>(enter)];
  std::vector<bool> seen(static_cast<size_t>(g.num_nodes()), false);
  std::deque<NodeId> queue{enter};
  while (!queue.empty()) {
    NodeId id = queue.front();
    queue.pop_front();
    const Node& n = g.node(id);
    auto visit = [&](NodeId src) {
      if (seen[static_cast<size_t>(src)] || cf.frame_of[static_cast<size_t>(src)] != outer) return;
      seen[static_cast<size_t>(src)] = true;
      queue.push_back(src);
    };
    if (id != enter) {
      if (is_role(n, ops::OpRole::merge)) continue;
      if (is_role(n, ops::OpRole::switch_op) || is_role(n, ops::OpRole::switch_n)) {
        bool loop_switch = n.inputs.size() > 1 &&
                           is_role(g.node(n.inputs[1].node), ops::OpRole::loop_cond);
        if (!loop_switch) return true;
        continue;
      }
    }
    for (const Endpoint& e : n.inputs) visit(e.node);
    for (NodeId c : n.control_inputs) visit(c);
  }
  return false;
}

void add_frames(const Graph& g, const ControlFlowInfo& cf, FrameId id, GraphSummary& out) {
  const FrameInfo& f = cf.frames[static_cast<size_t>(id)];
  if (id != kRootFrame) {
    FrameSummary s;
    s.name = f.name;
    s.depth = f.depth;
    s.pivot = f.pivot == kNoNode ? "" : g.node(f.pivot).name;
    s.parallel_iterations = f.parallel_iterations;
    s.enters = static_cast<int>(f.enters.size());
    s.exits = static_cast<int>(f.exits.size());
    s.nodes = static_cast<int>(f.nodes.size());
    s.gradient = f.name.find("gradients") != std::string::npos;
    s.in_cond = std::any_of(f.enters.begin(), f.enters.end(),
                            [&](NodeId e) { return enter_is_in_cond(g, cf, e); });
    out.frames.push_back(std::move(s));
  }
  for (FrameId child : f.children) add_frames(g, cf, child, out);
}

// The functions one call site names: its op if that is a function, and
// every func attr (call targets, branches, bodies).
void node_callees(const FunctionLibrary& lib, const Node& n, const std::function<void(const std::string&)>& visit) {
  if (lib.find(n.op) != nullptr) visit(n.op);
  for (const auto& [key, value] : n.attrs) {
    if (const auto* f = value.get_if<ops::NameAttrList>()) visit(f->name);
    if (const auto* list = value.get_if<ops::AttrList>())
      for (const ops::NameAttrList& f : list->func) visit(f.name);
  }
}

void body_callees(const FunctionLibrary& lib, const tensorflow::NodeDef& n,
                  const std::function<void(const std::string&)>& visit) {
  if (lib.find(n.op()) != nullptr) visit(n.op());
  for (const auto& [key, value] : n.attr()) {
    if (value.has_func()) visit(value.func().name());
    if (value.has_list())
      for (const auto& f : value.list().func()) visit(f.name());
  }
}

// The library functions the nodes `roots` call, and those they call, ...
std::set<std::string> reachable_functions(const Graph& g, const FunctionLibrary& lib,
                                          const std::vector<NodeId>& roots) {
  std::set<std::string> seen;
  std::vector<std::string> stack;
  auto visit = [&](const std::string& name) {
    if (lib.find(name) != nullptr && seen.insert(name).second) stack.push_back(name);
  };
  for (NodeId id : roots) node_callees(lib, g.node(id), visit);
  while (!stack.empty()) {
    const tensorflow::FunctionDef* f = lib.find(stack.back());
    stack.pop_back();
    for (const auto& n : f->node_def()) body_callees(lib, n, visit);
  }
  return seen;
}

// The nodes `fetches` need, backwards over every edge.
Expected<std::vector<NodeId>> needed_by(const Graph& g, const std::vector<std::string>& fetches) {
  std::vector<bool> keep(static_cast<size_t>(g.num_nodes()), false);
  std::vector<NodeId> stack, out;
  auto visit = [&](NodeId id) {
    if (keep[static_cast<size_t>(id)]) return;
    keep[static_cast<size_t>(id)] = true;
    stack.push_back(id);
    out.push_back(id);
  };
  for (const std::string& f : fetches) {
    auto e = parse_endpoint(g, f);
    if (!e.ok()) return e.status().with_prefix("--fetch " + ops::abbreviate(f) + ": ");
    visit(e->node);
  }
  while (!stack.empty()) {
    const Node& n = g.node(stack.back());
    stack.pop_back();
    for (const Endpoint& e : n.inputs) visit(e.node);
    for (NodeId c : n.control_inputs) visit(c);
  }
  return out;
}

bool has_no_kernel(const std::string& op, const FunctionLibrary& lib) {
  if (lib.find(op) != nullptr) return false;
  const ops::OpDef* def = ops::OpRegistry::global().find(op);
  return def == nullptr || (!def->has_kernel() && def->role() == ops::OpRole::ordinary);
}

// The functions with ops that have no kernel, and which a run reaches.
Status summarize_functions(const Graph& g, const std::vector<std::string>& fetches, GraphSummary& s) {
  Graph selected = g;  // calls as a session makes them
  select_implementations(&selected);
  const FunctionLibrary lib(selected.library());
  std::vector<NodeId> all(static_cast<size_t>(g.num_nodes()));
  for (NodeId id = 0; id < g.num_nodes(); ++id) all[static_cast<size_t>(id)] = id;
  const std::set<std::string> reachable = reachable_functions(selected, lib, all);
  std::set<std::string> from_fetches;
  if (!fetches.empty()) {
    TF_ASSIGN_OR_RETURN(std::vector<NodeId> needed, needed_by(selected, fetches));
    from_fetches = reachable_functions(selected, lib, needed);
    s.fetches = fetches;
  }
  s.num_reachable_functions = static_cast<int>(reachable.size());
  s.num_reachable_from_fetches = static_cast<int>(from_fetches.size());
  for (const auto& f : selected.library().function()) {
    std::map<std::string, int> missing;
    for (const auto& n : f.node_def())
      if (has_no_kernel(n.op(), lib)) ++missing[n.op()];
    if (missing.empty()) continue;
    FunctionSummary fs;
    fs.name = f.signature().name();
    for (auto& [op, count] : missing) fs.ops_without_kernel.push_back(fmt::format("{} ({})", op, count));
    fs.reachable = reachable.count(fs.name) != 0;
    fs.reachable_from_fetches = from_fetches.count(fs.name) != 0;
    s.functions_without_kernels.push_back(std::move(fs));
  }
  return ok_status();
}

}  // namespace

Expected<GraphSummary> summarize(const Graph& g, const ControlFlowInfo& cf, const std::vector<std::string>& fetches) {
  GraphSummary s;
  s.num_nodes = g.num_nodes();
  std::map<std::string, int> no_kernel;
  std::map<std::string, int> calls;
  for (const Node& n : g.nodes()) {
    ++s.op_histogram[n.op];
    ++s.devices[n.device];
    if (g.has_function(n.op)) {
      ++calls[n.op];
    } else if (n.def == nullptr || (!n.def->has_kernel() && n.def->role() == ops::OpRole::ordinary)) {
      ++no_kernel[n.op];
    }
  }
  for (auto& [op, count] : no_kernel) s.ops_without_kernel.push_back(fmt::format("{} ({})", op, count));
  for (auto& [op, count] : calls) s.function_calls.push_back(fmt::format("{} ({})", op, count));
  s.num_functions = g.library().function_size();
  if (s.num_functions > 0 || !fetches.empty()) TF_RETURN_IF_ERROR(summarize_functions(g, fetches, s));
  add_frames(g, cf, kRootFrame, s);
  return s;
}

std::string to_text(const GraphSummary& s) {
  std::string out = fmt::format("nodes: {}\n", s.num_nodes);
  std::vector<std::pair<std::string, int>> ops(s.op_histogram.begin(), s.op_histogram.end());
  std::stable_sort(ops.begin(), ops.end(), [](auto& a, auto& b) { return a.second > b.second; });
  out += fmt::format("ops: {} distinct\n", ops.size());
  for (auto& [op, count] : ops) out += fmt::format("  {:>6}  {}\n", count, op);

  int gradient = static_cast<int>(
      std::count_if(s.frames.begin(), s.frames.end(), [](auto& f) { return f.gradient; }));
  out += fmt::format("frames: {} ({} gradient)\n", s.frames.size(), gradient);
  for (const FrameSummary& f : s.frames) {
    out += fmt::format("  {:{}}{}\n", "", 2 * (f.depth - 1), f.name);
    out += fmt::format("  {:{}}  pivot {}, parallel_iterations {}, {} enters, {} exits, {} nodes{}{}\n",
                       "", 2 * (f.depth - 1), f.pivot.empty() ? "(none)" : f.pivot,
                       f.parallel_iterations, f.enters, f.exits, f.nodes,
                       f.gradient ? ", gradient" : "", f.in_cond ? ", inside a cond" : "");
  }

  out += fmt::format("devices: {}\n", s.devices.size());
  for (auto& [device, count] : s.devices)
    out += fmt::format("  {:>6}  {}\n", count, device.empty() ? "(unplaced)" : device);
  if (s.num_functions > 0 || !s.function_calls.empty()) {
    out += fmt::format("functions: {} in the library, {} reachable from the graph's nodes", s.num_functions,
                       s.num_reachable_functions);
    if (!s.fetches.empty()) out += fmt::format(", {} from the fetches", s.num_reachable_from_fetches);
    out += "\n";
    for (auto& c : s.function_calls) out += fmt::format("  called: {}\n", c);
  }
  out += fmt::format("ops with no kernel: {}\n",
                     s.ops_without_kernel.empty() ? "none" : fmt::to_string(s.ops_without_kernel.size()));
  for (auto& op : s.ops_without_kernel) out += fmt::format("  {}\n", op);
  if (s.num_functions > 0) {
    out += fmt::format("functions with ops that have no kernel: {}\n",
                       s.functions_without_kernels.empty() ? "none"
                                                           : fmt::to_string(s.functions_without_kernels.size()));
    for (const FunctionSummary& f : s.functions_without_kernels) {
      std::string reach = f.reachable ? "reachable" : "not reachable";
      if (!s.fetches.empty()) reach += f.reachable_from_fetches ? ", reachable from the fetches" : ", not from the fetches";
      out += fmt::format("  {} ({}):", f.name, reach);
      for (const std::string& op : f.ops_without_kernel) out += " " + op;
      out += "\n";
    }
  }
  return out;
}

}  // namespace tagflow::graph
