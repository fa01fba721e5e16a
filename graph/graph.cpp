#include "graph/graph.hpp"

#include <algorithm>
#include <string_view>
#include <functional>
#include <unordered_map>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "graph/proto/graph_def.pb.h"

namespace tagflow::graph {

ops::OpRole node_role(const Node& n) {
  using ops::OpRole;
  if (n.def != nullptr) return n.def->role();
  static const std::unordered_map<std::string_view, OpRole> kRoles = {
      {"Switch", OpRole::switch_op},
      {"RefSwitch", OpRole::switch_op},
      {"_SwitchN", OpRole::switch_n},
      {"Merge", OpRole::merge},
      {"RefMerge", OpRole::merge},
      {"Enter", OpRole::enter},
      {"RefEnter", OpRole::enter},
      {"Exit", OpRole::exit},
      {"RefExit", OpRole::exit},
      {"NextIteration", OpRole::next_iteration},
      {"RefNextIteration", OpRole::next_iteration},
      {"LoopCond", OpRole::loop_cond},
      {"ControlTrigger", OpRole::control_trigger},
      {"_Send", OpRole::send},
      {"_HostSend", OpRole::send},
      {"_Recv", OpRole::recv},
      {"_HostRecv", OpRole::recv},
      {"If", OpRole::function_call},
      {"StatelessIf", OpRole::function_call},
      {"_If", OpRole::function_call},
      {"While", OpRole::function_call},
      {"StatelessWhile", OpRole::function_call},
      {"_While", OpRole::function_call},
      {"Case", OpRole::function_call},
      {"StatelessCase", OpRole::function_call},
      {"For", OpRole::function_call},
      {"PartitionedCall", OpRole::function_call},
      {"StatefulPartitionedCall", OpRole::function_call},
  };
  auto it = kRoles.find(n.op);
  return it == kRoles.end() ? OpRole::ordinary : it->second;
}

Graph::Graph() : library_(std::make_shared<tensorflow::FunctionDefLibrary>()) {}
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

// The chunks are shared, not copied: see the header.
Graph::Graph(const Graph& o)
    : chunks_(o.chunks_),
      num_nodes_(o.num_nodes_),
      by_name_(o.by_name_),
      versions_(o.versions_),
      library_(o.library_) {}

Graph& Graph::operator=(const Graph& o) {
  if (this != &o) *this = Graph(o);
  return *this;
}

// A copy keeps the chunk's full capacity, so that nodes added to it later
// do not move the ones already there.
std::shared_ptr<Graph::Chunk> Graph::copy_chunk(const Chunk& chunk) {
  auto copy = std::make_shared<Chunk>();
  copy->nodes.reserve(kChunkSize);
  copy->nodes = chunk.nodes;
  return copy;
}

Expected<NodeId> Graph::add_node(Node node) {
  if (node.name.empty()) return Status(Error::invalid_graph, "a node has an empty name");
  if (find(node.name) != kNoNode)
    return Status(Error::invalid_graph, "node '" + node.name + "' is defined twice");
  auto check = [&](NodeId id) { return id >= 0 && id < num_nodes(); };
  for (const Endpoint& e : node.inputs)
    if (!check(e.node))
      return Status(Error::invalid_graph, "node '" + node.name + "' has an input from a missing node");
  for (NodeId c : node.control_inputs)
    if (!check(c))
      return Status(Error::invalid_graph,
                    "node '" + node.name + "' has a control input from a missing node");
  const NodeId id = num_nodes_;
  if (static_cast<size_t>(id) == chunks_.size() * kChunkSize) {
    chunks_.push_back(std::make_shared<Chunk>());
    chunks_.back()->nodes.reserve(kChunkSize);
  } else if (chunks_.back().use_count() > 1) {
    chunks_.back() = copy_chunk(*chunks_.back());
  }
  chunks_.back()->nodes.push_back(std::move(node));
  ++num_nodes_;
  index(id);
  invalidate();
  return id;
}

Node& Graph::mutable_node(NodeId id) {
  invalidate();
  std::shared_ptr<Chunk>& chunk = chunks_[static_cast<size_t>(id) >> kChunkBits];
  // The graph is not shared across threads while it changes, so a count of
  // one means that no other graph holds the chunk.
  if (chunk.use_count() > 1) chunk = copy_chunk(*chunk);
  return chunk->nodes[static_cast<size_t>(id) & kChunkMask];
}

size_t Graph::slot_of(std::string_view name, uint32_t hash) const {
  const size_t mask = by_name_.size() - 1;
  size_t i = hash & mask;
  while (by_name_[i].id != kNoNode && (by_name_[i].hash != hash || node(by_name_[i].id).name != name))
    i = (i + 1) & mask;
  return i;
}

NodeId Graph::find(std::string_view name) const {
  return by_name_.empty() ? kNoNode : by_name_[slot_of(name, name_hash(name))].id;
}

void Graph::reserve(int n) {
  chunks_.reserve((static_cast<size_t>(n) + kChunkSize - 1) / kChunkSize);
  size_t slots = 16;
  while (slots < 2 * static_cast<size_t>(n)) slots *= 2;
  if (slots <= by_name_.size()) return;
  std::vector<NameSlot> old(slots, NameSlot{0, kNoNode});
  old.swap(by_name_);
  const size_t mask = slots - 1;
  for (const NameSlot& s : old) {
    if (s.id == kNoNode) continue;
    size_t i = s.hash & mask;
    while (by_name_[i].id != kNoNode) i = (i + 1) & mask;
    by_name_[i] = s;
  }
}

void Graph::index(NodeId id) {
  if (2 * static_cast<size_t>(num_nodes_) > by_name_.size()) reserve(num_nodes_);
  const std::string& name = node(id).name;
  const uint32_t hash = name_hash(name);
  by_name_[slot_of(name, hash)] = NameSlot{hash, id};
}

void Graph::build_out_edges() const {
  const size_t n = static_cast<size_t>(num_nodes_);
  out_start_.assign(n + 1, 0);
  for (const Node& dst : nodes()) {
    for (const Endpoint& e : dst.inputs) ++out_start_[static_cast<size_t>(e.node) + 1];
    for (NodeId c : dst.control_inputs) ++out_start_[static_cast<size_t>(c) + 1];
  }
  for (size_t i = 0; i < n; ++i) out_start_[i + 1] += out_start_[i];
  out_edges_.resize(static_cast<size_t>(out_start_[n]));
  out_edges_.shrink_to_fit();
  std::vector<int32_t> next(out_start_.begin(), out_start_.end() - 1);
  for (NodeId dst = 0; dst < num_nodes_; ++dst) {
    const Node& d = node(dst);
    for (size_t i = 0; i < d.inputs.size(); ++i) {
      const Endpoint& e = d.inputs[i];
      out_edges_[static_cast<size_t>(next[static_cast<size_t>(e.node)]++)] = {e.port, dst, static_cast<int>(i)};
    }
    for (NodeId c : d.control_inputs)
      out_edges_[static_cast<size_t>(next[static_cast<size_t>(c)]++)] = {kControlPort, dst, kControlPort};
  }
  out_edges_valid_ = true;
}

OutEdges Graph::out_edges(NodeId id) const {
  if (!out_edges_valid_) build_out_edges();
  const OutEdge* base = out_edges_.data();
  return OutEdges(base + out_start_[static_cast<size_t>(id)], base + out_start_[static_cast<size_t>(id) + 1]);
}

const tensorflow::FunctionDef* Graph::find_function(std::string_view name) const {
  for (const auto& f : library_->function())
    if (f.signature().name() == name) return &f;
  return nullptr;
}

int Graph::num_outputs(NodeId id) const {
  const Node& n = node(id);
  if (n.def != nullptr) return static_cast<int>(n.output_types.size());
  // A function call validate() resolved has its signature's outputs.
  if (!n.output_types.empty()) return static_cast<int>(n.output_types.size());
  // One it did not (functions are checked on demand) has them too, when
  // each output arg is one tensor.
  if (const tensorflow::FunctionDef* f = find_function(n.op)) {
    bool single = true;
    for (const auto& a : f->signature().output_arg())
      single = single && a.number_attr().empty() && a.type_list_attr().empty();
    if (single) return f->signature().output_arg_size();
  }
  int highest = -1;
  for (const OutEdge& e : out_edges(id)) highest = std::max(highest, e.src_port);
  return std::max(highest + 1, 1);
}

std::string Graph::endpoint_name(Endpoint e) const {
  const std::string& name = node(e.node).name;
  if (e.port == kControlPort) return "^" + name;
  if (e.port == 0) return name;
  return name + ":" + std::to_string(e.port);
}

void Graph::share_library(const Graph& from) { library_ = from.library_; }

tensorflow::FunctionDefLibrary& Graph::mutable_library() {
  if (library_.use_count() > 1) library_ = std::make_shared<tensorflow::FunctionDefLibrary>(*library_);
  return *library_;
}

bool Graph::has_function(std::string_view name) const {
  for (const auto& f : library_->function())
    if (f.signature().name() == name) return true;
  return false;
}

namespace {

template <class T>
size_t vector_bytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}

template <class T, uint32_t N>
size_t vector_bytes(const ops::SmallVector<T, N>& v) {
  return v.on_heap() ? v.capacity() * sizeof(T) : 0;
}

size_t node_heap_bytes(const Node& n) {
  using ops::heap_bytes;
  size_t b = heap_bytes(n.name) + heap_bytes(n.op) + heap_bytes(n.device) + heap_bytes(n.attrs) +
             vector_bytes(n.inputs) + vector_bytes(n.control_inputs) +
             vector_bytes(n.input_types) + vector_bytes(n.output_types);
  if (n.debug_info) {
    // make_shared: the control block and the info in one block.
    b += 2 * sizeof(void*) + sizeof(NodeDebugInfo) + vector_bytes(n.debug_info->original_node_names) +
         vector_bytes(n.debug_info->original_func_names);
    for (const std::string& s : n.debug_info->original_node_names) b += heap_bytes(s);
    for (const std::string& s : n.debug_info->original_func_names) b += heap_bytes(s);
  }
  return b;
}

}  // namespace

size_t Graph::memory_bytes() const {
  size_t b = sizeof(Graph) + vector_bytes(chunks_) + vector_bytes(by_name_) +
             vector_bytes(out_start_) + vector_bytes(out_edges_);
  for (const auto& chunk : chunks_) b += chunk_bytes(*chunk);
  return b;
}

size_t Graph::chunk_bytes(const Chunk& chunk) {
  size_t b = 2 * sizeof(void*) + sizeof(Chunk) + vector_bytes(chunk.nodes);
  for (const Node& n : chunk.nodes) b += node_heap_bytes(n);
  return b;
}

size_t Graph::shared_memory_bytes() const {
  size_t b = 0;
  for (const auto& chunk : chunks_)
    if (chunk.use_count() > 1) b += chunk_bytes(*chunk);
  return b;
}

namespace {

// Map fields (FunctionDef.attr, ret, arg_attr) serialize in hash order
// unless asked for key order; equal libraries must give equal bytes.
std::string deterministic_bytes(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  m.SerializeToCodedStream(&coded);
  coded.Trim();
  return out;
}

}  // namespace

bool Graph::equals(const Graph& other, std::string* difference) const {
  auto differ = [&](const std::string& what) {
    if (difference != nullptr) *difference = what;
    return false;
  };
  if (num_nodes() != other.num_nodes())
    return differ("node count " + std::to_string(num_nodes()) + " vs " +
                  std::to_string(other.num_nodes()));
  for (const Node& a : nodes()) {
    NodeId bid = other.find(a.name);
    if (bid == kNoNode) return differ("node '" + a.name + "' is missing");
    const Node& b = other.node(bid);
    if (a.op != b.op) return differ("node '" + a.name + "' op " + a.op + " vs " + b.op);
    if (a.device != b.device) return differ("node '" + a.name + "' device differs");
    if (a.attrs != b.attrs) return differ("node '" + a.name + "' attrs differ");
    if (a.inputs.size() != b.inputs.size() || a.control_inputs.size() != b.control_inputs.size())
      return differ("node '" + a.name + "' input count differs");
    for (size_t i = 0; i < a.inputs.size(); ++i)
      if (endpoint_name(a.inputs[i]) != other.endpoint_name(b.inputs[i]))
        return differ("node '" + a.name + "' input " + std::to_string(i) + " differs");
    for (size_t i = 0; i < a.control_inputs.size(); ++i)
      if (node(a.control_inputs[i]).name != other.node(b.control_inputs[i]).name)
        return differ("node '" + a.name + "' control input " + std::to_string(i) + " differs");
    static const NodeDebugInfo kNone;
    if (!(a.debug_info ? *a.debug_info : kNone).operator==(b.debug_info ? *b.debug_info : kNone))
      return differ("node '" + a.name + "' debug info differs");
  }
  if (!(versions_ == other.versions_)) return differ("versions differ");
  if (library_ != other.library_ && deterministic_bytes(*library_) != deterministic_bytes(*other.library_))
    return differ("function libraries differ");
  return true;
}

}  // namespace tagflow::graph
