// GraphDef readers that hand over the nodes one at a time, so that import
// never holds the whole GraphDef of a large graph (10^6 nodes: ~650 MB)
// beside the graph it builds. Both parse with protobuf's own parsers and
// accept and refuse exactly what parsing the whole GraphDef does, with the
// same error:
//   - text: the text is cut at lines that start (column 0) with a top-level
//     field name — `node`, `library`, `versions`, `version` — as TensorFlow
//     and protobuf print them; runs of `node` lines are parsed by
//     TextFormat a few hundred KB at a time (as NodeDefRun, so that nothing
//     but nodes may hide in them) and the other lines together as one
//     GraphDef. Text cut anywhere else (a nested field at column 0, a syntax
//     error) makes the reader parse the whole text instead, as before:
//     errors keep their exact FILE:LINE:COL.
//   - binary: the top-level fields are read one by one; each `node` field
//     is parsed as a NodeDef and the other fields are kept as bytes and
//     parsed together at the end.
// Stateless; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "graph/graph.hpp"

namespace google::protobuf {
class Message;
}  // namespace google::protobuf

namespace tensorflow {
class GraphDef;
class NodeDef;
}  // namespace tensorflow

namespace tagflow::graph {
inline namespace io {

// Receives the nodes of a GraphDef, in file order, as a reader finds them.
class NodeDefSink {
 public:
  virtual ~NodeDefSink() = default;
  // The node is the sink's to take apart (its strings may be moved out);
  // the reader reuses the object afterwards.
  virtual void node(tensorflow::NodeDef& def) = 0;
  // Forget every node received so far: the reader starts over.
  virtual void restart() = 0;
};

// The GraphDef without its nodes (versions, library), or the parse error of
// the whole text (parse_error, "FILE:LINE:COL: message").
Expected<tensorflow::GraphDef> read_text_graph_def(std::string_view text, const std::string& source,
                                                   NodeDefSink& sink);

// The bytes must be a GraphDef, not a container. Errors: parse_error
// "SOURCE: not a valid binary GraphDef".
Expected<tensorflow::GraphDef> read_binary_graph_def(std::string_view bytes,
                                                     const std::string& source, NodeDefSink& sink);

// Any message in protobuf's text format (a saved_model.pbtxt), parsed
// whole; a parse_error "SOURCE:LINE:COL: what protobuf says", or "SOURCE:
// malformed text WHAT" when it says nothing.
Status parse_text_message(std::string_view text, const std::string& source, const char* what,
                          google::protobuf::Message* out);

}  // namespace io
}  // namespace tagflow::graph
