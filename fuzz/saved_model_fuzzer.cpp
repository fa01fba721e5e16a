// libFuzzer harness: the SavedModel loader on a directory it writes from
// the input — saved_model.pb or saved_model.pbtxt, variables.index and
// variables.data-00000-of-00001 — as `tagflow run DIR` and `inspect DIR`
// read it: every meta graph's info, each meta graph by its tag set (its
// graph imported and validated), the checkpoint's index and every entry
// it names, and the by-name restore op a meta graph without a saver gets.
// No input may crash, hang or reach std::terminate; errors are values.
//
// Input: byte 0 (bit 0: the model file is text), then three segments each
// a 4-byte little-endian length and that many bytes (model file, index,
// data; a length past the end takes what is left). Seeds:
// fuzz/corpus/saved_model (scripts/saved_model_fuzz_seeds.py).
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <google/protobuf/stubs/logging.h>

#include "graph/io/import.hpp"
#include "graph/io/saved_model.hpp"
#include "graph/io/variables.hpp"
#include "graph/validate.hpp"
#include "ops/tensor_bundle.hpp"

namespace {

std::string g_dir;  // this process's model directory

const char* const kFiles[] = {"/saved_model.pb", "/saved_model.pbtxt", "/variables/variables.index",
                              "/variables/variables.data-00000-of-00001"};

void remove_dir() {
  for (const char* f : kFiles) ::unlink((g_dir + f).c_str());
  ::rmdir((g_dir + "/variables").c_str());
  ::rmdir(g_dir.c_str());
}

void write_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The next length-prefixed segment of `in`.
std::string_view segment(std::string_view& in) {
  if (in.size() < 4) {
    std::string_view rest = in;
    in = {};
    return rest;
  }
  const uint32_t n = static_cast<uint8_t>(in[0]) | static_cast<uint32_t>(static_cast<uint8_t>(in[1])) << 8 |
                     static_cast<uint32_t>(static_cast<uint8_t>(in[2])) << 16 |
                     static_cast<uint32_t>(static_cast<uint8_t>(in[3])) << 24;
  in.remove_prefix(4);
  const size_t take = n < in.size() ? n : in.size();
  std::string_view out = in.substr(0, take);
  in.remove_prefix(take);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  const char* tmp = std::getenv("TMPDIR");
  std::string base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  g_dir = base + "/tagflow-fuzz-saved-model-" + std::to_string(::getpid());
  if (::mkdir(g_dir.c_str(), 0700) != 0 || ::mkdir((g_dir + "/variables").c_str(), 0700) != 0) std::abort();
  std::atexit(remove_dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tagflow;
  if (size == 0) return 0;
  const bool text = (data[0] & 1) != 0;
  std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string_view model = segment(in), index = segment(in), bundle = segment(in);
  ::unlink((g_dir + "/saved_model.pb").c_str());
  ::unlink((g_dir + "/saved_model.pbtxt").c_str());
  write_file(g_dir + (text ? "/saved_model.pbtxt" : "/saved_model.pb"), model);
  write_file(g_dir + "/variables/variables.index", index);
  write_file(g_dir + "/variables/variables.data-00000-of-00001", bundle);

  if (!graph::is_saved_model_dir(g_dir)) std::abort();  // the file was just written
  auto infos = graph::read_saved_model_infos(g_dir);
  if (!infos.ok()) return 0;
  graph::ImportOptions limits;
  limits.max_nodes = 20000;
  limits.max_constant_bytes = 64 << 20;
  // The checkpoint, as a load restores it.
  std::vector<std::pair<std::string, ops::DType>> saved;
  auto reader = ops::BundleReader::open(graph::saved_model_variables_prefix(g_dir));
  if (reader.ok()) {
    for (const ops::BundleEntry& e : reader->entries()) {
      saved.emplace_back(e.name, e.dtype);
      if (e.size <= (1 << 20)) (void)reader->read(e);
    }
  }
  for (const graph::MetaGraphInfo& info : *infos) {
    for (const graph::Signature& s : info.signatures) (void)s.inputs.size();
    auto meta = graph::read_saved_model(g_dir, info.tags, limits);
    if (!meta.ok()) continue;
    graph::ValidateOptions v;
    v.allow_unknown_ops = true;
    if (!graph::validate(meta->graph, v).ok()) continue;
    if (!meta->info.saver && !saved.empty()) {
      // (a variable the graph itself misplaces, in a loop frame, may make
      // the result invalid: an error for the session to report, not a crash)
      auto restore = graph::add_restore_by_name(&meta->graph, saved, "_tagflow_restore");
      if (restore.ok() && restore->variables > 0) (void)graph::validate(meta->graph, v);
    }
  }
  return 0;
}
