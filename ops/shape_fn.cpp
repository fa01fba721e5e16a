// The shape-function context and the shape helpers the rules share
// (ops/shape_fn.hpp).
#include "ops/shape_fn.hpp"

#include <algorithm>
#include <climits>

#include <fmt/format.h>

namespace tagflow::ops {

// --- helpers -----------------------------------------------------------------
namespace shape {

PartialShape of_rank(int64_t r) {
  // A rank that is not known (-1), or that no tensor has, is unknown.
  if (r < 0 || r > kMaxInferredRank) return unknown();
  return {false, std::vector<int64_t>(static_cast<size_t>(r), -1)};
}

bool fully_known(const PartialShape& s) {
  if (s.unknown_rank) return false;
  for (int64_t d : s.dims)
    if (d < 0) return false;
  return true;
}

int64_t num_elements(const PartialShape& s) {
  if (!fully_known(s)) return -1;
  int64_t n = 1;
  for (int64_t d : s.dims) {
    if (d != 0 && n > INT64_MAX / d) return -1;
    n *= d;
  }
  return n;
}

int64_t dim(const PartialShape& s, int i) {
  if (s.unknown_rank) return -1;
  const int r = rank(s);
  if (i < 0) i += r;
  if (i < 0 || i >= r) return -1;
  return s.dims[static_cast<size_t>(i)];
}

bool dims_compatible(int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; }
int64_t merge_dim(int64_t a, int64_t b) { return a >= 0 ? a : b; }

std::optional<PartialShape> merge(const PartialShape& a, const PartialShape& b) {
  if (a.unknown_rank) return b;
  if (b.unknown_rank) return a;
  if (a.dims.size() != b.dims.size()) return std::nullopt;
  PartialShape out = a;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    if (!dims_compatible(a.dims[i], b.dims[i])) return std::nullopt;
    out.dims[i] = merge_dim(a.dims[i], b.dims[i]);
  }
  return out;
}

std::optional<PartialShape> broadcast(const PartialShape& a, const PartialShape& b) {
  if (a.unknown_rank || b.unknown_rank) {
    // A scalar never changes the other shape.
    if (!a.unknown_rank && a.dims.empty()) return b;
    if (!b.unknown_rank && b.dims.empty()) return a;
    return unknown();
  }
  const size_t r = std::max(a.dims.size(), b.dims.size());
  PartialShape out{false, std::vector<int64_t>(r, -1)};
  for (size_t i = 0; i < r; ++i) {
    const int64_t x = i < r - a.dims.size() ? 1 : a.dims[i - (r - a.dims.size())];
    const int64_t y = i < r - b.dims.size() ? 1 : b.dims[i - (r - b.dims.size())];
    int64_t d;
    if (x == 1) d = y;
    else if (y == 1) d = x;
    else if (x < 0 && y < 0) d = -1;
    else if (x < 0) d = y;  // x must be y or 1; then the output is y either way
    else if (y < 0) d = x;
    else if (x == y) d = x;
    else return std::nullopt;
    // An unknown dimension against a 1 could be anything.
    out.dims[i] = d;
  }
  return out;
}

int64_t add_dims(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a + b; }
int64_t mul_dims(int64_t a, int64_t b) { return a < 0 || b < 0 ? -1 : a * b; }

PartialShape sub(const PartialShape& s, int begin, int end) {
  if (s.unknown_rank) return unknown();
  begin = std::max(0, std::min(begin, rank(s)));
  end = std::max(begin, std::min(end, rank(s)));
  return known({s.dims.begin() + begin, s.dims.begin() + end});
}

PartialShape concat(const PartialShape& a, const PartialShape& b) {
  if (a.unknown_rank || b.unknown_rank) return unknown();
  PartialShape out = a;
  out.dims.insert(out.dims.end(), b.dims.begin(), b.dims.end());
  return out;
}

Tensor int_tensor(DType dtype, const std::vector<int64_t>& values, const Shape& s) {
  if (dtype == DType::int64) return Tensor::from_vector<int64_t>(s, values);
  return Tensor::from_vector<int32_t>(s, std::vector<int32_t>(values.begin(), values.end()));
}

PartialShape generalize(const PartialShape& a, const PartialShape& b) {
  if (a.unknown_rank || b.unknown_rank || a.dims.size() != b.dims.size()) return shape::unknown();
  PartialShape out = a;
  for (size_t i = 0; i < a.dims.size(); ++i)
    if (a.dims[i] != b.dims[i]) out.dims[i] = -1;
  return out;
}

}  // namespace shape

// --- InferenceContext --------------------------------------------------------

std::optional<std::vector<int64_t>> InferenceContext::input_ints(int i) const {
  const Tensor* t = input_value(i);
  if (t == nullptr) return std::nullopt;
  std::vector<int64_t> v(static_cast<size_t>(t->num_elements()));
  if (t->dtype() == DType::int32) {
    for (size_t k = 0; k < v.size(); ++k) v[k] = t->data<int32_t>()[k];
  } else if (t->dtype() == DType::int64) {
    for (size_t k = 0; k < v.size(); ++k) v[k] = t->data<int64_t>()[k];
  } else {
    return std::nullopt;
  }
  return v;
}

PartialShape InferenceContext::input_as_shape(int i) const {
  if (auto v = input_ints(i); v && input_shape(i).dims.size() <= 1) {
    PartialShape s = shape::known(*v);
    for (int64_t& d : s.dims)
      if (d < 0) d = -1;
    return s;
  }
  const PartialShape& s = input_shape(i);
  if (!s.unknown_rank && s.dims.size() == 1 && s.dims[0] >= 0) return shape::of_rank(s.dims[0]);
  if (!s.unknown_rank && s.dims.empty()) return shape::scalar();  // a scalar shape argument: rank 0
  return shape::unknown();
}

void InferenceContext::set_output(int i, PartialShape s) {
  if (i < 0 || i >= num_outputs()) return;
  (*outputs_)[static_cast<size_t>(i)].shape = std::move(s);
}

void InferenceContext::set_value(int i, Tensor value) {
  if (i < 0 || i >= num_outputs()) return;
  OutputInfo& o = (*outputs_)[static_cast<size_t>(i)];
  o.shape = shape::known(value.shape().dims());
  if ((value.dtype() == DType::int32 || value.dtype() == DType::int64) && value.num_elements() <= 64)
    o.value = std::move(value);
}

void InferenceContext::pass_through(int input) {
  if (input >= num_inputs()) return;
  for (int i = 0; i < num_outputs(); ++i) {
    set_output(i, input_shape(input));
    if (input_value(input) != nullptr && output(i).dtype == this->input(input).dtype)
      set_value(i, *input_value(input));
  }
}

int64_t InferenceContext::int_attr(std::string_view key, int64_t otherwise) const {
  const int64_t* v = attr<int64_t>(key);
  return v == nullptr ? otherwise : *v;
}

bool InferenceContext::bool_attr(std::string_view key, bool otherwise) const {
  const bool* v = attr<bool>(key);
  return v == nullptr ? otherwise : *v;
}

std::string InferenceContext::string_attr(std::string_view key) const {
  const std::string* v = attr<std::string>(key);
  return v == nullptr ? std::string() : *v;
}

Status InferenceContext::error(const std::string& what) const {
  return Status(Error::invalid_argument, fmt::format("{} '{}': {}", op_, name_, what));
}

Status InferenceContext::merged_inputs(PartialShape* out) const {
  PartialShape s = shape::unknown();
  for (int i = 0; i < num_inputs(); ++i) {
    auto m = shape::merge(s, input_shape(i));
    if (!m)
      return error("inputs must have one shape: " + s.to_string() + " and input " + std::to_string(i) + " " +
                   input_shape(i).to_string());
    s = *m;
  }
  *out = std::move(s);
  return ok_status();
}

}  // namespace tagflow::ops
