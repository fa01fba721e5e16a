// Index arguments of kernels: the axis, perm, begin, shape ... inputs that
// TensorFlow types Tidx / Tshape / Tperm / Index (int32 or int64, sometimes
// int16 or 8-bit), read into int64 whatever their dtype, and the checks every
// kernel needs on them. Errors name the argument (`what`). Stateless free
// functions; thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/status.hpp"
#include "ops/tensor.hpp"

namespace tagflow::ops {

// Every element of an integer tensor of any rank, in order.
Expected<std::vector<int64_t>> read_int_values(const Tensor& t, const char* what);
// A rank-1 integer tensor (`what` must be a vector).
Expected<std::vector<int64_t>> read_int_vector(const Tensor& t, const char* what);
// A scalar integer tensor; a vector of one element is accepted too, as
// TensorFlow does for axis arguments.
Expected<int64_t> read_int_scalar(const Tensor& t, const char* what);

// `axis` in [-rank, rank) made non-negative; otherwise an error such as
// "axis 3 is out of range for a tensor of rank 2 (must be in [-2, 2))".
Expected<int> canonical_axis(int64_t axis, int rank, const char* what = "axis");

// A shape from a rank-1 integer tensor of non-negative dimensions.
Expected<Shape> shape_from_tensor(const Tensor& t, const char* what);

// The index tuples of GatherNd and ScatterNd. `indices` has shape
// [..., depth] (rank >= 1) and each of its tuples names a slice of `shape`
// by its first depth dimensions. Returns, for each tuple in order, the
// row-major number of its slice among the product of those dimensions. An
// error names the tuple and the shape it does not index into: "GatherNd
// indices[1] = [5,2] does not index into params shape [3,4]" (`what` is
// "GatherNd indices", `shape_what` "params shape").
Expected<std::vector<int64_t>> nd_slice_numbers(const Tensor& indices, const Shape& shape,
                                                const char* what, const char* shape_what);

// "[1,2]": the multi-index of flat element `flat` of `shape`, for messages
// naming a bad index ("segment_ids[1,2] = 7 is out of range").
std::string element_index(const Shape& shape, int64_t flat);

// "[1,2,3]" — for messages.
std::string ints_to_string(const std::vector<int64_t>& v);

}  // namespace tagflow::ops
