#include "graph/analysis/control_flow.hpp"

#include <unordered_map>

namespace tagflow::graph {
inline namespace analysis {

namespace {

using ops::OpRole;

// TensorFlow's default for Enter's parallel_iterations attr.
constexpr int64_t kDefaultParallelIterations = 10;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

class FrameBuilder {
 public:
  FrameBuilder(const Graph& g, const std::vector<bool>* only) : g_(g), only_(only) {
    info_.frames.emplace_back();  // the root frame: name "", parent -1
    info_.frame_of.assign(static_cast<size_t>(g.num_nodes()), -1);
    reached_from_.assign(static_cast<size_t>(g.num_nodes()), kNoNode);
  }

  // TensorFlow's BuildControlFlowInfo: a breadth-first walk from the nodes
  // without inputs, each node's consumers placed in the frame its outputs
  // belong to.
  Status propagate() {
    std::vector<NodeId> ready;
    ready.reserve(static_cast<size_t>(g_.num_nodes()));
    for (NodeId id = 0; id < g_.num_nodes(); ++id) {
      if (!in(id)) continue;
      const Node& n = g_.node(id);
      if (n.inputs.empty() && n.control_inputs.empty()) {
        frame_of(id) = kRootFrame;
        ready.push_back(id);
      }
    }
    for (size_t head = 0; head < ready.size(); ++head) {
      NodeId cur = ready[head];
      TF_ASSIGN_OR_RETURN(FrameId out_frame, output_frame(cur));
      for (const OutEdge& e : g_.out_edges(cur)) {
        if (!in(e.dst)) continue;
        FrameId& f = frame_of(e.dst);
        if (f == -1) {
          f = out_frame;
          reached_from_[static_cast<size_t>(e.dst)] = cur;
          ready.push_back(e.dst);
        } else if (f != out_frame) {
          return Status(Error::invalid_graph,
                        "node " + name(e.dst) + " is reached in two frames: " + label(f) +
                            " (from " + name(reached_from_[static_cast<size_t>(e.dst)]) +
                            ") and " + label(out_frame) + " (from " + name(cur) + ")");
        }
      }
    }
    for (NodeId id = 0; id < g_.num_nodes(); ++id)
      if (in(id) && frame_of(id) == -1)
        return Status(Error::invalid_graph,
                      "node " + name(id) +
                          " cannot be reached from any node without inputs (it lies on a "
                          "cycle with no way in, such as a loop without an Enter)");
    return ok_status();
  }

  // Fills each frame's nodes, Enters, Exits and pivot, and checks them.
  Status collect() {
    std::vector<NodeId> first_next_iteration(info_.frames.size(), kNoNode);
    std::vector<bool> receives(info_.frames.size(), false);
    std::vector<size_t> sizes(info_.frames.size(), 0);
    for (FrameId f : info_.frame_of)
      if (f >= 0) ++sizes[static_cast<size_t>(f)];
    for (size_t f = 0; f < sizes.size(); ++f) info_.frames[f].nodes.reserve(sizes[f]);
    for (NodeId id = 0; id < g_.num_nodes(); ++id) {
      if (!in(id)) continue;
      FrameId f = frame_of(id);
      FrameInfo& frame = info_.frames[static_cast<size_t>(f)];
      frame.nodes.push_back(id);
      if (const bool* cl = g_.node(id).attr<bool>("_tagflow_control_loop"); cl != nullptr && *cl)
        receives[static_cast<size_t>(f)] = true;
      switch (node_role(g_.node(id))) {
        case OpRole::enter:
          info_.frames[static_cast<size_t>(entered_.at(id))].enters.push_back(id);
          break;
        case OpRole::exit:
          frame.exits.push_back(id);
          break;
        case OpRole::loop_cond:
          if (f == kRootFrame)
            return Status(Error::invalid_graph,
                          "LoopCond " + name(id) + " is in the root frame (no Enter leads to it)");
          if (frame.pivot != kNoNode)
            return Status(Error::invalid_graph, label(f) + " has two LoopConds: " +
                                                    name(frame.pivot) + " and " + name(id));
          frame.pivot = id;
          break;
        case OpRole::recv:
          receives[static_cast<size_t>(f)] = true;
          break;
        case OpRole::next_iteration:
          if (f == kRootFrame)
            return Status(Error::invalid_graph, "NextIteration " + name(id) +
                                                    " is in the root frame (not inside a loop)");
          if (first_next_iteration[static_cast<size_t>(f)] == kNoNode)
            first_next_iteration[static_cast<size_t>(f)] = id;
          break;
        default:
          break;
      }
    }
    for (size_t f = 1; f < info_.frames.size(); ++f) {
      FrameInfo& frame = info_.frames[f];
      NodeId next = first_next_iteration[f];
      // A partition whose loop learns its iterations from other devices
      // (graph/partition.hpp) has a _Recv or a control loop instead.
      if (next != kNoNode && frame.pivot == kNoNode && !receives[f])
        return Status(Error::invalid_graph, label(static_cast<FrameId>(f)) + " has NextIteration " +
                                                name(next) + " but no LoopCond");
      frame.parallel_iterations = kDefaultParallelIterations;
      if (!frame.enters.empty())
        if (const int64_t* p = g_.node(frame.enters.front()).attr<int64_t>("parallel_iterations"))
          frame.parallel_iterations = *p;
    }
    return ok_status();
  }

  ControlFlowInfo take() { return std::move(info_); }

 private:
  bool in(NodeId id) const { return only_ == nullptr || (*only_)[static_cast<size_t>(id)]; }
  FrameId& frame_of(NodeId id) { return info_.frame_of[static_cast<size_t>(id)]; }
  std::string name(NodeId id) const { return quoted(g_.node(id).name); }
  std::string label(FrameId f) const {
    return f == kRootFrame ? "the root frame"
                           : "frame " + quoted(info_.frames[static_cast<size_t>(f)].name);
  }

  // The frame that the outputs of `id` belong to.
  Expected<FrameId> output_frame(NodeId id) {
    FrameId f = frame_of(id);
    switch (node_role(g_.node(id))) {
      case OpRole::enter:
        return enter_frame(id, f);
      case OpRole::exit:
        if (f == kRootFrame)
          return Status(Error::invalid_graph,
                        "Exit " + name(id) + " is in the root frame (no Enter leads to it)");
        return info_.frames[static_cast<size_t>(f)].parent;
      default:
        return f;
    }
  }

  // The child frame an Enter in frame `parent` opens; made on first sight.
  Expected<FrameId> enter_frame(NodeId enter, FrameId parent) {
    const std::string* frame_name = g_.node(enter).attr<std::string>("frame_name");
    if (frame_name == nullptr || frame_name->empty())
      return Status(Error::invalid_graph, "Enter " + name(enter) + " has no frame_name attr");
    auto [it, is_new] = by_name_.emplace(*frame_name, static_cast<FrameId>(info_.frames.size()));
    FrameId f = it->second;
    if (is_new) {
      FrameInfo frame;
      frame.name = *frame_name;
      frame.parent = parent;
      frame.depth = info_.frames[static_cast<size_t>(parent)].depth + 1;
      info_.frames.push_back(std::move(frame));
      info_.frames[static_cast<size_t>(parent)].children.push_back(f);
    } else if (info_.frames[static_cast<size_t>(f)].parent != parent) {
      NodeId other = first_enter_.at(f);
      return Status(Error::invalid_graph,
                    "Enter " + name(enter) + " of " + label(f) + " is in " + label(parent) +
                        ", but Enter " + name(other) + " of the same frame is in " +
                        label(info_.frames[static_cast<size_t>(f)].parent));
    }
    first_enter_.emplace(f, enter);
    entered_[enter] = f;
    return f;
  }

  const Graph& g_;
  const std::vector<bool>* only_;  // nullptr: every node
  ControlFlowInfo info_;
  std::vector<NodeId> reached_from_;  // the node whose outputs placed each node
  std::unordered_map<std::string, FrameId> by_name_;
  std::unordered_map<FrameId, NodeId> first_enter_;
  std::unordered_map<NodeId, FrameId> entered_;  // Enter -> the frame it opens
};

}  // namespace

FrameId ControlFlowInfo::find_frame(const std::string& name) const {
  for (size_t f = 0; f < frames.size(); ++f)
    if (frames[f].name == name) return static_cast<FrameId>(f);
  return -1;
}

Expected<ControlFlowInfo> analyze_control_flow(const Graph& g) { return analyze_control_flow(g, nullptr); }

Expected<ControlFlowInfo> analyze_control_flow(const Graph& g, const std::vector<bool>* only) {
  FrameBuilder builder(g, only);
  TF_RETURN_IF_ERROR(builder.propagate());
  TF_RETURN_IF_ERROR(builder.collect());
  return builder.take();
}

}  // namespace analysis
}  // namespace tagflow::graph
