#include "ops/npy.hpp"

#include <fmt/format.h>
#include <zip.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>

namespace tagflow::ops {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// An .npz member larger than this is refused before it is inflated.
constexpr uint64_t kMaxMemberBytes = uint64_t{1} << 34;

Status malformed(const std::string& what, const std::string& why) {
  return Status(Error::parse_error, fmt::format("{}: not a NumPy .npy array: {}", what, why));
}

// --- the header: a Python dict literal --------------------------------------

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// Reads {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } — the
// three keys numpy.lib.format writes, in any order, and nothing else.
class HeaderReader {
 public:
  HeaderReader(std::string_view text, const std::string& what) : text_(text), what_(what) {}

  Expected<Header> read() {
    Header h;
    bool seen_descr = false, seen_order = false, seen_shape = false;
    skip_space();
    TF_RETURN_IF_ERROR(expect('{'));
    for (;;) {
      skip_space();
      if (peek() == '}') break;
      TF_ASSIGN_OR_RETURN(std::string key, quoted());
      skip_space();
      TF_RETURN_IF_ERROR(expect(':'));
      skip_space();
      if (key == "descr") {
        if (peek() != '\'' && peek() != '"')
          return malformed(what_, "its dtype is a structured (record) dtype, which has no tensor form");
        TF_ASSIGN_OR_RETURN(h.descr, quoted());
        seen_descr = true;
      } else if (key == "fortran_order") {
        TF_ASSIGN_OR_RETURN(h.fortran_order, boolean());
        seen_order = true;
      } else if (key == "shape") {
        TF_ASSIGN_OR_RETURN(h.shape, tuple());
        seen_shape = true;
      } else {
        return malformed(what_, fmt::format("its header has an unknown key '{}'", abbreviate(key)));
      }
      skip_space();
      if (peek() == ',') ++pos_;
    }
    if (!seen_descr || !seen_order || !seen_shape)
      return malformed(what_, "its header lacks one of 'descr', 'fortran_order' and 'shape'");
    return h;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  Status expect(char c) {
    if (peek() != c) return malformed(what_, fmt::format("its header has no '{}' at byte {}", c, pos_));
    ++pos_;
    return ok_status();
  }
  Expected<std::string> quoted() {
    const char q = peek();
    if (q != '\'' && q != '"') return malformed(what_, fmt::format("its header has no string at byte {}", pos_));
    size_t end = text_.find(q, pos_ + 1);
    if (end == std::string_view::npos) return malformed(what_, "its header has an unterminated string");
    std::string s(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return s;
  }
  Expected<bool> boolean() {
    for (auto [word, value] : {std::pair<std::string_view, bool>{"True", true}, {"False", false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    return malformed(what_, "its 'fortran_order' is neither True nor False");
  }
  Expected<std::vector<int64_t>> tuple() {
    TF_RETURN_IF_ERROR(expect('('));
    std::vector<int64_t> dims;
    for (;;) {
      skip_space();
      if (peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        return malformed(what_, fmt::format("its 'shape' has no dimension at byte {}", pos_));
      int64_t d = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (d > (std::numeric_limits<int64_t>::max() - 9) / 10) return malformed(what_, "a dimension overflows");
        d = d * 10 + (text_[pos_++] - '0');
      }
      dims.push_back(d);
      skip_space();
      if (peek() == ',') ++pos_;
      if (dims.size() > 254) return malformed(what_, "its 'shape' has more dimensions than a tensor may");
    }
    ++pos_;
    return dims;
  }

  std::string_view text_;
  const std::string& what_;
  size_t pos_ = 0;
};

// --- dtypes ----------------------------------------------------------------

enum class Kind { number, bytes, unicode };

struct Element {
  Kind kind = Kind::number;
  DType dtype = DType::invalid;
  size_t size = 0;       // bytes of one element in the file
  bool swap = false;     // big-endian in the file
};

Expected<Element> element_of(const std::string& descr, const std::string& what) {
  if (descr.size() < 2) return malformed(what, fmt::format("its dtype '{}' is not one NumPy writes", descr));
  const char order = descr[0];
  const char code = descr[1];
  const std::string digits = descr.substr(2);
  if (order != '<' && order != '>' && order != '|' && order != '=')
    return malformed(what, fmt::format("its dtype '{}' has no byte order", abbreviate(descr)));
  if (code == 'O')
    return Status(Error::unimplemented,
                  fmt::format("{}: an object array (dtype 'O') holds pickled Python objects, which tagflow does "
                              "not read; save it as a fixed-width string array (arr.astype(bytes))",
                              what));
  size_t size = 0;
  if (!digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }) &&
      digits.size() < 10)
    size = std::stoul(digits);
  Element e;
  e.swap = order == '>';
  if (code == 'S' || code == 'U') {
    e.kind = code == 'S' ? Kind::bytes : Kind::unicode;
    e.dtype = DType::string;
    e.size = code == 'S' ? size : size * 4;
    if (digits.empty() || (size == 0 && digits != "0"))
      return malformed(what, fmt::format("its dtype '{}' has no width", abbreviate(descr)));
    return e;
  }
  static const struct {
    char code;
    size_t size;
    DType dtype;
  } kNumbers[] = {{'b', 1, DType::boolean}, {'i', 1, DType::int8},       {'i', 2, DType::int16},
                  {'i', 4, DType::int32},   {'i', 8, DType::int64},      {'u', 1, DType::uint8},
                  {'u', 2, DType::uint16},  {'u', 4, DType::uint32},     {'u', 8, DType::uint64},
                  {'f', 2, DType::half},    {'f', 4, DType::float32},    {'f', 8, DType::float64},
                  {'c', 8, DType::complex64}, {'c', 16, DType::complex128}};
  for (const auto& n : kNumbers) {
    if (n.code == code && n.size == size) {
      e.dtype = n.dtype;
      e.size = size;
      // A complex number is two floats, each swapped on its own.
      return e;
    }
  }
  return Status(Error::unimplemented,
                fmt::format("{}: its dtype '{}' has no tensor dtype in tagflow", what, abbreviate(descr)));
}

// Reverses the bytes of each `width`-byte word of `data` in place.
void swap_words(char* data, size_t bytes, size_t width) {
  for (size_t i = 0; i + width <= bytes; i += width) std::reverse(data + i, data + i + width);
}

// The UTF-8 encoding of one NUL-padded UTF-32LE field; an error for a code
// point no UTF-8 holds.
Expected<std::string> utf8_of(const char* field, size_t chars, bool swap, const std::string& what) {
  std::string out;
  size_t used = chars;
  auto code_at = [&](size_t i) {
    unsigned char b[4];
    std::memcpy(b, field + 4 * i, 4);
    if (swap) std::reverse(b, b + 4);
    return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
  };
  while (used > 0 && code_at(used - 1) == 0) --used;
  for (size_t i = 0; i < used; ++i) {
    const uint32_t c = code_at(i);
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
      return malformed(what, fmt::format("a unicode element holds the invalid code point {:#x}", c));
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | c >> 6);
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | c >> 12);
      out += static_cast<char>(0x80 | (c >> 6 & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | c >> 18);
      out += static_cast<char>(0x80 | (c >> 12 & 0x3F));
      out += static_cast<char>(0x80 | (c >> 6 & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return out;
}

// For element i in row-major order, its index in column-major order.
class FortranIndex {
 public:
  explicit FortranIndex(const std::vector<int64_t>& dims) : dims_(dims), index_(dims.size(), 0) {
    stride_.resize(dims.size());
    int64_t s = 1;
    for (size_t k = 0; k < dims.size(); ++k) {
      stride_[k] = s;
      s *= dims[k];
    }
  }
  // The column-major offset of the current element, then steps to the next
  // in row-major order.
  int64_t next() {
    int64_t at = 0;
    for (size_t k = 0; k < dims_.size(); ++k) at += index_[k] * stride_[k];
    for (size_t k = dims_.size(); k-- > 0;) {
      if (++index_[k] < dims_[k]) break;
      index_[k] = 0;
    }
    return at;
  }

 private:
  std::vector<int64_t> dims_, index_, stride_;
};

Expected<Tensor> array_of(const Header& h, const Element& e, std::string_view data, const std::string& what) {
  auto shape = Shape::make(h.shape);
  if (!shape.ok()) return malformed(what, shape.status().message());
  const int64_t n = shape->num_elements();
  if (n < 0 || (e.size > 0 && static_cast<uint64_t>(n) > std::numeric_limits<uint64_t>::max() / e.size))
    return malformed(what, "its shape's element count overflows");
  // A zero-width string dtype ('S0') holds nothing, whatever the shape
  // claims: refuse it rather than make that many empty strings.
  if (e.size == 0 && n > 0)
    return malformed(what, fmt::format("its dtype '{}' has zero width, and its shape claims {} elements", h.descr, n));
  const uint64_t need = static_cast<uint64_t>(n) * e.size;
  if (data.size() != need)
    return malformed(what, fmt::format("its shape {} of '{}' needs {} bytes of data, and the file holds {}",
                                       shape->to_string(), h.descr, need, data.size()));
  FortranIndex fortran(h.shape);
  auto source = [&](int64_t i) { return h.fortran_order ? fortran.next() : i; };
  Tensor t(e.dtype, *shape);
  if (e.kind == Kind::number) {
    char* out = static_cast<char*>(t.raw_mutable_data());
    for (int64_t i = 0; i < n; ++i) std::memcpy(out + i * e.size, data.data() + source(i) * e.size, e.size);
    const size_t word = e.dtype == DType::complex64 ? 4 : e.dtype == DType::complex128 ? 8 : e.size;
    if (e.swap) swap_words(out, need, word);
    if (e.dtype == DType::boolean) {
      for (int64_t i = 0; i < n; ++i)
        if (out[i] != 0 && out[i] != 1) return malformed(what, fmt::format("bool element {} is neither 0 nor 1", i));
    }
    return t;
  }
  std::string* out = t.mutable_data<std::string>();
  for (int64_t i = 0; i < n; ++i) {
    const char* field = data.data() + source(i) * e.size;
    if (e.kind == Kind::bytes) {
      size_t len = e.size;
      while (len > 0 && field[len - 1] == '\0') --len;
      out[i].assign(field, len);
    } else {
      TF_ASSIGN_OR_RETURN(out[i], utf8_of(field, e.size / 4, e.swap, what));
    }
  }
  return t;
}

Expected<std::string> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Error::not_found, fmt::format("cannot open '{}'", path));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return Status(Error::data_loss, fmt::format("cannot read '{}'", path));
  return bytes.str();
}

// --- .npz ------------------------------------------------------------------

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};
using Zip = std::unique_ptr<zip_t, ZipCloser>;
struct ZipFileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

Expected<Zip> open_zip(const std::string& path) {
  int error = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY, &error);
  if (z == nullptr) {
    zip_error_t e;
    zip_error_init_with_code(&e, error);
    std::string why = zip_error_strerror(&e);
    zip_error_fini(&e);
    return Status(error == ZIP_ER_NOENT || error == ZIP_ER_OPEN ? Error::not_found : Error::parse_error,
                  fmt::format("'{}' is not a readable .npz archive: {}", path, why));
  }
  return Zip(z);
}

std::vector<std::string> keys_of(zip_t* z) {
  std::vector<std::string> keys;
  const zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(z, static_cast<zip_uint64_t>(i), 0);
    if (name == nullptr) continue;
    std::string key = name;
    if (key.size() > 4 && key.compare(key.size() - 4, 4, ".npy") == 0) key.resize(key.size() - 4);
    keys.push_back(std::move(key));
  }
  return keys;
}

std::string joined(const std::vector<std::string>& keys) {
  std::string s;
  for (const auto& k : keys) s += (s.empty() ? "" : ", ") + k;
  return s.empty() ? "none" : s;
}

// --- writing ----------------------------------------------------------------

Expected<std::string> descr_of(const Tensor& t, size_t* width) {
  switch (t.dtype()) {
    case DType::boolean: return std::string("|b1");
    case DType::int8: return std::string("|i1");
    case DType::uint8: return std::string("|u1");
    case DType::int16: return std::string("<i2");
    case DType::uint16: return std::string("<u2");
    case DType::int32: return std::string("<i4");
    case DType::uint32: return std::string("<u4");
    case DType::int64: return std::string("<i8");
    case DType::uint64: return std::string("<u8");
    case DType::half: return std::string("<f2");
    case DType::float32: case DType::bfloat16: return std::string("<f4");
    case DType::float64: return std::string("<f8");
    case DType::complex64: return std::string("<c8");
    case DType::complex128: return std::string("<c16");
    case DType::string: {
      size_t w = 1;
      const std::string* s = t.data<std::string>();
      for (int64_t i = 0; i < t.num_elements(); ++i) w = std::max(w, s[i].size());
      *width = w;
      return fmt::format("|S{}", w);
    }
    default:
      return Status(Error::invalid_argument,
                    fmt::format("a {} tensor has no NumPy form", dtype_name(t.dtype())));
  }
}

}  // namespace

Expected<Tensor> parse_npy(std::string_view bytes, const std::string& what) {
  if (bytes.size() < kMagicSize + 2 || bytes.substr(0, kMagicSize) != std::string_view(kMagic, kMagicSize))
    return malformed(what, "it does not start with NumPy's magic bytes \\x93NUMPY");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t at = kMagicSize + 2;
  size_t header_len = 0;
  if (major == 1) {
    if (bytes.size() < at + 2) return malformed(what, "it ends inside its header length");
    header_len = static_cast<unsigned char>(bytes[at]) | static_cast<size_t>(static_cast<unsigned char>(bytes[at + 1])) << 8;
    at += 2;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < at + 4) return malformed(what, "it ends inside its header length");
    for (int i = 3; i >= 0; --i) header_len = header_len << 8 | static_cast<unsigned char>(bytes[at + i]);
    at += 4;
  } else {
    return malformed(what, fmt::format("its format version {}.{} is not 1.0, 2.0 or 3.0", major,
                                       static_cast<unsigned char>(bytes[7])));
  }
  if (header_len > bytes.size() - at) return malformed(what, "it ends inside its header");
  TF_ASSIGN_OR_RETURN(Header h, HeaderReader(bytes.substr(at, header_len), what).read());
  TF_ASSIGN_OR_RETURN(Element e, element_of(h.descr, what));
  return array_of(h, e, bytes.substr(at + header_len), what);
}

Expected<Tensor> read_npy_file(const std::string& path) {
  TF_ASSIGN_OR_RETURN(std::string bytes, file_bytes(path));
  return parse_npy(bytes, path);
}

Expected<std::vector<std::string>> npz_keys(const std::string& path) {
  TF_ASSIGN_OR_RETURN(Zip z, open_zip(path));
  return keys_of(z.get());
}

Expected<Tensor> read_npz_array(const std::string& path, const std::string& key) {
  TF_ASSIGN_OR_RETURN(Zip z, open_zip(path));
  zip_int64_t index = zip_name_locate(z.get(), (key + ".npy").c_str(), 0);
  if (index < 0) index = zip_name_locate(z.get(), key.c_str(), 0);
  if (index < 0)
    return Status(Error::not_found, fmt::format("'{}' holds no array '{}' (it holds: {})", path, key,
                                                joined(keys_of(z.get()))));
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(z.get(), static_cast<zip_uint64_t>(index), 0, &st) != 0 || !(st.valid & ZIP_STAT_SIZE))
    return Status(Error::parse_error, fmt::format("'{}': cannot read the size of member '{}'", path, key));
  const std::string what = fmt::format("{}:{}", path, key);
  if (st.size > kMaxMemberBytes)
    return Status(Error::resource_exhausted,
                  fmt::format("{}: the array declares {} bytes, over tagflow's limit of {}", what, st.size,
                              kMaxMemberBytes));
  // Deflate expands at most 1032 times: a member claiming more than that of
  // its compressed bytes lies, and is refused before its size is allocated.
  if ((st.valid & ZIP_STAT_COMP_SIZE) && st.size > st.comp_size * 1032 + 1024)
    return Status(Error::data_loss, fmt::format("{}: the member claims {} bytes from {} compressed ones", what,
                                                st.size, st.comp_size));
  std::unique_ptr<zip_file_t, ZipFileCloser> f(zip_fopen_index(z.get(), static_cast<zip_uint64_t>(index), 0));
  if (f == nullptr)
    return Status(Error::parse_error, fmt::format("{}: {}", what, zip_strerror(z.get())));
  std::string bytes(st.size, '\0');
  zip_uint64_t got = 0;
  while (got < st.size) {
    const zip_int64_t r = zip_fread(f.get(), bytes.data() + got, st.size - got);
    if (r < 0) return Status(Error::data_loss, fmt::format("{}: {}", what, zip_file_strerror(f.get())));
    if (r == 0) break;
    got += static_cast<zip_uint64_t>(r);
  }
  if (got != st.size)
    return Status(Error::data_loss, fmt::format("{}: the member ends after {} of its {} bytes", what, got, st.size));
  return parse_npy(bytes, what);
}

Expected<std::string> npy_bytes(const Tensor& t) {
  size_t width = 0;
  TF_ASSIGN_OR_RETURN(std::string descr, descr_of(t, &width));
  std::string shape;
  for (int64_t d : t.shape().dims()) shape += std::to_string(d) + ", ";
  if (t.rank() > 1) shape.resize(shape.size() - 2);
  else if (t.rank() == 1) shape.resize(shape.size() - 1);
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, shape);
  // numpy.lib.format pads the header with spaces so that the data starts
  // at a multiple of 64 bytes, and ends it with a newline.
  const size_t prefix = kMagicSize + 2 + 2;
  header.append(63 - (prefix + header.size()) % 64, ' ');
  header += '\n';
  if (header.size() > 0xFFFF) return Status(Error::invalid_argument, "the array's header is too long for .npy 1.0");
  std::string out(kMagic, kMagicSize);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  const int64_t n = t.num_elements();
  if (t.dtype() == DType::string) {
    const std::string* s = t.data<std::string>();
    for (int64_t i = 0; i < n; ++i) {
      out += s[i];
      out.append(width - s[i].size(), '\0');
    }
  } else if (t.dtype() == DType::bfloat16) {
    const Eigen::bfloat16* v = t.data<Eigen::bfloat16>();
    for (int64_t i = 0; i < n; ++i) {
      const float f = static_cast<float>(v[i]);
      out.append(reinterpret_cast<const char*>(&f), sizeof f);
    }
  } else {
    out.append(static_cast<const char*>(t.raw_data()), t.byte_size());
  }
  return out;
}

Status write_npy_file(const std::string& path, const Tensor& t) {
  TF_ASSIGN_OR_RETURN(std::string bytes, npy_bytes(t));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status(Error::not_found, fmt::format("cannot write '{}'", path));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return Status(Error::data_loss, fmt::format("cannot write '{}'", path));
  return ok_status();
}

}  // namespace tagflow::ops
