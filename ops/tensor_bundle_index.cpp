#include "ops/tensor_bundle_index.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <random>

#include <fmt/format.h>
#include <leveldb/env.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>
#include <leveldb/table_builder.h>

#include "ops/proto/tensor_bundle.pb.h"

namespace tagflow::ops {

namespace bundle_index {

namespace fs = std::filesystem;
namespace pb = tagflow::checkpoint;

namespace {

// LevelDB's table footer: two block handles, padding, an 8-byte magic.
constexpr uint64_t kFooterSize = 48;
constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr uint64_t kBlockTrailerSize = 5;  // compression type + masked CRC32C

// LevelDB allocates a block's size before it reads it; a footer whose block
// handles point outside the file is refused here, before LevelDB sees it.
Status check_footer(leveldb::RandomAccessFile& file, uint64_t file_size, const std::string& path) {
  if (file_size < kFooterSize)
    return Status(Error::data_loss,
                  fmt::format("{}: truncated: {} bytes, shorter than a table's {}-byte footer", path,
                              file_size, kFooterSize));
  char scratch[kFooterSize];
  leveldb::Slice footer;
  TF_RETURN_IF_ERROR(leveldb_status(file.Read(file_size - kFooterSize, kFooterSize, &footer, scratch), path));
  if (footer.size() != kFooterSize)
    return Status(Error::data_loss, path + ": truncated: cannot read the table's footer");
  uint64_t magic = 0;
  for (int i = 7; i >= 0; --i) magic = (magic << 8) | static_cast<unsigned char>(footer.data()[40 + i]);
  if (magic != kTableMagic)
    return Status(Error::data_loss, path + ": not a checkpoint index (no LevelDB table magic at its end; "
                                           "truncated or not a table)");
  size_t pos = 0;
  const uint64_t blocks_end = file_size - kFooterSize;
  for (const char* which : {"metaindex", "index"}) {
    uint64_t offset = 0, size = 0;
    if (!get_varint64(footer.data(), 40, &pos, &offset) || !get_varint64(footer.data(), 40, &pos, &size) ||
        offset > blocks_end || size > blocks_end - offset ||
        kBlockTrailerSize > blocks_end - offset - size)
      return Status(Error::data_loss,
                    fmt::format("{}: the footer's {} block handle points outside the file", path, which));
  }
  return ok_status();
}

}  // namespace

// A LevelDB status as a tagflow one naming `path`.
Status leveldb_status(const leveldb::Status& s, const std::string& path) {
  if (s.ok()) return ok_status();
  const Error code = s.IsNotFound() ? Error::not_found : Error::data_loss;
  // LevelDB names the file of a failed open itself ("NotFound: P.index:
  // No such file or directory"); the other errors get it here.
  const std::string text = s.ToString();
  return Status(code, text.find(path) == std::string::npos ? path + ": " + text : text);
}


bool get_varint64(const char* data, size_t size, size_t* pos, uint64_t* out) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && *pos < size; shift += 7) {
    const auto byte = static_cast<unsigned char>(data[(*pos)++]);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *out = result;
      return true;
    }
  }
  return false;
}

Status entry_error(Error code, const std::string& file, std::string_view tensor, const std::string& what) {
  return Status(code, fmt::format("{}: tensor '{}': {}", file, tensor, what));
}

Expected<Header> parse_header(const std::vector<std::pair<std::string, std::string>>& table,
                              const std::string& path) {
  if (table.empty() || !table[0].first.empty())
    return Status(Error::data_loss, path + ": no header entry (the empty key) in the checkpoint index");
  pb::BundleHeaderProto header;
  if (!header.ParseFromString(table[0].second))
    return Status(Error::data_loss, path + ": the header entry is not a BundleHeaderProto");
  if (header.num_shards() < 0 || (header.num_shards() == 0 && table.size() > 1))
    return Status(Error::data_loss, fmt::format("{}: the header says {} data shards", path, header.num_shards()));
  if (header.endianness() != 0)
    return Status(Error::unimplemented, path + ": a big-endian checkpoint; tagflow reads little-endian ones");
  const pb::VersionDef& v = header.version();
  const auto& bad = v.bad_consumers();
  if (v.min_consumer() > kBundleVersion || std::find(bad.begin(), bad.end(), kBundleVersion) != bad.end())
    return Status(Error::failed_precondition,
                  fmt::format("{}: the checkpoint needs a reader of format version >= {}; tagflow reads "
                              "version {}",
                              path, v.min_consumer(), kBundleVersion));
  Header h;
  h.num_shards = header.num_shards();
  h.endianness = header.endianness();
  h.version = v.SerializeAsString();
  return h;
}

Expected<BundleEntry> parse_entry(const std::string& key, const std::string& value, int num_shards,
                                  const std::string& path) {
  pb::BundleEntryProto p;
  if (!p.ParseFromString(value))
    return entry_error(Error::data_loss, path, key, "the index entry is not a BundleEntryProto");
  BundleEntry e;
  e.name = key;
  if (p.dtype() <= 0 || p.dtype() >= kRefOffset || !is_known_dtype_number(p.dtype()))
    return entry_error(Error::data_loss, path, key, fmt::format("unknown dtype number {}", p.dtype()));
  e.dtype = static_cast<DType>(p.dtype());
  if (p.shape().unknown_rank())
    return entry_error(Error::data_loss, path, key, "the shape has an unknown rank");
  std::vector<int64_t> dims;
  for (const auto& d : p.shape().dim()) dims.push_back(d.size());
  Expected<Shape> shape = Shape::make(dims);
  if (!shape.ok())
    return entry_error(Error::data_loss, path, key, "invalid shape: " + shape.status().message());
  e.shape = *shape;
  e.num_slices = p.slices_size();
  if (e.num_slices == 0 && (p.shard_id() < 0 || p.shard_id() >= num_shards))
    return entry_error(Error::data_loss, path, key,
                       fmt::format("shard {} of a bundle of {} shards", p.shard_id(), num_shards));
  if (p.offset() < 0 || p.size() < 0)
    return entry_error(Error::data_loss, path, key,
                       fmt::format("negative offset {} or size {}", p.offset(), p.size()));
  e.shard_id = p.shard_id();
  e.offset = p.offset();
  e.size = p.size();
  e.masked_crc32c = p.crc32c();
  return e;
}

// A file name beside `path` that no other writer picks.
std::string temporary_name(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t seed = std::random_device{}();
  const uint64_t stamp = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return fmt::format("{}.tempstate{:x}", path, seed ^ stamp ^ (counter.fetch_add(1) << 48));
}

Status rename_file(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec)
    return Status(ec == std::errc::no_such_file_or_directory ? Error::not_found : Error::data_loss,
                  fmt::format("cannot rename '{}' to '{}': {}", from, to, ec.message()));
  return ok_status();
}

void remove_quietly(const std::string& path) {
  std::error_code ec;
  fs::remove(path, ec);
}

Status create_parent_directory(const std::string& prefix) {
  const fs::path parent = fs::path(prefix).parent_path();
  if (parent.empty()) return ok_status();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return Status(Error::not_found, fmt::format("cannot create the directory '{}': {}", parent.string(), ec.message()));
  return ok_status();
}

// Writes an index: the header under "" then `entries` in key order (a
// std::map orders std::string keys bytewise, as LevelDB's comparator).
// Written under a temporary name and renamed to `path` when complete.
Status write_index(const std::string& path, const std::string& header,
                   const std::map<std::string, std::string>& entries) {
  const std::string tmp = temporary_name(path);
  leveldb::WritableFile* raw = nullptr;
  TF_RETURN_IF_ERROR(leveldb_status(leveldb::Env::Default()->NewWritableFile(tmp, &raw), tmp));
  std::unique_ptr<leveldb::WritableFile> file(raw);
  leveldb::Options options;
  // TensorFlow before 1.1 reads no compressed tables; TensorFlow writes none.
  options.compression = leveldb::kNoCompression;
  leveldb::Status s;
  {
    leveldb::TableBuilder builder(options, file.get());
    builder.Add("", header);
    for (const auto& [key, value] : entries) builder.Add(key, value);
    s = builder.Finish();
  }
  if (s.ok()) s = file->Sync();
  const leveldb::Status closed = file->Close();
  if (s.ok()) s = closed;
  if (!s.ok()) {
    remove_quietly(tmp);
    return leveldb_status(s, path);
  }
  Status renamed = rename_file(tmp, path);
  if (!renamed.ok()) remove_quietly(tmp);
  return renamed;
}

}  // namespace bundle_index

using namespace bundle_index;

Expected<std::vector<std::pair<std::string, std::string>>> read_bundle_index(const std::string& path) {
  try {
    leveldb::Env* env = leveldb::Env::Default();
    uint64_t size = 0;
    TF_RETURN_IF_ERROR(leveldb_status(env->GetFileSize(path, &size), path));
    leveldb::RandomAccessFile* raw = nullptr;
    TF_RETURN_IF_ERROR(leveldb_status(env->NewRandomAccessFile(path, &raw), path));
    std::unique_ptr<leveldb::RandomAccessFile> file(raw);
    TF_RETURN_IF_ERROR(check_footer(*file, size, path));
    leveldb::Options options;
    options.paranoid_checks = true;  // verify the index block's checksum too
    leveldb::Table* table_raw = nullptr;
    TF_RETURN_IF_ERROR(leveldb_status(leveldb::Table::Open(options, file.get(), size, &table_raw), path));
    std::unique_ptr<leveldb::Table> table(table_raw);
    leveldb::ReadOptions read;
    read.verify_checksums = true;
    read.fill_cache = false;
    std::unique_ptr<leveldb::Iterator> it(table->NewIterator(read));
    std::vector<std::pair<std::string, std::string>> out;
    for (it->SeekToFirst(); it->Valid(); it->Next())
      out.emplace_back(it->key().ToString(), it->value().ToString());
    TF_RETURN_IF_ERROR(leveldb_status(it->status(), path));
    return out;
  } catch (const std::exception& e) {
    // A corrupt block handle can make LevelDB allocate what it cannot.
    return Status(Error::data_loss, fmt::format("{}: unreadable checkpoint index ({})", path, e.what()));
  }
}

}  // namespace tagflow::ops
