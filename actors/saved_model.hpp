// A SavedModel loaded into a session, as TensorFlow Serving loads one: the
// meta graph a tag picks (graph/io/saved_model.hpp), its variables restored by
// running the graph's own restore op with the checkpoint prefix fed to the
// saver's filename tensor, its init op run (asset paths fed), and then its
// signatures run by key: inputs by the signature's names, outputs printed
// or returned by theirs. The variables live in the session, so a stateful
// signature (a counter's AssignAdd) keeps its state from one call to the
// next. save() runs the graph's own save op: the checkpoint it writes is
// TensorFlow's tensor-bundle format.
// Thread-safe as Session is: run_signature may be called from many threads.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "actors/session.hpp"
#include "graph/io/saved_model.hpp"
#include "graph/io/variables.hpp"

namespace tagflow::actors {

struct SavedModelOptions {
  // The meta graph's tag set, matched as a set (graph::parse_tag_set):
  // {"serve"}, {"serve", "gpu"}, or {} for a TF 1 Hub module's.
  std::vector<std::string> tags = {"serve"};
  // The checkpoint to restore; empty: DIR/variables/variables, skipped when
  // the model has no variables (no .index file), as TensorFlow's loader does.
  std::string checkpoint;
  SessionOptions session;
  // Applied to the meta graph before the session is made (e.g. adding the
  // gradient of a signature's output, graph/autodiff/gradients.hpp); an error ends
  // the load.
  std::function<ops::Status(graph::Graph*, const graph::MetaGraphInfo&)> transform;
};

using NamedTensors = std::vector<std::pair<std::string, ops::Tensor>>;

class SavedModelSession {
 public:
  // Reads DIR, makes the session, restores and runs the init op. Errors
  // name the directory and the step that failed ("restoring from P: ...").
  static ops::Expected<std::unique_ptr<SavedModelSession>> load(const std::string& dir,
                                                                SavedModelOptions options = {});

  const graph::MetaGraphInfo& info() const { return info_; }
  Session& session() { return *session_; }
  const std::string& dir() const { return dir_; }

  // Runs signature `name` with `inputs` by key (each checked against the
  // signature's dtype, and with SessionOptions::strict_shapes its shape
  // against the signature's and the Placeholder's; otherwise the kernels
  // see the shapes, as in TF Serving); returns every output of the
  // signature by key, in key order. A missing or unknown input key, or a
  // wrong dtype, is an error naming the signature and the key.
  ops::Expected<NamedTensors> run_signature(const std::string& name, const NamedTensors& inputs);

  // Writes the variables to checkpoint `prefix` with the graph's save op.
  ops::Status save(const std::string& prefix);
  // Restores the variables from checkpoint `prefix` with the graph's
  // restore op.
  ops::Status restore(const std::string& prefix);

 private:
  SavedModelSession() = default;
  Feeds asset_feeds() const;

  std::string dir_;
  bool strict_shapes_ = false;  // SessionOptions::strict_shapes
  // Without a saver_def: the restore op load() added (graph/io/variables.hpp).
  graph::RestoreByName restore_by_name_;
  graph::MetaGraphInfo info_;
  std::unique_ptr<Session> session_;
};

// Writes the value of every variable of the session's graph (VariableV2,
// Variable and VarHandleOp nodes) to checkpoint `prefix`, each under its
// node's name as TensorFlow 1's Saver names them: for a graph without a
// saver of its own (a plain GraphDef). A variable no step has initialised
// is an error naming it. Returns how many tensors it wrote.
ops::Expected<int> save_variables(const Session& session, const std::string& prefix);

// The signature `name` of `info`, or not_found listing the signatures.
ops::Expected<const graph::Signature*> find_signature(const graph::MetaGraphInfo& info,
                                                      const std::string& name);

}  // namespace tagflow::actors
