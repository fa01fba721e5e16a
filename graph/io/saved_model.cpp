// Reading saved_model.pb or saved_model.pbtxt: the meta graphs, their
// signatures, saver, init op and assets (graph/io/saved_model.hpp).
#include "graph/io/saved_model.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "graph/io/graph_def_reader.hpp"
#include "graph/io/tensor_proto.hpp"
#include "graph/proto/graph_def.pb.h"

namespace tagflow::graph {
inline namespace io {

namespace {

std::string in_dir(const std::string& dir, const char* name) {
  return dir + (dir.empty() || dir.back() == '/' ? "" : "/") + name;
}

bool regular_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The file TensorFlow's loader reads: saved_model.pb, else saved_model.pbtxt;
// empty when there is neither.
std::string model_file(const std::string& dir) {
  for (const char* name : {"saved_model.pb", "saved_model.pbtxt"})
    if (regular_file(in_dir(dir, name))) return in_dir(dir, name);
  return {};
}

bool is_text(const std::string& path) { return path.size() > 6 && path.compare(path.size() - 6, 6, ".pbtxt") == 0; }

Expected<std::string> read_bytes(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return Status(Error::not_found, fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  std::string bytes;
  char buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof(buf), f.get())) > 0) bytes.append(buf, got);
  if (std::ferror(f.get()))
    return Status(Error::not_found, fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
  return bytes;
}

Expected<tensorflow::SavedModel> parse_saved_model(const std::string& dir) {
  const std::string path = model_file(dir);
  if (path.empty())
    return Status(Error::not_found,
                  fmt::format("'{}' holds neither saved_model.pb nor saved_model.pbtxt: not a SavedModel", dir));
  TF_ASSIGN_OR_RETURN(std::string bytes, read_bytes(path));
  tensorflow::SavedModel model;
  if (is_text(path)) {
    TF_RETURN_IF_ERROR(parse_text_message(bytes, path, "SavedModel", &model));
  } else if (!model.ParseFromString(bytes)) {
    return Status(Error::parse_error, fmt::format("{}: not a valid binary SavedModel", path));
  }
  if (model.meta_graphs_size() == 0)
    return Status(Error::parse_error, fmt::format("{}: the SavedModel holds no meta graph", path));
  return model;
}

Expected<SignatureTensor> signature_tensor(const std::string& where, const std::string& key,
                                           const tensorflow::TensorInfo& info) {
  SignatureTensor t;
  t.key = key;
  if (info.encoding_case() != tensorflow::TensorInfo::kName)
    return Status(Error::unimplemented,
                  fmt::format("{} '{}' is a sparse or composite tensor, which tagflow does not run", where, key));
  t.tensor = info.name();
  t.dtype = static_cast<DType>(info.dtype());
  // No tensor_shape at all is an unknown shape, not a scalar.
  t.shape = info.has_tensor_shape() ? shape_from_proto(info.tensor_shape()) : ops::PartialShape{true, {}};
  return t;
}

Expected<std::vector<SignatureTensor>> signature_tensors(
    const std::string& where, const google::protobuf::Map<std::string, tensorflow::TensorInfo>& m) {
  std::vector<SignatureTensor> out;
  for (const auto& [key, info] : m) {
    TF_ASSIGN_OR_RETURN(SignatureTensor t, signature_tensor(where, key, info));
    out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end(), [](const SignatureTensor& a, const SignatureTensor& b) { return a.key < b.key; });
  return out;
}

// "name:0" -> "name"; "^name" -> "name".
std::string node_of(const std::string& tensor) {
  std::string s = tensor;
  if (!s.empty() && s[0] == '^') s.erase(0, 1);
  size_t colon = s.rfind(':');
  if (colon != std::string::npos && colon + 1 < s.size() &&
      std::all_of(s.begin() + colon + 1, s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    s.resize(colon);
  return s;
}

constexpr const char* kInitOpSignature = "__saved_model_init_op";

Expected<MetaGraphInfo> info_of(const tensorflow::MetaGraphDef& meta, const std::string& path) {
  MetaGraphInfo info;
  info.tags.assign(meta.meta_info_def().tags().begin(), meta.meta_info_def().tags().end());
  info.tensorflow_version = meta.meta_info_def().tensorflow_version();
  for (const auto& [name, def] : meta.signature_def()) {
    if (name == kInitOpSignature) {
      // TF 2 names its init op as the one output of this signature.
      for (const auto& [key, out] : def.outputs())
        if (out.encoding_case() == tensorflow::TensorInfo::kName) info.init_op = node_of(out.name());
      continue;
    }
    Signature s;
    s.name = name;
    s.method_name = def.method_name();
    const std::string where = fmt::format("{}: signature '{}'", path, name);
    TF_ASSIGN_OR_RETURN(s.inputs, signature_tensors(where + " input", def.inputs()));
    TF_ASSIGN_OR_RETURN(s.outputs, signature_tensors(where + " output", def.outputs()));
    info.signatures.push_back(std::move(s));
  }
  std::sort(info.signatures.begin(), info.signatures.end(),
            [](const Signature& a, const Signature& b) { return a.name < b.name; });
  if (meta.has_saver_def() && !meta.saver_def().restore_op_name().empty()) {
    const tensorflow::SaverDef& d = meta.saver_def();
    if (d.version() == 1)
      return Status(Error::unimplemented,
                    fmt::format("{}: the saver writes V1 checkpoints; tagflow reads only the V2 (tensor bundle) format",
                                path));
    info.saver = SaverSpec{d.filename_tensor_name(), d.save_tensor_name(), d.restore_op_name()};
  }
  // TF 1's init op: the main op, else the legacy init op (as TensorFlow's
  // loader chooses).
  if (info.init_op.empty()) {
    for (const char* key : {"saved_model_main_op", "legacy_init_op"}) {
      auto it = meta.collection_def().find(key);
      if (it == meta.collection_def().end() || it->second.node_list().value_size() == 0) continue;
      info.init_op = node_of(it->second.node_list().value(0));
      break;
    }
  }
  for (const tensorflow::AssetFileDef& a : meta.asset_file_def())
    info.assets.push_back(AssetFile{a.tensor_info().name(), a.filename()});
  // TF 1 also lists them as Any-wrapped AssetFileDefs in a collection.
  if (info.assets.empty()) {
    auto it = meta.collection_def().find("saved_model_assets");
    if (it != meta.collection_def().end()) {
      for (const tensorflow::AnyProto& any : it->second.any_list().value()) {
        tensorflow::AssetFileDef a;
        if (!a.ParseFromString(any.value()))
          return Status(Error::parse_error, fmt::format("{}: an entry of saved_model_assets is not an AssetFileDef", path));
        info.assets.push_back(AssetFile{a.tensor_info().name(), a.filename()});
      }
    }
  }
  return info;
}

std::vector<std::string> tag_set_of(const tensorflow::MetaGraphDef& meta) {
  return parse_tag_set(std::vector<std::string>(meta.meta_info_def().tags().begin(), meta.meta_info_def().tags().end()));
}

std::string tag_sets(const tensorflow::SavedModel& model) {
  std::string out;
  for (const auto& meta : model.meta_graphs()) out += (out.empty() ? "" : ", ") + tag_set_text(tag_set_of(meta));
  return out;
}

}  // namespace

const Signature* MetaGraphInfo::find_signature(const std::string& name) const {
  for (const Signature& s : signatures)
    if (s.name == name) return &s;
  return nullptr;
}

bool MetaGraphInfo::has_tag(const std::string& tag) const {
  return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

bool is_saved_model_dir(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  return !model_file(path).empty();
}

std::vector<std::string> parse_tag_set(const std::vector<std::string>& tags) {
  std::vector<std::string> out;
  for (const std::string& t : tags)
    if (!t.empty()) out.push_back(t);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> parse_tag_set(const std::string& text) {
  std::vector<std::string> tags;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    tags.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return parse_tag_set(tags);
}

std::string tag_set_text(const std::vector<std::string>& tags) {
  std::string out;
  for (const std::string& t : tags) out += (out.empty() ? "" : ",") + t;
  return "[" + out + "]";
}

std::string saved_model_variables_prefix(const std::string& dir) { return in_dir(dir, "variables/variables"); }

Expected<std::vector<MetaGraphInfo>> read_saved_model_infos(const std::string& dir) {
  TF_ASSIGN_OR_RETURN(tensorflow::SavedModel model, parse_saved_model(dir));
  std::vector<MetaGraphInfo> out;
  for (const auto& meta : model.meta_graphs()) {
    TF_ASSIGN_OR_RETURN(MetaGraphInfo info, info_of(meta, model_file(dir)));
    out.push_back(std::move(info));
  }
  return out;
}

Expected<MetaGraph> read_saved_model(const std::string& dir, const std::vector<std::string>& tags,
                                     const ImportOptions& options) {
  TF_ASSIGN_OR_RETURN(tensorflow::SavedModel model, parse_saved_model(dir));
  const std::string path = model_file(dir);
  const std::vector<std::string> wanted = parse_tag_set(tags);
  for (auto& meta : *model.mutable_meta_graphs()) {
    if (tag_set_of(meta) != wanted) continue;
    MetaGraph out;
    TF_ASSIGN_OR_RETURN(out.info, info_of(meta, path));
    TF_ASSIGN_OR_RETURN(out.graph, graph_from_proto(meta.graph_def(), path, options));
    return out;
  }
  return Status(Error::not_found, fmt::format("{}: no meta graph has the tag set {} (tag sets: {})", path,
                                              tag_set_text(wanted), tag_sets(model)));
}

}  // namespace io
}  // namespace tagflow::graph
