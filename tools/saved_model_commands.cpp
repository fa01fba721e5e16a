// `tagflow run DIR` and `tagflow inspect DIR` on a SavedModel directory.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "actors/saved_model.hpp"
#include "graph/io/saved_model.hpp"
#include "ops/example.hpp"
#include "ops/tensor_literal.hpp"
#include "tools/commands.hpp"

namespace tagflow::tools {

namespace {

std::string tensor_line(const graph::SignatureTensor& t) {
  return fmt::format("{} -> {}  {} {}", t.key, t.tensor, ops::dtype_name(t.dtype), t.shape.to_string());
}

// The input `key` of `sig`, or an error naming the flag and listing the
// signature's inputs.
ops::Expected<const graph::SignatureTensor*> declared_input(const graph::Signature& sig, const std::string& key,
                                                            const char* flag) {
  for (const auto& t : sig.inputs)
    if (t.key == key) return &t;
  std::string keys;
  for (const auto& t : sig.inputs) keys += (keys.empty() ? "" : ", ") + t.key;
  return Status(ops::Error::invalid_argument,
                fmt::format("{} {}: signature '{}' has no input '{}' (inputs: {})", flag, ops::abbreviate(key),
                            sig.name, ops::abbreviate(key), keys.empty() ? "none" : keys));
}

// KEY=TEXT split at the first '='.
ops::Expected<std::pair<std::string, std::string>> key_and_text(const std::string& text, const char* flag,
                                                                const char* form) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return Status(ops::Error::invalid_argument,
                  fmt::format("{} '{}' is not {}", flag, ops::abbreviate(text), form));
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

// --input KEY=VALUE (VALUE a literal of the dtype the signature gives KEY,
// or @FILE: tensor_from_file) and --example KEY=FEATURES (one serialized tf.Example per flag,
// the examples of one KEY stacked into a string vector in order).
ops::Expected<actors::NamedTensors> parse_inputs(const graph::Signature& sig, const std::vector<std::string>& texts,
                                                 const std::vector<std::string>& examples) {
  actors::NamedTensors inputs;
  for (const std::string& text : texts) {
    TF_ASSIGN_OR_RETURN(auto kv, key_and_text(text, "--input", "KEY=VALUE"));
    TF_ASSIGN_OR_RETURN(const graph::SignatureTensor* declared, declared_input(sig, kv.first, "--input"));
    if (!kv.second.empty() && kv.second[0] == '@') {
      auto value = tensor_from_file(kv.second.substr(1), declared->dtype, declared->shape);
      if (!value.ok())
        return value.status().with_prefix(fmt::format("--input {}: signature '{}' declares {} {}: ", kv.first,
                                                      sig.name, ops::dtype_name(declared->dtype),
                                                      declared->shape.to_string()));
      inputs.emplace_back(std::move(kv.first), std::move(value).value());
      continue;
    }
    auto value = ops::parse_tensor_literal(kv.second, declared->dtype);
    if (!value.ok())
      return value.status().with_prefix(fmt::format("--input {}: signature '{}' declares {} {}: ", kv.first, sig.name,
                                                    ops::dtype_name(declared->dtype),
                                                    declared->shape.to_string()));
    inputs.emplace_back(std::move(kv.first), std::move(value).value());
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> batches;  // by key, in order
  for (const std::string& text : examples) {
    TF_ASSIGN_OR_RETURN(auto kv, key_and_text(text, "--example", "KEY=FEATURES"));
    TF_ASSIGN_OR_RETURN(const graph::SignatureTensor* declared, declared_input(sig, kv.first, "--example"));
    if (declared->dtype != ops::DType::string)
      return Status(ops::Error::invalid_argument,
                    fmt::format("--example {}: signature '{}' declares {} {}, not the string of serialized "
                                "tf.Examples",
                                kv.first, sig.name, ops::dtype_name(declared->dtype), declared->shape.to_string()));
    auto bytes = ops::serialized_example(kv.second);
    if (!bytes.ok()) return bytes.status().with_prefix(fmt::format("--example {}: ", kv.first));
    auto batch = std::find_if(batches.begin(), batches.end(), [&](const auto& b) { return b.first == kv.first; });
    if (batch == batches.end()) batch = batches.insert(batches.end(), {kv.first, {}});
    batch->second.push_back(std::move(bytes).value());
  }
  for (auto& batch : batches) {
    const std::string& key = batch.first;
    if (std::any_of(inputs.begin(), inputs.end(), [&](const auto& in) { return in.first == key; }))
      return Status(ops::Error::invalid_argument,
                    fmt::format("input '{}' is given by both --input and --example", key));
    inputs.emplace_back(key, ops::Tensor::vector<std::string>(batch.second));
  }
  return inputs;
}

}  // namespace

int run_saved_model(const RunArgs& args) {
  if (!args.feeds.empty() || !args.inits.empty() || !args.targets.empty())
    return fail(Status(ops::Error::invalid_argument,
                       "run: a SavedModel takes --input KEY=VALUE or --example KEY=FEATURES for its signature's "
                       "inputs, not --feed, --init or --target"));
  auto options = session_options(args);
  if (!options.ok()) return fail(options.status());
  actors::SavedModelOptions load;
  load.tags = graph::parse_tag_set(args.tag);
  load.checkpoint = args.checkpoint;
  load.session = *options;
  auto model = actors::SavedModelSession::load(args.graph, load);
  if (!model.ok()) return fail(model.status());
  auto sig = actors::find_signature((*model)->info(), args.signature);
  if (!sig.ok()) return fail(sig.status().with_prefix(args.graph + ": "));
  auto inputs = parse_inputs(**sig, args.inputs, args.examples);
  if (!inputs.ok()) return fail(inputs.status());
  for (int64_t step = 1; step <= args.steps; ++step) {
    auto outputs = (*model)->run_signature(args.signature, *inputs);
    if (!outputs.ok()) return fail(outputs.status());
    if (args.steps > 1) std::printf("step %lld:\n", static_cast<long long>(step));
    std::vector<std::string> names;
    std::vector<ops::Tensor> values;
    for (const auto& [key, t] : *outputs) {
      print_tensor(key, t, args.max_print);
      names.push_back(key);
      values.push_back(t);
    }
    if (!args.fetches.empty()) {
      auto extra = (*model)->session().run({}, args.fetches);
      if (!extra.ok()) return fail(extra.status());
      for (size_t i = 0; i < args.fetches.size(); ++i) {
        print_tensor(args.fetches[i], (*extra)[i], args.max_print);
        names.push_back(args.fetches[i]);
        values.push_back((*extra)[i]);
      }
    }
    if (step == args.steps && !args.output_dir.empty()) {
      Status s = write_fetches(args.output_dir, names, values);
      if (!s.ok()) return fail(s);
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
    std::printf("\nmeta graph %s%s\n", graph::tag_set_text(graph::parse_tag_set(info.tags)).c_str(),
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
