// Import: GraphDef files (.pbtxt text or .pb binary, detected from the
// content) into a Graph. Parsing uses protobuf's own TextFormat parser and
// binary decoder; errors (parse_error) carry the source name and, for text,
// FILE:LINE:COL. A plain GraphDef is read a node at a time
// (graph/io/graph_def_reader.hpp), so that a large graph never exists twice,
// as a GraphDef and as a Graph; results and errors are those of reading it
// whole. A binary input is first read as bare wire fields, so that
// a truncated or foreign file is refused without a typed parse. An input,
// text or binary, that holds no nodes and no functions (a blank or one-byte
// file) is refused too, never returned as an empty graph. Import resolves node names and inputs ("name", "name:k",
// "^name"; data inputs before control inputs) and reports, naming the node,
// a missing node, a malformed input, a negative port and a duplicate name
// (invalid_graph), and a graph beyond its ImportOptions limits
// (resource_exhausted); it does not check ops, ports or dtypes: that is
// validate(). The function library and versions are kept as they are,
// but for unknown fields (which a text GraphDef cannot express). Every
// string field must be UTF-8 (proto3 `string`; the binary decoder checks
// it, text import too), so that any imported graph exports to both formats.
// Stateless; thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "graph/graph.hpp"

namespace tensorflow {
class GraphDef;
class NodeDef;
}

namespace tagflow::graph {
inline namespace io {

enum class GraphFormat { text, binary };

// The nodes a graph may have unless told otherwise (the session's
// --max-nodes and [tagflow] max-nodes).
constexpr int64_t kDefaultMaxNodes = 10'000'000;

// Limits for untrusted graphs, checked on the decoded GraphDef before any
// node or tensor is made from it; errors (resource_exhausted) name the
// limit and its option.
struct ImportOptions {
  int64_t max_nodes = kDefaultMaxNodes;  // 0: none
  // What the graph's constants — the tensor attrs of its nodes and of its
  // functions' nodes — may declare together, as shape x dtype size (a
  // constant may declare a large shape with one value); default: the
  // default per-step memory limit (ops::default_memory_limit()); 0: none.
  int64_t max_constant_bytes = -1;
};

// Reads `path`; the format is detected from the bytes (a MetaGraphDef or
// SavedModel container is also accepted and its first graph taken).
Expected<Graph> import_graph_file(const std::string& path, const ImportOptions& options = {});
// `source` names the input in error messages (a file name, "<string>").
Expected<Graph> import_graph_text(std::string_view text, const std::string& source = "<text>",
                                  const ImportOptions& options = {});
Expected<Graph> import_graph_binary(std::string_view bytes, const std::string& source = "<binary>",
                                    const ImportOptions& options = {});
// Detects text or binary from the bytes.
Expected<Graph> import_graph_bytes(std::string_view bytes, const std::string& source,
                                   const ImportOptions& options = {});
Expected<Graph> graph_from_proto(const tensorflow::GraphDef& def, const std::string& source = "<proto>",
                                 const ImportOptions& options = {});
// A NodeDef's experimental_debug_info; nullptr when it has none.
std::shared_ptr<const NodeDebugInfo> debug_info_from_proto(const tensorflow::NodeDef& def);

}  // namespace io
}  // namespace tagflow::graph
