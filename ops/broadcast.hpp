// Broadcast: NumPy-style broadcasting of two or three operand shapes, as
// the binary elementwise ops, SelectV2 and BatchMatMulV2's batch dimensions
// use it. Shapes are aligned at their last dimension; each dimension of an
// operand must equal the output's or be 1 (then it is repeated).
//
// Besides the output shape it keeps a collapsed view for iterating: size-1
// dimensions are dropped and neighbouring dimensions in which every operand
// is either present or repeated alike are merged, so [2,3,4] + [4] becomes
// rows of 4 over 6 rows, and kernels walk contiguous rows with Eigen.
// Immutable once made; thread-safe.
#pragma once

#include <array>
#include <cstdint>

#include "ops/shape.hpp"
#include "ops/status.hpp"

namespace tagflow::ops {

class Broadcast {
 public:
  static constexpr int kMaxOperands = 3;

  // An error names every shape: "incompatible shapes for broadcasting:
  // [2,3] and [4]".
  static Expected<Broadcast> make(const Shape& a, const Shape& b);
  static Expected<Broadcast> make(const Shape& a, const Shape& b, const Shape& c);

  const Shape& output_shape() const { return output_; }

  // The collapsed view: rank() >= 1 dimensions of sizes dim(i) whose product
  // is the output's element count; operand k advances stride(k, i) elements
  // per step along dimension i (0 where it is repeated).
  int rank() const { return rank_; }
  int64_t dim(int i) const { return dims_[i]; }
  int64_t stride(int operand, int i) const { return strides_[operand][i]; }

  // Calls row(out_offset, in_offsets) for every row of the innermost
  // collapsed dimension, in output order. A row is dim(rank() - 1) elements
  // long; in_offsets[k] is operand k's element offset at the row's start,
  // and along the row operand k advances by stride(k, rank() - 1), 0 or 1.
  // Calls nothing when the output is empty.
  template <class F>
  void for_each_row(F&& row) const;

 private:
  static Expected<Broadcast> make(const Shape* const* shapes, int n);

  Shape output_;
  int num_operands_ = 0;
  int rank_ = 0;
  std::array<int64_t, Shape::kMaxRank> dims_{};
  std::array<std::array<int64_t, Shape::kMaxRank>, kMaxOperands> strides_{};
};

template <class F>
void Broadcast::for_each_row(F&& row) const {
  if (output_.num_elements() == 0) return;
  const int64_t len = dims_[rank_ - 1];
  std::array<int64_t, Shape::kMaxRank> index{};
  std::array<int64_t, kMaxOperands> offsets{};
  int64_t out = 0;
  for (;;) {
    row(out, offsets.data());
    out += len;
    // Advance the odometer over the outer dimensions [0, rank_ - 1).
    int d = rank_ - 2;
    for (; d >= 0; --d) {
      ++index[d];
      for (int k = 0; k < num_operands_; ++k) offsets[k] += strides_[k][d];
      if (index[d] < dims_[d]) break;
      for (int k = 0; k < num_operands_; ++k) offsets[k] -= strides_[k][d] * dims_[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace tagflow::ops
