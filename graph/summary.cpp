#include "graph/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "graph/proto/graph_def.pb.h"

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

}  // namespace

GraphSummary summarize(const Graph& g, const ControlFlowInfo& cf) {
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
    out += fmt::format("functions: {} in the library\n", s.num_functions);
    for (auto& c : s.function_calls) out += fmt::format("  called: {}\n", c);
  }
  out += fmt::format("ops with no kernel: {}\n",
                     s.ops_without_kernel.empty() ? "none" : fmt::to_string(s.ops_without_kernel.size()));
  for (auto& op : s.ops_without_kernel) out += fmt::format("  {}\n", op);
  return out;
}

}  // namespace tagflow::graph
