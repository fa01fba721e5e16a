#include "ops/tensor_bundle_index.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>

#include <fmt/format.h>
#include <leveldb/env.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>
#include <leveldb/table_builder.h>
#include <snappy.h>

#include "ops/crc32c.hpp"
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

// Where a block of the table lies: its contents, then a 5-byte trailer.
struct BlockHandle {
  uint64_t offset = 0;
  uint64_t size = 0;
};

// A block handle at data[*pos, size) that lies inside the table's blocks,
// which end at `blocks_end` (where the footer begins), trailer included.
bool get_block_handle(const char* data, size_t size, size_t* pos, uint64_t blocks_end, BlockHandle* out) {
  return get_varint64(data, size, pos, &out->offset) && get_varint64(data, size, pos, &out->size) &&
         out->offset <= blocks_end && out->size <= blocks_end - out->offset &&
         kBlockTrailerSize <= blocks_end - out->offset - out->size;
}

// The footer's index block handle, once the footer is checked. LevelDB
// allocates a block's size before it reads it; a footer whose block
// handles point outside the file is refused here, before LevelDB sees it.
Expected<BlockHandle> check_footer(leveldb::RandomAccessFile& file, uint64_t file_size, const std::string& path) {
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
  BlockHandle handle;
  for (const char* which : {"metaindex", "index"})
    if (!get_block_handle(footer.data(), 40, &pos, file_size - kFooterSize, &handle))
      return Status(Error::data_loss,
                    fmt::format("{}: the footer's {} block handle points outside the file", path, which));
  return handle;  // the second: the index block's
}

uint32_t get_fixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// Block compression types (LevelDB's CompressionType).
constexpr unsigned char kNoCompression = 0;
constexpr unsigned char kSnappyCompression = 1;

// Snappy's most productive element, a 3-byte copy of 64 bytes, makes 64/3
// bytes per byte of input: no valid block decompresses to more than this.
uint64_t max_snappy_output(uint64_t compressed_size) { return compressed_size / 3 * 64 + 64; }

// The decompressed size a Snappy block of `block_size` bytes claims (read
// by libsnappy from its first bytes `head`), refused if no valid block of
// that size could decompress to it: LevelDB allocates what it claims
// before it decompresses.
Expected<uint64_t> snappy_claimed_size(std::string_view head, uint64_t block_size, const char* which,
                                       uint64_t offset, const std::string& path) {
  size_t claimed = 0;
  if (!snappy::GetUncompressedLength(head.data(), head.size(), &claimed) || claimed > max_snappy_output(block_size))
    return Status(Error::data_loss,
                  fmt::format("{}: Corruption: the Snappy-compressed {} block at offset {} claims a decompressed "
                              "size that its {} bytes cannot hold",
                              path, which, offset, block_size));
  return static_cast<uint64_t>(claimed);
}

// The block decompressed by libsnappy, its claimed size checked first.
Expected<std::string> snappy_decompress(std::string_view in, const std::string& where) {
  std::string out;
  if (!snappy::Uncompress(in.data(), in.size(), &out))
    return Status(Error::data_loss, fmt::format("{}: Corruption: bad Snappy data", where));
  return out;
}

// The block `h` names, its checksum checked and decompressed. LevelDB
// allocates a block's size, and a Snappy block's claimed size, before it
// reads or decompresses it: both are checked here first.
Expected<std::string> read_block(leveldb::RandomAccessFile& file, BlockHandle h, const char* which,
                                 const std::string& path) {
  std::string bytes(static_cast<size_t>(h.size + kBlockTrailerSize), '\0');
  leveldb::Slice got;
  TF_RETURN_IF_ERROR(leveldb_status(file.Read(h.offset, bytes.size(), &got, bytes.data()), path));
  if (got.size() != bytes.size())
    return Status(Error::data_loss, fmt::format("{}: truncated: the {} block at offset {} ends past the file",
                                                path, which, h.offset));
  if (got.data() != bytes.data()) std::memcpy(bytes.data(), got.data(), got.size());
  // The checksum covers the contents and the compression type byte.
  const uint32_t stored = crc32c::unmask(get_fixed32(bytes.data() + h.size + 1));
  const uint32_t computed = crc32c::value(bytes.data(), static_cast<size_t>(h.size) + 1);
  if (stored != computed)
    return Status(Error::data_loss, fmt::format("{}: Corruption: block checksum mismatch in the {} block at "
                                                "offset {} (stored 0x{:08x}, computed 0x{:08x})",
                                                path, which, h.offset, stored, computed));
  const auto type = static_cast<unsigned char>(bytes[static_cast<size_t>(h.size)]);
  bytes.resize(static_cast<size_t>(h.size));
  if (type == kNoCompression) return bytes;
  if (type != kSnappyCompression)
    return Status(Error::data_loss, fmt::format("{}: Corruption: the {} block at offset {} has compression "
                                                "type {}, neither none (0) nor Snappy (1)",
                                                path, which, h.offset, type));
  TF_RETURN_IF_ERROR(snappy_claimed_size(bytes, h.size, which, h.offset, path).status());
  return snappy_decompress(bytes, fmt::format("{}: the {} block at offset {}", path, which, h.offset));
}

// A data block's compression type, after its contents; for a Snappy
// block, the size it claims (a few bytes read: the block itself is left to
// LevelDB, whose allocation is now bounded by the file).
Status check_data_block(leveldb::RandomAccessFile& file, BlockHandle h, const std::string& path) {
  char type = 0;
  leveldb::Slice got;
  TF_RETURN_IF_ERROR(leveldb_status(file.Read(h.offset + h.size, 1, &got, &type), path));
  if (got.size() != 1) return Status(Error::data_loss, path + ": truncated: cannot read a data block's trailer");
  if (static_cast<unsigned char>(got[0]) == kNoCompression) return ok_status();
  if (static_cast<unsigned char>(got[0]) != kSnappyCompression)
    return read_block(file, h, "data", path).status();  // a checksum error, or the unknown type named
  char head[5];
  TF_RETURN_IF_ERROR(leveldb_status(file.Read(h.offset, std::min<uint64_t>(h.size, 5), &got, head), path));
  // A bad claim is reported by read_block, which names a checksum error first.
  if (!snappy_claimed_size(std::string_view(got.data(), got.size()), h.size, "data", h.offset, path).ok())
    return read_block(file, h, "data", path).status();
  return ok_status();
}

// LevelDB allocates every data block's size, as the index block gives it,
// before it reads the block (and a Snappy block's claimed size before it
// decompresses it). Each handle of the index block is checked here first:
// the block lies inside the file, and a compressed one claims no more than
// it can hold. (The keys are left to LevelDB: a corrupt one costs it no
// more than the block's own size.)
Status check_data_blocks(leveldb::RandomAccessFile& file, uint64_t file_size, BlockHandle index,
                         const std::string& path) {
  TF_ASSIGN_OR_RETURN(std::string block, read_block(file, index, "index", path));
  // Entries, then the restart offsets (uint32 each), then their count.
  auto corrupt = [&](const std::string& what) {
    return Status(Error::data_loss, fmt::format("{}: Corruption: the index block {}", path, what));
  };
  if (block.size() < 4) return corrupt("is shorter than its restart count");
  const uint64_t restarts = get_fixed32(block.data() + block.size() - 4);
  if (restarts > (block.size() - 4) / 4)
    return corrupt(fmt::format("claims {} restart points in {} bytes", restarts, block.size()));
  const size_t entries_end = block.size() - 4 - 4 * static_cast<size_t>(restarts);
  const uint64_t blocks_end = file_size - kFooterSize;
  for (size_t pos = 0; pos < entries_end;) {
    uint64_t shared = 0, key_size = 0, value_size = 0;
    if (!get_varint64(block.data(), entries_end, &pos, &shared) ||
        !get_varint64(block.data(), entries_end, &pos, &key_size) ||
        !get_varint64(block.data(), entries_end, &pos, &value_size) || key_size > entries_end - pos ||
        value_size > entries_end - pos - key_size)
      return corrupt(fmt::format("has an entry at offset {} that runs past its end", pos));
    pos += static_cast<size_t>(key_size);
    const size_t value_end = pos + static_cast<size_t>(value_size);
    BlockHandle data;
    if (!get_block_handle(block.data(), value_end, &pos, blocks_end, &data))
      return Status(Error::data_loss,
                    fmt::format("{}: Corruption: a data block handle of the index block points outside the "
                                "file ({} bytes at offset {}, the blocks end at {})",
                                path, data.size, data.offset, blocks_end));
    TF_RETURN_IF_ERROR(check_data_block(file, data, path));
    pos = value_end;
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
    TF_ASSIGN_OR_RETURN(BlockHandle index, check_footer(*file, size, path));
    TF_RETURN_IF_ERROR(check_data_blocks(*file, size, index, path));
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
