#include "ops/shape.hpp"

#include <limits>

namespace tagflow::ops {

Shape::Shape(std::initializer_list<int64_t> dims) {
  assert(dims.size() <= static_cast<size_t>(kMaxRank));
  for (int64_t d : dims) {
    assert(d >= 0);
    dims_[rank_++] = d;
  }
}

Expected<Shape> Shape::make(const std::vector<int64_t>& dims) {
  if (dims.size() > static_cast<size_t>(kMaxRank)) {
    return Status(Error::invalid_argument,
                  "rank " + std::to_string(dims.size()) + " exceeds the maximum rank 8");
  }
  Shape s;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) {
      return Status(Error::invalid_argument,
                    "negative dimension " + std::to_string(d) + " in shape");
    }
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) {
      return Status(Error::invalid_argument, "shape has too many elements");
    }
    n *= d;
    s.dims_[s.rank_++] = d;
  }
  return s;
}

void Shape::add_dim(int64_t d) {
  assert(rank_ < kMaxRank);
  dims_[rank_++] = d;
}

std::string Shape::to_string() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i > 0) s += ",";
    s += std::to_string(dims_[i]);
  }
  return s + "]";
}

std::string PartialShape::to_string() const {
  if (unknown_rank) return "?";
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ",";
    s += dims[i] < 0 ? "?" : std::to_string(dims[i]);
  }
  return s + "]";
}

bool PartialShape::is_compatible_with(const Shape& s) const {
  if (unknown_rank) return true;
  if (static_cast<int>(dims.size()) != s.rank()) return false;
  for (int i = 0; i < s.rank(); ++i)
    if (dims[static_cast<size_t>(i)] >= 0 && dims[static_cast<size_t>(i)] != s.dim(i)) return false;
  return true;
}

}  // namespace tagflow::ops
