// Loading and running a SavedModel (actors/saved_model.hpp).
#include "actors/saved_model.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <optional>

#include "graph/io/variables.hpp"
#include "ops/resource.hpp"
#include "ops/tensor_bundle.hpp"

namespace tagflow::actors {

namespace {

using ops::Error;
using ops::Status;

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string join_dir(const std::string& dir, const std::string& name) {
  return dir + (dir.empty() || dir.back() == '/' ? "" : "/") + name;
}

std::string names_of(const std::vector<graph::SignatureTensor>& ts) {
  std::string out;
  for (const auto& t : ts) out += (out.empty() ? "" : ", ") + t.key;
  return out.empty() ? "none" : out;
}

}  // namespace

ops::Expected<const graph::Signature*> find_signature(const graph::MetaGraphInfo& info,
                                                      const std::string& name) {
  if (const graph::Signature* s = info.find_signature(name)) return s;
  std::string names;
  for (const auto& s : info.signatures) names += (names.empty() ? "" : ", ") + s.name;
  return Status(Error::not_found,
                fmt::format("no signature '{}' (signatures: {})", name, names.empty() ? "none" : names));
}

ops::Expected<std::unique_ptr<SavedModelSession>> SavedModelSession::load(const std::string& dir,
                                                                          SavedModelOptions options) {
  TF_ASSIGN_OR_RETURN(SessionOptions resolved, Session::resolve_options(std::move(options.session)));
  // A signature checks dtypes and leaves shapes to the kernels, as TF
  // Serving does, unless strict (docs/models.md, "Feeds and shapes").
  resolved.check_feed_shapes = resolved.strict_shapes;
  graph::ImportOptions limits;
  limits.max_nodes = *resolved.max_nodes;
  limits.max_constant_bytes = *resolved.memory_limit;
  TF_ASSIGN_OR_RETURN(graph::MetaGraph meta, graph::read_saved_model(dir, options.tags, limits));
  std::unique_ptr<SavedModelSession> m(new SavedModelSession());
  m->dir_ = dir;
  m->strict_shapes_ = resolved.strict_shapes;
  m->info_ = std::move(meta.info);
  if (options.transform) TF_RETURN_IF_ERROR(options.transform(&meta.graph, m->info_));

  std::string prefix = options.checkpoint;
  if (prefix.empty()) {
    prefix = graph::saved_model_variables_prefix(dir);
    if (!file_exists(prefix + ".index")) prefix.clear();  // a model without variables
  }
  if (!prefix.empty() && !m->info_.saver) {
    // No saver_def (TF 1 Hub modules): the variables are restored by name,
    // as TF Hub restores them, through a restore op added here.
    auto reader = ops::BundleReader::open(prefix);
    if (!reader.ok()) return reader.status().with_prefix(fmt::format("{}: restoring from '{}': ", dir, prefix));
    std::vector<std::pair<std::string, ops::DType>> saved;
    for (const ops::BundleEntry& e : reader->entries()) saved.emplace_back(e.name, e.dtype);
    auto by_name = graph::add_restore_by_name(&meta.graph, saved, "_tagflow_restore");
    if (!by_name.ok()) return by_name.status().with_prefix(fmt::format("{}: restoring from '{}': ", dir, prefix));
    m->restore_by_name_ = std::move(by_name).value();
  }
  auto session = Session::create(std::move(meta.graph), std::move(resolved));
  if (!session.ok()) return session.status().with_prefix(dir + ": ");
  m->session_ = std::move(session).value();
  if (!prefix.empty() && (m->info_.saver || m->restore_by_name_.variables > 0))
    TF_RETURN_IF_ERROR(m->restore(prefix).with_prefix(dir + ": "));
  if (!m->info_.init_op.empty()) {
    auto done = m->session_->run(m->asset_feeds(), {}, {m->info_.init_op});
    if (!done.ok())
      return done.status().with_prefix(fmt::format("{}: running the init op '{}': ", dir, m->info_.init_op));
  }
  return m;
}

Feeds SavedModelSession::asset_feeds() const {
  Feeds feeds;
  for (const graph::AssetFile& a : info_.assets)
    feeds.emplace_back(a.tensor, ops::Tensor::string_scalar(join_dir(join_dir(dir_, "assets"), a.filename)));
  return feeds;
}

Status SavedModelSession::restore(const std::string& prefix) {
  const bool by_name = !info_.saver && restore_by_name_.variables > 0;
  if (!info_.saver && !by_name)
    return Status(Error::invalid_argument, "the meta graph has no saver_def and no variable the checkpoint names");
  Feeds feeds = asset_feeds();
  feeds.emplace_back(by_name ? restore_by_name_.prefix_tensor : info_.saver->filename_tensor,
                     ops::Tensor::string_scalar(prefix));
  auto done = session_->run(feeds, {}, {by_name ? restore_by_name_.restore_op : info_.saver->restore_op});
  if (!done.ok()) return done.status().with_prefix(fmt::format("restoring from '{}': ", prefix));
  return ops::ok_status();
}

Status SavedModelSession::save(const std::string& prefix) {
  if (!info_.saver) return Status(Error::invalid_argument, "the meta graph has no saver_def");
  Feeds feeds{{info_.saver->filename_tensor, ops::Tensor::string_scalar(prefix)}};
  auto done = session_->run(feeds, {info_.saver->save_tensor});
  if (!done.ok()) return done.status().with_prefix(fmt::format("saving to '{}': ", prefix));
  return ops::ok_status();
}

ops::Expected<NamedTensors> SavedModelSession::run_signature(const std::string& name,
                                                             const NamedTensors& inputs) {
  TF_ASSIGN_OR_RETURN(const graph::Signature* sig, find_signature(info_, name));
  Feeds feeds;
  for (const auto& input : inputs) {
    // (a named reference, not a structured binding: C++17 lambdas cannot
    // capture those)
    const std::string& key = input.first;
    const ops::Tensor& value = input.second;
    auto it = std::find_if(sig->inputs.begin(), sig->inputs.end(),
                           [&](const graph::SignatureTensor& t) { return t.key == key; });
    if (it == sig->inputs.end())
      return Status(Error::invalid_argument, fmt::format("signature '{}' has no input '{}' (inputs: {})", name, key,
                                                         names_of(sig->inputs)));
    if (it->dtype != ops::DType::invalid && value.dtype() != it->dtype)
      return Status(Error::invalid_argument,
                    fmt::format("signature '{}' input '{}' is {}, not {}", name, key, ops::dtype_name(it->dtype),
                                ops::dtype_name(value.dtype())));
    if (strict_shapes_ && !it->shape.is_compatible_with(value.shape()))
      return Status(Error::invalid_argument,
                    fmt::format("signature '{}' input '{}' is {} {} but the signature declares {} {} "
                                "(--strict-shapes, SessionOptions::strict_shapes)",
                                name, key, ops::dtype_name(value.dtype()), value.shape().to_string(),
                                ops::dtype_name(it->dtype), it->shape.to_string()));
    feeds.emplace_back(it->tensor, value);
  }
  for (const graph::SignatureTensor& t : sig->inputs) {
    bool given = std::any_of(inputs.begin(), inputs.end(), [&](const auto& in) { return in.first == t.key; });
    if (!given)
      return Status(Error::invalid_argument,
                    fmt::format("signature '{}' needs input '{}' ({} {})", name, t.key, ops::dtype_name(t.dtype),
                                t.shape.to_string()));
  }
  std::vector<std::string> fetches;
  for (const graph::SignatureTensor& t : sig->outputs) fetches.push_back(t.tensor);
  auto values = session_->run(feeds, fetches);
  if (!values.ok()) return values.status().with_prefix(fmt::format("signature '{}': ", name));
  NamedTensors out;
  for (size_t i = 0; i < fetches.size(); ++i) out.emplace_back(sig->outputs[i].key, std::move((*values)[i]));
  return out;
}

ops::Expected<int> save_variables(const Session& session, const std::string& prefix) {
  ops::BundleWriter writer(prefix);
  int written = 0;
  for (const graph::Node& n : session.graph().nodes()) {
    if (n.op != "VariableV2" && n.op != "Variable" && n.op != "VarHandleOp") continue;
    const std::string* container = n.attr<std::string>("container");
    const std::string* shared = n.attr<std::string>("shared_name");
    const std::string name = (container ? *container : std::string()) + "/" +
                             (shared != nullptr && !shared->empty() ? *shared : n.name);
    std::optional<ops::Tensor> value;
    Status last(Error::failed_precondition, fmt::format("variable '{}' has not been initialised", n.name));
    for (const std::string& device : session.devices()) {
      auto resources = session.resources(device);
      if (!resources) continue;
      auto v = resources->read_variable(name);
      if (v.ok()) {
        value = std::move(v).value();
        break;
      }
      last = v.status();
    }
    if (!value) return last.with_prefix(fmt::format("saving to '{}': ", prefix));
    TF_RETURN_IF_ERROR(writer.add(n.name, *value).with_prefix(fmt::format("saving to '{}': ", prefix)));
    ++written;
  }
  TF_RETURN_IF_ERROR(writer.finish().with_prefix(fmt::format("saving to '{}': ", prefix)));
  return written;
}

}  // namespace tagflow::actors
