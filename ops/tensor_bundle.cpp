#include "ops/tensor_bundle.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <random>
#include <unordered_map>

#include <fmt/format.h>
#include <leveldb/env.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>
#include <leveldb/table_builder.h>

#include "ops/crc32c.hpp"
#include "ops/proto/tensor_bundle.pb.h"

namespace tagflow::ops {

namespace {

namespace fs = std::filesystem;
namespace pb = tagflow::checkpoint;

// The version of the format TensorFlow's BundleWriter writes and reads.
constexpr int kBundleVersion = 1;
// LevelDB's table footer: two block handles, padding, an 8-byte magic.
constexpr uint64_t kFooterSize = 48;
constexpr uint64_t kTableMagic = 0xdb4775248b80fb57ull;
constexpr uint64_t kBlockTrailerSize = 5;  // compression type + masked CRC32C

std::string hex32(uint32_t v) { return fmt::format("0x{:08x}", v); }

// A LevelDB status as a tagflow one naming `path`.
Status from_leveldb(const leveldb::Status& s, const std::string& path) {
  if (s.ok()) return ok_status();
  const Error code = s.IsNotFound() ? Error::not_found : Error::data_loss;
  return Status(code, path + ": " + s.ToString());
}

// Little-endian varint64 at data[*pos, size); false if it runs past the end
// or is longer than ten bytes.
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

void put_varint64(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void put_fixed32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t get_fixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// LevelDB allocates a block's size before it reads it; a footer whose block
// handles point outside the file is refused here, before LevelDB sees it.
Status check_footer(leveldb::RandomAccessFile& file, uint64_t file_size, const std::string& path) {
  if (file_size < kFooterSize)
    return Status(Error::data_loss,
                  fmt::format("{}: truncated: {} bytes, shorter than a table's {}-byte footer", path,
                              file_size, kFooterSize));
  char scratch[kFooterSize];
  leveldb::Slice footer;
  TF_RETURN_IF_ERROR(from_leveldb(file.Read(file_size - kFooterSize, kFooterSize, &footer, scratch), path));
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

Status entry_error(Error code, const std::string& file, std::string_view tensor, const std::string& what) {
  return Status(code, fmt::format("{}: tensor '{}': {}", file, tensor, what));
}

struct Header {
  int num_shards = 0;
  int endianness = 0;
  std::string version;  // serialized, to compare bundles being merged
};

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

// A string length as the checksum of a string tensor takes it: a
// little-endian uint32, or uint64 for a string of 4 GiB or more (older
// checkpoints had only the former).
uint32_t extend_by_length(uint32_t crc, uint64_t len) {
  std::string fixed;
  put_fixed32(&fixed, static_cast<uint32_t>(len));
  if (len > std::numeric_limits<uint32_t>::max()) put_fixed32(&fixed, static_cast<uint32_t>(len >> 32));
  return crc32c::extend(crc, fixed.data(), fixed.size());
}

// The bytes of a string tensor in TensorFlow's layout: every element's
// length as a varint64, the masked CRC32C of the lengths (each taken as a
// little-endian uint32, or uint64 beyond 4 GiB — not the varint bytes),
// then the elements' bytes. *crc covers the lengths so taken, the four
// checksum bytes as written, and the elements' bytes.
std::string encode_strings(const Tensor& t, uint32_t* crc) {
  const std::string* elements = t.data<std::string>();
  const int64_t n = t.num_elements();
  std::string out;
  uint32_t c = 0;
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t len = elements[i].size();
    put_varint64(&out, len);
    c = extend_by_length(c, len);
  }
  const size_t checksum_at = out.size();
  put_fixed32(&out, crc32c::mask(c));
  c = crc32c::extend(c, out.data() + checksum_at, 4);
  for (int64_t i = 0; i < n; ++i) {
    out += elements[i];
    c = crc32c::extend(c, elements[i].data(), elements[i].size());
  }
  *crc = c;
  return out;
}

// The inverse of encode_strings over an entry's bytes.
Expected<Tensor> decode_strings(const BundleEntry& e, const std::string& bytes, const std::string& path) {
  const int64_t n = e.shape.num_elements();
  // At least one byte per length and four for their checksum: a count
  // beyond that is a corrupt entry, refused before anything is allocated.
  if (n > static_cast<int64_t>(bytes.size()) - 4)
    return entry_error(Error::data_loss, path, e.name,
                       fmt::format("{} strings cannot fit in the entry's {} bytes", n, bytes.size()));
  std::vector<uint64_t> lengths(static_cast<size_t>(n));
  size_t pos = 0;
  uint32_t c = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t len = 0;
    if (!get_varint64(bytes.data(), bytes.size(), &pos, &len))
      return entry_error(Error::data_loss, path, e.name, "the string lengths run past the entry");
    lengths[static_cast<size_t>(i)] = len;
    c = extend_by_length(c, len);
  }
  if (bytes.size() - pos < 4)
    return entry_error(Error::data_loss, path, e.name, "the string lengths run past the entry");
  const uint32_t stored_lengths_crc = crc32c::unmask(get_fixed32(bytes.data() + pos));
  if (stored_lengths_crc != c)
    return entry_error(Error::data_loss, path, e.name,
                       fmt::format("crc32c mismatch in the string lengths (stored {}, computed {})",
                                   hex32(stored_lengths_crc), hex32(c)));
  c = crc32c::extend(c, bytes.data() + pos, 4);
  pos += 4;
  uint64_t remaining = bytes.size() - pos;
  for (uint64_t len : lengths) {
    if (len > remaining)
      return entry_error(Error::data_loss, path, e.name, "the strings run past the entry");
    remaining -= len;
  }
  if (remaining != 0)
    return entry_error(Error::data_loss, path, e.name,
                       fmt::format("{} bytes after the last string", remaining));
  Tensor t(DType::string, e.shape);
  std::string* out = t.mutable_data<std::string>();
  for (int64_t i = 0; i < n; ++i) {
    const size_t len = static_cast<size_t>(lengths[static_cast<size_t>(i)]);
    out[i].assign(bytes.data() + pos, len);
    c = crc32c::extend(c, bytes.data() + pos, len);
    pos += len;
  }
  if (crc32c::unmask(e.masked_crc32c) != c)
    return entry_error(Error::data_loss, path, e.name,
                       fmt::format("crc32c mismatch (stored {}, computed {} over {} bytes at offset {})",
                                   hex32(crc32c::unmask(e.masked_crc32c)), hex32(c), bytes.size(), e.offset));
  return t;
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
  TF_RETURN_IF_ERROR(from_leveldb(leveldb::Env::Default()->NewWritableFile(tmp, &raw), tmp));
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
    return from_leveldb(s, path);
  }
  Status renamed = rename_file(tmp, path);
  if (!renamed.ok()) remove_quietly(tmp);
  return renamed;
}

}  // namespace

std::string sharded_filename(std::string_view basename, int shard, int num_shards) {
  return fmt::format("{}-{:05d}-of-{:05d}", basename, shard, num_shards);
}

std::string bundle_index_filename(std::string_view prefix) { return std::string(prefix) + ".index"; }

std::string bundle_data_filename(std::string_view prefix, int shard, int num_shards) {
  return sharded_filename(std::string(prefix) + ".data", shard, num_shards);
}

Expected<std::vector<std::pair<std::string, std::string>>> read_bundle_index(const std::string& path) {
  try {
    leveldb::Env* env = leveldb::Env::Default();
    uint64_t size = 0;
    TF_RETURN_IF_ERROR(from_leveldb(env->GetFileSize(path, &size), path));
    leveldb::RandomAccessFile* raw = nullptr;
    TF_RETURN_IF_ERROR(from_leveldb(env->NewRandomAccessFile(path, &raw), path));
    std::unique_ptr<leveldb::RandomAccessFile> file(raw);
    TF_RETURN_IF_ERROR(check_footer(*file, size, path));
    leveldb::Options options;
    options.paranoid_checks = true;  // verify the index block's checksum too
    leveldb::Table* table_raw = nullptr;
    TF_RETURN_IF_ERROR(from_leveldb(leveldb::Table::Open(options, file.get(), size, &table_raw), path));
    std::unique_ptr<leveldb::Table> table(table_raw);
    leveldb::ReadOptions read;
    read.verify_checksums = true;
    read.fill_cache = false;
    std::unique_ptr<leveldb::Iterator> it(table->NewIterator(read));
    std::vector<std::pair<std::string, std::string>> out;
    for (it->SeekToFirst(); it->Valid(); it->Next())
      out.emplace_back(it->key().ToString(), it->value().ToString());
    TF_RETURN_IF_ERROR(from_leveldb(it->status(), path));
    return out;
  } catch (const std::exception& e) {
    // A corrupt block handle can make LevelDB allocate what it cannot.
    return Status(Error::data_loss, fmt::format("{}: unreadable checkpoint index ({})", path, e.what()));
  }
}

// --- BundleReader ------------------------------------------------------------

Expected<BundleReader> BundleReader::open(const std::string& prefix) {
  const std::string path = bundle_index_filename(prefix);
  TF_ASSIGN_OR_RETURN(auto table, read_bundle_index(path));
  TF_ASSIGN_OR_RETURN(Header header, parse_header(table, path));
  BundleReader reader;
  reader.prefix_ = prefix;
  reader.num_shards_ = header.num_shards;
  reader.entries_.reserve(table.size() - 1);
  for (size_t i = 1; i < table.size(); ++i) {
    TF_ASSIGN_OR_RETURN(BundleEntry e, parse_entry(table[i].first, table[i].second, header.num_shards, path));
    reader.entries_.push_back(std::move(e));
  }
  return reader;
}

const BundleEntry* BundleReader::find(std::string_view name) const {
  auto it = std::lower_bound(entries_.begin(), entries_.end(), name,
                             [](const BundleEntry& e, std::string_view n) { return e.name < n; });
  return it != entries_.end() && it->name == name ? &*it : nullptr;
}

Expected<Tensor> BundleReader::read(std::string_view name) const {
  const BundleEntry* e = find(name);
  if (e == nullptr) {
    std::string names;
    for (size_t i = 0; i < entries_.size() && i < 8; ++i) names += (i ? ", " : "") + entries_[i].name;
    if (entries_.size() > 8) names += ", ...";
    return Status(Error::not_found,
                  fmt::format("{}: no tensor named '{}' in the checkpoint (it has {} tensors: {})",
                              bundle_index_filename(prefix_), name, entries_.size(), names));
  }
  return read(*e);
}

Expected<Tensor> BundleReader::read(const BundleEntry& e) const {
  const std::string index = bundle_index_filename(prefix_);
  if (e.num_slices > 0)
    return entry_error(Error::unimplemented, index, e.name,
                       fmt::format("stored in {} slices (a partitioned variable); tagflow reads whole "
                                   "tensors only",
                                   e.num_slices));
  const bool is_string = e.dtype == DType::string;
  if (!is_string && dtype_size(e.dtype) == 0)
    return entry_error(Error::unimplemented, index, e.name,
                       "tagflow does not read " + dtype_name(e.dtype) + " tensors from checkpoints");
  const int64_t n = e.shape.num_elements();
  if (!is_string) {
    const int64_t element = dtype_size(e.dtype);
    if (n > std::numeric_limits<int64_t>::max() / element || n * element != e.size)
      return entry_error(Error::data_loss, index, e.name,
                         fmt::format("the entry's size is {} bytes but {} {} takes {}", e.size,
                                     dtype_name(e.dtype), e.shape.to_string(),
                                     n > std::numeric_limits<int64_t>::max() / element
                                         ? std::string("more than 2^63")
                                         : std::to_string(n * element)));
  }
  const std::string path = bundle_data_filename(prefix_, e.shard_id, num_shards_);
  try {
    leveldb::Env* env = leveldb::Env::Default();
    uint64_t file_size = 0;
    TF_RETURN_IF_ERROR(from_leveldb(env->GetFileSize(path, &file_size), path));
    if (static_cast<uint64_t>(e.offset) > file_size ||
        static_cast<uint64_t>(e.size) > file_size - static_cast<uint64_t>(e.offset))
      return entry_error(Error::data_loss, path, e.name,
                         fmt::format("the file is truncated: the tensor's {} bytes at offset {} end past "
                                     "its {} bytes",
                                     e.size, e.offset, file_size));
    leveldb::RandomAccessFile* raw = nullptr;
    TF_RETURN_IF_ERROR(from_leveldb(env->NewRandomAccessFile(path, &raw), path));
    std::unique_ptr<leveldb::RandomAccessFile> file(raw);
    std::string bytes(static_cast<size_t>(e.size), '\0');
    leveldb::Slice got;
    TF_RETURN_IF_ERROR(from_leveldb(file->Read(static_cast<uint64_t>(e.offset), bytes.size(), &got, bytes.data()), path));
    if (got.size() != bytes.size())
      return entry_error(Error::data_loss, path, e.name,
                         fmt::format("read {} of the tensor's {} bytes", got.size(), bytes.size()));
    if (got.data() != bytes.data()) std::memcpy(bytes.data(), got.data(), got.size());
    if (is_string) return decode_strings(e, bytes, path);
    const uint32_t computed = crc32c::value(bytes);
    if (crc32c::unmask(e.masked_crc32c) != computed)
      return entry_error(Error::data_loss, path, e.name,
                         fmt::format("crc32c mismatch (stored {}, computed {} over {} bytes at offset {})",
                                     hex32(crc32c::unmask(e.masked_crc32c)), hex32(computed), e.size,
                                     e.offset));
    Tensor t = Tensor::uninitialized(e.dtype, e.shape);
    if (!bytes.empty()) std::memcpy(t.raw_mutable_data(), bytes.data(), bytes.size());
    if (e.dtype == DType::boolean) {
      // A bool is one byte; anything but 0 and 1 is not a C++ bool.
      auto* b = static_cast<unsigned char*>(t.raw_mutable_data());
      for (int64_t i = 0; i < n; ++i) b[i] = b[i] != 0;
    }
    return t;
  } catch (const std::bad_alloc&) {
    return entry_error(Error::resource_exhausted, path, e.name,
                       fmt::format("cannot allocate the tensor's {} bytes", e.size));
  }
}

// --- BundleWriter ------------------------------------------------------------

struct BundleWriter::Impl {
  std::string prefix;
  std::string data_path;  // the temporary name while writing
  std::unique_ptr<leveldb::WritableFile> data;
  int64_t size = 0;
  std::map<std::string, std::string> entries;  // name -> serialized entry
  Status status;
  bool finished = false;
};

BundleWriter::BundleWriter(std::string prefix) : impl_(new Impl) {
  impl_->prefix = std::move(prefix);
  impl_->status = create_parent_directory(impl_->prefix);
  if (!impl_->status.ok()) return;
  impl_->data_path = temporary_name(bundle_data_filename(impl_->prefix, 0, 1));
  leveldb::WritableFile* raw = nullptr;
  impl_->status = from_leveldb(leveldb::Env::Default()->NewWritableFile(impl_->data_path, &raw),
                               impl_->data_path);
  impl_->data.reset(raw);
}

BundleWriter::~BundleWriter() {
  if (!impl_->finished && impl_->data != nullptr) {
    (void)impl_->data->Close();
    impl_->data.reset();
    remove_quietly(impl_->data_path);
  }
  delete impl_;
}

Status BundleWriter::add(const std::string& name, const Tensor& tensor) {
  Impl& w = *impl_;
  if (!w.status.ok()) return w.status;
  if (w.finished) return Status(Error::failed_precondition, w.prefix + ": the checkpoint is already written");
  if (name.empty())
    return Status(Error::invalid_argument, w.prefix + ": a tensor needs a name (the empty key is the header's)");
  if (w.entries.count(name) != 0)
    return Status(Error::invalid_argument, fmt::format("{}: tensor '{}' is saved twice", w.prefix, name));
  const DType dtype = base_dtype(tensor.dtype());
  if (!tensor.valid() || (dtype != DType::string && dtype_size(dtype) == 0))
    return Status(Error::invalid_argument,
                  fmt::format("{}: tensor '{}': cannot save a {} tensor", w.prefix, name,
                              tensor.valid() ? dtype_name(dtype) : std::string("missing")));
  pb::BundleEntryProto entry;
  entry.set_dtype(static_cast<int>(dtype));
  auto* shape = entry.mutable_shape();  // present even for a scalar, as TensorFlow writes it
  for (int i = 0; i < tensor.rank(); ++i) shape->add_dim()->set_size(tensor.dim(i));
  entry.set_offset(w.size);
  uint32_t crc = 0;
  leveldb::Status s;
  size_t written = 0;
  if (dtype == DType::string) {
    const std::string bytes = encode_strings(tensor, &crc);
    s = w.data->Append(bytes);
    written = bytes.size();
  } else {
    written = tensor.byte_size();
    crc = crc32c::value(tensor.raw_data(), written);
    s = w.data->Append(leveldb::Slice(static_cast<const char*>(tensor.raw_data()), written));
  }
  if (!s.ok()) {
    w.status = from_leveldb(s, w.data_path);
    return w.status;
  }
  entry.set_size(static_cast<int64_t>(written));
  entry.set_crc32c(crc32c::mask(crc));
  w.size += static_cast<int64_t>(written);
  w.entries.emplace(name, entry.SerializeAsString());
  return ok_status();
}

Status BundleWriter::finish() {
  Impl& w = *impl_;
  if (!w.status.ok()) return w.status;
  if (w.finished) return Status(Error::failed_precondition, w.prefix + ": the checkpoint is already written");
  w.finished = true;
  leveldb::Status s = w.data->Sync();
  const leveldb::Status closed = w.data->Close();
  if (s.ok()) s = closed;
  w.data.reset();
  if (!s.ok()) {
    remove_quietly(w.data_path);
    return w.status = from_leveldb(s, w.data_path);
  }
  const std::string data_final = bundle_data_filename(w.prefix, 0, 1);
  w.status = rename_file(w.data_path, data_final);
  if (!w.status.ok()) {
    remove_quietly(w.data_path);
    return w.status;
  }
  pb::BundleHeaderProto header;
  header.set_num_shards(1);
  header.set_endianness(0);  // little
  header.mutable_version()->set_producer(kBundleVersion);
  w.status = write_index(bundle_index_filename(w.prefix), header.SerializeAsString(), w.entries);
  return w.status;
}

// --- merging -------------------------------------------------------------------

Status merge_bundles(const std::vector<std::string>& prefixes, const std::string& destination,
                     bool allow_missing_files) {
  std::map<std::string, pb::BundleEntryProto> entries;
  std::vector<std::string> shard_files;  // new shard id -> source data file
  std::unordered_map<std::string, int> shard_ids;
  std::vector<std::string> merged_indexes;
  int num_shards = 0;
  std::optional<Header> first;
  for (const std::string& prefix : prefixes) {
    const std::string path = bundle_index_filename(prefix);
    std::error_code ec;
    if (allow_missing_files && !fs::exists(path, ec)) continue;
    TF_ASSIGN_OR_RETURN(auto table, read_bundle_index(path));
    TF_ASSIGN_OR_RETURN(Header header, parse_header(table, path));
    if (!first) {
      first = header;
    } else if (header.version != first->version) {
      return Status(Error::invalid_argument,
                    path + ": merging bundles of different format versions");
    }
    num_shards += header.num_shards;
    merged_indexes.push_back(path);
    for (size_t i = 1; i < table.size(); ++i) {
      const std::string& key = table[i].first;
      // Checks the entry as a reader would before it is carried over.
      TF_RETURN_IF_ERROR(parse_entry(key, table[i].second, header.num_shards, path).status());
      pb::BundleEntryProto entry;
      entry.ParseFromString(table[i].second);
      auto existing = entries.find(key);
      if (existing != entries.end()) {
        // Only a partitioned variable's full entry may come from several
        // bundles: its slices add up.
        if (existing->second.slices().empty() || entry.slices().empty())
          return Status(Error::invalid_argument,
                        fmt::format("{}: tensor '{}' is in two of the bundles being merged", path, key));
        for (const auto& slice : entry.slices()) *existing->second.add_slices() = slice;
        continue;
      }
      if (entry.slices().empty()) {
        const std::string file = bundle_data_filename(prefix, entry.shard_id(), header.num_shards);
        auto [it, added] = shard_ids.emplace(file, static_cast<int>(shard_files.size()));
        if (added) shard_files.push_back(file);
        entry.set_shard_id(it->second);
      }
      entries.emplace(key, std::move(entry));
    }
  }
  if (!first)
    return Status(Error::not_found, fmt::format("merging into '{}': none of the {} checkpoints to merge exists",
                                                destination, prefixes.size()));
  TF_RETURN_IF_ERROR(create_parent_directory(destination));
  const int merged_shards = shard_files.empty() ? std::max(num_shards, 1) : static_cast<int>(shard_files.size());
  for (size_t i = 0; i < shard_files.size(); ++i)
    TF_RETURN_IF_ERROR(rename_file(shard_files[i],
                                   bundle_data_filename(destination, static_cast<int>(i), merged_shards)));
  pb::BundleHeaderProto header;
  header.set_num_shards(merged_shards);
  header.set_endianness(first->endianness);
  header.mutable_version()->ParseFromString(first->version);
  std::map<std::string, std::string> serialized;
  for (const auto& [key, entry] : entries) serialized.emplace(key, entry.SerializeAsString());
  const std::string merged_index = bundle_index_filename(destination);
  TF_RETURN_IF_ERROR(write_index(merged_index, header.SerializeAsString(), serialized));
  for (const std::string& path : merged_indexes)
    if (path != merged_index) remove_quietly(path);
  return ok_status();
}

}  // namespace tagflow::ops
