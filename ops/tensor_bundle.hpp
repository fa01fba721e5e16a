// Tensor bundles: TensorFlow's checkpoint format (V2), read and written
// byte-compatibly. A checkpoint with prefix P is an index `P.index` (a
// LevelDB table: key "" holds a BundleHeaderProto, every other key a
// tensor's name and its BundleEntryProto) plus data shards
// `P.data-00000-of-00001` holding the tensors' bytes; docs/formats.md
// describes the layout, string tensors included.
//
// BundleReader reads the whole index when it opens (checksums verified)
// and each tensor when asked, checking its size and masked CRC32C.
// BundleWriter writes one data shard and the index. Every malformed,
// truncated or corrupt file is an error naming the file and the tensor:
// data_loss for bytes that are wrong, not_found for a missing file or
// tensor, invalid_argument for a bad request, unimplemented for what
// tagflow does not read (sliced entries, big-endian bundles, variants).
// A reader is immutable after open and thread-compatible; a writer is used
// by one thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ops/dtype.hpp"
#include "ops/shape.hpp"
#include "ops/status.hpp"
#include "ops/tensor.hpp"

namespace tagflow::ops {

// "P.index".
std::string bundle_index_filename(std::string_view prefix);
// "P.data-00003-of-00008".
std::string bundle_data_filename(std::string_view prefix, int shard, int num_shards);
// "basename-00003-of-00008", as TensorFlow's ShardedFilename op.
std::string sharded_filename(std::string_view basename, int shard, int num_shards);

// One tensor of a bundle as its index describes it.
struct BundleEntry {
  std::string name;
  DType dtype = DType::invalid;
  Shape shape;
  int32_t shard_id = 0;
  int64_t offset = 0;
  int64_t size = 0;
  uint32_t masked_crc32c = 0;
  int num_slices = 0;  // > 0: a partitioned variable's entry (not readable here)
};

// Every key and raw value of an index file, in key order (the header's
// key "" first): what a reader parses, for tools and byte-level tests.
Expected<std::vector<std::pair<std::string, std::string>>> read_bundle_index(
    const std::string& index_path);

class BundleReader {
 public:
  // Opens P.index and parses the header and every entry. A missing index
  // is not_found; a truncated or garbage one data_loss.
  static Expected<BundleReader> open(const std::string& prefix);

  const std::string& prefix() const { return prefix_; }
  int num_shards() const { return num_shards_; }
  // The tensors in key order.
  const std::vector<BundleEntry>& entries() const { return entries_; }
  // nullptr if the bundle has no tensor of that name.
  const BundleEntry* find(std::string_view name) const;

  // Reads one tensor from its data shard: not_found if the bundle has no
  // such tensor or the shard file is missing; data_loss if the file is
  // shorter than the entry says or the bytes' checksum differs.
  Expected<Tensor> read(std::string_view name) const;
  Expected<Tensor> read(const BundleEntry& entry) const;

 private:
  std::string prefix_;
  int num_shards_ = 0;
  std::vector<BundleEntry> entries_;
};

// Writes a bundle at `prefix`: add() each tensor (any order), then
// finish(). Files are written under temporary names and renamed when
// complete, so a failed write leaves no half checkpoint at P; the prefix's
// directory is created if missing.
class BundleWriter {
 public:
  explicit BundleWriter(std::string prefix);
  ~BundleWriter();
  BundleWriter(const BundleWriter&) = delete;
  BundleWriter& operator=(const BundleWriter&) = delete;

  // Appends the tensor's bytes to the data shard. A duplicate or empty
  // name, or a dtype the format cannot hold here (resource, variant), is
  // invalid_argument; after an error every later call fails with it.
  Status add(const std::string& name, const Tensor& tensor);
  // Writes the index and renames both files into place.
  Status finish();

 private:
  struct Impl;
  Impl* impl_;
};

// Merges the bundles at `prefixes` into one at `destination` (TensorFlow's
// MergeV2Checkpoints): their data shards are renamed to the destination's
// shard names, one index listing every entry is written, and the sources'
// index files are deleted. A prefix without an index is skipped when
// `allow_missing_files` (all missing is still an error); two bundles with
// the same tensor are invalid_argument.
Status merge_bundles(const std::vector<std::string>& prefixes, const std::string& destination,
                     bool allow_missing_files);

}  // namespace tagflow::ops
