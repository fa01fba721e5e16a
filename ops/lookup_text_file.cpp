// InitializeTableFromTextFileV2's reading (ops/lookup_table.hpp): one entry
// per line of a local file, with TensorFlow's rules (lookup_util.cc's
// TextFileLineIterator). A line ends at '\n' (a '\r' before it is dropped);
// the last line needs no '\n'. Fields are split at the delimiter, empty
// fields kept. Index -1 is the line number (0-based) plus offset, -2 the
// whole line, k >= 0 field k. Numbers are read as TensorFlow's safe_strto*
// read them (ops/number_text.hpp, shared with StringToNumber).
//
// Errors name the file and the line (1-based, as editors count): an empty
// line, too few fields, a field that is not a number of the dtype, fewer
// lines than vocab_size. More lines than vocab_size are ignored.
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <vector>

#include "ops/lookup_table.hpp"
#include "ops/number_text.hpp"

namespace tagflow::ops {

namespace {

constexpr int64_t kLineNumber = -1;
constexpr int64_t kWholeLine = -2;

// The parsed values of one column (keys or values), in line order.
class Column {
 public:
  explicit Column(DType dtype) : dtype_(dtype) {}

  // Appends the value of `token` read as the column's dtype; an error
  // (invalid_argument) names `where`.
  Status add(const std::string& token, int64_t offset, const std::string& where) {
    switch (dtype_) {
      case DType::int32: {
        int64_t v = 0;
        if (!number_text::parse_integer(token, &v) || v < std::numeric_limits<int32_t>::min() ||
            v > std::numeric_limits<int32_t>::max())
          return not_a(token, where);
        // TensorFlow adds the offset to int32 fields (not to int64 ones).
        ints_.push_back(static_cast<int32_t>(static_cast<uint64_t>(v) + static_cast<uint64_t>(offset)));
        return ok_status();
      }
      case DType::int64: {
        int64_t v = 0;
        if (!number_text::parse_integer(token, &v)) return not_a(token, where);
        ints_.push_back(v);
        return ok_status();
      }
      case DType::float32: {  // read as a float, rounded once
        float v = 0;
        if (!number_text::parse_float(token, &v)) return not_a(token, where);
        reals_.push_back(v);
        return ok_status();
      }
      case DType::float64: {
        double v = 0;
        if (!number_text::parse_float(token, &v)) return not_a(token, where);
        reals_.push_back(v);
        return ok_status();
      }
      case DType::string:
        strings_.push_back(token);
        return ok_status();
      default:
        return Status(Error::invalid_argument, where + ": a text file gives no " + dtype_name(dtype_) +
                                                   " values (int32, int64, float, double or string only)");
    }
  }

  void add_line_number(int64_t n) { ints_.push_back(n); }

  Tensor to_tensor() const {
    const int64_t n = static_cast<int64_t>(std::max({ints_.size(), reals_.size(), strings_.size()}));
    Tensor t(dtype_, Shape{n});
    for (int64_t i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(i);
      switch (dtype_) {
        case DType::int32: t.mutable_data<int32_t>()[i] = static_cast<int32_t>(ints_[k]); break;
        case DType::int64: t.mutable_data<int64_t>()[i] = ints_[k]; break;
        case DType::float32: t.mutable_data<float>()[i] = static_cast<float>(reals_[k]); break;
        case DType::float64: t.mutable_data<double>()[i] = reals_[k]; break;
        default: t.mutable_data<std::string>()[i] = strings_[k]; break;
      }
    }
    return t;
  }

 private:
  Status not_a(const std::string& token, const std::string& where) const {
    return Status(Error::invalid_argument,
                  where + ": field \"" + token + "\" is not a valid " + dtype_name(dtype_));
  }

  DType dtype_;
  std::vector<int64_t> ints_;
  std::vector<double> reals_;
  std::vector<std::string> strings_;
};

std::vector<std::string> split(const std::string& line, char delimiter) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i)
    if (i == line.size() || line[i] == delimiter) {
      fields.push_back(line.substr(start, i - start));
      start = i + 1;
    }
  return fields;
}

// Reads a vocabulary file line by line into a key column and a value
// column.
class VocabReader {
 public:
  VocabReader(std::string filename, const TextFileColumns& columns, DType key_dtype, DType value_dtype)
      : filename_(std::move(filename)), columns_(columns), keys_(key_dtype), values_(value_dtype) {}

  Status open() {
    in_.open(filename_, std::ios::binary);
    if (!in_) return Status(Error::not_found, "vocabulary file '" + filename_ + "' cannot be opened: no such readable file");
    return ok_status();
  }

  // Reads the next line's entry; *done at the end of the file or once
  // vocab_size lines are read.
  Status next(bool* done) {
    *done = false;
    const int64_t vocab = columns_.vocab_size;
    if (vocab != -1 && lines_ >= vocab) {
      *done = true;
      return ok_status();
    }
    std::string line;
    if (!std::getline(in_, line)) {
      if (in_.bad()) return Status(Error::data_loss, "reading vocabulary file '" + filename_ + "' failed");
      if (vocab != -1 && lines_ != vocab)
        return Status(Error::invalid_argument, "Invalid vocab_size in " + filename_ + ": expected " +
                                                   std::to_string(vocab) + " lines but the file has " +
                                                   std::to_string(lines_));
      *done = true;
      return ok_status();
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    TF_RETURN_IF_ERROR(add(line));
    ++lines_;
    return ok_status();
  }

  int64_t lines() const { return lines_; }
  const Column& keys() const { return keys_; }
  const Column& values() const { return values_; }

 private:
  std::string where() const { return filename_ + ":" + std::to_string(lines_ + 1); }

  Status add(const std::string& line) {
    if (line.empty()) return Status(Error::invalid_argument, "Invalid content in " + where() + ": an empty line");
    std::vector<std::string> fields;
    const int64_t widest = std::max(columns_.key_index, columns_.value_index);
    if (widest >= 0) {
      fields = split(line, columns_.delimiter);
      if (static_cast<int64_t>(fields.size()) <= widest)
        return Status(Error::invalid_argument, "Invalid number of columns in " + where() + " (\"" + line +
                                                   "\"): expected at least " + std::to_string(widest + 1) +
                                                   " fields, got " + std::to_string(fields.size()));
    }
    TF_RETURN_IF_ERROR(add_field(keys_, columns_.key_index, line, fields));
    return add_field(values_, columns_.value_index, line, fields);
  }

  Status add_field(Column& column, int64_t index, const std::string& line, const std::vector<std::string>& fields) {
    if (index == kLineNumber) {
      column.add_line_number(lines_ + columns_.offset);
      return ok_status();
    }
    const std::string& token = index == kWholeLine ? line : fields[static_cast<size_t>(index)];
    return column.add(token, columns_.offset, where());
  }

  std::string filename_;
  TextFileColumns columns_;
  std::ifstream in_;
  int64_t lines_ = 0;
  Column keys_;
  Column values_;
};

// What an index may read into a dtype, checked before the file is opened.
Status check_index(const char* what, int64_t index, DType dtype) {
  const std::string name = dtype_name(dtype);
  if (index == kLineNumber && dtype != DType::int64)
    return Status(Error::invalid_argument, std::string(what) + "_index -1 (the line number) needs int64 table " +
                                               what + "s, not " + name);
  if (index == kWholeLine && !dtype_is_integer(dtype) && dtype != DType::string)
    return Status(Error::invalid_argument, std::string(what) + "_index -2 (the whole line) needs integer or string table " +
                                               what + "s, not " + name);
  return ok_status();
}

}  // namespace

Status initialize_from_text_file(LookupTable& table, const std::string& filename, const TextFileColumns& columns) {
  const TableSpec& spec = table.spec();
  TF_RETURN_IF_ERROR(check_index("key", columns.key_index, spec.key_dtype));
  TF_RETURN_IF_ERROR(check_index("value", columns.value_index, spec.value_dtype));
  VocabReader reader(filename, columns, spec.key_dtype, spec.value_dtype);
  TF_RETURN_IF_ERROR(reader.open());
  bool done = false;
  TF_RETURN_IF_ERROR(reader.next(&done));
  if (done)
    return Status(Error::out_of_range, "vocabulary file '" + filename + "' gives no entries for " +
                                           table.description() +
                                           (columns.vocab_size == 0 ? " (vocab_size is 0)" : " (it is empty)"));
  // As TensorFlow, a table already initialized (typically by another node
  // sharing it, from the same file) stays as it is once the file opens and
  // its first line reads.
  if (table.is_initialized()) return ok_status();
  while (!done) TF_RETURN_IF_ERROR(reader.next(&done));
  Status s = table.initialize(reader.keys().to_tensor(), reader.values().to_tensor());
  if (s.code() == Error::failed_precondition && table.is_initialized()) return ok_status();
  return s;
}

}  // namespace tagflow::ops
