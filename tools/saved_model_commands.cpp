// `tagflow run DIR` and `tagflow inspect DIR` on a SavedModel directory.
#include <fmt/format.h>

#include <cstdio>

#include "actors/saved_model.hpp"
#include "graph/saved_model.hpp"
#include "ops/tensor_literal.hpp"
#include "tools/commands.hpp"

namespace tagflow::tools {

namespace {

std::string tensor_line(const graph::SignatureTensor& t) {
  return fmt::format("{} -> {}  {} {}", t.key, t.tensor, ops::dtype_name(t.dtype), t.shape.to_string());
}

// KEY=VALUE, VALUE a literal of the dtype the signature gives KEY.
ops::Expected<actors::NamedTensors> parse_inputs(const graph::Signature& sig, const std::vector<std::string>& texts) {
  actors::NamedTensors inputs;
  for (const std::string& text : texts) {
    size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
      return Status(ops::Error::invalid_argument, "--input '" + ops::abbreviate(text) + "' is not KEY=VALUE");
    std::string key = text.substr(0, eq);
    const graph::SignatureTensor* declared = nullptr;
    for (const auto& t : sig.inputs)
      if (t.key == key) declared = &t;
    if (declared == nullptr) {
      std::string keys;
      for (const auto& t : sig.inputs) keys += (keys.empty() ? "" : ", ") + t.key;
      return Status(ops::Error::invalid_argument,
                    fmt::format("--input {}: signature '{}' has no input '{}' (inputs: {})", ops::abbreviate(key),
                                sig.name, ops::abbreviate(key), keys.empty() ? "none" : keys));
    }
    auto value = ops::parse_tensor_literal(text.substr(eq + 1), declared->dtype);
    if (!value.ok())
      return value.status().with_prefix(fmt::format("--input {}: signature '{}' declares {} {}: ", key, sig.name,
                                                    ops::dtype_name(declared->dtype),
                                                    declared->shape.to_string()));
    inputs.emplace_back(std::move(key), std::move(value).value());
  }
  return inputs;
}

}  // namespace

int run_saved_model(const RunArgs& args) {
  if (!args.feeds.empty() || !args.inits.empty() || !args.targets.empty())
    return fail(Status(ops::Error::invalid_argument,
                       "run: a SavedModel takes --input KEY=VALUE for its signature's inputs, not --feed, --init or "
                       "--target"));
  auto options = session_options(args);
  if (!options.ok()) return fail(options.status());
  actors::SavedModelOptions load;
  load.tag = args.tag;
  load.checkpoint = args.checkpoint;
  load.session = *options;
  auto model = actors::SavedModelSession::load(args.graph, load);
  if (!model.ok()) return fail(model.status());
  auto sig = actors::find_signature((*model)->info(), args.signature);
  if (!sig.ok()) return fail(sig.status().with_prefix(args.graph + ": "));
  auto inputs = parse_inputs(**sig, args.inputs);
  if (!inputs.ok()) return fail(inputs.status());
  for (int64_t step = 1; step <= args.steps; ++step) {
    auto outputs = (*model)->run_signature(args.signature, *inputs);
    if (!outputs.ok()) return fail(outputs.status());
    if (args.steps > 1) std::printf("step %lld:\n", static_cast<long long>(step));
    for (const auto& [key, t] : *outputs)
      std::printf("%s = %s  (%s, shape %s)\n", key.c_str(), t.values_string(args.max_print).c_str(),
                  ops::dtype_name(t.dtype()).c_str(), t.shape().to_string().c_str());
    if (!args.fetches.empty()) {
      auto extra = (*model)->session().run({}, args.fetches);
      if (!extra.ok()) return fail(extra.status());
      for (size_t i = 0; i < args.fetches.size(); ++i)
        std::printf("%s = %s\n", args.fetches[i].c_str(), (*extra)[i].values_string(args.max_print).c_str());
    }
  }
  if (!args.save.empty()) {
    Status s = (*model)->save(args.save);
    if (!s.ok()) return fail(s);
    std::printf("saved the variables to %s\n", args.save.c_str());
  }
  return 0;
}

int inspect_saved_model(const std::string& dir) {
  auto infos = graph::read_saved_model_infos(dir);
  if (!infos.ok()) return fail(infos.status());
  std::printf("SavedModel %s: %zu meta graph%s\n", dir.c_str(), infos->size(), infos->size() == 1 ? "" : "s");
  for (const graph::MetaGraphInfo& info : *infos) {
    std::string tags;
    for (const auto& t : info.tags) tags += (tags.empty() ? "" : ",") + t;
    std::printf("\nmeta graph [%s]%s\n", tags.c_str(),
                info.tensorflow_version.empty() ? "" : (" written by TensorFlow " + info.tensorflow_version).c_str());
    if (info.saver)
      std::printf("  restore: run %s with the checkpoint prefix fed to %s; save: fetch %s\n",
                  info.saver->restore_op.c_str(), info.saver->filename_tensor.c_str(), info.saver->save_tensor.c_str());
    else
      std::printf("  no saver\n");
    std::printf("  init op: %s\n", info.init_op.empty() ? "none" : info.init_op.c_str());
    for (const auto& a : info.assets) std::printf("  asset: %s -> %s\n", a.filename.c_str(), a.tensor.c_str());
    std::printf("  signatures: %zu\n", info.signatures.size());
    for (const graph::Signature& s : info.signatures) {
      std::printf("    %s (%s)\n", s.name.c_str(), s.method_name.c_str());
      for (const auto& t : s.inputs) std::printf("      input  %s\n", tensor_line(t).c_str());
      for (const auto& t : s.outputs) std::printf("      output %s\n", tensor_line(t).c_str());
    }
  }
  return print_checkpoint_variables(graph::saved_model_variables_prefix(dir));
}

}  // namespace tagflow::tools
