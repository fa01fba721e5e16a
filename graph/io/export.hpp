// Export: a Graph back to a GraphDef (.pbtxt or .pb), and to Graphviz .dot
// with one cluster per frame. import(export(g)) equals g. Thread-safe for a
// graph nobody is changing.
#pragma once

#include <string>

#include "graph/graph.hpp"

namespace tensorflow {
class GraphDef;
}

namespace tagflow::graph {
inline namespace analysis {
struct ControlFlowInfo;
}  // namespace analysis
inline namespace io {

void graph_to_proto(const Graph& g, tensorflow::GraphDef* out);
std::string graph_to_text(const Graph& g);
std::string graph_to_binary(const Graph& g);
// Nodes grouped in one cluster per frame (nested as the frames are), edges
// labelled with ports; control edges dashed; back edges into Merge marked.
std::string graph_to_dot(const Graph& g, const ControlFlowInfo& frames);
// Writes by extension: .pbtxt/.pbtext/.txt → text, .pb → binary, .dot → dot.
// A GraphDef is written only if import_graph_bytes takes it back (an empty
// graph, which import refuses, is an error here rather than a 0-byte .pb).
Status export_graph_file(const Graph& g, const std::string& path);

}  // namespace io
}  // namespace tagflow::graph
