// The array op family (TensorFlow's array_ops.cc): the pieces shared by its
// files. register_array_ops (op_def.hpp) registers the whole family; it is
// split by concept into array_ops.cpp (constants, placeholders, identities,
// reshapes, fills, Range), shape_ops.cpp (Shape, ShapeN, Size, Rank and the
// shape arithmetic of gradients: BroadcastGradientArgs, ConcatOffset,
// InvertPermutation), array_layout_ops.cpp (Transpose, ConcatV2, Split,
// SplitV, Pack, Unpack, Tile, BroadcastTo), array_slice_ops.cpp (Slice,
// StridedSlice, StridedSliceGrad), array_gather_ops.cpp (GatherV2,
// OneHot), pad_ops.cpp (Pad, PadV2), reverse_sequence_op.cpp
// (ReverseSequence), list_ops.cpp (the TensorList ops) and optional_ops.cpp
// (the Optional ops).
// StridedSlice, StridedSliceGrad), array_gather_ops.cpp (GatherV2, Gather,
// GatherNd, OneHot), scatter_nd_op.cpp (ScatterNd), unique_op.cpp (Unique),
// reverse_op.cpp (ReverseV2), linspace_empty_ops.cpp (LinSpace, Empty),
// pad_ops.cpp (Pad, PadV2) and reverse_sequence_op.cpp (ReverseSequence).
// The family's registration also brings in ScalarSummary (summary_ops.cpp)
// and the tf.Example parsing ops (parse_example_ops.cpp), which like the
// array ops only rearrange values.
// Kernels are immutable after creation; compute() is const and reentrant.
#pragma once

#include <memory>
#include <vector>

#include "ops/op_def.hpp"

namespace tagflow::ops {

void register_shape_ops(OpRegistry& r);
void register_array_layout_ops(OpRegistry& r);
void register_array_slice_ops(OpRegistry& r);
void register_array_gather_ops(OpRegistry& r);
void register_pad_ops(OpRegistry& r);
void register_reverse_sequence_op(OpRegistry& r);
void register_list_ops(OpRegistry& r);      // list_ops.cpp: TensorList*
void register_optional_ops(OpRegistry& r);  // optional_ops.cpp: Optional*
void register_scatter_nd_op(OpRegistry& r);
void register_reverse_op(OpRegistry& r);
void register_linspace_empty_ops(OpRegistry& r);
void register_unique_op(OpRegistry& r);
void register_summary_ops(OpRegistry& r);
// parse_example_ops.cpp: ParseExample, ParseExampleV2, ParseSingleExample.
void register_parsing_ops(OpRegistry& r);

// The dtypes TensorFlow allows for shape, axis and perm arguments.
inline const std::vector<DType>& index_dtypes() {
  static const std::vector<DType> kTypes = {DType::int32, DType::int64};
  return kTypes;
}

// A factory for a kernel class K with `Status init(const KernelInit&)`,
// which reads the node's attrs once.
template <class K>
KernelFactory make_kernel_factory() {
  return [](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    auto k = std::make_unique<K>();
    TF_RETURN_IF_ERROR(k->init(init));
    return std::unique_ptr<Kernel>(std::move(k));
  };
}

}  // namespace tagflow::ops
