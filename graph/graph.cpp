#include "graph/graph.hpp"

#include <algorithm>
#include <string_view>
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

Graph::Graph() : library_(std::make_unique<tensorflow::FunctionDefLibrary>()) {}
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

Graph::Graph(const Graph& o)
    : nodes_(o.nodes_),
      by_name_(o.by_name_),
      versions_(o.versions_),
      library_(std::make_unique<tensorflow::FunctionDefLibrary>(*o.library_)) {}

Graph& Graph::operator=(const Graph& o) {
  if (this != &o) *this = Graph(o);
  return *this;
}

Expected<NodeId> Graph::add_node(Node node) {
  if (node.name.empty()) return Status(Error::invalid_graph, "a node has an empty name");
  if (by_name_.count(node.name) != 0)
    return Status(Error::invalid_graph, "node '" + node.name + "' is defined twice");
  auto check = [&](NodeId id) { return id >= 0 && id < num_nodes(); };
  for (const Endpoint& e : node.inputs)
    if (!check(e.node))
      return Status(Error::invalid_graph, "node '" + node.name + "' has an input from a missing node");
  for (NodeId c : node.control_inputs)
    if (!check(c))
      return Status(Error::invalid_graph,
                    "node '" + node.name + "' has a control input from a missing node");
  NodeId id = num_nodes();
  by_name_.emplace(node.name, id);
  nodes_.push_back(std::move(node));
  invalidate();
  return id;
}

Node& Graph::mutable_node(NodeId id) {
  invalidate();
  return nodes_[static_cast<size_t>(id)];
}

NodeId Graph::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? kNoNode : it->second;
}

void Graph::build_out_edges() const {
  out_edges_.assign(nodes_.size(), {});
  for (NodeId dst = 0; dst < num_nodes(); ++dst) {
    const Node& n = nodes_[static_cast<size_t>(dst)];
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Endpoint& e = n.inputs[i];
      out_edges_[static_cast<size_t>(e.node)].push_back({e.port, dst, static_cast<int>(i)});
    }
    for (NodeId c : n.control_inputs)
      out_edges_[static_cast<size_t>(c)].push_back({kControlPort, dst, kControlPort});
  }
  out_edges_valid_ = true;
}

const std::vector<OutEdge>& Graph::out_edges(NodeId id) const {
  if (!out_edges_valid_) build_out_edges();
  return out_edges_[static_cast<size_t>(id)];
}

int Graph::num_outputs(NodeId id) const {
  const Node& n = node(id);
  if (n.def != nullptr) return static_cast<int>(n.output_types.size());
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

tensorflow::FunctionDefLibrary& Graph::mutable_library() { return *library_; }

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

size_t node_heap_bytes(const Node& n) {
  using ops::heap_bytes;
  size_t b = heap_bytes(n.name) + heap_bytes(n.op) + heap_bytes(n.device) + heap_bytes(n.attrs) +
             vector_bytes(n.inputs) + vector_bytes(n.control_inputs) +
             vector_bytes(n.input_types) + vector_bytes(n.output_types) +
             vector_bytes(n.original_node_names) + vector_bytes(n.original_func_names);
  for (const std::string& s : n.original_node_names) b += heap_bytes(s);
  for (const std::string& s : n.original_func_names) b += heap_bytes(s);
  return b;
}

}  // namespace

size_t Graph::memory_bytes() const {
  size_t b = sizeof(Graph) + vector_bytes(nodes_);
  for (const Node& n : nodes_) b += node_heap_bytes(n);
  // unordered_map: a bucket array and one list node (link, key, id, hash) per name.
  b += by_name_.bucket_count() * sizeof(void*);
  for (const auto& [name, id] : by_name_)
    b += sizeof(void*) + sizeof(std::string) + sizeof(NodeId) + sizeof(size_t) + ops::heap_bytes(name);
  b += vector_bytes(out_edges_);
  for (const auto& edges : out_edges_) b += vector_bytes(edges);
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
  for (const Node& a : nodes_) {
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
    if (a.original_node_names != b.original_node_names ||
        a.original_func_names != b.original_func_names)
      return differ("node '" + a.name + "' debug info differs");
  }
  if (!(versions_ == other.versions_)) return differ("versions differ");
  if (deterministic_bytes(*library_) != deterministic_bytes(*other.library_))
    return differ("function libraries differ");
  return true;
}

}  // namespace tagflow::graph
