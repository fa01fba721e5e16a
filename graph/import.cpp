#include "graph/import.hpp"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/unknown_field_set.h>

#include "graph/proto/graph_def.pb.h"
#include "graph/tensor_proto.hpp"
#include "ops/memory_budget.hpp"

namespace tagflow::graph {

namespace {

namespace pb = google::protobuf;

Status parse_error(const std::string& source, const std::string& message) {
  return Status(Error::parse_error, source + ": " + message);
}

// Keeps the first error of protobuf's text parser as FILE:LINE:COL.
class TextErrorCollector : public pb::io::ErrorCollector {
 public:
  explicit TextErrorCollector(const std::string& source) : source_(source) {}
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    if (!first_.empty()) return;
    if (line < 0) {
      first_ = source_ + ": " + message;
    } else {
      first_ = source_ + ":" + std::to_string(line + 1) + ":" + std::to_string(column + 1) +
               ": " + message;
    }
  }
  const std::string& first() const { return first_; }

 private:
  const std::string& source_;
  std::string first_;
};

// A text GraphDef holds printable characters, whitespace and UTF-8; a binary
// one with any node holds the tag byte 0x12 (NodeDef.op) and length bytes.
bool is_text_byte(unsigned char c) {
  return c >= 0x20 ? c != 0x7f : (c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v');
}

size_t count_binary_bytes(std::string_view bytes) {
  size_t n = 0;
  for (char c : bytes) n += is_text_byte(static_cast<unsigned char>(c)) ? 0 : 1;
  return n;
}

// --- Binary containers --------------------------------------------------

enum class Container { graph_def, meta_graph_def, saved_model };

using Fields = pb::UnknownFieldSet;
using Field = pb::UnknownField;

bool parse_fields(std::string_view bytes, Fields* out) {
  return out->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

// True if `graph_bytes` looks like a GraphDef whose first entry of field 1
// is a NodeDef (it has field 2, `op`); a FunctionDefLibrary's FunctionDefs
// never have field 2. Tells MetaGraphDef{graph_def=2} from GraphDef{library=2}.
bool holds_node_defs(const std::string& graph_bytes) {
  Fields graph;
  if (!parse_fields(graph_bytes, &graph)) return false;
  for (int i = 0; i < graph.field_count(); ++i) {
    const Field& f = graph.field(i);
    if (f.number() != 1 || f.type() != Field::TYPE_LENGTH_DELIMITED) continue;
    Fields node;
    if (!parse_fields(f.length_delimited(), &node)) return false;
    for (int j = 0; j < node.field_count(); ++j)
      if (node.field(j).number() == 2) return true;
    return false;
  }
  return false;
}

// Decides from the top-level wire structure (no typed parse, so nothing is
// logged for garbage) what kind of message the bytes hold.
Expected<Container> classify(std::string_view bytes, const std::string& source) {
  Fields top;
  if (!parse_fields(bytes, &top))
    return parse_error(source, "not a valid binary protobuf (truncated or corrupt)");
  bool varint_1 = false, len_3 = false, above_5 = false;
  int len_1 = 0;
  const std::string* field_2 = nullptr;
  for (int i = 0; i < top.field_count(); ++i) {
    const Field& f = top.field(i);
    bool len = f.type() == Field::TYPE_LENGTH_DELIMITED;
    switch (f.number()) {
      case 1:
        if (len) ++len_1;
        varint_1 |= f.type() == Field::TYPE_VARINT;
        break;
      case 2: if (len) field_2 = &f.length_delimited(); break;
      case 3: len_3 |= len; break;
      default: above_5 |= f.number() > 5; break;
    }
  }
  if (varint_1 && field_2 != nullptr) return Container::saved_model;
  if (above_5 || len_3 || (len_1 <= 1 && field_2 != nullptr && holds_node_defs(*field_2)))
    return Container::meta_graph_def;
  // What remains must be a GraphDef: node=1, library=2, versions=4 and
  // debug_info=5 length-delimited, version=3 a varint.
  for (int i = 0; i < top.field_count(); ++i) {
    const Field& f = top.field(i);
    bool ok = f.number() == 3 ? f.type() == Field::TYPE_VARINT
                              : f.type() == Field::TYPE_LENGTH_DELIMITED;
    if (!ok)
      return parse_error(source, "not a GraphDef (field " + std::to_string(f.number()) +
                                     " has the wrong wire type)");
  }
  return Container::graph_def;
}

bool is_empty(const tensorflow::GraphDef& def) {
  return def.node_size() == 0 && def.library().function_size() == 0;
}

Expected<tensorflow::GraphDef> parse_binary(std::string_view bytes, const std::string& source) {
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    return parse_error(source, "file is larger than protobuf's 2 GiB limit");
  TF_ASSIGN_OR_RETURN(Container kind, classify(bytes, source));
  const int size = static_cast<int>(bytes.size());
  tensorflow::GraphDef def;
  switch (kind) {
    case Container::graph_def:
      if (!def.ParseFromArray(bytes.data(), size))
        return parse_error(source, "not a valid binary GraphDef");
      break;
    case Container::meta_graph_def: {
      tensorflow::MetaGraphDef meta;
      if (!meta.ParseFromArray(bytes.data(), size))
        return parse_error(source, "not a valid binary MetaGraphDef");
      def = std::move(*meta.mutable_graph_def());
      break;
    }
    case Container::saved_model: {
      tensorflow::SavedModel model;
      if (!model.ParseFromArray(bytes.data(), size))
        return parse_error(source, "not a valid binary SavedModel");
      if (model.meta_graphs_size() == 0)
        return parse_error(source, "SavedModel holds no meta graph");
      def = std::move(*model.mutable_meta_graphs(0)->mutable_graph_def());
      break;
    }
  }
  // Bytes that happen to decode (a wrong file, a cut at a field boundary of
  // a small file) must not become a silently empty graph.
  if (is_empty(def)) return parse_error(source, "binary GraphDef has no nodes and no functions");
  return def;
}

// --- UTF-8 ---------------------------------------------------------------

bool is_utf8(const std::string& s) {
  static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};  // no overlong forms
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n;  // continuation bytes
    uint32_t cp;
    if (c < 0x80) n = 0, cp = c;
    else if ((c >> 5) == 0x6) n = 1, cp = c & 0x1f;
    else if ((c >> 4) == 0xe) n = 2, cp = c & 0x0f;
    else if ((c >> 3) == 0x1e) n = 3, cp = c & 0x07;
    else return false;
    if (n >= s.size() - i) return false;
    for (size_t k = 1; k <= n; ++k) {
      const auto d = static_cast<unsigned char>(s[i + k]);
      if ((d >> 6) != 0x2) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    if (cp < kMin[n] || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) return false;
    i += n + 1;
  }
  return true;
}

// The first proto3 `string` field (not `bytes`) of `m` that is not UTF-8,
// as a path ("node[3].device"), or "". The binary decoder refuses such a
// field; protobuf's text parser lets escapes like "\377" through, and the
// graph could then not be written as a binary GraphDef.
std::string first_non_utf8(const pb::Message& m, const std::string& path) {
  const pb::Reflection* r = m.GetReflection();
  std::vector<const pb::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const pb::FieldDescriptor* f : fields) {
    if (f->type() != pb::FieldDescriptor::TYPE_STRING &&
        f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE)
      continue;
    const std::string name = path.empty() ? f->name() : path + "." + f->name();
    const int n = f->is_repeated() ? r->FieldSize(m, f) : 1;
    for (int i = 0; i < n; ++i) {
      const std::string at = f->is_repeated() ? name + "[" + std::to_string(i) + "]" : name;
      if (f->type() == pb::FieldDescriptor::TYPE_STRING) {
        std::string scratch;
        const std::string& v = f->is_repeated() ? r->GetRepeatedStringReference(m, f, i, &scratch)
                                                : r->GetStringReference(m, f, &scratch);
        if (!is_utf8(v)) return at;
      } else {
        const pb::Message& sub = f->is_repeated() ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f);
        std::string bad = first_non_utf8(sub, at);
        if (!bad.empty()) return bad;
      }
    }
  }
  return {};
}

// --- GraphDef -> Graph -----------------------------------------------------

struct InputRef {
  std::string_view name;
  int port = 0;
  bool control = false;
};

// "name", "name:k", "^name". Returns an empty string or what is wrong.
std::string parse_input(std::string_view s, InputRef* out) {
  out->control = !s.empty() && s.front() == '^';
  if (out->control) s.remove_prefix(1);
  size_t colon = s.find(':');
  out->name = s.substr(0, colon);
  out->port = 0;
  if (out->name.empty()) return "has no node name";
  if (colon == std::string_view::npos) return {};
  if (out->control) return "is a control input with a port";
  std::string_view digits = s.substr(colon + 1);
  if (!digits.empty() && digits.front() == '-') return "has a negative port";
  if (digits.empty() || digits.size() > 9) return "is malformed (expected name:port)";
  int port = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return "is malformed (expected name:port)";
    port = port * 10 + (c - '0');
  }
  out->port = port;
  return {};
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

Status resolve_inputs(Graph& g, NodeId id, const tensorflow::NodeDef& def) {
  Node& n = g.mutable_node(id);
  n.inputs.reserve(static_cast<size_t>(def.input_size()));
  for (int i = 0; i < def.input_size(); ++i) {
    const std::string& text = def.input(i);
    std::string what = "node " + quoted(n.name) + " input " + std::to_string(i) + " " + quoted(text);
    InputRef ref;
    std::string bad = parse_input(text, &ref);
    if (!bad.empty()) return Status(Error::invalid_graph, what + " " + bad);
    NodeId src = g.find(ref.name);
    if (src == kNoNode)
      return Status(Error::invalid_graph, what + " names a missing node " + quoted(ref.name));
    if (ref.control) {
      n.control_inputs.push_back(src);
    } else {
      if (!n.control_inputs.empty())
        return Status(Error::invalid_graph, what + " is a data input after a control input");
      n.inputs.push_back({src, ref.port});
    }
  }
  return ok_status();
}

Expected<Node> node_from_proto(const tensorflow::NodeDef& def, int index) {
  Node n;
  if (def.name().empty())
    return Status(Error::invalid_graph, "node #" + std::to_string(index) + " has no name");
  if (def.name().find_first_of(":^") != std::string::npos)
    return Status(Error::invalid_graph,
                  "node name " + quoted(def.name()) + " contains ':' or '^'");
  if (def.op().empty())
    return Status(Error::invalid_graph, "node " + quoted(def.name()) + " has no op");
  n.name = def.name();
  n.op = def.op();
  n.device = def.device();
  for (const auto& [key, value] : def.attr()) {
    auto v = attr_from_proto(value);
    if (!v.ok())
      return v.status().with_prefix("node " + quoted(n.name) + " attr " + quoted(key) + ": ");
    n.attrs.emplace(key, std::move(v).value());
  }
  const auto& debug = def.experimental_debug_info();
  n.original_node_names.assign(debug.original_node_names().begin(),
                               debug.original_node_names().end());
  n.original_func_names.assign(debug.original_func_names().begin(),
                               debug.original_func_names().end());
  return n;
}

// The bytes a TensorProto declares: its shape's elements times its dtype's
// size (a string element counts as its std::string), however few values it
// writes out; saturates instead of overflowing. Unknown dims count as 0:
// tensor_from_proto refuses them.
int64_t declared_bytes(const tensorflow::TensorProto& p) {
  const auto dtype = static_cast<DType>(static_cast<int>(p.dtype()));
  const int64_t elem = ops::dtype_is_object(ops::base_dtype(dtype))
                           ? static_cast<int64_t>(sizeof(std::string))
                           : std::max(ops::dtype_size(ops::base_dtype(dtype)), 0);
  int64_t bytes = elem;
  for (const auto& d : p.tensor_shape().dim()) {
    if (d.size() <= 0) return 0;
    bytes = bytes > INT64_MAX / d.size() ? INT64_MAX : bytes * d.size();
  }
  return bytes;
}

// Sums what the constants of `nodes` declare into *total and refuses the
// first that takes it past `max`, naming the node, the attr and the size.
template <class NodeDefs>
Status check_constants(const NodeDefs& nodes, int64_t max, const std::string& where, int64_t* total) {
  for (const tensorflow::NodeDef& n : nodes)
    for (const auto& attr : n.attr()) {
      const std::string& key = attr.first;  // named: clang 14 lambdas cannot capture a structured binding
      const tensorflow::AttrValue& value = attr.second;
      auto check = [&](const tensorflow::TensorProto& t) {
        const int64_t bytes = declared_bytes(t);
        *total = *total > INT64_MAX - bytes ? INT64_MAX : *total + bytes;
        if (*total <= max) return ok_status();
        return Status(Error::resource_exhausted,
                      fmt::format("{}node {} ({}) attr {} declares a {} tensor of shape {}: {} ({} "
                                  "bytes); the graph's constants would take {}, over the limit of "
                                  "{} (--memory-limit, [tagflow] memory-limit)",
                                  where, quoted(n.name()), n.op(), quoted(key),
                                  ops::dtype_name(static_cast<DType>(static_cast<int>(t.dtype()))),
                                  shape_from_proto(t.tensor_shape()).to_string(), ops::format_bytes(bytes),
                                  bytes, ops::format_bytes(*total), ops::format_bytes(max)));
      };
      if (value.has_tensor()) TF_RETURN_IF_ERROR(check(value.tensor()));
      for (const tensorflow::TensorProto& t : value.list().tensor()) TF_RETURN_IF_ERROR(check(t));
    }
  return ok_status();
}

// The ImportOptions limits, on the GraphDef as decoded: nothing is made
// from it before they pass.
Status check_limits(const tensorflow::GraphDef& def, const ImportOptions& options) {
  if (options.max_nodes > 0 && def.node_size() > options.max_nodes)
    return Status(Error::resource_exhausted,
                  fmt::format("the graph has {} nodes, over the limit of {} (--max-nodes, [tagflow] max-nodes)",
                              def.node_size(), options.max_nodes));
  const int64_t max = options.max_constant_bytes < 0 ? ops::default_memory_limit() : options.max_constant_bytes;
  if (max == 0) return ok_status();
  int64_t total = 0;
  TF_RETURN_IF_ERROR(check_constants(def.node(), max, "", &total));
  for (const tensorflow::FunctionDef& f : def.library().function())
    TF_RETURN_IF_ERROR(check_constants(f.node_def(), max, "function " + quoted(f.signature().name()) + ": ", &total));
  return ok_status();
}

}  // namespace

Expected<Graph> graph_from_proto(const tensorflow::GraphDef& def, const std::string& source,
                                 const ImportOptions& options) {
  const std::string prefix = source + ": ";
  TF_RETURN_IF_ERROR(check_limits(def, options).with_prefix(prefix));
  Graph g;
  // All nodes first: an input may name a node defined later (back edges).
  for (int i = 0; i < def.node_size(); ++i) {
    auto node = node_from_proto(def.node(i), i);
    if (!node.ok()) return node.status().with_prefix(prefix);
    auto id = g.add_node(std::move(node).value());
    if (!id.ok()) return id.status().with_prefix(prefix);
  }
  for (int i = 0; i < def.node_size(); ++i)
    TF_RETURN_IF_ERROR(resolve_inputs(g, i, def.node(i)).with_prefix(prefix));
  Versions v;
  v.producer = def.versions().producer();
  v.min_consumer = def.versions().min_consumer();
  v.bad_consumers.assign(def.versions().bad_consumers().begin(),
                         def.versions().bad_consumers().end());
  g.set_versions(std::move(v));
  g.mutable_library() = def.library();
  // Unknown fields of a binary library would be kept, and text cannot
  // express them (`14: 0x5401...` does not parse back).
  g.mutable_library().DiscardUnknownFields();
  return g;
}

Expected<Graph> import_graph_text(std::string_view text, const std::string& source,
                                  const ImportOptions& options) {
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // BOM
  if (text.size() > static_cast<size_t>(INT_MAX))
    return parse_error(source, "file is larger than protobuf's 2 GiB limit");
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  TextErrorCollector errors(source);
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  tensorflow::GraphDef def;
  if (!parser.Parse(&input, &def))
    return Status(Error::parse_error,
                  errors.first().empty() ? source + ": malformed text GraphDef" : errors.first());
  std::string bad = first_non_utf8(def, "");
  if (!bad.empty()) return parse_error(source, "string field " + bad + " is not valid UTF-8");
  // Blank text, a comment or a lone `versions` is no program to run.
  if (is_empty(def)) return parse_error(source, "text GraphDef has no nodes and no functions");
  return graph_from_proto(def, source, options);
}

Expected<Graph> import_graph_binary(std::string_view bytes, const std::string& source,
                                    const ImportOptions& options) {
  if (bytes.empty()) return parse_error(source, "empty file");
  TF_ASSIGN_OR_RETURN(tensorflow::GraphDef def, parse_binary(bytes, source));
  return graph_from_proto(def, source, options);
}

Expected<Graph> import_graph_bytes(std::string_view bytes, const std::string& source,
                                   const ImportOptions& options) {
  if (bytes.empty()) return parse_error(source, "empty file");
  size_t binary = count_binary_bytes(bytes);
  if (binary == 0) return import_graph_text(bytes, source, options);
  auto g = import_graph_binary(bytes, source, options);
  // A text file with a few stray control characters reads better as a text
  // error (with a line and column) than as a binary one. Binary GraphDefs
  // are 10-25% such bytes (tags 0x12 and 0x1a, lengths).
  if (!g.ok() && g.status().code() == Error::parse_error && binary * 100 < bytes.size())
    return import_graph_text(bytes, source, options);
  return g;
}

Expected<Graph> import_graph_file(const std::string& path, const ImportOptions& options) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return Status(Error::not_found, "cannot open " + quoted(path) + ": " + std::strerror(errno));
  std::string bytes;
  char buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof(buf), f.get())) > 0) bytes.append(buf, got);
  if (std::ferror(f.get()))
    return Status(Error::not_found, "cannot read " + quoted(path) + ": " + std::strerror(errno));
  return import_graph_bytes(bytes, path, options);
}

}  // namespace tagflow::graph
