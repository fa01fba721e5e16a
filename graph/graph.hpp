// Graph: tagflow's intermediate representation of a dataflow program.
//
// Nodes are stored densely and named; a NodeId is an index. Each node keeps
// its data inputs (producer node and output port, in order) and its control
// inputs; the consumers of every node are derived (out_edges). Attrs are
// plain ops::AttrValue. A Graph is built by import (graph/io/import.hpp) or by
// code, checked by validate() (graph/validate.hpp), and is immutable while
// anything executes it: sharing a const Graph across threads is safe.
//
// Memory (docs/performance.md, "A graph of 10⁶ nodes"): nodes live in chunks of
// 1024 that copies of a graph share until one of them changes a node of
// the chunk (copy on write), so a copy that changes little — the step graph
// of a signature that prunes nothing — costs a pointer per chunk, not a
// node. A node never moves while its graph only grows (add_node), but
// mutable_node may copy the node's chunk if another graph shares it: a
// reference taken before then still reads the unchanged node of the other
// graph. The name index is an open-addressing table of NodeIds (names are
// not copied) and the consumers are one array for the whole graph.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ops/attr_value.hpp"
#include "ops/dtype.hpp"
#include "ops/op_def.hpp"
#include "ops/status.hpp"

namespace tensorflow {
class FunctionDef;
class FunctionDefLibrary;
}

namespace tagflow::graph {

using ops::DType;
using ops::Error;
using ops::Expected;
using ops::Status;
using ops::ok_status;

using NodeId = int32_t;
constexpr NodeId kNoNode = -1;
constexpr int kControlPort = -1;

// One output of a node: "name" (port 0), "name:k"; port -1 is the control
// output ("^name").
struct Endpoint {
  NodeId node = kNoNode;
  int port = 0;
  bool operator==(const Endpoint& o) const { return node == o.node && port == o.port; }
  bool operator!=(const Endpoint& o) const { return !(*this == o); }
};

// An edge as seen from its producer: output `src_port` of the producer feeds
// input `dst_input` of `dst` (dst_input == kControlPort for control edges).
struct OutEdge {
  int src_port;
  NodeId dst;
  int dst_input;
};

// NodeDef.experimental_debug_info: rare, so out of line and shared by copies.
struct NodeDebugInfo {
  std::vector<std::string> original_node_names;
  std::vector<std::string> original_func_names;
  bool operator==(const NodeDebugInfo& o) const {
    return original_node_names == o.original_node_names &&
           original_func_names == o.original_func_names;
  }
};

struct Node {
  std::string name;
  std::string op;
  std::string device;  // as written: full, partial, legacy or empty
  ops::AttrMap attrs;  // after validate(): defaults of the op added
  ops::SmallVector<Endpoint, 2> inputs;  // data inputs, in order
  std::vector<NodeId> control_inputs;   // "^name" inputs, in order
  std::shared_ptr<const NodeDebugInfo> debug_info;  // nullptr when it has none

  // Resolved by validate(); def is nullptr for an op tagflow does not know
  // (and for function calls, see Graph::library()).
  const ops::OpDef* def = nullptr;
  ops::DTypes input_types;
  ops::DTypes output_types;

  // A typed attr or nullptr: node.attr<int64_t>("N").
  template <class T>
  const T* attr(std::string_view key) const {
    auto it = attrs.find(key);
    return it == attrs.end() ? nullptr : it->second.template get_if<T>();
  }
};

struct Versions {
  int32_t producer = 0;
  int32_t min_consumer = 0;
  std::vector<int32_t> bad_consumers;
  bool operator==(const Versions& o) const {
    return producer == o.producer && min_consumer == o.min_consumer &&
           bad_consumers == o.bad_consumers;
  }
};

// The node's role for the executor: its def's role once validated, else
// the role TensorFlow gives its op name (so that control-flow analysis and
// the cycle check work on graphs that have not been, or cannot be, fully
// validated).
ops::OpRole node_role(const Node& n);

// The consumers of one node: a view into the graph's consumer array, valid
// until the graph changes.
class OutEdges {
 public:
  OutEdges(const OutEdge* begin, const OutEdge* end) : begin_(begin), end_(end) {}
  const OutEdge* begin() const { return begin_; }
  const OutEdge* end() const { return end_; }
  size_t size() const { return static_cast<size_t>(end_ - begin_); }
  bool empty() const { return begin_ == end_; }
  const OutEdge& operator[](size_t i) const { return begin_[i]; }
  operator std::vector<OutEdge>() const { return {begin_, end_}; }  // a copy to keep

 private:
  const OutEdge* begin_;
  const OutEdge* end_;
};

class Graph;

// Every node of a graph in NodeId order (Graph::nodes()).
class NodeRange {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Node;
    using difference_type = std::ptrdiff_t;
    using pointer = const Node*;
    using reference = const Node&;
    iterator(const Graph* g, NodeId id) : g_(g), id_(id) {}
    reference operator*() const;
    pointer operator->() const { return &**this; }
    iterator& operator++() {
      ++id_;
      return *this;
    }
    iterator operator++(int) {
      iterator old = *this;
      ++id_;
      return old;
    }
    bool operator==(const iterator& o) const { return id_ == o.id_; }
    bool operator!=(const iterator& o) const { return id_ != o.id_; }

   private:
    const Graph* g_;
    NodeId id_;
  };
  explicit NodeRange(const Graph* g) : g_(g) {}
  iterator begin() const { return {g_, 0}; }
  iterator end() const;
  size_t size() const;
  bool empty() const { return size() == 0; }
  const Node& operator[](size_t i) const;
  const Node& front() const { return (*this)[0]; }
  const Node& back() const { return (*this)[size() - 1]; }

 private:
  const Graph* g_;
};

class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&);
  Graph& operator=(const Graph&);
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;

  // Adds a node; its name must be new and its inputs must name existing
  // nodes (else invalid_graph naming it). Import adds every node first and
  // then sets inputs through mutable_node, since GraphDefs may name a node
  // before defining it (back edges).
  Expected<NodeId> add_node(Node node);

  int num_nodes() const { return num_nodes_; }
  const Node& node(NodeId id) const {
    return chunks_[static_cast<size_t>(id) >> kChunkBits]->nodes[static_cast<size_t>(id) & kChunkMask];
  }
  // The node to change; copies its chunk first if another graph shares it.
  Node& mutable_node(NodeId id);
  NodeRange nodes() const { return NodeRange(this); }
  // kNoNode if there is no node of that name.
  NodeId find(std::string_view name) const;
  // Room for `n` nodes in the name index (import knows the count).
  void reserve(int n);

  // Consumers of each node, in the order of the consumers' ids. Rebuilt on
  // the first call after a change, so call it once (validate() does) before
  // a graph is shared across threads.
  OutEdges out_edges(NodeId id) const;
  // The number of data outputs a node has, from its op (or, for an op
  // without def, 1 + the highest port any consumer uses).
  int num_outputs(NodeId id) const;

  // "name" / "name:k" / "^name" for an endpoint.
  std::string endpoint_name(Endpoint e) const;

  const Versions& versions() const { return versions_; }
  void set_versions(Versions v) { versions_ = std::move(v); }

  // The function library, as imported (lowering in a later pass uses it).
  // Never null; empty when the GraphDef has none. Copies of a graph share
  // it until one of them asks for mutable_library(), which copies it
  // first when it is shared.
  const tensorflow::FunctionDefLibrary& library() const { return *library_; }
  // The library function of that name, or nullptr (a linear search).
  const tensorflow::FunctionDef* find_function(std::string_view name) const;
  tensorflow::FunctionDefLibrary& mutable_library();
  // This graph's library becomes `from`'s (shared, not copied).
  void share_library(const Graph& from);
  bool has_function(std::string_view name) const;

  // Bytes the graph holds in memory: its nodes with everything they own,
  // the name index and the consumer lists; not the function library. An
  // account from sizes and capacities (allocator overhead not included),
  // for tests and benchmarks that bound the bytes per node.
  size_t memory_bytes() const;
  // The part of memory_bytes() in node chunks that another graph shares.
  size_t shared_memory_bytes() const;

  // Same nodes (names, ops, devices, inputs, attrs), versions and library.
  bool equals(const Graph& other, std::string* difference = nullptr) const;

 private:
  static constexpr size_t kChunkBits = 10;
  static constexpr size_t kChunkSize = size_t{1} << kChunkBits;
  static constexpr size_t kChunkMask = kChunkSize - 1;
  struct Chunk {
    std::vector<Node> nodes;  // capacity kChunkSize: nodes never move
  };

  static std::shared_ptr<Chunk> copy_chunk(const Chunk& chunk);
  void invalidate() { out_edges_valid_ = false; }
  void build_out_edges() const;
  // A chunk's part of memory_bytes(): its control block, nodes and their heap.
  static size_t chunk_bytes(const Chunk& chunk);
  struct NameSlot {
    uint32_t hash;  // of the name: probes skip other names without reading their node
    NodeId id;      // kNoNode: free
  };
  static uint32_t name_hash(std::string_view name) {
    return static_cast<uint32_t>(std::hash<std::string_view>{}(name));
  }
  // The name's slot, or the free one it would take.
  size_t slot_of(std::string_view name, uint32_t hash) const;
  void index(NodeId id);

  std::vector<std::shared_ptr<Chunk>> chunks_;
  int num_nodes_ = 0;
  // Open addressing, linear probing. At most half full; its size is a
  // power of two.
  std::vector<NameSlot> by_name_;
  Versions versions_;
  // Shared by copies until one of them changes it (mutable_library).
  std::shared_ptr<tensorflow::FunctionDefLibrary> library_;
  // Consumers of node i: out_edges_[out_start_[i] .. out_start_[i + 1]).
  mutable std::vector<int32_t> out_start_;
  mutable std::vector<OutEdge> out_edges_;
  mutable bool out_edges_valid_ = false;

  friend class NodeRange;
};

inline const Node& NodeRange::iterator::operator*() const { return g_->node(id_); }
inline NodeRange::iterator NodeRange::end() const { return {g_, g_->num_nodes()}; }
inline size_t NodeRange::size() const { return static_cast<size_t>(g_->num_nodes()); }
inline const Node& NodeRange::operator[](size_t i) const { return g_->node(static_cast<NodeId>(i)); }

}  // namespace tagflow::graph
