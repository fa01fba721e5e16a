// DT_VARIANT elements in TensorProtos: TensorFlow stores each as a
// VariantTensorDataProto — a type name, metadata bytes and tensors. tagflow
// reads and writes its two variant values: "tensorflow::TensorList" (the
// metadata is the varint count and indices of unset elements, the varint
// element dtype and bound, then the element shape as a TensorShapeProto;
// the tensors are the set elements) and "tensorflow::data::Optional" (the
// metadata one byte, has-value; the tensors its components). An empty
// proto is a null element; any other type name is unimplemented.
// Stateless; thread-safe.
#pragma once

#include "ops/status.hpp"
#include "ops/tensor.hpp"

namespace tensorflow {
class TensorProto;
class VariantTensorDataProto;
}

namespace tagflow::graph {
inline namespace io {

// How deep variant constants may nest (a list of lists ...).
inline constexpr int kMaxVariantProtoDepth = 16;

// Fills the n elements of the variant tensor `t` from p.variant_val (fewer
// values than elements repeat the last; none leave them null). `depth`:
// how many variant values hold `p`.
ops::Status variants_from_proto(const tensorflow::TensorProto& p, int64_t n, ops::Tensor& t, int depth);
void variant_to_proto(const ops::VariantPtr& v, tensorflow::VariantTensorDataProto* p);

// tensor_from_proto for a tensor that `depth` variant values hold.
ops::Expected<ops::Tensor> tensor_from_proto_at(const tensorflow::TensorProto& p, int depth);

}  // namespace io
}  // namespace tagflow::graph
