// Graph: tagflow's intermediate representation of a dataflow program.
//
// Nodes are stored densely and named; a NodeId is an index. Each node keeps
// its data inputs (producer node and output port, in order) and its control
// inputs; the consumers of every node are derived (out_edges). Attrs are
// plain ops::AttrValue. A Graph is built by import (graph/import.hpp) or by
// code, checked by validate() (graph/validate.hpp), and is immutable while
// anything executes it: sharing a const Graph across threads is safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ops/attr_value.hpp"
#include "ops/dtype.hpp"
#include "ops/op_def.hpp"
#include "ops/status.hpp"

namespace tensorflow {
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

struct Node {
  std::string name;
  std::string op;
  std::string device;  // as written: full, partial, legacy or empty
  ops::AttrMap attrs;  // after validate(): defaults of the op added
  std::vector<Endpoint> inputs;         // data inputs, in order
  std::vector<NodeId> control_inputs;   // "^name" inputs, in order
  std::vector<std::string> original_node_names;  // experimental_debug_info
  std::vector<std::string> original_func_names;

  // Resolved by validate(); def is nullptr for an op tagflow does not know
  // (and for function calls, see Graph::library()).
  const ops::OpDef* def = nullptr;
  std::vector<DType> input_types;
  std::vector<DType> output_types;

  // A typed attr or nullptr: node.attr<int64_t>("N").
  template <class T>
  const T* attr(const std::string& key) const {
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

  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const Node& node(NodeId id) const { return nodes_[static_cast<size_t>(id)]; }
  Node& mutable_node(NodeId id);
  const std::vector<Node>& nodes() const { return nodes_; }
  // kNoNode if there is no node of that name.
  NodeId find(std::string_view name) const;

  // Consumers of each node, in the order of the consumers' ids. Rebuilt on
  // the first call after a change, so call it once (validate() does) before
  // a graph is shared across threads.
  const std::vector<OutEdge>& out_edges(NodeId id) const;
  // The number of data outputs a node has, from its op (or, for an op
  // without def, 1 + the highest port any consumer uses).
  int num_outputs(NodeId id) const;

  // "name" / "name:k" / "^name" for an endpoint.
  std::string endpoint_name(Endpoint e) const;

  const Versions& versions() const { return versions_; }
  void set_versions(Versions v) { versions_ = std::move(v); }

  // The function library, as imported (lowering in a later pass uses it).
  // Never null; empty when the GraphDef has none.
  const tensorflow::FunctionDefLibrary& library() const { return *library_; }
  tensorflow::FunctionDefLibrary& mutable_library();
  bool has_function(std::string_view name) const;

  // Bytes the graph holds in memory: its nodes with everything they own,
  // the name index and the consumer lists; not the function library. An
  // account from sizes and capacities (allocator overhead not included),
  // for tests and benchmarks that bound the bytes per node.
  size_t memory_bytes() const;

  // Same nodes (names, ops, devices, inputs, attrs), versions and library.
  bool equals(const Graph& other, std::string* difference = nullptr) const;

 private:
  void invalidate() { out_edges_valid_ = false; }
  void build_out_edges() const;

  std::vector<Node> nodes_;
  std::unordered_map<std::string, NodeId> by_name_;
  Versions versions_;
  std::unique_ptr<tensorflow::FunctionDefLibrary> library_;
  mutable std::vector<std::vector<OutEdge>> out_edges_;
  mutable bool out_edges_valid_ = false;
};

}  // namespace tagflow::graph
