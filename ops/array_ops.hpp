// The array op family (TensorFlow's array_ops.cc): the registration
// functions of its files, which register_array_ops (op_def.hpp) calls.
// It is split by concept into array_ops.cpp (constants, placeholders,
// identities, reshapes, fills, Range), shape_ops.cpp (Shape, ShapeN, Size,
// Rank and the shape arithmetic of gradients: BroadcastGradientArgs,
// ConcatOffset, InvertPermutation), array_layout_ops.cpp (Transpose,
// ConcatV2, Split, SplitV, Pack, Unpack, Tile, BroadcastTo),
// array_slice_ops.cpp (Slice, StridedSlice, StridedSliceGrad),
// array_gather_ops.cpp (GatherV2, Gather, GatherNd, OneHot),
// scatter_nd_op.cpp (ScatterNd), unique_op.cpp (Unique), reverse_op.cpp
// (ReverseV2), linspace_empty_ops.cpp (LinSpace, Empty), pad_ops.cpp (Pad,
// PadV2), reverse_sequence_op.cpp (ReverseSequence), list_ops.cpp (the
// TensorList ops) and optional_ops.cpp (the Optional ops). The family's
// registration also brings in ScalarSummary (summary_ops.cpp) and the
// tf.Example parsing ops (parse_example_ops.cpp), which like the array ops
// only rearrange values. The helpers of defining an op are in
// kernel_factory.hpp.
#pragma once

#include "ops/op_def.hpp"

namespace tagflow::ops {

void register_shape_ops(OpRegistry& r);
void register_array_layout_ops(OpRegistry& r);
void register_array_slice_ops(OpRegistry& r);
void register_array_gather_ops(OpRegistry& r);
void register_pad_ops(OpRegistry& r);
void register_reverse_sequence_op(OpRegistry& r);
void register_list_ops(OpRegistry& r);      // list_ops.cpp: TensorList* on elements
void register_list_tensor_ops(OpRegistry& r);  // list_tensor_ops.cpp: lists and whole tensors
void register_optional_ops(OpRegistry& r);  // optional_ops.cpp: Optional*
void register_scatter_nd_op(OpRegistry& r);
void register_reverse_op(OpRegistry& r);
void register_linspace_empty_ops(OpRegistry& r);
void register_unique_op(OpRegistry& r);
void register_summary_ops(OpRegistry& r);
// parse_example_ops.cpp: ParseExample, ParseExampleV2, ParseSingleExample.
void register_parsing_ops(OpRegistry& r);
// audio_ops.cpp: DecodeWav, EncodeWav, AudioSpectrogram, Mfcc.
void register_audio_ops(OpRegistry& r);
// image_ops.cpp: DecodeJpeg, DecodePng, DecodeImage, EncodePng, ResizeBilinear,
// ResizeNearestNeighbor and their gradients' kernels.
void register_image_ops(OpRegistry& r);
// lookup_ops.cpp: HashTableV2, MutableHashTableV2 and the LookupTable* ops.
void register_lookup_ops(OpRegistry& r);
// The string family beyond string_ops.cpp, registered by register_string_ops:
// string_split_ops.cpp (StringSplit, StringSplitV2, ReduceJoin, Substr) and
// string_convert_ops.cpp (AsString, StringToNumber).
void register_string_split_ops(OpRegistry& r);
void register_string_convert_ops(OpRegistry& r);

}  // namespace tagflow::ops
