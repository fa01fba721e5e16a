// The math op family, split by concept over several files of ops/:
// elementwise binary ops in math_ops.cpp, unary functions and their
// gradients in unary_ops.cpp, AddN in add_n_op.cpp, Select/SelectV2 in
// select_ops.cpp, Cast in cast_op.cpp, reductions and ArgMax/ArgMin in
// reduction_ops.cpp, MatMul and BatchMatMul in matmul_ops.cpp,
// UnsortedSegmentSum (and DynamicStitch, which places rows by index too) in
// segment_ops.cpp, RandomUniform and the normals in random_ops.cpp.
// register_math_ops (op_def.hpp) calls the parts declared here. The nn
// family (register_nn_ops, nn_ops.cpp) has its softmax cross-entropy losses
// in softmax_xent_ops.cpp and TopKV2 and NearestNeighbors in topk_ops.cpp.
// Internal to ops/.
#pragma once

#include <vector>

#include "ops/op_def.hpp"

namespace tagflow::ops {

void register_unary_ops(OpRegistry& r);
void register_add_n_op(OpRegistry& r);
void register_select_ops(OpRegistry& r);
void register_cast_op(OpRegistry& r);
void register_reduction_ops(OpRegistry& r);
void register_matmul_ops(OpRegistry& r);
void register_segment_ops(OpRegistry& r);
void register_random_ops(OpRegistry& r);
void register_softmax_xent_ops(OpRegistry& r);
void register_topk_ops(OpRegistry& r);

// The allowed-type lists of the math and nn ops: TensorFlow's lists cut
// down to what tagflow computes.
inline std::vector<DType> real_types() {
  return {DType::float32, DType::float64, DType::int32, DType::int64};
}
inline std::vector<DType> float_types() { return {DType::float32, DType::float64}; }
inline std::vector<DType> real_and_bool_types() {
  return {DType::float32, DType::float64, DType::int32, DType::int64, DType::boolean};
}

}  // namespace tagflow::ops
