// Import: GraphDef files (.pbtxt text or .pb binary, detected from the
// content) into a Graph. Parsing uses protobuf's own TextFormat parser and
// binary decoder; errors (parse_error) carry the source name and, for text,
// FILE:LINE:COL. A binary input is first read as bare wire fields, so that
// a truncated or foreign file is refused without a typed parse; one that
// decodes to no nodes and no functions is refused too, never returned as an
// empty graph. Import resolves node names and inputs ("name", "name:k",
// "^name"; data inputs before control inputs) and reports, naming the node,
// a missing node, a malformed input, a negative port and a duplicate name
// (invalid_graph); it does not check ops, ports or dtypes: that is
// validate(). The function library and versions are kept as they are,
// but for unknown fields (which a text GraphDef cannot express). Every
// string field must be UTF-8 (proto3 `string`; the binary decoder checks
// it, text import too), so that any imported graph exports to both formats.
// Stateless; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "graph/graph.hpp"

namespace tensorflow {
class GraphDef;
}

namespace tagflow::graph {

enum class GraphFormat { text, binary };

// Reads `path`; the format is detected from the bytes (a MetaGraphDef or
// SavedModel container is also accepted and its first graph taken).
Expected<Graph> import_graph_file(const std::string& path);
// `source` names the input in error messages (a file name, "<string>").
Expected<Graph> import_graph_text(std::string_view text, const std::string& source = "<text>");
Expected<Graph> import_graph_binary(std::string_view bytes, const std::string& source = "<binary>");
// Detects text or binary from the bytes.
Expected<Graph> import_graph_bytes(std::string_view bytes, const std::string& source);
Expected<Graph> graph_from_proto(const tensorflow::GraphDef& def, const std::string& source = "<proto>");

}  // namespace tagflow::graph
