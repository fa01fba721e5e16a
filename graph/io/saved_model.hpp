// SavedModels: a directory TensorFlow wrote with `saved_model.pb` (a
// SavedModel proto: one MetaGraphDef per tag set) and `variables/` (a
// tensor-bundle checkpoint with prefix `variables/variables`). This file
// reads the proto: which meta graphs there are, and for the one a tag picks
// its graph, signatures, saver, init op and assets — what a loader needs to
// restore the variables and run a signature, as TensorFlow Serving does
// (actors/saved_model.hpp does that with a session).
// Stateless; thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "graph/io/import.hpp"

namespace tagflow::graph {
inline namespace io {

// One input or output of a signature: the tensor it names and what the
// signature declares of it.
struct SignatureTensor {
  std::string key;     // the signature's name for it ("x", "output_0")
  std::string tensor;  // "node:port" in the graph
  DType dtype = DType::invalid;
  ops::PartialShape shape;
};

struct Signature {
  std::string name;         // "serving_default"
  std::string method_name;  // "tensorflow/serving/predict"
  std::vector<SignatureTensor> inputs;   // sorted by key
  std::vector<SignatureTensor> outputs;  // sorted by key
};

// TensorFlow's SaverDef: restore by running `restore_op` with the
// checkpoint prefix fed to `filename_tensor`; save by fetching
// `save_tensor` with the prefix fed the same way.
struct SaverSpec {
  std::string filename_tensor;  // "save/Const:0", "saver_filename:0"
  std::string save_tensor;      // "save/Identity:0", "StatefulPartitionedCall_1:0"
  std::string restore_op;       // "save/restore_all", "StatefulPartitionedCall_2"
};

// An asset file the graph reads: its path is fed to `tensor` when the init
// op runs.
struct AssetFile {
  std::string tensor;
  std::string filename;  // relative to the assets/ folder
};

// What a meta graph declares, without its graph.
struct MetaGraphInfo {
  std::vector<std::string> tags;
  std::string tensorflow_version;  // "1.14.0", "2.14.0"; may be empty
  std::vector<Signature> signatures;  // sorted by name, without the init op's
  std::optional<SaverSpec> saver;
  // The op to run after restoring: TF 1's `saved_model_main_op` or
  // `legacy_init_op` collection, TF 2's `__saved_model_init_op` signature.
  std::string init_op;
  std::vector<AssetFile> assets;

  const Signature* find_signature(const std::string& name) const;
  bool has_tag(const std::string& tag) const;
};

struct MetaGraph {
  MetaGraphInfo info;
  Graph graph;
};

// True if `path` is a directory holding a saved_model.pb or, as TensorFlow's
// loader also reads, a saved_model.pbtxt (the binary one first).
bool is_saved_model_dir(const std::string& path);

// A meta graph is chosen by its tag *set*, as TensorFlow's loader chooses
// (`--tag serve,gpu`; an empty set, as TF 1 Hub modules have): the tags
// sorted, each once, empty names dropped.
std::vector<std::string> parse_tag_set(const std::vector<std::string>& tags);
std::vector<std::string> parse_tag_set(const std::string& comma_separated);
std::string tag_set_text(const std::vector<std::string>& tags);  // "[serve,gpu]", "[]"

// The checkpoint prefix of a SavedModel directory: DIR/variables/variables.
std::string saved_model_variables_prefix(const std::string& dir);

// Every meta graph of the SavedModel in DIR, without the graphs (for
// `tagflow inspect`). Errors: not_found for a missing file, parse_error
// naming the file for bytes that are not a SavedModel.
Expected<std::vector<MetaGraphInfo>> read_saved_model_infos(const std::string& dir);

// The meta graph of the SavedModel in DIR whose tag set is `tags` (as a
// set: order and repeats do not matter), its graph imported within
// `options`. A tag set no meta graph has is not_found listing the tag sets
// there are.
Expected<MetaGraph> read_saved_model(const std::string& dir, const std::vector<std::string>& tags,
                                     const ImportOptions& options = {});

}  // namespace io
}  // namespace tagflow::graph
