// Conversion between TensorProto / AttrValue protos and ops::Tensor /
// ops::AttrValue, following TensorFlow's rules: a non-empty tensor_content
// (little-endian) wins; otherwise the typed *_val field, where fewer values
// than elements repeat the last one and no values mean zeros.
#pragma once

#include "ops/attr_value.hpp"
#include "ops/tensor.hpp"

namespace tensorflow {
class TensorProto;
class AttrValue;
class TensorShapeProto;
}

namespace tagflow::graph {

ops::Expected<ops::Tensor> tensor_from_proto(const tensorflow::TensorProto& p);
// Writes tensor_content for fixed-size dtypes, string_val for strings.
void tensor_to_proto(const ops::Tensor& t, tensorflow::TensorProto* p);

ops::Expected<ops::AttrValue> attr_from_proto(const tensorflow::AttrValue& p);
void attr_to_proto(const ops::AttrValue& v, tensorflow::AttrValue* p);

ops::PartialShape shape_from_proto(const tensorflow::TensorShapeProto& p);
void shape_to_proto(const ops::PartialShape& s, tensorflow::TensorShapeProto* p);

}  // namespace tagflow::graph
