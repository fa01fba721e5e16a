// Shape: the dimensions of a tensor, rank 0 to 8, stored inline (no heap).
// A dimension is >= 0; -1 (unknown) exists only in PartialShape, which attrs
// and GraphDef shapes use. Plain value; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "ops/status.hpp"

namespace tagflow::ops {

class Shape {
 public:
  static constexpr int kMaxRank = 8;

  Shape() = default;  // a scalar
  // Asserts rank <= 8 and dims >= 0; use Shape::make for untrusted input.
  Shape(std::initializer_list<int64_t> dims);
  // Checks rank, non-negative dimensions and element count overflow.
  static Expected<Shape> make(const std::vector<int64_t>& dims);

  int rank() const { return rank_; }
  int64_t dim(int i) const { return dims_[i]; }
  int64_t num_elements() const {  // inline: on every kernel's path
    int64_t n = 1;
    for (int i = 0; i < rank_; ++i) n *= dims_[i];
    return n;
  }
  bool is_scalar() const { return rank_ == 0; }
  std::vector<int64_t> dims() const { return {dims_.begin(), dims_.begin() + rank_}; }

  void set_dim(int i, int64_t d) { dims_[i] = d; }
  // Asserts rank < 8; callers check rank first.
  void add_dim(int64_t d);

  bool operator==(const Shape& o) const {
    if (rank_ != o.rank_) return false;
    for (int i = 0; i < rank_; ++i)
      if (dims_[i] != o.dims_[i]) return false;
    return true;
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }
  // "[2,3]", "[]" for a scalar.
  std::string to_string() const;

 private:
  std::array<int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

// A shape as written in a GraphDef: unknown rank, or dims with -1 unknown.
struct PartialShape {
  bool unknown_rank = false;
  std::vector<int64_t> dims;

  bool operator==(const PartialShape& o) const {
    return unknown_rank == o.unknown_rank && dims == o.dims;
  }
  std::string to_string() const;  // "?", "[2,?]"
  // Whether a tensor of shape `s` fits: unknown rank, or its rank with
  // every known dimension equal.
  bool is_compatible_with(const Shape& s) const;
};

}  // namespace tagflow::ops
