// Import: GraphDef files (.pbtxt text or .pb binary, detected from the
// content) into a Graph. Parsing uses protobuf's own TextFormat parser and
// binary decoder; errors carry the file name and, for text, line:column.
// Import resolves node names and inputs ("name", "name:k", "^name") but does
// not check ops or dtypes: that is validate(). Stateless; thread-safe.
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
