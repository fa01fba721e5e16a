// The pieces of the checkpoint format that BundleReader, BundleWriter and
// merge_bundles share (ops/tensor_bundle.hpp): the index file's header and
// entries, checked as a reader needs them, LevelDB statuses as tagflow
// errors, and file replacement by rename. Internal to tensor_bundle*.cpp:
// it includes LevelDB and the generated protobuf code, which tagflow_ops
// links privately. Pure functions over files; thread-compatible.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <leveldb/status.h>

#include "ops/tensor_bundle.hpp"

namespace tagflow::ops::bundle_index {

// The version of the format TensorFlow's BundleWriter writes and reads.
constexpr int kBundleVersion = 1;

// A LevelDB status as a tagflow one naming `path`: not_found for a missing
// file, data_loss for the rest (corruption, short reads).
Status leveldb_status(const leveldb::Status& s, const std::string& path);

// "<file>: tensor '<name>': <what>".
Status entry_error(Error code, const std::string& file, std::string_view tensor, const std::string& what);

// A little-endian varint64 at data[*pos, size); false if it runs past the
// end or is longer than ten bytes.
bool get_varint64(const char* data, size_t size, size_t* pos, uint64_t* out);

// The header entry (key "") of an index read by read_bundle_index.
struct Header {
  int num_shards = 0;
  int endianness = 0;   // 0 little
  std::string version;  // the serialized VersionDef, to compare bundles
};
// data_loss if the first key is not "" or its value is no header;
// unimplemented for a big-endian bundle; failed_precondition for a format
// version tagflow does not read.
Expected<Header> parse_header(const std::vector<std::pair<std::string, std::string>>& table,
                              const std::string& path);
// One tensor's entry, checked: a known dtype, a valid shape, its shard
// among `num_shards`, no negative offset or size.
Expected<BundleEntry> parse_entry(const std::string& key, const std::string& value, int num_shards,
                                  const std::string& path);

// Writes an index at `path`: `header` (a serialized BundleHeaderProto)
// under "", then `entries` in key order, uncompressed as TensorFlow
// writes it; under a temporary name renamed into place when complete.
Status write_index(const std::string& path, const std::string& header,
                   const std::map<std::string, std::string>& entries);

// A file name beside `path` that no other writer picks.
std::string temporary_name(const std::string& path);
// Renames (replacing `to`); not_found if `from` is missing.
Status rename_file(const std::string& from, const std::string& to);
void remove_quietly(const std::string& path);
// Creates the directory a prefix's files go in.
Status create_parent_directory(const std::string& prefix);

}  // namespace tagflow::ops::bundle_index
