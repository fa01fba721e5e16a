#include "graph/io/import.hpp"

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <sys/stat.h>

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/unknown_field_set.h>

#include "graph/io/graph_def_reader.hpp"
#include "graph/io/tensor_proto.hpp"
#include "graph/proto/graph_def.pb.h"
#include "ops/memory_budget.hpp"

namespace tagflow::graph {
inline namespace io {

namespace {

namespace pb = google::protobuf;

Status parse_error(const std::string& source, const std::string& message) {
  return Status(Error::parse_error, source + ": " + message);
}

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

// No program to run: no nodes and no functions.
bool is_empty(int nodes, const tensorflow::FunctionDefLibrary& library) {
  return nodes == 0 && library.function_size() == 0;
}

// Bytes that happen to decode (a wrong file, a cut at a field boundary of
// a small file) must not become a silently empty graph.
Status no_nodes(const std::string& source) {
  return parse_error(source, "binary GraphDef has no nodes and no functions");
}

// A MetaGraphDef or SavedModel (`kind`; a plain GraphDef is read a node at
// a time instead), parsed whole; its first graph.
Expected<tensorflow::GraphDef> parse_container(std::string_view bytes, Container kind,
                                               const std::string& source) {
  const int size = static_cast<int>(bytes.size());
  tensorflow::GraphDef def;
  if (kind == Container::meta_graph_def) {
    tensorflow::MetaGraphDef meta;
    if (!meta.ParseFromArray(bytes.data(), size)) return parse_error(source, "not a valid binary MetaGraphDef");
    def = std::move(*meta.mutable_graph_def());
  } else {
    tensorflow::SavedModel model;
    if (!model.ParseFromArray(bytes.data(), size)) return parse_error(source, "not a valid binary SavedModel");
    if (model.meta_graphs_size() == 0) return parse_error(source, "SavedModel holds no meta graph");
    def = std::move(*model.mutable_meta_graphs(0)->mutable_graph_def());
  }
  if (is_empty(def.node_size(), def.library())) return no_nodes(source);
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

// first_non_utf8 of a NodeDef, with its own fields and attr map read
// directly: protobuf's reflection copies a map into a repeated field before
// it reads it, which took longer than parsing the node. Attr values (and
// the rare debug info and full type) are read by reflection.
std::string first_non_utf8(const tensorflow::NodeDef& n, const std::string& path) {
  if (!is_utf8(n.name())) return path + ".name";
  if (!is_utf8(n.op())) return path + ".op";
  for (int i = 0; i < n.input_size(); ++i)
    if (!is_utf8(n.input(i))) return path + ".input[" + std::to_string(i) + "]";
  if (!is_utf8(n.device())) return path + ".device";
  for (const auto& attr : n.attr()) {
    if (!is_utf8(attr.first)) return path + ".attr (a key)";
    std::string bad = first_non_utf8(attr.second, path + ".attr['" + attr.first + "']");
    if (!bad.empty()) return bad;
  }
  if (n.has_experimental_debug_info()) {
    std::string bad = first_non_utf8(n.experimental_debug_info(), path + ".experimental_debug_info");
    if (!bad.empty()) return bad;
  }
  if (n.has_experimental_type()) return first_non_utf8(n.experimental_type(), path + ".experimental_type");
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

Expected<Node> node_from_proto(tensorflow::NodeDef& def, int index) {
  Node n;
  if (def.name().empty())
    return Status(Error::invalid_graph, "node #" + std::to_string(index) + " has no name");
  if (def.name().find_first_of(":^") != std::string::npos)
    return Status(Error::invalid_graph,
                  "node name " + quoted(def.name()) + " contains ':' or '^'");
  if (def.op().empty())
    return Status(Error::invalid_graph, "node " + quoted(def.name()) + " has no op");
  n.name = std::move(*def.mutable_name());
  n.op = std::move(*def.mutable_op());
  n.device = std::move(*def.mutable_device());
  n.attrs.reserve(static_cast<size_t>(def.attr_size()));
  for (const auto& [key, value] : def.attr()) {
    auto v = attr_from_proto(value);
    if (!v.ok())
      return v.status().with_prefix("node " + quoted(n.name) + " attr " + quoted(key) + ": ");
    n.attrs.emplace(key, std::move(v).value());
  }
  n.debug_info = debug_info_from_proto(def);
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

// Adds what the constants of node `n` declare to *total and refuses the
// first that takes it past `max`, naming the node, the attr and the size.
Status check_constants(const tensorflow::NodeDef& n, int64_t max, const std::string& where, int64_t* total) {
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

template <class NodeDefs>
Status check_constants(const NodeDefs& nodes, int64_t max, const std::string& where, int64_t* total) {
  for (const tensorflow::NodeDef& n : nodes) TF_RETURN_IF_ERROR(check_constants(n, max, where, total));
  return ok_status();
}

int64_t max_constant_bytes(const ImportOptions& options) {
  return options.max_constant_bytes < 0 ? ops::default_memory_limit() : options.max_constant_bytes;
}

Status too_many_nodes(int64_t nodes, const ImportOptions& options) {
  return Status(Error::resource_exhausted,
                fmt::format("the graph has {} nodes, over the limit of {} (--max-nodes, [tagflow] max-nodes)",
                            nodes, options.max_nodes));
}

Status check_function_constants(const tensorflow::FunctionDefLibrary& library, int64_t max, int64_t* total) {
  for (const tensorflow::FunctionDef& f : library.function())
    TF_RETURN_IF_ERROR(check_constants(f.node_def(), max, "function " + quoted(f.signature().name()) + ": ", total));
  return ok_status();
}

// The ImportOptions limits, on the GraphDef as decoded: nothing is made
// from it before they pass.
Status check_limits(const tensorflow::GraphDef& def, const ImportOptions& options) {
  if (options.max_nodes > 0 && def.node_size() > options.max_nodes) return too_many_nodes(def.node_size(), options);
  const int64_t max = max_constant_bytes(options);
  if (max == 0) return ok_status();
  int64_t total = 0;
  TF_RETURN_IF_ERROR(check_constants(def.node(), max, "", &total));
  return check_function_constants(def.library(), max, &total);
}

// Builds the Graph from NodeDefs handed over in file order, with the rules
// and the error precedence of reading a whole GraphDef: the ImportOptions
// limits (node count, then constants in node order, then those of the
// functions; past a limit no more nodes are made), else the first error of
// a node itself (no name, bad name, no op, bad attr, defined twice), else
// the first error of an input in (node, input) order. An input is resolved
// as soon as the node it names exists; one that names a node defined later
// (a back edge) waits, with its text, until every node is in. Messages are
// built only on the error path.
class GraphImporter final : public NodeDefSink {
 public:
  // `check_utf8`, for text: protobuf's text parser lets strings that are
  // not UTF-8 through (the binary decoder refuses them); the first such
  // field is an error before any other (utf8_error()).
  GraphImporter(const std::string& source, const ImportOptions& options, bool check_utf8)
      : source_(source),
        options_(options),
        max_constant_bytes_(max_constant_bytes(options)),
        check_utf8_(check_utf8) {}

  void node(tensorflow::NodeDef& def) override {
    const int index = received_++;
    if (!utf8_error_.ok()) return;  // it wins over every later error
    if (check_utf8_) {
      std::string bad = first_non_utf8(def, "node[" + std::to_string(index) + "]");
      if (!bad.empty()) {
        utf8_error_ = parse_error(source_, "string field " + bad + " is not valid UTF-8");
        return;
      }
    }
    if (!limit_error_.ok() || over_node_limit()) return;
    if (max_constant_bytes_ > 0) {
      limit_error_ = check_constants(def, max_constant_bytes_, "", &constant_bytes_);
      if (!limit_error_.ok()) return;
    }
    if (!node_error_.ok()) return;
    auto n = node_from_proto(def, index);
    if (!n.ok()) {
      node_error_ = n.status();
      return;
    }
    auto id = graph_.add_node(std::move(n).value());
    if (!id.ok()) {
      node_error_ = id.status();
      return;
    }
    if (input_error_.empty()) add_inputs(*id, def);
  }

  void restart() override { *this = GraphImporter(source_, options_, check_utf8_); }

  const Status& utf8_error() const { return utf8_error_; }

  void reserve(int nodes) { graph_.reserve(nodes); }
  int received() const { return received_; }

  Expected<Graph> finish(const tensorflow::VersionDef& versions,
                         tensorflow::FunctionDefLibrary library) {
    const std::string prefix = source_ + ": ";
    if (over_node_limit()) return too_many_nodes(received_, options_).with_prefix(prefix);
    if (!limit_error_.ok()) return limit_error_.with_prefix(prefix);
    if (max_constant_bytes_ > 0)
      TF_RETURN_IF_ERROR(check_function_constants(library, max_constant_bytes_, &constant_bytes_).with_prefix(prefix));
    if (!node_error_.ok()) return node_error_.with_prefix(prefix);
    for (Pending& p : pending_) {
      // The first input error wins: an earlier one seen at once beats this.
      if (!input_error_.empty() && (p.node > error_node_ || (p.node == error_node_ && p.input > error_input_)))
        break;
      InputRef ref;
      parse_input(p.text, &ref);
      NodeId src = graph_.find(ref.name);
      if (src == kNoNode)
        return input_status(p.node, p.input, p.text, "names a missing node " + quoted(ref.name)).with_prefix(prefix);
      if (!ref.control && p.after_control)
        return input_status(p.node, p.input, p.text, "is a data input after a control input").with_prefix(prefix);
      Node& n = graph_.mutable_node(p.node);
      if (ref.control) n.control_inputs[static_cast<size_t>(p.slot)] = src;
      else n.inputs[static_cast<size_t>(p.slot)] = Endpoint{src, ref.port};
    }
    if (!input_error_.empty()) return Status(Error::invalid_graph, prefix + input_error_);
    Versions v;
    v.producer = versions.producer();
    v.min_consumer = versions.min_consumer();
    v.bad_consumers.assign(versions.bad_consumers().begin(), versions.bad_consumers().end());
    graph_.set_versions(std::move(v));
    graph_.mutable_library().Swap(&library);
    // Unknown fields of a binary library would be kept, and text cannot
    // express them (`14: 0x5401...` does not parse back).
    graph_.mutable_library().DiscardUnknownFields();
    return std::move(graph_);
  }

 private:
  // An input that names a node not seen yet.
  struct Pending {
    NodeId node;
    int input;          // index among the NodeDef's inputs
    int slot;           // index in inputs or control_inputs
    bool after_control;  // a control input came before it
    std::string text;
  };

  bool over_node_limit() const { return options_.max_nodes > 0 && received_ > options_.max_nodes; }

  Status input_status(NodeId id, int input, std::string_view text, const std::string& what) const {
    return Status(Error::invalid_graph, "node " + quoted(graph_.node(id).name) + " input " +
                                            std::to_string(input) + " " + quoted(text) + " " + what);
  }

  void add_inputs(NodeId id, tensorflow::NodeDef& def) {
    Node& n = graph_.mutable_node(id);
    size_t controls = 0;
    for (const std::string& text : def.input()) controls += !text.empty() && text.front() == '^';
    n.inputs.resize(static_cast<size_t>(def.input_size()) - controls);
    n.control_inputs.resize(controls);
    int data_slot = 0, control_slot = 0;
    bool after_control = false;
    for (int i = 0; i < def.input_size(); ++i) {
      std::string& text = *def.mutable_input(i);
      InputRef ref;
      std::string bad = parse_input(text, &ref);
      if (!bad.empty()) return fail_input(id, i, input_status(id, i, text, bad));
      const int slot = ref.control ? control_slot++ : data_slot++;
      NodeId src = graph_.find(ref.name);
      if (src == kNoNode) {
        pending_.push_back({id, i, slot, after_control, std::move(text)});
      } else if (ref.control) {
        n.control_inputs[static_cast<size_t>(slot)] = src;
      } else if (after_control) {
        return fail_input(id, i, input_status(id, i, text, "is a data input after a control input"));
      } else {
        n.inputs[static_cast<size_t>(slot)] = Endpoint{src, ref.port};
      }
      after_control |= ref.control;
    }
  }

  void fail_input(NodeId id, int input, const Status& s) {
    input_error_ = s.message();
    error_node_ = id;
    error_input_ = input;
  }

  std::string source_;
  ImportOptions options_;
  int64_t max_constant_bytes_;  // 0: no limit
  int64_t constant_bytes_ = 0;  // what the constants seen so far declare
  Graph graph_;
  int received_ = 0;
  bool check_utf8_;
  Status utf8_error_;
  Status limit_error_;
  Status node_error_;
  std::vector<Pending> pending_;
  std::string input_error_;  // the first input error found while reading
  NodeId error_node_ = kNoNode;
  int error_input_ = 0;
};

}  // namespace

std::shared_ptr<const NodeDebugInfo> debug_info_from_proto(const tensorflow::NodeDef& def) {
  if (!def.has_experimental_debug_info()) return nullptr;
  const auto& debug = def.experimental_debug_info();
  if (debug.original_node_names().empty() && debug.original_func_names().empty()) return nullptr;
  auto info = std::make_shared<NodeDebugInfo>();
  info->original_node_names.assign(debug.original_node_names().begin(), debug.original_node_names().end());
  info->original_func_names.assign(debug.original_func_names().begin(), debug.original_func_names().end());
  return info;
}

Expected<Graph> graph_from_proto(const tensorflow::GraphDef& def, const std::string& source,
                                 const ImportOptions& options) {
  TF_RETURN_IF_ERROR(check_limits(def, options).with_prefix(source + ": "));
  GraphImporter importer(source, ImportOptions{0, 0}, false);  // the limits passed
  importer.reserve(def.node_size());
  tensorflow::NodeDef node;
  for (const tensorflow::NodeDef& n : def.node()) {
    node = n;
    importer.node(node);
  }
  return importer.finish(def.versions(), def.library());
}

Expected<Graph> import_graph_text(std::string_view text, const std::string& source,
                                  const ImportOptions& options) {
  if (text.size() >= 3 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // BOM
  GraphImporter importer(source, options, true);
  TF_ASSIGN_OR_RETURN(tensorflow::GraphDef rest, read_text_graph_def(text, source, importer));
  TF_RETURN_IF_ERROR(importer.utf8_error());
  std::string bad = first_non_utf8(rest, "");
  if (!bad.empty()) return parse_error(source, "string field " + bad + " is not valid UTF-8");
  // Blank text, a comment or a lone `versions` is no program to run.
  if (is_empty(importer.received(), rest.library()))
    return parse_error(source, "text GraphDef has no nodes and no functions");
  return importer.finish(rest.versions(), std::move(*rest.mutable_library()));
}

Expected<Graph> import_graph_binary(std::string_view bytes, const std::string& source,
                                    const ImportOptions& options) {
  if (bytes.empty()) return parse_error(source, "empty file");
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    return parse_error(source, "file is larger than protobuf's 2 GiB limit");
  TF_ASSIGN_OR_RETURN(Container kind, classify(bytes, source));
  if (kind != Container::graph_def) {
    TF_ASSIGN_OR_RETURN(tensorflow::GraphDef def, parse_container(bytes, kind, source));
    return graph_from_proto(def, source, options);
  }
  // A plain GraphDef (the large ones) is read a node at a time.
  GraphImporter importer(source, options, false);
  TF_ASSIGN_OR_RETURN(tensorflow::GraphDef rest, read_binary_graph_def(bytes, source, importer));
  if (is_empty(importer.received(), rest.library())) return no_nodes(source);
  return importer.finish(rest.versions(), std::move(*rest.mutable_library()));
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
  struct stat st;
  if (::fstat(::fileno(f.get()), &st) == 0 && S_ISDIR(st.st_mode))
    return Status(Error::invalid_argument,
                  quoted(path) + " is a directory, not a GraphDef file (a SavedModel directory holds "
                  "saved_model.pb or saved_model.pbtxt)");
  std::string bytes;
  // One allocation of the file's size: growing by appends would hold a
  // large file twice for a moment. (Only a regular file has a size.)
  if (::fstat(::fileno(f.get()), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    bytes.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof(buf), f.get())) > 0) bytes.append(buf, got);
  if (std::ferror(f.get()))
    return Status(Error::not_found, "cannot read " + quoted(path) + ": " + std::strerror(errno));
  return import_graph_bytes(bytes, path, options);
}

}  // namespace io
}  // namespace tagflow::graph
