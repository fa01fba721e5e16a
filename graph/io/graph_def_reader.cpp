#include "graph/io/graph_def_reader.hpp"

#include <climits>
#include <cstring>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>
#include <google/protobuf/wire_format_lite.h>

#include "graph/proto/graph_def.pb.h"

namespace tagflow::graph {
inline namespace io {

namespace {

namespace pb = google::protobuf;

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

// Errors of a run that the whole parse will report properly.
class QuietErrorCollector : public pb::io::ErrorCollector {
 public:
  void AddError(int, pb::io::ColumnNumber, const std::string&) override {}
};

bool parse_text(std::string_view text, pb::io::ErrorCollector* errors, pb::Message* out) {
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  pb::TextFormat::Parser parser;
  parser.RecordErrorsTo(errors);
  return parser.Parse(&input, out);
}

// The old way, and the fallback: the whole text as one GraphDef.
Expected<tensorflow::GraphDef> read_whole_text(std::string_view text, const std::string& source,
                                               NodeDefSink& sink) {
  TextErrorCollector errors(source);
  tensorflow::GraphDef def;
  if (!parse_text(text, &errors, &def))
    return Status(Error::parse_error,
                  errors.first().empty() ? source + ": malformed text GraphDef" : errors.first());
  sink.restart();
  for (tensorflow::NodeDef& node : *def.mutable_node()) sink.node(node);
  def.clear_node();
  return def;
}

// What a line starts with at column 0.
enum class LineKind { continuation, node, other_field };

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

LineKind line_kind(std::string_view line) {
  for (std::string_view field : {"node", "library", "versions", "version"})
    if (line.size() >= field.size() && line.compare(0, field.size(), field) == 0 &&
        (line.size() == field.size() || !is_identifier_char(line[field.size()])))
      return field == "node" ? LineKind::node : LineKind::other_field;
  return LineKind::continuation;
}

// Runs of node lines parsed this large: big enough that the parser's set-up
// does not count, small enough that the NodeDefs of one run are a few MB.
constexpr size_t kRunBytes = 256 * 1024;

// Why this is exact: protobuf's tokenizer never carries a token, a string
// or a comment across a line break, so text cut at line starts is the
// concatenation of the pieces' token streams; a piece that parses on its
// own is a sequence of complete top-level fields, and at the top level
// fields meet only through the "specified multiple times" rule for
// singular fields — which never applies to `node`, and applies to the
// other fields exactly as in the whole text because they are parsed
// together, in order. So if every run parses as NodeDefRun and the rest
// as a GraphDef without nodes, the whole text parses to the same GraphDef;
// if anything fails, the whole text is parsed and its answer returned.
class TextRuns {
 public:
  TextRuns(std::string_view text, NodeDefSink& sink) : text_(text), sink_(sink) {}

  // False: parse the whole text instead.
  bool read(tensorflow::GraphDef* rest) {
    size_t run_start = 0;
    LineKind run_kind = LineKind::other_field;  // what comes before the first node
    for (size_t pos = 0; pos < text_.size();) {
      const char* newline =
          static_cast<const char*>(std::memchr(text_.data() + pos, '\n', text_.size() - pos));
      const size_t next = newline == nullptr ? text_.size() : static_cast<size_t>(newline - text_.data()) + 1;
      const LineKind kind = line_kind(text_.substr(pos, next - pos));
      if (kind != LineKind::continuation &&
          (kind != run_kind || (kind == LineKind::node && pos - run_start >= kRunBytes))) {
        if (!flush(run_kind, run_start, pos)) return false;
        run_start = pos;
        run_kind = kind;
      }
      pos = next;
    }
    if (!flush(run_kind, run_start, text_.size())) return false;
    QuietErrorCollector quiet;
    return parse_text(rest_, &quiet, rest) && rest->node_size() == 0;
  }

 private:
  bool flush(LineKind kind, size_t begin, size_t end) {
    std::string_view piece = text_.substr(begin, end - begin);
    if (kind != LineKind::node) {
      rest_.append(piece.data(), piece.size());
      return true;
    }
    run_.Clear();
    QuietErrorCollector quiet;
    if (!parse_text(piece, &quiet, &run_)) return false;
    for (tensorflow::NodeDef& node : *run_.mutable_node()) sink_.node(node);
    return true;
  }

  std::string_view text_;
  NodeDefSink& sink_;
  tensorflow::NodeDefRun run_;  // reused: its NodeDefs keep their memory
  std::string rest_;            // every line that is not in a run of nodes
};

Status not_a_graph_def(const std::string& source) {
  return Status(Error::parse_error, source + ": not a valid binary GraphDef");
}

}  // namespace

Status parse_text_message(std::string_view text, const std::string& source, const char* what, pb::Message* out) {
  TextErrorCollector errors(source);
  if (parse_text(text, &errors, out)) return ok_status();
  return Status(Error::parse_error,
                errors.first().empty() ? source + ": malformed text " + what : errors.first());
}

Expected<tensorflow::GraphDef> read_text_graph_def(std::string_view text, const std::string& source,
                                                   NodeDefSink& sink) {
  if (text.size() > static_cast<size_t>(INT_MAX))
    return Status(Error::parse_error, source + ": file is larger than protobuf's 2 GiB limit");
  tensorflow::GraphDef rest;
  TextRuns runs(text, sink);
  if (runs.read(&rest)) return rest;
  return read_whole_text(text, source, sink);
}

Expected<tensorflow::GraphDef> read_binary_graph_def(std::string_view bytes,
                                                     const std::string& source, NodeDefSink& sink) {
  using pb::internal::WireFormatLite;
  if (bytes.size() > static_cast<size_t>(INT_MAX))
    return Status(Error::parse_error, source + ": file is larger than protobuf's 2 GiB limit");
  pb::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                              static_cast<int>(bytes.size()));
  std::string rest_bytes;
  {
    pb::io::StringOutputStream rest_stream(&rest_bytes);
    pb::io::CodedOutputStream rest(&rest_stream);
    const uint32_t node_tag = WireFormatLite::MakeTag(tensorflow::GraphDef::kNodeFieldNumber,
                                                      WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
    tensorflow::NodeDef node;  // reused: keeps its memory
    for (uint32_t tag = in.ReadTag(); tag != 0; tag = in.ReadTag()) {
      if (tag != node_tag) {
        if (!WireFormatLite::SkipField(&in, tag, &rest)) return not_a_graph_def(source);
        continue;
      }
      int length = 0;
      if (!in.ReadVarintSizeAsInt(&length)) return not_a_graph_def(source);
      const int start = in.CurrentPosition();
      // One level deeper, as inside the GraphDef's own parse.
      auto [limit, depth] = in.IncrementRecursionDepthAndPushLimit(length);
      node.Clear();
      if (depth < 0 || !node.MergePartialFromCodedStream(&in) ||
          !in.DecrementRecursionDepthAndPopLimit(limit) || in.CurrentPosition() - start != length)
        return not_a_graph_def(source);
      sink.node(node);
    }
    if (!in.ConsumedEntireMessage() || in.CurrentPosition() != static_cast<int>(bytes.size()))
      return not_a_graph_def(source);
  }
  tensorflow::GraphDef rest;
  if (!rest.ParseFromString(rest_bytes)) return not_a_graph_def(source);
  return rest;
}

}  // namespace io
}  // namespace tagflow::graph
