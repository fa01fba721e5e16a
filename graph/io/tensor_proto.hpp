// Conversion between TensorProto / AttrValue protos and ops::Tensor /
// ops::AttrValue, following TensorFlow's rules (tensor.cc FromProtoField): a
// non-empty tensor_content (little-endian; its size must be elements x
// dtype size) wins; otherwise the typed *_val field of the dtype, where
// fewer values than elements repeat the last one, no values mean zeros and
// extra values are dropped. A shape with an unknown dimension or rank, a
// ref or unknown dtype, or more than 1 GiB of elements is an error.
// Resource elements are kept as the serialized ResourceHandleProto;
// variant elements are TensorLists and Optionals read from and written as
// VariantTensorDataProtos (graph/io/variant_proto.hpp). Stateless; thread-safe.
#pragma once

#include "ops/attr_value.hpp"
#include "ops/tensor.hpp"

namespace tensorflow {
class TensorProto;
class AttrValue;
class TensorShapeProto;
}

namespace tagflow::graph {
inline namespace io {

ops::Expected<ops::Tensor> tensor_from_proto(const tensorflow::TensorProto& p);
// Writes tensor_content for fixed-size dtypes, string_val for strings.
void tensor_to_proto(const ops::Tensor& t, tensorflow::TensorProto* p);

ops::Expected<ops::AttrValue> attr_from_proto(const tensorflow::AttrValue& p);
void attr_to_proto(const ops::AttrValue& v, tensorflow::AttrValue* p);

ops::PartialShape shape_from_proto(const tensorflow::TensorShapeProto& p);
void shape_to_proto(const ops::PartialShape& s, tensorflow::TensorShapeProto* p);

}  // namespace io
}  // namespace tagflow::graph
