#include "graph/io/export.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include "graph/analysis/control_flow.hpp"
#include "graph/io/import.hpp"
#include "graph/io/tensor_proto.hpp"
#include "graph/proto/graph_def.pb.h"

namespace tagflow::graph {
inline namespace io {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Status write_file(const std::string& path, const std::string& bytes) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f)
    return Status(Error::not_found, "cannot write '" + path + "': " + std::strerror(errno));
  if (std::fwrite(bytes.data(), 1, bytes.size(), f.get()) != bytes.size() ||
      std::fflush(f.get()) != 0)
    return Status(Error::internal, "cannot write '" + path + "': " + std::strerror(errno));
  return ok_status();
}

// --- Graphviz --------------------------------------------------------------

std::string dot_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string dot_id(NodeId id) { return "n" + std::to_string(id); }

const char* node_style(ops::OpRole role) {
  using ops::OpRole;
  switch (role) {
    case OpRole::switch_op: case OpRole::switch_n:
      return "shape=diamond, style=filled, fillcolor=\"#ffe0b0\"";
    case OpRole::merge: return "shape=invtriangle, style=filled, fillcolor=\"#ffe0b0\"";
    case OpRole::enter: return "shape=invhouse, style=filled, fillcolor=\"#c8e6ff\"";
    case OpRole::exit: return "shape=house, style=filled, fillcolor=\"#c8e6ff\"";
    case OpRole::next_iteration: return "shape=box, style=\"filled,bold\", fillcolor=\"#ffd0d0\"";
    case OpRole::loop_cond: return "shape=octagon, style=filled, fillcolor=\"#e0ffe0\"";
    case OpRole::send: case OpRole::recv: return "shape=cds";
    default: return "shape=box";
  }
}

class DotWriter {
 public:
  DotWriter(const Graph& g, const ControlFlowInfo& cf) : g_(g), cf_(cf) {}

  std::string write() {
    out_ += "digraph tagflow {\n  compound=true;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
    bool frames_fit = cf_.frame_of.size() == static_cast<size_t>(g_.num_nodes()) &&
                      !cf_.frames.empty();
    if (frames_fit) {
      write_frame(kRootFrame, 1);
    } else {
      for (NodeId id = 0; id < g_.num_nodes(); ++id) write_node(id, 1);
    }
    for (NodeId id = 0; id < g_.num_nodes(); ++id) write_in_edges(id);
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  void indent(int depth) { out_.append(static_cast<size_t>(2 * depth), ' '); }

  void write_node(NodeId id, int depth) {
    const Node& n = g_.node(id);
    indent(depth);
    out_ += dot_id(id) + " [label=" + dot_string(n.name + "\n" + n.op) + ", " +
            node_style(node_role(n)) + "];\n";
  }

  // A frame's own nodes, then its child frames as nested clusters.
  void write_frame(FrameId f, int depth) {
    const FrameInfo& frame = cf_.frames[static_cast<size_t>(f)];
    if (f != kRootFrame) {
      indent(depth - 1);
      out_ += "subgraph cluster_" + std::to_string(f) + " {\n";
      indent(depth);
      std::string label = "frame " + frame.name;
      if (frame.pivot != kNoNode) label += "\npivot " + g_.node(frame.pivot).name;
      out_ += "label=" + dot_string(label) + "; style=rounded; color=\"#4060a0\";\n";
    }
    for (NodeId id : frame.nodes) write_node(id, depth);
    for (FrameId child : frame.children) write_frame(child, depth + 1);
    if (f != kRootFrame) {
      indent(depth - 1);
      out_ += "}\n";
    }
  }

  void write_in_edges(NodeId dst) {
    const Node& n = g_.node(dst);
    const bool merge = node_role(n) == ops::OpRole::merge;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const Endpoint& e = n.inputs[i];
      std::string attrs = "label=\"" + std::to_string(e.port) + ":" + std::to_string(i) + "\"";
      if (merge && node_role(g_.node(e.node)) == ops::OpRole::next_iteration)
        attrs += ", color=red, penwidth=2, constraint=false, xlabel=\"back edge\"";
      out_ += "  " + dot_id(e.node) + " -> " + dot_id(dst) + " [" + attrs + "];\n";
    }
    for (NodeId src : n.control_inputs)
      out_ += "  " + dot_id(src) + " -> " + dot_id(dst) + " [style=dashed, color=gray40];\n";
  }

  const Graph& g_;
  const ControlFlowInfo& cf_;
  std::string out_;
};

}  // namespace

void graph_to_proto(const Graph& g, tensorflow::GraphDef* out) {
  out->Clear();
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    const Node& n = g.node(id);
    tensorflow::NodeDef* def = out->add_node();
    def->set_name(n.name);
    def->set_op(n.op);
    for (const Endpoint& e : n.inputs) def->add_input(g.endpoint_name(e));
    for (NodeId c : n.control_inputs) def->add_input("^" + g.node(c).name);
    def->set_device(n.device);
    auto& attrs = *def->mutable_attr();
    for (const auto& [key, value] : n.attrs) attr_to_proto(value, &attrs[key]);
    if (n.debug_info) {
      auto* debug = def->mutable_experimental_debug_info();
      for (const auto& s : n.debug_info->original_node_names) debug->add_original_node_names(s);
      for (const auto& s : n.debug_info->original_func_names) debug->add_original_func_names(s);
    }
  }
  const tensorflow::FunctionDefLibrary& library = g.library();
  if (library.ByteSizeLong() != 0) *out->mutable_library() = library;
  const Versions& v = g.versions();
  if (!(v == Versions{})) {
    auto* versions = out->mutable_versions();
    versions->set_producer(v.producer);
    versions->set_min_consumer(v.min_consumer);
    for (int32_t b : v.bad_consumers) versions->add_bad_consumers(b);
  }
}

std::string graph_to_text(const Graph& g) {
  tensorflow::GraphDef def;
  graph_to_proto(g, &def);
  std::string out;
  google::protobuf::TextFormat::PrintToString(def, &out);
  return out;
}

std::string graph_to_binary(const Graph& g) {
  tensorflow::GraphDef def;
  graph_to_proto(g, &def);
  std::string out;
  {
    // Deterministic: attr maps are written in key order, so equal graphs
    // give equal bytes.
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    def.SerializeToCodedStream(&coded);
  }
  return out;
}

std::string graph_to_dot(const Graph& g, const ControlFlowInfo& frames) {
  return DotWriter(g, frames).write();
}

// Writes a GraphDef only if import takes it back: a file tagflow writes is
// one it reads (an empty graph would be a 0-byte .pb that import refuses).
Status write_importable(const std::string& path, const std::string& bytes) {
  auto back = import_graph_bytes(bytes, path);
  if (!back.ok())
    return Status(back.status().code(),
                  "not writing '" + path + "': tagflow would refuse to import it (" +
                      back.status().message() + ")");
  return write_file(path, bytes);
}

Status export_graph_file(const Graph& g, const std::string& path) {
  if (ends_with(path, ".pbtxt") || ends_with(path, ".pbtext") || ends_with(path, ".txt"))
    return write_importable(path, graph_to_text(g));
  if (ends_with(path, ".pb")) return write_importable(path, graph_to_binary(g));
  if (ends_with(path, ".dot")) {
    auto frames = analyze_control_flow(g);
    if (!frames.ok()) return frames.status().with_prefix("cannot group '" + path + "' by frame: ");
    return write_file(path, graph_to_dot(g, *frames));
  }
  return Status(Error::invalid_argument,
                "cannot tell the format of '" + path +
                    "' from its extension (use .pbtxt, .pbtext, .txt, .pb or .dot)");
}

}  // namespace io
}  // namespace tagflow::graph
