// libFuzzer harness: a binary GraphDef (.pb) — or a MetaGraphDef or
// SavedModel, which the importer detects from the wire structure — through
// the same pipeline as import_text (import_pipeline.hpp). Seeds:
// fuzz/corpus/import_binary.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <google/protobuf/stubs/logging.h>

#include "import_pipeline.hpp"

// protobuf logs every malformed input to stderr; the importer's errors say
// what matters.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  tagflow::fuzz::check_imported(tagflow::graph::import_graph_binary(bytes, "<fuzz>"),
                                tagflow::fuzz::input_hash(data, size));
  return 0;
}
