#include "ops/tensor_literal.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace tagflow::ops {

namespace {

using json = nlohmann::json;

// Finds the shape of a rectangular nested list, collecting its leaves.
Status flatten(const json& j, int depth, std::vector<int64_t>& dims,
               std::vector<const json*>& leaves) {
  if (!j.is_array()) {
    if (depth != static_cast<int>(dims.size()))
      return Status(Error::parse_error, "the nested lists are ragged");
    leaves.push_back(&j);
    return ok_status();
  }
  if (depth == static_cast<int>(dims.size())) {
    if (!leaves.empty()) return Status(Error::parse_error, "the nested lists are ragged");
    if (depth >= Shape::kMaxRank) return Status(Error::parse_error, "more than 8 levels of nesting");
    dims.push_back(static_cast<int64_t>(j.size()));
  } else if (depth > static_cast<int>(dims.size()) || dims[static_cast<size_t>(depth)] != static_cast<int64_t>(j.size())) {
    return Status(Error::parse_error, "the nested lists are ragged");
  }
  for (const json& e : j) TF_RETURN_IF_ERROR(flatten(e, depth + 1, dims, leaves));
  return ok_status();
}

template <class T>
Status convert(const json& j, T* out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) return Status(Error::invalid_argument, "expected true or false, got " + abbreviate(j.dump()));
    *out = j.get<bool>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!j.is_string()) return Status(Error::invalid_argument, "expected a quoted string, got " + abbreviate(j.dump()));
    *out = j.get<std::string>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!j.is_number_integer())
      return Status(Error::invalid_argument, "expected an integer, got " + abbreviate(j.dump()));
    if (j.is_number_unsigned()) {
      auto v = j.get<uint64_t>();
      if (v > static_cast<uint64_t>(std::numeric_limits<T>::max()))
        return Status(Error::invalid_argument, fmt::format("{} does not fit the dtype", abbreviate(j.dump())));
      *out = static_cast<T>(v);
    } else {
      auto v = j.get<int64_t>();
      if (v < static_cast<int64_t>(std::numeric_limits<T>::lowest()) ||
          (v > 0 && static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<T>::max())))
        return Status(Error::invalid_argument, fmt::format("{} does not fit the dtype", abbreviate(j.dump())));
      *out = static_cast<T>(v);
    }
  } else {
    if (!j.is_number()) return Status(Error::invalid_argument, "expected a number, got " + abbreviate(j.dump()));
    *out = static_cast<T>(j.get<double>());
  }
  return ok_status();
}

}  // namespace

Expected<Tensor> parse_tensor_literal(const std::string& text, DType dtype) {
  auto context = [&](const Status& s) {
    return Status(s.code(), fmt::format("literal '{}' as {}: {}", abbreviate(text), dtype_name(dtype), s.message()));
  };
  json j;
  try {  // nlohmann reports the position only through its exception
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    return context(Status(Error::parse_error, fmt::format("syntax error at byte {}", e.byte)));
  }
  std::vector<int64_t> dims;
  std::vector<const json*> leaves;
  Status s = flatten(j, 0, dims, leaves);
  if (!s.ok()) return context(s);
  auto shape = Shape::make(dims);
  if (!shape.ok()) return context(shape.status());
  if (base_dtype(dtype) == DType::variant)
    return context(Status(Error::unimplemented, "no literal syntax for variant values"));
  Tensor t(base_dtype(dtype), *shape);
  Status fill;
  bool known = false;
  if (dtype_is_object(dtype)) {
    known = true;
    for (size_t i = 0; i < leaves.size() && fill.ok(); ++i)
      fill = convert(*leaves[i], t.mutable_data<std::string>() + i);
  } else {
    known = dispatch_pod(base_dtype(dtype), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_arithmetic_v<T>) {
        for (size_t i = 0; i < leaves.size() && fill.ok(); ++i) fill = convert(*leaves[i], t.mutable_data<T>() + i);
      } else if constexpr (std::is_same_v<T, Eigen::half> || std::is_same_v<T, Eigen::bfloat16>) {
        for (size_t i = 0; i < leaves.size() && fill.ok(); ++i) {
          float f = 0;
          fill = convert(*leaves[i], &f);
          t.mutable_data<T>()[i] = T(f);
        }
      } else {
        fill = Status(Error::unimplemented, "no literal syntax for this dtype");
      }
    });
  }
  if (!known) return context(Status(Error::unimplemented, "no literal syntax for this dtype"));
  if (!fill.ok()) return context(fill);
  return t;
}

}  // namespace tagflow::ops
