// A tf.Example from the text a user types (ops/example.hpp).
#include "ops/example.hpp"

#include <fmt/format.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <set>
#include <vector>

#include "ops/proto/example.pb.h"

namespace tagflow::ops {

namespace {

namespace ex = tagflow::example;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits `text` at `sep` where it is not inside a double-quoted string
// (in which a backslash escapes the next character). An unclosed quote is
// an error.
Expected<std::vector<std::string_view>> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  bool quoted = false;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted && c == '\\') {
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (!quoted && c == sep) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (quoted) return Status(Error::parse_error, fmt::format("'{}' has an unclosed quote", abbreviate(text)));
  parts.push_back(text.substr(start));
  return parts;
}

// "a \"b\"" -> a "b": one quoted string, \" and \\ its only escapes.
Expected<std::string> unquote(std::string_view s) {
  std::string out;
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] == '"') {
      if (i + 1 == s.size()) return out;
      break;
    }
    if (s[i] == '\\' && ++i < s.size() && s[i] != '"' && s[i] != '\\')
      return Status(Error::parse_error,
                    fmt::format("{}: only \\\" and \\\\ are escapes in a quoted string", abbreviate(s)));
    if (i < s.size()) out.push_back(s[i]);
  }
  return Status(Error::parse_error, fmt::format("{} is not one quoted string", abbreviate(s)));
}

bool parse_int(std::string_view s, int64_t* v) {
  const char* end = s.data() + s.size();
  auto r = std::from_chars(s.data(), end, *v);
  return r.ec == std::errc() && r.ptr == end;
}

bool parse_float(std::string_view s, float* v) {
  const std::string copy(s);
  char* end = nullptr;
  *v = std::strtof(copy.c_str(), &end);
  return !copy.empty() && end == copy.c_str() + copy.size();
}

// VALUES of feature `name` -> its Feature, the kind taken from the values.
Expected<ex::Feature> feature_of(const std::string& name, std::string_view values) {
  values = trim(values);
  if (values.size() >= 2 && values.front() == '[' && values.back() == ']')
    values = trim(values.substr(1, values.size() - 2));
  if (values.empty()) return Status(Error::parse_error, fmt::format("feature '{}' has no values", name));
  TF_ASSIGN_OR_RETURN(std::vector<std::string_view> items, split(values, ','));
  const bool strings = trim(items.front()).substr(0, 1) == "\"";
  ex::Feature f;
  std::vector<int64_t> ints;
  bool all_ints = true;
  for (std::string_view item : items) {
    item = trim(item);
    if ((item.substr(0, 1) == "\"") != strings)
      return Status(Error::parse_error,
                    fmt::format("feature '{}' mixes quoted strings and numbers ({})", name, abbreviate(item)));
    if (strings) {
      TF_ASSIGN_OR_RETURN(std::string s, unquote(item));
      f.mutable_bytes_list()->add_value(std::move(s));
      continue;
    }
    int64_t i = 0;
    float x = 0;
    if (item.find_first_not_of("+-0123456789") == std::string_view::npos) {
      if (!parse_int(item, &i))
        return Status(Error::parse_error, fmt::format("feature '{}': {} is not an int64", name, abbreviate(item)));
      ints.push_back(i);
    } else if (parse_float(item, &x)) {
      all_ints = false;
    } else {
      return Status(Error::parse_error, fmt::format("feature '{}': '{}' is not a number or a quoted string", name,
                                                    abbreviate(item)));
    }
  }
  if (strings) return f;
  if (all_ints) {
    for (int64_t i : ints) f.mutable_int64_list()->add_value(i);
    return f;
  }
  for (std::string_view item : items) {
    float x = 0;
    parse_float(trim(item), &x);  // every item parsed above
    f.mutable_float_list()->add_value(x);
  }
  return f;
}

class ErrorText final : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (text.empty()) text = fmt::format("line {}, column {}: {}", line + 1, column + 1, message);
  }
  std::string text;
};

Expected<ex::Example> text_format_example(std::string_view text) {
  ex::Example e;
  ErrorText errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), &e))
    return Status(Error::parse_error, "text-format tf.Example: " + errors.text);
  return e;
}

Expected<ex::Example> features_example(std::string_view text) {
  ex::Example e;
  auto& map = *e.mutable_features()->mutable_feature();
  TF_ASSIGN_OR_RETURN(std::vector<std::string_view> features, split(text, ';'));
  for (std::string_view feature : features) {
    feature = trim(feature);
    if (feature.empty() && features.size() == 1) break;  // an Example without features
    const size_t eq = feature.find('=');
    const std::string name(trim(feature.substr(0, eq)));
    if (eq == std::string_view::npos || name.empty())
      return Status(Error::parse_error, fmt::format("'{}' is not NAME=VALUES", abbreviate(feature)));
    if (map.count(name) != 0) return Status(Error::parse_error, fmt::format("feature '{}' is given twice", name));
    TF_ASSIGN_OR_RETURN(map[name], feature_of(name, feature.substr(eq + 1)));
  }
  return e;
}

}  // namespace

Expected<std::string> serialized_example(std::string_view text) {
  const bool text_format = text.find('{') != std::string_view::npos;
  TF_ASSIGN_OR_RETURN(ex::Example e, text_format ? text_format_example(text) : features_example(text));
  std::string out;
  if (!e.SerializeToString(&out)) return Status(Error::internal, "could not serialize the tf.Example");
  return out;
}

}  // namespace tagflow::ops
