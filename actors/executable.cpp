#include "actors/executable.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace tagflow::actors {

const char* to_string(NodeKind k) {
  switch (k) {
    case NodeKind::ordinary: return "ordinary";
    case NodeKind::switch_op: return "Switch";
    case NodeKind::switch_n: return "_SwitchN";
    case NodeKind::merge: return "Merge";
    case NodeKind::enter: return "Enter";
    case NodeKind::exit: return "Exit";
    case NodeKind::next_iteration: return "NextIteration";
    case NodeKind::loop_cond: return "LoopCond";
    case NodeKind::control_trigger: return "ControlTrigger";
    case NodeKind::arg: return "_Arg";
    case NodeKind::retval: return "_Retval";
    case NodeKind::send: return "_Send";
    case NodeKind::recv: return "_Recv";
  }
  return "unknown";
}

namespace {

Expected<NodeKind> kind_of(const graph::Node& n, const std::string& partition) {
  // The _Arg/_Retval nodes a step graph adds for feeds and fetches carry
  // `_step_io`; others belong to function bodies and cannot run here.
  const bool* step_io = n.attr<bool>("_step_io");
  if (step_io != nullptr && *step_io) {
    if (n.op == "_Arg") return NodeKind::arg;
    if (n.op == "_Retval") return NodeKind::retval;
  }
  if (n.op == "_Arg" || n.op == "_Retval")
    return Status(ops::Error::unimplemented,
                  fmt::format("node '{}' on partition {}: {} belongs in a function body", n.name,
                              partition, n.op));
  if (n.def == nullptr)
    return Status(ops::Error::unimplemented,
                  fmt::format("node '{}' on partition {}: op '{}' is not known to tagflow",
                              n.name, partition, n.op));
  switch (n.def->role()) {
    case ops::OpRole::ordinary: return NodeKind::ordinary;
    case ops::OpRole::switch_op: return NodeKind::switch_op;
    case ops::OpRole::switch_n: return NodeKind::switch_n;
    case ops::OpRole::merge: return NodeKind::merge;
    case ops::OpRole::enter: return NodeKind::enter;
    case ops::OpRole::exit: return NodeKind::exit;
    case ops::OpRole::next_iteration: return NodeKind::next_iteration;
    case ops::OpRole::loop_cond: return NodeKind::loop_cond;
    case ops::OpRole::control_trigger: return NodeKind::control_trigger;
    case ops::OpRole::send: return NodeKind::send;
    case ops::OpRole::recv: return NodeKind::recv;
    case ops::OpRole::function_call:
      return Status(ops::Error::unimplemented,
                    fmt::format("node '{}' on partition {}: functional op {} must be lowered "
                                "to Switch/Merge/Enter/Exit before it runs",
                                n.name, partition, n.op));
  }
  return Status(ops::Error::internal, "unknown op role");
}

}  // namespace

Expected<std::shared_ptr<const Executable>> Executable::build(graph::Graph g,
                                                              std::string partition,
                                                              const FunctionKernels* functions) {
  std::vector<graph::Graph> graphs;
  graphs.push_back(std::move(g));
  TF_ASSIGN_OR_RETURN(auto built, build_partitions(std::move(graphs), {std::move(partition)}, functions));
  return std::move(built[0]);
}

namespace {

std::string transfer_match_key(const graph::Node& n) {
  auto text = [&](const char* key) {
    const std::string* s = n.attr<std::string>(key);
    return s == nullptr ? std::string() : *s;
  };
  return text("tensor_name") + ';' + text("send_device") + ';' + text("recv_device");
}

}  // namespace

uint64_t transfer_hash(const std::string& match_key) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : match_key) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::shared_ptr<const trace::PartitionNames> Executable::trace_names() const {
  std::call_once(names_once_, [this] {
    auto t = std::make_shared<trace::PartitionNames>();
    t->partition = partition_;
    t->nodes.reserve(items_.size());
    t->ops.reserve(items_.size());
    for (const NodeItem& item : items_) {
      t->nodes.push_back(item.node != nullptr ? item.node->name : std::string());
      t->ops.push_back(item.node != nullptr ? item.node->op : std::string());
      if (item.transfer_key != nullptr) t->transfers.emplace_back(item.transfer_hash, *item.transfer_key);
    }
    for (const FrameLayout& f : frames_) t->frames.push_back(f.name);
    names_ = std::move(t);
  });
  return names_;
}

std::string Executable::transfer_name(uint64_t key) const {
  const int recv = recv_item(key);
  return recv >= 0 ? *item(recv).transfer_key : fmt::format("#{:016x}", key);
}

Expected<std::shared_ptr<const Executable>> Executable::build_partition(
    graph::Graph g, std::string name, const std::vector<std::string>& devices, int index) {
  auto exec = std::make_shared<Executable>();
  exec->graph_ = std::move(g);
  exec->partition_ = std::move(name);
  TF_RETURN_IF_ERROR(exec->init());
  for (NodeItem& item : exec->items_) {
    if (item.kind != NodeKind::send) continue;
    const std::string* to = item.node->attr<std::string>("recv_device");
    auto it = to == nullptr ? devices.end() : std::find(devices.begin(), devices.end(), *to);
    if (it == devices.end() || it - devices.begin() == index)
      return Status(ops::Error::invalid_graph,
                    fmt::format("_Send '{}' on partition {}: its recv_device '{}' is not another "
                                "partition of the step",
                                item.node->name, exec->partition_, to == nullptr ? "" : ops::abbreviate(*to)));
    item.transfer_partition = static_cast<int>(it - devices.begin());
  }
  return std::shared_ptr<const Executable>(std::move(exec));
}

Expected<std::vector<std::shared_ptr<const Executable>>> Executable::build_partitions(
    std::vector<graph::Graph> graphs, std::vector<std::string> names, const FunctionKernels* functions) {
  std::vector<std::shared_ptr<Executable>> execs;
  for (size_t p = 0; p < graphs.size(); ++p) {
    auto exec = std::make_shared<Executable>();
    exec->graph_ = std::move(graphs[p]);
    exec->partition_ = p < names.size() ? names[p] : fmt::format("partition{}", p);
    TF_RETURN_IF_ERROR(exec->init(functions));
    execs.push_back(std::move(exec));
  }
  // Every Recv by its key, then every Send to its Recv.
  struct RecvAt {
    int partition;
    int item;
    bool matched = false;
  };
  std::map<std::string, RecvAt> recvs;
  for (size_t p = 0; p < execs.size(); ++p)
    for (NodeItem& item : execs[p]->items_) {
      if (item.kind != NodeKind::recv) continue;
      auto [it, fresh] = recvs.emplace(transfer_match_key(*item.node),
                                       RecvAt{static_cast<int>(p), item.node_id});
      if (!fresh)
        return Status(ops::Error::invalid_graph,
                      fmt::format("_Recv '{}' on partition {} and _Recv '{}' on partition {} wait "
                                  "for the same key '{}'",
                                  item.node->name, execs[p]->partition_,
                                  execs[static_cast<size_t>(it->second.partition)]->item(it->second.item).node->name,
                                  execs[static_cast<size_t>(it->second.partition)]->partition_,
                                  *item.transfer_key));
    }
  for (auto& exec : execs)
    for (NodeItem& item : exec->items_) {
      if (item.kind != NodeKind::send) continue;
      auto it = recvs.find(transfer_match_key(*item.node));
      if (it == recvs.end() || it->second.matched)
        return Status(ops::Error::invalid_graph,
                      fmt::format("_Send '{}' on partition {}: {} _Recv takes key '{}'",
                                  item.node->name, exec->partition_,
                                  it == recvs.end() ? "no" : "another _Send already feeds the",
                                  *item.transfer_key));
      it->second.matched = true;
      item.transfer_partition = it->second.partition;
    }
  for (auto& [key, at] : recvs)
    if (!at.matched) {
      const Executable& exec = *execs[static_cast<size_t>(at.partition)];
      return Status(ops::Error::invalid_graph,
                    fmt::format("_Recv '{}' on partition {} would wait forever: no _Send has key '{}'",
                                exec.item(at.item).node->name, exec.partition_,
                                *exec.item(at.item).transfer_key));
    }
  std::vector<std::shared_ptr<const Executable>> out(execs.begin(), execs.end());
  return out;
}

Status Executable::init(const FunctionKernels* functions) {
  TF_ASSIGN_OR_RETURN(control_flow_, graph::analyze_control_flow(graph_));
  const int n = graph_.num_nodes();
  items_.resize(static_cast<size_t>(n));
  frames_.resize(control_flow_.frames.size());
  for (size_t f = 0; f < frames_.size(); ++f) {
    const graph::FrameInfo& info = control_flow_.frames[f];
    frames_[f].name = info.name;
    frames_[f].parent = info.parent;
    frames_[f].parallel_iterations = std::max<int64_t>(info.parallel_iterations, 1);
    frames_[f].items.reserve(info.nodes.size());
    frames_[f].initial_state.reserve(info.nodes.size());
  }
  // Item i's out edges are edges_[edge_start[i] .. edge_start[i + 1]), its
  // dereferenced inputs deref_[deref_start[i] .. deref_start[i + 1]); the
  // items' lists point there once both arrays are complete.
  std::vector<uint32_t> edge_start(static_cast<size_t>(n) + 1, 0);
  std::vector<uint32_t> deref_start(static_cast<size_t>(n) + 1, 0);
  auto edges_of = [&](int i) {
    return std::make_pair(edges_.begin() + edge_start[static_cast<size_t>(i)],
                          edges_.begin() + edge_start[static_cast<size_t>(i) + 1]);
  };
  size_t num_edges = 0;
  for (NodeId id = 0; id < n; ++id) num_edges += graph_.out_edges(id).size();
  edges_.reserve(num_edges);

  for (NodeId id = 0; id < n; ++id) {
    const graph::Node& node = graph_.node(id);
    NodeItem& item = items_[static_cast<size_t>(id)];
    item.node_id = id;
    item.node = &node;
    item.calls_function = functions != nullptr && functions->runs(node);
    if (item.calls_function) {
      item.kind = NodeKind::ordinary;
    } else {
      TF_ASSIGN_OR_RETURN(item.kind, kind_of(node, partition_));
    }
    item.num_inputs = static_cast<int>(node.inputs.size());
    if (item.kind == NodeKind::send || item.kind == NodeKind::recv) {
      static const std::string kNoKey;
      const std::string* key = node.attr<std::string>("tensor_name");
      item.transfer_key = key == nullptr ? &kNoKey : key;
      item.transfer_hash = transfer_hash(transfer_match_key(node));
    }
    // A Recv's one input slot holds its transfer: it is pending until the
    // transfer arrives, and is never a source.
    if (item.kind == NodeKind::recv) item.num_inputs = 1;
    item.num_control_inputs = static_cast<int>(node.control_inputs.size());
    item.num_outputs = graph_.num_outputs(id);
    item.frame = control_flow_.frame_of[static_cast<size_t>(id)];
    // the op's cost class (ops::OpDef::expensive)
    item.expensive = node.def != nullptr && node.def->is_expensive();
    if (item.expensive) ++num_expensive_;
    if (item.calls_function) {
      TF_ASSIGN_OR_RETURN(item.kernel, functions->make(node));
    } else if (item.kind == NodeKind::ordinary) {
      ops::KernelInit init{node.name, node.attrs, node.input_types, node.output_types};
      auto kernel = node.def->make_kernel(init);
      if (!kernel.ok())
        return kernel.status().with_prefix(
            fmt::format("node '{}' ({}) on partition {}: ", node.name, node.op, partition_));
      item.kernel = std::move(kernel).value();
      item.may_block = item.kernel->may_block();
      if (item.may_block) ++num_blocking_;
    }
    if (item.kind == NodeKind::arg || item.kind == NodeKind::retval) {
      const int64_t* index = node.attr<int64_t>("index");
      item.index = index == nullptr ? 0 : static_cast<int>(*index);
      if (item.kind == NodeKind::arg) num_args_ = std::max(num_args_, item.index + 1);
      else num_retvals_ = std::max(num_retvals_, item.index + 1);
      if (item.kind == NodeKind::retval) retvals_.push_back(id);
      if (item.frame != graph::kRootFrame)
        return Status(ops::Error::invalid_argument,
                      fmt::format("node '{}' on partition {}: feeds and fetches must be in the "
                                  "root frame, not inside frame '{}'",
                                  node.name, partition_, frames_[static_cast<size_t>(item.frame)].name));
    }
    if (item.kind == NodeKind::enter) {
      const std::string* frame_name = node.attr<std::string>("frame_name");
      item.enter_frame = frame_name ? control_flow_.find_frame(*frame_name) : -1;
      if (item.enter_frame < 0)
        return Status(ops::Error::invalid_graph,
                      fmt::format("Enter '{}' on partition {} names no frame", node.name, partition_));
      const bool* is_constant = node.attr<bool>("is_constant");
      item.is_constant = is_constant != nullptr && *is_constant;
      ++frames_[static_cast<size_t>(item.enter_frame)].num_enters;
    }
    for (size_t i = 0; i < node.inputs.size() && i < node.input_types.size(); ++i) {
      const graph::Node& src = graph_.node(node.inputs[i].node);
      const size_t port = static_cast<size_t>(node.inputs[i].port);
      if (port < src.output_types.size() && ops::is_ref(src.output_types[port]) &&
          !ops::is_ref(node.input_types[i]))
        deref_.push_back(static_cast<int>(i));
    }
    deref_start[static_cast<size_t>(id) + 1] = static_cast<uint32_t>(deref_.size());
    if (item.kind == NodeKind::merge) {
      const bool* first_live = node.attr<bool>("_tagflow_first_live");
      item.merge_first_live = first_live != nullptr && *first_live;
      for (const graph::Endpoint& in : node.inputs) {
        const graph::Node& src = graph_.node(in.node);
        bool back = src.def != nullptr && src.def->role() == ops::OpRole::next_iteration;
        (back ? item.merge_back_inputs : item.merge_forward_inputs)++;
      }
    }

    FrameLayout& layout = frames_[static_cast<size_t>(item.frame)];
    item.local_id = static_cast<int>(layout.items.size());
    item.input_start = layout.num_input_slots;
    layout.items.push_back(id);
    layout.num_input_slots += item.num_inputs;
    int pending = item.num_control_inputs + (item.kind == NodeKind::merge ? 0 : item.num_inputs);
    layout.initial_state.push_back(NodeState{pending, 0, 0});
    if (item.num_inputs + item.num_control_inputs == 0) layout.sources.push_back(id);
    if (item.kind == NodeKind::exit) layout.exits.push_back(id);
    if (item.kind == NodeKind::recv) {
      ++layout.num_recvs;
      ++num_recvs_;
      auto [at, fresh] = recv_by_key_.emplace(item.transfer_hash, id);
      if (!fresh)
        return Status(ops::Error::invalid_graph,
                      fmt::format("_Recv '{}' and _Recv '{}' on partition {} wait for the same key "
                                  "'{}' (or keys of one hash)",
                                  graph_.node(at->second).name, node.name, partition_, *item.transfer_key));
    }

    for (const graph::OutEdge& e : graph_.out_edges(id)) edges_.push_back({e.src_port, e.dst, e.dst_input, false});
    edge_start[static_cast<size_t>(id) + 1] = static_cast<uint32_t>(edges_.size());
    auto [first, last] = edges_of(id);
    std::stable_sort(first, last, [](const EdgeOut& a, const EdgeOut& b) {
      return (a.src_port < 0 ? 1 << 30 : a.src_port) < (b.src_port < 0 ? 1 << 30 : b.src_port);
    });
    // Edges are grouped by port: the last one of each port may take the value.
    for (auto e = first; e != last; ++e)
      e->last_use = e->src_port >= 0 && (e + 1 == last || (e + 1)->src_port != e->src_port);
    for (auto e = first; e != last; ++e)
      if (e->src_port >= item.num_outputs)
        return Status(ops::Error::invalid_graph,
                      fmt::format("node '{}' on partition {} has no output {}", node.name,
                                  partition_, e->src_port));
  }
  for (NodeItem& item : items_) {
    auto [first, last] = edges_of(item.node_id);
    for (auto e = first; e != last; ++e) {
      if (e->src_port == 1 && item.kind == NodeKind::merge) item.merge_index_used = true;
      const NodeItem& dst = items_[static_cast<size_t>(e->dst)];
      e->dst_merge = dst.kind == NodeKind::merge;
      e->dst_expensive = dst.expensive;
      e->dst_local = dst.local_id;
      e->dst_input = e->dst_slot == graph::kControlPort ? -1 : dst.input_start + e->dst_slot;
      e->borrow = e->src_port >= 0 && item.kernel != nullptr && item.kernel->holds_outputs();
    }
    if (item.kind == NodeKind::enter && !item.is_constant &&
        std::any_of(first, last, [](const EdgeOut& e) {
          return !e.dst_merge || e.dst_slot == graph::kControlPort;
        }))
      frames_[static_cast<size_t>(item.enter_frame)].enters_beyond_merges.push_back(item.node_id);
  }
  for (NodeItem& item : items_) {
    const size_t i = static_cast<size_t>(item.node_id);
    item.out_edges = ItemList<EdgeOut>(edges_.data() + edge_start[i], edge_start[i + 1] - edge_start[i]);
    item.deref_inputs = ItemList<int>(deref_.data() + deref_start[i], deref_start[i + 1] - deref_start[i]);
  }
  find_skippable_frames();
  find_frames_that_run_iterations();
  return ops::ok_status();
}

namespace {

template <class T>
size_t vector_bytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}

}  // namespace

size_t Executable::memory_bytes() const {
  size_t b = sizeof(Executable) + vector_bytes(items_) + vector_bytes(edges_) + vector_bytes(deref_) +
             vector_bytes(frames_) + vector_bytes(control_flow_.frames) + vector_bytes(control_flow_.frame_of);
  for (const NodeItem& item : items_)
    if (item.kernel) b += 2 * sizeof(void*);  // its vtable pointer and a word of state
  for (const FrameLayout& f : frames_)
    b += vector_bytes(f.items) + vector_bytes(f.exits) + vector_bytes(f.sources) +
         vector_bytes(f.enters_beyond_merges) + vector_bytes(f.initial_state);
  for (const graph::FrameInfo& f : control_flow_.frames)
    b += vector_bytes(f.enters) + vector_bytes(f.exits) + vector_bytes(f.children) + vector_bytes(f.nodes);
  return b;
}

// A frame runs its iterations itself unless it has a child frame or an
// expensive node whose instances could overlap across iterations: an
// expensive node that depends on its own instance of the iteration before
// (it lies on a cycle through a NextIteration back edge) runs one instance
// at a time whoever runs it, so iteration actors would gain it nothing.
void Executable::find_frames_that_run_iterations() {
  for (FrameLayout& layout : frames_) layout.runs_iterations = true;
  std::vector<int> expensive;
  for (size_t i = 0; i < items_.size(); ++i) {
    const NodeItem& item = items_[i];
    if (item.kind == NodeKind::enter) frames_[static_cast<size_t>(item.frame)].runs_iterations = false;
    if (item.expensive) expensive.push_back(static_cast<int>(i));
  }
  std::vector<size_t> seen_for(items_.size(), 0);
  size_t walk = 0;
  for (int e : expensive) {
    const FrameId frame = items_[static_cast<size_t>(e)].frame;
    if (!frames_[static_cast<size_t>(frame)].runs_iterations) continue;
    // Does e reach itself within its frame?
    ++walk;
    bool cycle = false;
    std::vector<int> todo{e};
    while (!todo.empty() && !cycle) {
      const NodeItem& item = items_[static_cast<size_t>(todo.back())];
      todo.pop_back();
      if (item.kind == NodeKind::exit) continue;  // leaves the frame
      for (const EdgeOut& out : item.out_edges) {
        if (out.dst == e) {
          cycle = true;
          break;
        }
        if (seen_for[static_cast<size_t>(out.dst)] == walk || items_[static_cast<size_t>(out.dst)].frame != frame) continue;
        seen_for[static_cast<size_t>(out.dst)] = walk;
        todo.push_back(out.dst);
      }
    }
    if (!cycle) frames_[static_cast<size_t>(frame)].runs_iterations = false;
  }
}

void Executable::find_skippable_frames() {
  // A _Send or _Recv must see every instance (its peer counts on it); a
  // ControlTrigger is live on dead inputs.
  std::vector<bool> keep(frames_.size(), false);
  for (const NodeItem& item : items_)
    if (item.kind == NodeKind::send || item.kind == NodeKind::recv ||
        item.kind == NodeKind::control_trigger)
      for (FrameId f = item.frame; f > graph::kRootFrame; f = frames_[static_cast<size_t>(f)].parent)
        keep[static_cast<size_t>(f)] = true;
  std::vector<size_t> seen_for(items_.size(), 0);  // the frame whose walk saw an item
  for (size_t f = 1; f < frames_.size(); ++f) {
    if (keep[f]) continue;
    // Nodes of the parent iteration reachable from the frame's Exits: if
    // an Enter of the frame is among them, the instance must run for that
    // Enter to arrive.
    const FrameId parent = frames_[f].parent;
    std::vector<int> todo(frames_[f].exits.begin(), frames_[f].exits.end());
    bool cycle = false;
    while (!todo.empty() && !cycle) {
      const NodeItem& item = items_[static_cast<size_t>(todo.back())];
      todo.pop_back();
      if (item.kind == NodeKind::next_iteration) continue;  // to the next iteration
      for (const EdgeOut& e : item.out_edges) {
        const NodeItem& dst = items_[static_cast<size_t>(e.dst)];
        if (seen_for[static_cast<size_t>(e.dst)] == f || dst.frame != parent) continue;
        seen_for[static_cast<size_t>(e.dst)] = f;
        if (dst.kind == NodeKind::enter && dst.enter_frame == static_cast<FrameId>(f)) cycle = true;
        todo.push_back(e.dst);
      }
    }
    frames_[f].skip_dead_instances = !cycle;
  }
}

}  // namespace tagflow::actors
