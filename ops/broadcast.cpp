#include "ops/broadcast.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace tagflow::ops {

Expected<Broadcast> Broadcast::make(const Shape& a, const Shape& b) {
  const Shape* shapes[] = {&a, &b};
  return make(shapes, 2);
}

Expected<Broadcast> Broadcast::make(const Shape& a, const Shape& b, const Shape& c) {
  const Shape* shapes[] = {&a, &b, &c};
  return make(shapes, 3);
}

Expected<Broadcast> Broadcast::make(const Shape* const* shapes, int n) {
  int rank = 0;
  for (int k = 0; k < n; ++k) rank = std::max(rank, shapes[k]->rank());
  // Operand k's size in output dimension d, its shape aligned at the right.
  auto size_in = [&](int k, int d) -> int64_t {
    int i = d - (rank - shapes[k]->rank());
    return i < 0 ? 1 : shapes[k]->dim(i);
  };

  std::vector<int64_t> out_dims(static_cast<size_t>(rank), 1);
  for (int d = 0; d < rank; ++d) {
    for (int k = 0; k < n; ++k) {
      int64_t s = size_in(k, d);
      if (s == 1) continue;
      if (out_dims[d] != 1 && out_dims[d] != s) {
        std::string names;
        for (int j = 0; j < n; ++j)
          names += (j == 0 ? "" : j == n - 1 ? " and " : ", ") + shapes[j]->to_string();
        return Status(Error::invalid_argument, "incompatible shapes for broadcasting: " + names);
      }
      out_dims[d] = s;
    }
  }
  TF_ASSIGN_OR_RETURN(Shape output, Shape::make(out_dims));

  Broadcast b;
  b.output_ = output;
  b.num_operands_ = n;
  // Collapse: drop size-1 output dimensions, merge neighbours in which the
  // same operands are present (bit k of a mask: operand k is not repeated).
  std::array<unsigned, Shape::kMaxRank> masks{};
  for (int d = 0; d < rank; ++d) {
    if (out_dims[d] == 1) continue;
    unsigned mask = 0;
    for (int k = 0; k < n; ++k)
      if (size_in(k, d) == out_dims[d]) mask |= 1u << k;
    if (b.rank_ > 0 && masks[b.rank_ - 1] == mask) {
      b.dims_[b.rank_ - 1] *= out_dims[d];
    } else {
      masks[b.rank_] = mask;
      b.dims_[b.rank_++] = out_dims[d];
    }
  }
  if (b.rank_ == 0) {  // one element: every operand is present
    masks[0] = (1u << n) - 1;
    b.dims_[0] = 1;
    b.rank_ = 1;
  }
  for (int k = 0; k < n; ++k) {
    int64_t step = 1;
    for (int i = b.rank_ - 1; i >= 0; --i) {
      bool present = (masks[i] >> k) & 1u;
      b.strides_[k][i] = present ? step : 0;
      if (present) step *= b.dims_[i];
    }
  }
  return b;
}

}  // namespace tagflow::ops
