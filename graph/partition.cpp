#include "graph/partition.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "graph/analysis/control_flow.hpp"
#include "graph/device.hpp"
#include "graph/proto/graph_def.pb.h"
#include "graph/validate.hpp"

namespace tagflow::graph {

std::string transfer_key(const std::string& src, int port, const std::string& dst_device) {
  return port == kControlPort ? fmt::format("edge_{}_control_to_{}", src, dst_device)
                              : fmt::format("edge_{}_{}_to_{}", src, port, dst_device);
}

namespace {

using ops::OpRole;

// One frame's control loop on one device.
struct ControlLoop {
  NodeId merge = kNoNode;
  DType type = DType::invalid;
};

class Partitioner {
 public:
  Partitioner(const Graph& placed, const std::vector<std::string>& devices, const PartitionMutant& mutant)
      : g_(placed), requested_(devices), mutant_(mutant) {}

  Expected<std::vector<Partition>> run() {
    TF_RETURN_IF_ERROR(index_devices());
    TF_RETURN_IF_ERROR(analyze());
    TF_RETURN_IF_ERROR(clone_enters());
    TF_RETURN_IF_ERROR(analyze());
    TF_RETURN_IF_ERROR(check_next_iterations());
    TF_RETURN_IF_ERROR(add_control_loops());
    TF_RETURN_IF_ERROR(validate(g_));
    TF_RETURN_IF_ERROR(analyze());
    TF_RETURN_IF_ERROR(add_transfers());
    return split();
  }

 private:
  const std::string& name(NodeId id) const { return g_.node(id).name; }
  int dev(NodeId id) const { return dev_[static_cast<size_t>(id)]; }
  std::string frame_label(FrameId f) const {
    return f == kRootFrame ? "the root frame" : "frame '" + cf_.frames[static_cast<size_t>(f)].name + "'";
  }

  Status index_devices() {
    for (const std::string& d : requested_) {
      TF_ASSIGN_OR_RETURN(DeviceName parsed, parse_device_name(d));
      devices_.push_back(full_name(parsed));
      short_.push_back(short_name(parsed));
    }
    for (NodeId id = 0; id < g_.num_nodes(); ++id) {
      const Node& n = g_.node(id);
      auto parsed = parse_device_name(n.device);
      int found = -1;
      for (size_t i = 0; parsed.ok() && !parsed->empty() && i < devices_.size(); ++i)
        if (devices_[i] == full_name(*parsed)) found = static_cast<int>(i);
      if (found < 0)
        return Status(Error::invalid_argument,
                      fmt::format("partition: node '{}' is on device '{}', which is not one of the "
                                  "devices {} (place the graph first)",
                                  n.name, n.device, fmt::join(devices_, ", ")));
      dev_.push_back(found);
    }
    return ok_status();
  }

  Status analyze() {
    TF_ASSIGN_OR_RETURN(cf_, analyze_control_flow(g_));
    entered_.assign(static_cast<size_t>(g_.num_nodes()), -1);
    for (size_t f = 0; f < cf_.frames.size(); ++f)
      for (NodeId e : cf_.frames[f].enters) entered_[static_cast<size_t>(e)] = static_cast<FrameId>(f);
    return ok_status();
  }

  // The frame an edge from `id` lives in: the frame of the source's output.
  FrameId out_frame(NodeId id) const {
    FrameId f = cf_.frame_of[static_cast<size_t>(id)];
    switch (node_role(g_.node(id))) {
      case OpRole::enter:
        return entered_[static_cast<size_t>(id)];
      case OpRole::exit:
        return cf_.frames[static_cast<size_t>(f)].parent;
      default:
        return f;
    }
  }

  // Adds a node made here; a name the graph already uses gets a suffix.
  NodeId add(Node n, int device) {
    n.device = devices_[static_cast<size_t>(device)];
    if (g_.find(n.name) != kNoNode) {
      const std::string base = n.name;
      for (int i = 1; g_.find(n.name) != kNoNode; ++i) n.name = fmt::format("{}_{}", base, i);
    }
    NodeId id = *g_.add_node(std::move(n));
    dev_.push_back(device);
    return id;
  }

  // An Enter's value exists on its own device only (a constant one in every
  // iteration): each other device that reads it gets its own copy.
  Status clone_enters() {
    const NodeId original_count = g_.num_nodes();
    for (NodeId id = 0; id < original_count; ++id) {
      if (node_role(g_.node(id)) != OpRole::enter) continue;
      std::map<int, NodeId> clones;
      const std::vector<OutEdge> consumers = g_.out_edges(id);
      // Read only on other devices: the Enter moves to the first of them
      // (left behind, it would open a frame instance with nothing in it).
      const bool read_here = std::any_of(consumers.begin(), consumers.end(),
                                         [&](const OutEdge& e) { return dev(e.dst) == dev(id); });
      if (!read_here && !consumers.empty()) {
        dev_[static_cast<size_t>(id)] = dev(consumers.front().dst);
        g_.mutable_node(id).device = devices_[static_cast<size_t>(dev(id))];
      }
      for (const OutEdge& e : consumers) {
        int d = dev(e.dst);
        if (d == dev(id)) continue;
        auto [it, is_new] = clones.emplace(d, kNoNode);
        if (is_new) {
          Node copy = g_.node(id);
          copy.name = fmt::format("{}/_on_{}", copy.name, short_[static_cast<size_t>(d)]);
          it->second = add(std::move(copy), d);
        }
        Node& dst = g_.mutable_node(e.dst);
        if (e.dst_input == kControlPort) {
          for (NodeId& c : dst.control_inputs)
            if (c == id) c = it->second;
        } else {
          dst.inputs[static_cast<size_t>(e.dst_input)] = Endpoint{it->second, e.src_port};
        }
      }
    }
    return ok_status();
  }

  Status check_next_iterations() const {
    for (NodeId id = 0; id < g_.num_nodes(); ++id) {
      if (node_role(g_.node(id)) != OpRole::next_iteration) continue;
      for (const OutEdge& e : g_.out_edges(id))
        if (dev(e.dst) != dev(id))
          return Status(Error::invalid_argument,
                        fmt::format("partition: NextIteration '{}' is on device '{}' but its "
                                    "consumer '{}' is on device '{}'; they must share a device",
                                    name(id), devices_[static_cast<size_t>(dev(id))], name(e.dst),
                                    devices_[static_cast<size_t>(dev(e.dst))]));
    }
    return ok_status();
  }

  // Every device that holds nodes of a frame spread over several devices
  // (or of a frame nested in it) gets a control loop for it, and learns
  // through it whether each iteration is followed by another: the frame's
  // continue signal (docs/protocol.md, "Partitioning").
  Status add_control_loops() {
    const size_t num_frames = cf_.frames.size();
    const size_t num_devices = devices_.size();
    // holds[f][d]: d holds nodes of f or of a frame nested in f.
    std::vector<std::vector<bool>> holds(num_frames, std::vector<bool>(num_devices, false));
    for (NodeId id = 0; id < g_.num_nodes(); ++id)
      for (FrameId f = cf_.frame_of[static_cast<size_t>(id)]; f != -1;
           f = cf_.frames[static_cast<size_t>(f)].parent)
        holds[static_cast<size_t>(f)][static_cast<size_t>(dev(id))] = true;
    // Parents are numbered before their children, so a parent's control
    // loops exist when its children's are built.
    for (size_t f = 1; f < num_frames; ++f) {
      std::vector<int> spread;
      for (size_t d = 0; d < num_devices; ++d)
        if (holds[f][d]) spread.push_back(static_cast<int>(d));
      if (spread.size() <= 1) continue;
      const std::map<int, Endpoint> signals = continue_signals(static_cast<FrameId>(f), spread);
      for (int d : spread) {
        auto it = signals.find(d);
        TF_RETURN_IF_ERROR(add_control_loop(static_cast<FrameId>(f), d,
                                            it == signals.end() ? std::nullopt
                                                                : std::optional<Endpoint>(it->second)));
      }
    }
    return ok_status();
  }

  // Marks a node the partitioner made for a control loop.
  static void mark(Node& n) { n.attrs["_tagflow_control_loop"] = true; }

  Node bool_node(std::string name, std::string op) {
    Node n;
    n.name = std::move(name);
    n.op = std::move(op);
    n.attrs["T"] = DType::boolean;
    mark(n);
    return n;
  }

  // A Merge of bool values that is live iff one of them is (the first live
  // one wins, even under strict-merge); the value itself if there is one.
  Endpoint any_live(std::vector<Endpoint> values, const std::string& name, int d) {
    if (values.size() == 1) return values.front();
    Node merge = bool_node(name, "Merge");
    merge.inputs = std::move(values);
    merge.attrs["N"] = static_cast<int64_t>(merge.inputs.size());
    merge.attrs["_tagflow_first_live"] = true;
    return Endpoint{add(std::move(merge), d), 0};
  }

  // The continue signal of frame f for each device in `spread`: a bool that
  // is live in an iteration exactly when one of the frame's NextIteration
  // values is (and so the next iteration runs), dead otherwise. Each
  // device holding NextIterations makes its part (live indicators of their
  // inputs, merged); every device merges all parts (the other devices'
  // become transfers). Empty when the frame has no NextIteration.
  std::map<int, Endpoint> continue_signals(FrameId f, const std::vector<int>& spread) {
    const FrameInfo& frame = cf_.frames[static_cast<size_t>(f)];
    std::map<int, std::vector<Endpoint>> indicators;  // by device
    for (NodeId id : frame.nodes) {
      if (node_role(g_.node(id)) != OpRole::next_iteration || g_.node(id).inputs.empty()) continue;
      const int e = dev(id);
      const std::string prefix = fmt::format("_cf/{}/{}/", frame.name, short_[static_cast<size_t>(e)]);
      // The indicator reads every input of the NextIteration, data and
      // control, where the NextIteration runs (a value from another device
      // crosses once, for both), so it is dead exactly when the
      // NextIteration is: a NextIteration whose value is live but one of
      // whose control inputs is dead starts no iteration (docs/protocol.md,
      // "Why the partitioned graph computes what the original computes").
      // A control edge from it turns that into a bool.
      const Endpoint src = g_.node(id).inputs[0];
      Node probe;
      probe.name = prefix + "live_of/" + g_.node(id).name;
      probe.op = "Identity";
      probe.inputs = {src};
      if (!mutant_.indicators_ignore_control_inputs) probe.control_inputs = g_.node(id).control_inputs;
      probe.attrs["T"] = ops::base_dtype(g_.node(src.node).output_types[static_cast<size_t>(src.port)]);
      mark(probe);
      const NodeId anchor = add(std::move(probe), e);
      Node live;
      live.name = prefix + "live/" + g_.node(id).name;
      live.op = "Const";
      live.control_inputs = {anchor};
      live.attrs["dtype"] = DType::boolean;
      live.attrs["value"] = ops::Tensor::scalar(true);
      mark(live);
      indicators[e].push_back(Endpoint{add(std::move(live), e), 0});
    }
    std::vector<Endpoint> parts;
    for (auto& [e, values] : indicators)
      parts.push_back(any_live(std::move(values),
                               fmt::format("_cf/{}/{}/any_next", frame.name, short_[static_cast<size_t>(e)]), e));
    std::map<int, Endpoint> out;
    if (parts.empty()) return out;
    for (int d : spread)
      out[d] = any_live(parts, fmt::format("_cf/{}/{}/continue", frame.name, short_[static_cast<size_t>(d)]), d);
    return out;
  }

  // Enter -> Merge -> NextIteration(continue) -> Merge on device d; the
  // Merge is live in every iteration the frame instance runs, and triggers
  // d's _Recvs in the frame.
  Status add_control_loop(FrameId f, int d, std::optional<Endpoint> signal) {
    const FrameInfo& frame = cf_.frames[static_cast<size_t>(f)];
    const std::string prefix = fmt::format("_cf/{}/{}/", frame.name, short_[static_cast<size_t>(d)]);
    Endpoint input;
    if (frame.parent == kRootFrame) {
      Node start;
      start.name = prefix + "start";
      start.op = "Const";
      start.attrs["dtype"] = DType::boolean;
      start.attrs["value"] = ops::Tensor::scalar(true);
      mark(start);
      input = Endpoint{add(std::move(start), d), 0};
    } else if (auto it = loops_.find({cf_.frames[static_cast<size_t>(frame.parent)].name, d});
               it != loops_.end()) {
      input = Endpoint{it->second.merge, 0};
    } else {
      return Status(Error::internal,
                    fmt::format("partition: the control loop of frame '{}' on device '{}' has no "
                                "way into {}",
                                frame.name, devices_[static_cast<size_t>(d)], frame_label(frame.parent)));
    }
    Node enter = bool_node(prefix + "Enter", "Enter");
    enter.inputs = {input};
    enter.attrs["frame_name"] = frame.name;
    enter.attrs["is_constant"] = false;
    enter.attrs["parallel_iterations"] = frame.parallel_iterations;
    NodeId enter_id = add(std::move(enter), d);
    Node merge = bool_node(prefix + "Merge", "Merge");
    merge.inputs = {Endpoint{enter_id, 0}};
    merge.attrs["N"] = int64_t{1};
    NodeId merge_id = add(std::move(merge), d);
    if (signal) {
      Node next = bool_node(prefix + "NextIteration", "NextIteration");
      next.inputs = {*signal};
      NodeId next_id = add(std::move(next), d);
      Node& m = g_.mutable_node(merge_id);
      m.inputs.push_back(Endpoint{next_id, 0});
      m.attrs["N"] = int64_t{2};
    }
    loops_[{frame.name, d}] = ControlLoop{merge_id, DType::boolean};
    return ok_status();
  }

  // The uses of one source endpoint on one other device: one transfer.
  struct Transfer {
    Endpoint src;
    int dst_device;
    std::vector<std::pair<NodeId, int>> uses;  // consumer, input (kControlPort: control)
  };

  Status add_transfers() {
    std::vector<Transfer> transfers;
    std::map<std::tuple<NodeId, int, int>, size_t> index;
    for (NodeId dst = 0; dst < g_.num_nodes(); ++dst) {
      auto visit = [&](Endpoint src, int input) {
        if (dev(src.node) == dev(dst)) return;
        auto [it, is_new] = index.emplace(std::make_tuple(src.node, src.port, dev(dst)), transfers.size());
        if (is_new) transfers.push_back(Transfer{src, dev(dst), {}});
        transfers[it->second].uses.emplace_back(dst, input);
      };
      const Node& n = g_.node(dst);
      for (size_t i = 0; i < n.inputs.size(); ++i) visit(n.inputs[i], static_cast<int>(i));
      for (NodeId c : n.control_inputs) visit(Endpoint{c, kControlPort}, kControlPort);
    }
    for (const Transfer& t : transfers) TF_RETURN_IF_ERROR(add_transfer(t));
    return ok_status();
  }

  Status add_transfer(const Transfer& t) {
    const int src_device = dev(t.src.node);
    const std::string key = transfer_key(name(t.src.node), t.src.port, short_[static_cast<size_t>(t.dst_device)]);
    Endpoint value = t.src;
    DType type = DType::int32;
    if (t.src.port == kControlPort) {
      // A control edge crosses as a value that is dead when the source is.
      Node c;
      c.name = "_send/" + key + "/control";
      c.op = "Const";
      c.control_inputs = {t.src.node};
      c.attrs["dtype"] = DType::int32;
      c.attrs["value"] = ops::Tensor::scalar<int32_t>(0);
      value = Endpoint{add(std::move(c), src_device), 0};
    } else {
      const Node& src = g_.node(t.src.node);
      if (static_cast<size_t>(t.src.port) >= src.output_types.size())
        return Status(Error::internal, fmt::format("partition: node '{}' has no type for output {}",
                                                   src.name, t.src.port));
      type = ops::base_dtype(src.output_types[static_cast<size_t>(t.src.port)]);
    }
    auto rendezvous = [&](Node& n) {
      n.attrs["tensor_name"] = key;
      n.attrs["send_device"] = devices_[static_cast<size_t>(src_device)];
      n.attrs["send_device_incarnation"] = int64_t{1};
      n.attrs["recv_device"] = devices_[static_cast<size_t>(t.dst_device)];
      n.attrs["client_terminated"] = false;
    };
    Node send;
    send.name = "_send/" + key;
    send.op = "_Send";
    send.inputs = {value};
    send.attrs["T"] = type;
    rendezvous(send);
    add(std::move(send), src_device);

    Node recv;
    recv.name = "_recv/" + key;
    recv.op = "_Recv";
    recv.attrs["tensor_type"] = type;
    rendezvous(recv);
    FrameId f = out_frame(t.src.node);
    if (f != kRootFrame) {
      // The control loop's Merge gives the Recv its frame and iteration.
      auto it = loops_.find({cf_.frames[static_cast<size_t>(f)].name, t.dst_device});
      if (it == loops_.end())
        return Status(Error::internal,
                      fmt::format("partition: no control loop of {} on device '{}' for the Recv "
                                  "of '{}'",
                                  frame_label(f), devices_[static_cast<size_t>(t.dst_device)], key));
      recv.control_inputs = {it->second.merge};
    }
    NodeId recv_id = add(std::move(recv), t.dst_device);
    for (const auto& [dst, input] : t.uses) {
      Node& n = g_.mutable_node(dst);
      if (input == kControlPort) {
        for (NodeId& c : n.control_inputs)
          if (c == t.src.node) c = recv_id;
      } else {
        n.inputs[static_cast<size_t>(input)] = Endpoint{recv_id, 0};
      }
    }
    return ok_status();
  }

  Expected<std::vector<Partition>> split() const {
    std::vector<Partition> out;
    std::vector<NodeId> new_id(static_cast<size_t>(g_.num_nodes()), kNoNode);
    for (size_t d = 0; d < devices_.size(); ++d) {
      Graph part;
      part.set_versions(g_.versions());
      bool calls = false;
      for (NodeId id = 0; id < g_.num_nodes(); ++id) {
        if (dev(id) != static_cast<int>(d)) continue;
        Node n = g_.node(id);
        n.inputs.clear();
        n.control_inputs.clear();
        calls |= g_.has_function(n.op);
        TF_ASSIGN_OR_RETURN(new_id[static_cast<size_t>(id)], part.add_node(std::move(n)));
      }
      if (part.num_nodes() == 0) continue;
      for (NodeId id = 0; id < g_.num_nodes(); ++id) {
        if (dev(id) != static_cast<int>(d)) continue;
        const Node& src = g_.node(id);
        for (const Endpoint& e : src.inputs)
          if (dev(e.node) != static_cast<int>(d))
            return Status(Error::internal, fmt::format("partition: edge '{}' -> '{}' still crosses devices",
                                                       name(e.node), src.name));
        for (NodeId c : src.control_inputs)
          if (dev(c) != static_cast<int>(d))
            return Status(Error::internal, fmt::format("partition: control edge '{}' -> '{}' still "
                                                       "crosses devices", name(c), src.name));
        Node& dst = part.mutable_node(new_id[static_cast<size_t>(id)]);
        for (const Endpoint& e : src.inputs) dst.inputs.push_back({new_id[static_cast<size_t>(e.node)], e.port});
        for (NodeId c : src.control_inputs) dst.control_inputs.push_back(new_id[static_cast<size_t>(c)]);
      }
      if (calls) part.mutable_library() = g_.library();
      Status s = validate(part);
      if (!s.ok()) return s.with_prefix(fmt::format("partition for device '{}': ", devices_[d]));
      out.push_back(Partition{devices_[d], std::move(part)});
    }
    return out;
  }

  Graph g_;
  std::vector<std::string> requested_;
  PartitionMutant mutant_;
  std::vector<std::string> devices_;  // canonical full names
  std::vector<std::string> short_;    // short names, for node names and keys
  std::vector<int> dev_;              // device index by NodeId
  ControlFlowInfo cf_;
  std::vector<FrameId> entered_;      // Enter -> the frame it opens; -1 otherwise
  // (frame name, device): frame ids may change when the graph is analysed again
  std::map<std::pair<std::string, int>, ControlLoop> loops_;
};

}  // namespace

Expected<std::vector<Partition>> partition_graph(const Graph& placed,
                                                 const std::vector<std::string>& devices,
                                                 const PartitionMutant& mutant) {
  return Partitioner(placed, devices, mutant).run();
}

}  // namespace tagflow::graph

namespace tagflow::graph {

namespace {

std::string dot_quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') out += "\\n";
    else out += c;
  }
  return out + "\"";
}

}  // namespace

std::string partitions_to_dot(const std::vector<Partition>& parts) {
  std::string out = "digraph tagflow_partitions {\n  compound=true;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  auto id = [](size_t p, NodeId n) { return "p" + std::to_string(p) + "_" + std::to_string(n); };
  std::map<std::string, std::string> send_of_key, recv_of_key;
  for (size_t p = 0; p < parts.size(); ++p) {
    const Graph& g = parts[p].graph;
    auto name = parse_device_name(parts[p].device);
    out += "  subgraph cluster_" + std::to_string(p) + " {\n    label=" +
           dot_quote(name.ok() ? short_name(*name) : parts[p].device) +
           "; style=rounded; color=\"#4060a0\";\n";
    for (NodeId n = 0; n < g.num_nodes(); ++n) {
      const Node& node = g.node(n);
      std::string style = "shape=box";
      const ops::OpRole role = node_role(node);
      if (role == ops::OpRole::send || role == ops::OpRole::recv) {
        style = "shape=cds, style=filled, fillcolor=\"#ffe0c0\"";
        const std::string* key = node.attr<std::string>("tensor_name");
        if (key != nullptr) (role == ops::OpRole::send ? send_of_key : recv_of_key)[*key] = id(p, n);
      } else if (node.name.rfind("_cf/", 0) == 0) {
        style = "shape=box, style=filled, fillcolor=\"#e0e0ff\"";
      }
      out += "    " + id(p, n) + " [label=" + dot_quote(node.name + "\n" + node.op) + ", " + style + "];\n";
    }
    out += "  }\n";
    for (NodeId n = 0; n < g.num_nodes(); ++n) {
      const Node& node = g.node(n);
      for (const Endpoint& e : node.inputs)
        out += "  " + id(p, e.node) + " -> " + id(p, n) + ";\n";
      for (NodeId c : node.control_inputs)
        out += "  " + id(p, c) + " -> " + id(p, n) + " [style=dashed, color=gray40];\n";
    }
  }
  for (const auto& [key, send] : send_of_key) {
    auto recv = recv_of_key.find(key);
    if (recv == recv_of_key.end()) continue;
    out += "  " + send + " -> " + recv->second + " [color=\"#c04000\", penwidth=2, label=" +
           dot_quote(key) + ", fontsize=8];\n";
  }
  out += "}\n";
  return out;
}

}  // namespace tagflow::graph
