#include "ops/tensor_bundle.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

#include <fmt/format.h>
#include <leveldb/env.h>

#include "ops/crc32c.hpp"
#include "ops/proto/tensor_bundle.pb.h"
#include "ops/tensor_bundle_index.hpp"

namespace tagflow::ops {

using namespace bundle_index;
namespace pb = tagflow::checkpoint;

namespace {

std::string hex32(uint32_t v) { return fmt::format("0x{:08x}", v); }

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
  // TensorFlow reads an empty entry as an empty tensor (its writer gives
  // even an empty string tensor the four checksum bytes).
  if (bytes.empty() && n == 0) {
    if (crc32c::unmask(e.masked_crc32c) != 0)
      return entry_error(Error::data_loss, path, e.name,
                         fmt::format("crc32c mismatch (stored {}, computed {} over 0 bytes)",
                                     hex32(crc32c::unmask(e.masked_crc32c)), hex32(0)));
    return Tensor(DType::string, e.shape);
  }
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

}  // namespace

std::string sharded_filename(std::string_view basename, int shard, int num_shards) {
  return fmt::format("{}-{:05d}-of-{:05d}", basename, shard, num_shards);
}

std::string bundle_index_filename(std::string_view prefix) { return std::string(prefix) + ".index"; }

std::string bundle_data_filename(std::string_view prefix, int shard, int num_shards) {
  return sharded_filename(std::string(prefix) + ".data", shard, num_shards);
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
    TF_RETURN_IF_ERROR(leveldb_status(env->GetFileSize(path, &file_size), path));
    if (static_cast<uint64_t>(e.offset) > file_size ||
        static_cast<uint64_t>(e.size) > file_size - static_cast<uint64_t>(e.offset))
      return entry_error(Error::data_loss, path, e.name,
                         fmt::format("the file is truncated: the tensor's {} bytes at offset {} end past "
                                     "its {} bytes",
                                     e.size, e.offset, file_size));
    leveldb::RandomAccessFile* raw = nullptr;
    TF_RETURN_IF_ERROR(leveldb_status(env->NewRandomAccessFile(path, &raw), path));
    std::unique_ptr<leveldb::RandomAccessFile> file(raw);
    std::string bytes(static_cast<size_t>(e.size), '\0');
    leveldb::Slice got;
    TF_RETURN_IF_ERROR(leveldb_status(file->Read(static_cast<uint64_t>(e.offset), bytes.size(), &got, bytes.data()), path));
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
  impl_->status = leveldb_status(leveldb::Env::Default()->NewWritableFile(impl_->data_path, &raw),
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
    w.status = leveldb_status(s, w.data_path);
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
    return w.status = leveldb_status(s, w.data_path);
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
}  // namespace tagflow::ops
