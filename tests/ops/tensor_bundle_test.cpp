// Tensor bundles (ops/tensor_bundle.hpp): TensorFlow's own checkpoints read
// entry by entry, bundles written and read back, a real checkpoint
// rewritten byte for byte, and every kind of damaged file refused with an
// error naming the file and the tensor. CRC32C against its published check
// values.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>

#include "checkpoint_test_util.hpp"
#include "ops/crc32c.hpp"
#include "ops/tensor_bundle.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

BundleReader open_reader(const std::string& prefix) {
  Expected<BundleReader> r = BundleReader::open(prefix);
  BOOST_TEST_REQUIRE(r.ok(), prefix << ": " << r.status().to_string());
  return std::move(r).value();
}

Tensor read_tensor(const BundleReader& r, const std::string& name) {
  Expected<Tensor> t = r.read(name);
  BOOST_TEST_REQUIRE(t.ok(), name << ": " << t.status().to_string());
  return std::move(t).value();
}

void check_reads(const BundleReader& r, const std::string& name, const Tensor& expected) {
  Tensor t = read_tensor(r, name);
  BOOST_TEST((t == expected), name << ": " << t.debug_string() << " != " << expected.debug_string());
}

float scalar_float(const BundleReader& r, const std::string& name) {
  Tensor t = read_tensor(r, name);
  BOOST_TEST_REQUIRE((t.dtype() == DType::float32 && t.rank() == 0), name << ": " << t.debug_string());
  return t.scalar_value<float>();
}

// A little-endian float32 .npy file (NumPy's format: magic, version, a
// header length, a Python dict literal with descr/fortran_order/shape, the
// data): its shape and values.
struct Npy {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

Npy read_npy(const std::string& path) {
  const std::string bytes = read_file(path);
  BOOST_TEST_REQUIRE(bytes.compare(0, 6, "\x93NUMPY") == 0);
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  size_t data_at = 10 + header_len;
  if (major >= 2) {
    header_len |= (static_cast<size_t>(static_cast<unsigned char>(bytes[10])) << 16) |
                  (static_cast<size_t>(static_cast<unsigned char>(bytes[11])) << 24);
    data_at = 12 + header_len;
  }
  const std::string header = bytes.substr(data_at - header_len, header_len);
  BOOST_TEST_REQUIRE(contains(header, "'descr': '<f4'"), header);
  BOOST_TEST_REQUIRE(contains(header, "'fortran_order': False"), header);
  Npy npy;
  const size_t open = header.find('(', header.find("'shape'"));
  const size_t close = header.find(')', open);
  std::string dims = header.substr(open + 1, close - open - 1);
  for (size_t at = 0; at < dims.size();) {
    const size_t comma = std::min(dims.find(',', at), dims.size());
    const std::string dim = dims.substr(at, comma - at);
    if (dim.find_first_not_of(' ') != std::string::npos) npy.shape.push_back(std::stoll(dim));
    at = comma + 1;
  }
  int64_t count = 1;
  for (int64_t d : npy.shape) count *= d;
  BOOST_TEST_REQUIRE(bytes.size() - data_at == static_cast<size_t>(count) * 4);
  npy.values.resize(static_cast<size_t>(count));
  std::memcpy(npy.values.data(), bytes.data() + data_at, bytes.size() - data_at);
  return npy;
}

void check_equals_npy(const Tensor& t, const Npy& npy) {
  BOOST_TEST((t.dtype() == DType::float32));
  BOOST_TEST(t.shape().dims() == npy.shape, t.shape().to_string());
  BOOST_TEST_REQUIRE(t.num_elements() == static_cast<int64_t>(npy.values.size()));
  for (size_t i = 0; i < npy.values.size(); ++i) BOOST_TEST(t.data<float>()[i] == npy.values[i]);
}

std::vector<std::string> names_of(const BundleReader& r) {
  std::vector<std::string> names;
  for (const BundleEntry& e : r.entries()) names.push_back(e.name);
  return names;
}

// Expects an error with `code` whose message holds every one of `parts`.
template <class T>
void expect_error(const Expected<T>& got, Error code, const std::vector<std::string>& parts) {
  BOOST_TEST_REQUIRE(!got.ok());
  BOOST_TEST(got.status().code() == code, got.status().to_string());
  for (const std::string& part : parts) BOOST_TEST(contains(got.status().message(), part), got.status().message() << " lacks " << part);
}


// LevelDB's table layout (docs/formats.md), as far as the tests below
// rewrite an index: block handles, the footer, a block's trailer.
struct Handle {
  uint64_t offset = 0;
  uint64_t size = 0;
};

std::string varint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out.push_back(static_cast<char>((v & 0x7f) | 0x80));
  out.push_back(static_cast<char>(v));
  return out;
}

std::string handle_bytes(uint64_t offset, uint64_t size) { return varint(offset) + varint(size); }

uint64_t get_varint(const std::string& s, size_t* pos) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    BOOST_TEST_REQUIRE(*pos < s.size());
    const auto byte = static_cast<unsigned char>(s[(*pos)++]);
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return v;
  }
}

std::string fixed32(uint32_t v) {
  std::string out;
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

// The footer's metaindex and index block handles.
std::pair<Handle, Handle> footer_handles(const std::string& index) {
  const std::string footer = index.substr(index.size() - 48);
  size_t pos = 0;
  Handle meta, idx;
  meta.offset = get_varint(footer, &pos);
  meta.size = get_varint(footer, &pos);
  idx.offset = get_varint(footer, &pos);
  idx.size = get_varint(footer, &pos);
  return {meta, idx};
}

// A footer of these handles, padded, with the table magic of `index`.
std::string footer_of(Handle meta, Handle idx, const std::string& index) {
  std::string footer = handle_bytes(meta.offset, meta.size) + handle_bytes(idx.offset, idx.size);
  footer.resize(40, '\0');
  return footer + index.substr(index.size() - 8);
}

// `contents` with its trailer: the compression type and the masked CRC32C
// of both.
std::string with_trailer(std::string contents, char type) {
  contents.push_back(type);
  const uint32_t crc = crc32c::value(contents);
  return contents + fixed32(crc32c::mask(crc));
}

// A block of one key/value entry, its one restart point at 0.
std::string one_entry_block(const std::string& key, const std::string& value) {
  return varint(0) + varint(key.size()) + varint(value.size()) + key + value + fixed32(0) + fixed32(1);
}

// `index` with its index block replaced by `contents` stored with `type`
// (the data and metaindex blocks kept, the footer rewritten).
std::string with_index_block(const std::string& index, const std::string& contents, char type) {
  const auto [meta, idx] = footer_handles(index);
  return index.substr(0, idx.offset) + with_trailer(contents, type) +
         footer_of(meta, Handle{idx.offset, contents.size()}, index);
}

// The one entry of a checkpoint's index block (the small checkpoints of
// the test data have one data block): its key and the data block handle.
std::pair<std::string, Handle> only_index_entry(const std::string& index) {
  const Handle idx = footer_handles(index).second;
  const std::string block = index.substr(idx.offset, idx.size);
  BOOST_TEST_REQUIRE(block.substr(block.size() - 8) == fixed32(0) + fixed32(1));  // one restart point at 0
  size_t pos = 0;
  BOOST_TEST_REQUIRE(get_varint(block, &pos) == 0u);
  const uint64_t key_size = get_varint(block, &pos), value_size = get_varint(block, &pos);
  BOOST_TEST_REQUIRE(pos + key_size + value_size == block.size() - 8);  // the only entry
  const std::string key = block.substr(pos, key_size), value = block.substr(pos + key_size, value_size);
  pos = 0;
  Handle data;
  data.offset = get_varint(value, &pos);
  data.size = get_varint(value, &pos);
  return {key, data};
}

// Snappy by hand (its format_description.txt) for a block that ends in
// one restart point at 0 and the count 1 (00 00 00 00 01 00 00 00): the
// decompressed size; a literal (tag (n-1)<<2) up to the first of those
// zero bytes; a copy of 3 bytes from 1 byte back (tag (3-1)<<2 | 2, a
// 2-byte offset), which overlaps what it writes; a literal of the count.
const std::string kSnappyCopy("\x0a\x01\x00", 3);

std::string snappy_of(const std::string& block) {
  BOOST_TEST_REQUIRE(block.substr(block.size() - 8) == fixed32(0) + fixed32(1));
  const std::string head = block.substr(0, block.size() - 7);
  BOOST_TEST_REQUIRE(head.size() <= 60u);
  return varint(block.size()) + static_cast<char>((head.size() - 1) << 2) + head + kSnappyCopy +
         static_cast<char>((4 - 1) << 2) + fixed32(1);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tensor_bundle)

// --- CRC32C --------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(crc32c_check_values) {
  // The CRC-32C check value (RFC 3720's and every catalogue's).
  BOOST_TEST(crc32c::value(std::string("123456789")) == 0xe3069283u);
  BOOST_TEST(crc32c::value(std::string()) == 0u);
  // RFC 3720 B.4: 32 bytes of zeros, 32 bytes of 0xff.
  BOOST_TEST(crc32c::value(std::string(32, '\0')) == 0x8a9136aau);
  BOOST_TEST(crc32c::value(std::string(32, '\xff')) == 0x62a8ab43u);
  // float 0.5 as the half_plus_two checkpoint stores it (docs/formats.md).
  const std::string half("\x00\x00\x00\x3f", 4);
  BOOST_TEST(crc32c::value(half) == 0x26973e52u);
  BOOST_TEST(crc32c::mask(0x26973e52u) == 0x1f273806u);
  BOOST_TEST(crc32c::unmask(0x1f273806u) == 0x26973e52u);
  // extend continues a CRC.
  BOOST_TEST(crc32c::extend(crc32c::value(std::string("1234")), "56789", 5) == 0xe3069283u);
  for (uint32_t v : {0u, 1u, 0xffffffffu, 0x12345678u}) BOOST_TEST(crc32c::unmask(crc32c::mask(v)) == v);
}

BOOST_AUTO_TEST_CASE(file_names) {
  BOOST_TEST(bundle_index_filename("d/variables") == "d/variables.index");
  BOOST_TEST(bundle_data_filename("d/variables", 0, 1) == "d/variables.data-00000-of-00001");
  BOOST_TEST(sharded_filename("model", 12, 345) == "model-00012-of-00345");
}

// --- TensorFlow's checkpoints ----------------------------------------------------

BOOST_AUTO_TEST_CASE(half_plus_two_tf1) {
  BundleReader r = open_reader(savedmodel_prefix(kHalfPlusTwo));
  BOOST_TEST(r.num_shards() == 1);
  BOOST_TEST(names_of(r) == (std::vector<std::string>{"a", "a2", "b", "c", "c2"}), boost::test_tools::per_element());
  BOOST_TEST(scalar_float(r, "a") == 0.5f);
  BOOST_TEST(scalar_float(r, "b") == 2.0f);
  BOOST_TEST(scalar_float(r, "c") == 3.0f);
  BOOST_TEST(scalar_float(r, "a2") == 0.5f);
  BOOST_TEST(scalar_float(r, "c2") == 3.0f);
  // The entry of `a` as the format facts give it: the masked CRC32C of 0.5.
  BOOST_TEST(r.find("a")->masked_crc32c == 0x1f273806u);
  BOOST_TEST(r.find("a")->size == 4);
}

BOOST_AUTO_TEST_CASE(counter_tf1) {
  BundleReader r = open_reader(savedmodel_prefix(kCounter));
  BOOST_TEST(names_of(r) == std::vector<std::string>{"counter"}, boost::test_tools::per_element());
  BOOST_TEST(scalar_float(r, "counter") == 0.0f);
}

BOOST_AUTO_TEST_CASE(half_plus_two_tf2_with_object_graph) {
  BundleReader r = open_reader(savedmodel_prefix(kHalfPlusTwoTf2));
  BOOST_TEST(scalar_float(r, "a/.ATTRIBUTES/VARIABLE_VALUE") == 0.5f);
  BOOST_TEST(scalar_float(r, "b/.ATTRIBUTES/VARIABLE_VALUE") == 2.0f);
  BOOST_TEST(scalar_float(r, "c/.ATTRIBUTES/VARIABLE_VALUE") == 3.0f);
  Tensor graph = read_tensor(r, "_CHECKPOINTABLE_OBJECT_GRAPH");
  BOOST_TEST((graph.dtype() == DType::string));
  BOOST_TEST(graph.rank() == 0);
  // A serialized TrackableObjectGraph: field 1 (nodes), length-delimited,
  // naming the variables among its bytes.
  const std::string& bytes = graph.scalar_value<std::string>();
  BOOST_TEST_REQUIRE(!bytes.empty());
  BOOST_TEST(static_cast<unsigned char>(bytes[0]) == 0x0a);
  BOOST_TEST(contains(bytes, "VARIABLE_VALUE"));
  // The entry's size: one varint length byte or more, the 4-byte length
  // checksum, the bytes.
  const BundleEntry* e = r.find("_CHECKPOINTABLE_OBJECT_GRAPH");
  BOOST_TEST(e->size > static_cast<int64_t>(bytes.size()) + 4);
  BOOST_TEST(e->size <= static_cast<int64_t>(bytes.size()) + 4 + 10);
}

BOOST_AUTO_TEST_CASE(keras_simple_model_matches_numpy) {
  const std::string dir = std::string(TAGFLOW_TEST_DATA) + "/savedmodels/" + kKerasSimple;
  BundleReader r = open_reader(savedmodel_prefix(kKerasSimple));
  check_equals_npy(read_tensor(r, "layer_with_weights-0/bias/.ATTRIBUTES/VARIABLE_VALUE"),
                   read_npy(dir + "/bias0.npy"));
  check_equals_npy(read_tensor(r, "layer_with_weights-1/kernel/.ATTRIBUTES/VARIABLE_VALUE"),
                   read_npy(dir + "/kernel1.npy"));
}

BOOST_AUTO_TEST_CASE(keras_lstm_shapes) {
  BundleReader r = open_reader(savedmodel_prefix(kKerasLstm));
  const std::vector<std::pair<std::string, std::vector<int64_t>>> expected = {
      {"variables/0/.ATTRIBUTES/VARIABLE_VALUE", {3, 128}},
      {"variables/1/.ATTRIBUTES/VARIABLE_VALUE", {32, 128}},
      {"variables/2/.ATTRIBUTES/VARIABLE_VALUE", {128}},
      {"layer_with_weights-1/kernel/.ATTRIBUTES/VARIABLE_VALUE", {32, 1}},
      {"layer_with_weights-1/bias/.ATTRIBUTES/VARIABLE_VALUE", {1}},
  };
  for (const auto& [name, dims] : expected) {
    const BundleEntry* e = r.find(name);
    BOOST_TEST_REQUIRE(e != nullptr, name);
    BOOST_TEST((e->dtype == DType::float32));
    BOOST_TEST(e->shape.dims() == dims, name << ": " << e->shape.to_string());
  }
}

BOOST_AUTO_TEST_CASE(every_entry_of_every_checkpoint_reads) {
  for (const std::string& model : kAllModels) {
    BundleReader r = open_reader(savedmodel_prefix(model));
    BOOST_TEST(!r.entries().empty(), model);
    for (const BundleEntry& e : r.entries()) {
      Expected<Tensor> t = r.read(e);
      BOOST_TEST_REQUIRE(t.ok(), model << " '" << e.name << "': " << t.status().to_string());
      BOOST_TEST((t->dtype() == e.dtype));
      BOOST_TEST((t->shape() == e.shape));
    }
    BOOST_TEST(std::is_sorted(r.entries().begin(), r.entries().end(),
                              [](const BundleEntry& x, const BundleEntry& y) { return x.name < y.name; }));
  }
}

// --- writing ---------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(write_then_read_every_dtype) {
  TempDir dir;
  const std::string prefix = dir / "sub/dir/ckpt";  // directories are created
  Tensor f = Tensor::from_vector<float>(Shape{2, 2}, {1.5f, -2.0f, 0.0f, 1e30f});
  Tensor i = Tensor::vector<int32_t>({1, -2, std::numeric_limits<int32_t>::max()});
  Tensor l = Tensor::scalar<int64_t>(std::numeric_limits<int64_t>::min());
  Tensor b = Tensor::vector<bool>({true, false, true});
  Tensor d = Tensor::vector<double>({3.25, -0.0});
  Tensor s = Tensor::from_vector<std::string>(Shape{2, 2}, {"", "x", std::string(300, 'y'), std::string("a\0b", 3)});
  Tensor empty = Tensor(DType::float32, Shape{0, 3});
  Tensor empty_strings = Tensor(DType::string, Shape{0});
  {
    BundleWriter w(prefix);
    // Any order: the index is sorted.
    BOOST_TEST_REQUIRE(w.add("z/float", f).ok());
    BOOST_TEST_REQUIRE(w.add("int32", i).ok());
    BOOST_TEST_REQUIRE(w.add("int64", l).ok());
    BOOST_TEST_REQUIRE(w.add("bool", b).ok());
    BOOST_TEST_REQUIRE(w.add("double", d).ok());
    BOOST_TEST_REQUIRE(w.add("strings", s).ok());
    BOOST_TEST_REQUIRE(w.add("empty", empty).ok());
    BOOST_TEST_REQUIRE(w.add("empty_strings", empty_strings).ok());
    Status finished = w.finish();
    BOOST_TEST_REQUIRE(finished.ok(), finished.to_string());
  }
  BundleReader r = open_reader(prefix);
  BOOST_TEST(names_of(r) == (std::vector<std::string>{"bool", "double", "empty", "empty_strings", "int32",
                                                       "int64", "strings", "z/float"}),
             boost::test_tools::per_element());
  check_reads(r, "z/float", f);
  check_reads(r, "int32", i);
  check_reads(r, "int64", l);
  check_reads(r, "bool", b);
  check_reads(r, "double", d);
  check_reads(r, "strings", s);
  check_reads(r, "empty", empty);
  check_reads(r, "empty_strings", empty_strings);
  // No temporary file is left beside the checkpoint.
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "sub/dir"))
    files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  BOOST_TEST(files == (std::vector<std::string>{"ckpt.data-00000-of-00001", "ckpt.index"}),
             boost::test_tools::per_element());
}

// A string tensor's bytes, built by hand from TensorFlow's description:
// varint64 lengths, the masked CRC32C of the lengths taken as uint32s,
// then the bytes; the entry's CRC continues over the checksum and bytes.
BOOST_AUTO_TEST_CASE(string_tensor_layout) {
  TempDir dir;
  const std::string prefix = dir / "s";
  Tensor s = Tensor::vector<std::string>({"ab", "", std::string(200, 'q')});
  BundleWriter w(prefix);
  BOOST_TEST_REQUIRE(w.add("s", s).ok());
  BOOST_TEST_REQUIRE(w.finish().ok());

  const std::string lengths_as_uint32("\x02\0\0\0" "\0\0\0\0" "\xc8\0\0\0", 12);
  const uint32_t lengths_crc = crc32c::value(lengths_as_uint32);
  std::string checksum(4, '\0');
  const uint32_t masked = crc32c::mask(lengths_crc);
  std::memcpy(checksum.data(), &masked, 4);  // the test machine is little-endian, as the format
  const std::string expected = std::string("\x02\x00\xc8\x01", 4) + checksum + "ab" + std::string(200, 'q');
  BOOST_TEST(read_file(prefix + ".data-00000-of-00001") == expected);

  BundleReader r = open_reader(prefix);
  const BundleEntry* e = r.find("s");
  BOOST_TEST(e->size == static_cast<int64_t>(expected.size()));
  const uint32_t entry_crc = crc32c::extend(crc32c::extend(lengths_crc, checksum.data(), 4),
                                            expected.data() + 8, expected.size() - 8);
  BOOST_TEST(crc32c::unmask(e->masked_crc32c) == entry_crc);
}

BOOST_AUTO_TEST_CASE(writer_refuses_bad_tensors) {
  TempDir dir;
  BundleWriter w(dir / "w");
  BOOST_TEST(w.add("", Tensor::scalar<float>(1)).code() == Error::invalid_argument);
  BOOST_TEST_REQUIRE(w.add("x", Tensor::scalar<float>(1)).ok());
  Status twice = w.add("x", Tensor::scalar<float>(2));
  BOOST_TEST(twice.code() == Error::invalid_argument);
  BOOST_TEST(contains(twice.message(), "'x' is saved twice"), twice.message());
  BOOST_TEST(w.add("r", Tensor(DType::resource, Shape{})).code() == Error::invalid_argument);
}

// Rewriting TensorFlow's checkpoints gives TensorFlow's index, entry for
// entry and byte for byte, and TensorFlow's data file.
BOOST_AUTO_TEST_CASE(rewriting_a_real_checkpoint_is_byte_identical) {
  for (const std::string& model : kAllModels) {
    const std::string original = savedmodel_prefix(model);
    BundleReader r = open_reader(original);
    // TensorFlow appends tensors in the order the saver lists them: the
    // same order gives the same offsets.
    std::vector<BundleEntry> by_offset = r.entries();
    std::sort(by_offset.begin(), by_offset.end(),
              [](const BundleEntry& x, const BundleEntry& y) { return x.offset < y.offset; });
    TempDir dir;
    const std::string copy = dir / "copy";
    BundleWriter w(copy);
    for (const BundleEntry& e : by_offset) BOOST_TEST_REQUIRE(w.add(e.name, read_tensor(r, e.name)).ok());
    BOOST_TEST_REQUIRE(w.finish().ok());

    auto theirs = read_bundle_index(bundle_index_filename(original));
    auto ours = read_bundle_index(bundle_index_filename(copy));
    BOOST_TEST_REQUIRE(theirs.ok());
    BOOST_TEST_REQUIRE(ours.ok());
    BOOST_TEST_REQUIRE(theirs->size() == ours->size(), model);
    for (size_t i = 0; i < theirs->size(); ++i) {
      BOOST_TEST((*theirs)[i].first == (*ours)[i].first, model);
      BOOST_TEST((*theirs)[i].second == (*ours)[i].second, model << " entry '" << (*theirs)[i].first << "'");
    }
    BOOST_TEST(read_file(original + ".data-00000-of-00001") == read_file(copy + ".data-00000-of-00001"), model);
  }
}

// --- damaged files ---------------------------------------------------------------

BOOST_AUTO_TEST_CASE(corrupt_data_byte_is_a_checksum_error_naming_file_and_tensor) {
  TempDir dir;
  const std::string prefix = dir / "variables";
  copy_checkpoint(savedmodel_prefix(kHalfPlusTwo), prefix);
  BundleReader r = open_reader(prefix);
  const BundleEntry b = *r.find("b");
  std::string data = read_file(prefix + ".data-00000-of-00001");
  data[static_cast<size_t>(b.offset) + 1] ^= 0x10;
  write_file(prefix + ".data-00000-of-00001", data);
  expect_error(r.read("b"), Error::data_loss,
               {"variables.data-00000-of-00001: tensor 'b': crc32c mismatch (stored 0x"});
  BOOST_TEST(scalar_float(r, "a") == 0.5f);  // the other tensors still read
}

BOOST_AUTO_TEST_CASE(corrupt_string_tensor) {
  TempDir dir;
  const std::string prefix = dir / "variables";
  copy_checkpoint(savedmodel_prefix(kHalfPlusTwoTf2), prefix);
  BundleReader r = open_reader(prefix);
  const BundleEntry e = *r.find("_CHECKPOINTABLE_OBJECT_GRAPH");
  const std::string original = read_file(prefix + ".data-00000-of-00001");
  // A byte of the strings, of the length checksum, of the length.
  for (int64_t at : {e.offset + e.size - 1, e.offset + 3, e.offset}) {
    std::string data = original;
    data[static_cast<size_t>(at)] ^= 0x01;
    write_file(prefix + ".data-00000-of-00001", data);
    expect_error(r.read("_CHECKPOINTABLE_OBJECT_GRAPH"), Error::data_loss,
                 {"variables.data-00000-of-00001: tensor '_CHECKPOINTABLE_OBJECT_GRAPH': "});
  }
}

BOOST_AUTO_TEST_CASE(truncated_data_file) {
  TempDir dir;
  const std::string prefix = dir / "variables";
  copy_checkpoint(savedmodel_prefix(kHalfPlusTwo), prefix);
  const std::string data = read_file(prefix + ".data-00000-of-00001");
  write_file(prefix + ".data-00000-of-00001", data.substr(0, data.size() - 2));
  BundleReader r = open_reader(prefix);
  // The tensor stored last ends past the file's end.
  std::string last;
  int64_t last_offset = -1;
  for (const BundleEntry& e : r.entries())
    if (e.offset > last_offset) last_offset = e.offset, last = e.name;
  expect_error(r.read(last), Error::data_loss,
               {"variables.data-00000-of-00001: tensor '" + last + "': the file is truncated"});
  std::filesystem::remove(prefix + ".data-00000-of-00001");
  expect_error(r.read(last), Error::not_found, {"variables.data-00000-of-00001"});
}

BOOST_AUTO_TEST_CASE(truncated_or_garbage_index) {
  TempDir dir;
  const std::string prefix = dir / "variables";
  copy_checkpoint(savedmodel_prefix(kHalfPlusTwoTf2), prefix);
  const std::string index = read_file(prefix + ".index");
  for (size_t keep : {size_t{0}, size_t{1}, size_t{47}, size_t{48}, index.size() / 2, index.size() - 1}) {
    write_file(prefix + ".index", index.substr(0, keep));
    expect_error(BundleReader::open(prefix), Error::data_loss, {"variables.index"});
  }
  write_file(prefix + ".index", std::string(4096, '\x5a'));
  expect_error(BundleReader::open(prefix), Error::data_loss, {"variables.index"});
  // Every single flipped bit of the index is caught or harmless: the
  // blocks carry checksums, the footer is checked.
  for (size_t at = 0; at < index.size(); ++at) {
    std::string damaged = index;
    damaged[at] ^= 0x04;
    write_file(prefix + ".index", damaged);
    Expected<BundleReader> r = BundleReader::open(prefix);
    if (!r.ok()) BOOST_TEST(contains(r.status().message(), "variables.index"), r.status().message());
  }
  // A byte of the first data block (the header entry's): its checksum.
  std::string damaged = index;
  damaged[5] ^= 0x01;
  write_file(prefix + ".index", damaged);
  expect_error(BundleReader::open(prefix), Error::data_loss, {"variables.index", "checksum mismatch"});
  std::filesystem::remove(prefix + ".index");
  expect_error(BundleReader::open(prefix), Error::not_found, {"variables.index: No such file"});
}

// LevelDB allocates a data block's size, as the index block gives it,
// before it reads the block, and a Snappy block's claimed size before it
// decompresses it: handles and claims the file cannot hold are refused
// before LevelDB sees them (an index naming a 3 GB block ran the
// SavedModel loader out of memory). Every block here has a valid checksum.
BOOST_AUTO_TEST_CASE(block_sizes_the_index_cannot_hold_are_refused_before_they_are_allocated) {
  TempDir dir;
  const std::string prefix = dir / "variables";
  copy_checkpoint(savedmodel_prefix(kHalfPlusTwo), prefix);
  const std::string index = read_file(prefix + ".index");
  const std::vector<std::string> names = names_of(open_reader(prefix));
  const auto [key, data] = only_index_entry(index);
  // The index block rewritten as it was reads as before.
  write_file(prefix + ".index", with_index_block(index, one_entry_block(key, handle_bytes(data.offset, data.size)), 0));
  BOOST_TEST(names_of(open_reader(prefix)) == names);
  // A data block of 3 GB, and one of 2^62 bytes, in an index of under 200 bytes.
  for (uint64_t size : {uint64_t{3000000000}, uint64_t{1} << 62}) {
    write_file(prefix + ".index", with_index_block(index, one_entry_block(key, handle_bytes(data.offset, size)), 0));
    expect_error(BundleReader::open(prefix), Error::data_loss,
                 {"variables.index", "a data block handle of the index block points outside the file",
                  std::to_string(size) + " bytes at offset 0"});
  }
  // TensorFlow 1's data block is Snappy-compressed (type 1 in its
  // trailer). Made to claim 4 GB decompressed, with its checksum
  // recomputed and the blocks after it moved, it is refused.
  BOOST_TEST_REQUIRE(data.offset == 0u);
  BOOST_TEST_REQUIRE(index[data.size] == '\x01');
  const std::string compressed = index.substr(0, data.size);
  size_t claim_end = 0;
  const uint64_t claim = get_varint(compressed, &claim_end);
  // (copies: a lambda cannot capture a structured binding in C++17)
  const std::string index_key = key;
  const uint64_t data_size = data.size;
  auto with_claim = [&](uint64_t claimed) {
    const std::string contents = varint(claimed) + compressed.substr(claim_end);
    const auto [meta, idx] = footer_handles(index);
    const uint64_t old_end = data_size + 5;
    std::string out = with_trailer(contents, 1);
    const Handle new_meta{meta.offset + out.size() - old_end, meta.size};
    out += index.substr(old_end, idx.offset - old_end);  // the metaindex block
    const std::string entries = one_entry_block(index_key, handle_bytes(0, contents.size()));
    const Handle new_index{out.size(), entries.size()};
    return out + with_trailer(entries, 0) + footer_of(new_meta, new_index, index);
  };
  write_file(prefix + ".index", with_claim(claim));  // the rewriting is sound
  BOOST_TEST(names_of(open_reader(prefix)) == names);
  write_file(prefix + ".index", with_claim(0xfffffff0u));
  expect_error(BundleReader::open(prefix), Error::data_loss,
               {"variables.index", "the Snappy-compressed data block at offset 0 claims a decompressed size"});
}

// A Snappy-compressed index block (LevelDB's writer compresses any block
// that shrinks by an eighth) is decompressed to check its handles: it
// reads as the uncompressed one, and a handle past the file inside it is
// refused as well.
BOOST_AUTO_TEST_CASE(a_snappy_compressed_index_block_is_checked_through_its_compression) {
  TempDir dir;
  const std::string prefix = dir / "variables";
  copy_checkpoint(savedmodel_prefix(kHalfPlusTwo), prefix);
  const std::string index = read_file(prefix + ".index");
  const BundleReader original = open_reader(prefix);
  const auto [key, data] = only_index_entry(index);
  const std::string block = one_entry_block(key, handle_bytes(data.offset, data.size));
  write_file(prefix + ".index", with_index_block(index, snappy_of(block), 1));
  const BundleReader r = open_reader(prefix);
  BOOST_TEST(names_of(r) == names_of(original));
  for (const std::string& name : names_of(original)) check_reads(r, name, read_tensor(original, name));
  write_file(prefix + ".index",
             with_index_block(index, snappy_of(one_entry_block(key, handle_bytes(data.offset, 3000000000))), 1));
  expect_error(BundleReader::open(prefix), Error::data_loss,
               {"variables.index", "a data block handle of the index block points outside the file"});
  // A copy from before the start of the block is bad Snappy data.
  std::string bad = snappy_of(block);
  bad[bad.find(kSnappyCopy) + 1] = '\x7f';
  write_file(prefix + ".index", with_index_block(index, bad, 1));
  expect_error(BundleReader::open(prefix), Error::data_loss, {"variables.index", "bad Snappy data"});
}

BOOST_AUTO_TEST_CASE(missing_tensor) {
  BundleReader r = open_reader(savedmodel_prefix(kHalfPlusTwo));
  BOOST_TEST(r.find("nope") == nullptr);
  expect_error(r.read("nope"), Error::not_found,
               {"variables.index: no tensor named 'nope'", "5 tensors: a, a2, b, c, c2"});
}

BOOST_AUTO_TEST_CASE(data_file_of_another_bundle) {
  // Two bundles of one tensor `x`, float32 [1] and [2], with their data
  // files swapped.
  TempDir dir;
  {
    BundleWriter w(dir / "one");
    BOOST_TEST_REQUIRE(w.add("x", Tensor::vector<float>({1.0f})).ok());
    BOOST_TEST_REQUIRE(w.finish().ok());
  }
  {
    BundleWriter w(dir / "two");
    BOOST_TEST_REQUIRE(w.add("x", Tensor::vector<float>({1.0f, 2.0f})).ok());
    BOOST_TEST_REQUIRE(w.finish().ok());
  }
  // The index of "two" with the data of "one": a size that does not fit.
  write_file(dir / "two.data-00000-of-00001", read_file(dir / "one.data-00000-of-00001"));
  BundleReader r = open_reader(dir / "two");
  expect_error(r.read("x"), Error::data_loss, {"two.data-00000-of-00001: tensor 'x': the file is truncated"});
  // The index of "one" with the data of "two": the entry's 4 bytes are the
  // first float of two and check out.
  write_file(dir / "one.data-00000-of-00001", read_file(dir / "two.data-00000-of-00001"));
  check_reads(open_reader(dir / "one"), "x", Tensor::vector<float>({1.0f}));
}

BOOST_AUTO_TEST_SUITE_END()
