#include "graph/io/variant_proto.hpp"

#include <fmt/format.h>

#include "graph/io/tensor_proto.hpp"
#include "graph/proto/graph_def.pb.h"
#include "ops/variant.hpp"

namespace tagflow::graph {
inline namespace io {

using ops::DType;
using ops::Error;
using ops::Expected;
using ops::Status;
using ops::Tensor;

namespace {

constexpr char kListType[] = "tensorflow::TensorList";
constexpr char kOptionalType[] = "tensorflow::data::Optional";

void put_varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool get_varint(const std::string& s, size_t* pos, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= s.size()) return false;
    auto byte = static_cast<unsigned char>(s[(*pos)++]);
    *v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

Status bad(const std::string& what) {
  return Status(Error::invalid_argument, "variant element " + what);
}

Expected<ops::VariantPtr> list_from_proto(const tensorflow::VariantTensorDataProto& p, int depth) {
  const std::string& m = p.metadata();
  size_t pos = 0;
  uint64_t num_unset = 0;
  if (!get_varint(m, &pos, &num_unset) || num_unset > m.size())
    return bad("TensorList metadata: bad count of unset elements");
  const uint64_t total = num_unset + static_cast<uint64_t>(p.tensors_size());
  std::vector<bool> unset(total, false);
  uint64_t previous = 0;
  for (uint64_t i = 0; i < num_unset; ++i) {
    uint64_t index = 0;
    if (!get_varint(m, &pos, &index) || index >= total || (i > 0 && index <= previous))
      return bad("TensorList metadata: bad index of an unset element");
    unset[index] = true;
    previous = index;
  }
  uint64_t dtype_number = 0, bound = 0;
  if (!get_varint(m, &pos, &dtype_number) || !get_varint(m, &pos, &bound))
    return bad("TensorList metadata is truncated");
  const auto dtype = static_cast<DType>(static_cast<int>(dtype_number));
  if (dtype_number == 0 || dtype_number > 32 || !ops::is_known_dtype_number(static_cast<int>(dtype_number)))
    return bad(fmt::format("TensorList has element dtype number {}", dtype_number));
  const auto max_num_elements = static_cast<int64_t>(static_cast<int32_t>(bound));
  if (max_num_elements < -1) return bad(fmt::format("TensorList has bound {}", max_num_elements));
  tensorflow::TensorShapeProto shape_proto;
  if (!shape_proto.ParseFromArray(m.data() + pos, static_cast<int>(m.size() - pos)))
    return bad("TensorList metadata: bad element shape");
  ops::PartialShape shape = shape_from_proto(shape_proto);
  if (!shape.unknown_rank && shape.dims.size() > static_cast<size_t>(ops::Shape::kMaxRank))
    return bad("TensorList element shape " + shape.to_string() + " has too many dimensions");
  auto list = std::make_shared<ops::TensorList>(dtype, shape, max_num_elements);
  list->elements.resize(total);
  int next = 0;
  for (uint64_t i = 0; i < total; ++i) {
    if (unset[i]) continue;
    auto e = tensor_from_proto_at(p.tensors(next++), depth + 1);
    if (!e.ok()) return e.status().with_prefix(fmt::format("TensorList element {}: ", i));
    if (e->dtype() != dtype || !ops::shape_compatible(shape, e->shape()))
      return bad(fmt::format("TensorList element {} is {}{}, in a list of {} {}", i, ops::dtype_name(e->dtype()),
                             e->shape().to_string(), ops::dtype_name(dtype), shape.to_string()));
    list->elements[i] = std::move(e).value();
  }
  return ops::VariantPtr(std::move(list));
}

Expected<ops::VariantPtr> optional_from_proto(const tensorflow::VariantTensorDataProto& p, int depth) {
  const bool has_value = !p.metadata().empty() && p.metadata()[0] != 0;
  if (!has_value) {
    if (p.tensors_size() > 0) return bad("Optional without a value has tensors");
    return ops::VariantPtr(std::make_shared<ops::OptionalValue>());
  }
  std::vector<Tensor> components;
  for (int i = 0; i < p.tensors_size(); ++i) {
    auto c = tensor_from_proto_at(p.tensors(i), depth + 1);
    if (!c.ok()) return c.status().with_prefix(fmt::format("Optional component {}: ", i));
    components.push_back(std::move(c).value());
  }
  return ops::VariantPtr(std::make_shared<ops::OptionalValue>(std::move(components)));
}

Expected<ops::VariantPtr> value_from_proto(const tensorflow::VariantTensorDataProto& p, int depth) {
  if (p.type_name() == kListType) return list_from_proto(p, depth);
  if (p.type_name() == kOptionalType) return optional_from_proto(p, depth);
  if (p.type_name().empty() && p.metadata().empty() && p.tensors_size() == 0) return ops::VariantPtr();
  return Status(Error::unimplemented,
                "variant constants holding '" + p.type_name() + "' are not supported (only " + kListType +
                    " and " + kOptionalType + ")");
}

}  // namespace

Status variants_from_proto(const tensorflow::TensorProto& p, int64_t n, Tensor& t, int depth) {
  if (p.variant_val_size() == 0 || n == 0) return ops::ok_status();
  if (depth >= kMaxVariantProtoDepth)
    return bad(fmt::format("values nest deeper than {}", kMaxVariantProtoDepth));
  ops::VariantPtr* out = t.mutable_data<ops::VariantPtr>();
  const int64_t m = std::min<int64_t>(p.variant_val_size(), n);
  for (int64_t i = 0; i < m; ++i) {
    auto v = value_from_proto(p.variant_val(static_cast<int>(i)), depth);
    if (!v.ok()) return v.status();
    out[i] = std::move(v).value();
  }
  for (int64_t i = m; i < n; ++i) out[i] = out[m - 1];
  return ops::ok_status();
}

void variant_to_proto(const ops::VariantPtr& v, tensorflow::VariantTensorDataProto* p) {
  p->Clear();
  if (v == nullptr) return;
  if (v->kind() == ops::VariantValue::Kind::optional) {
    const auto& o = static_cast<const ops::OptionalValue&>(*v);
    p->set_type_name(kOptionalType);
    p->set_metadata(std::string(1, o.has_value ? '\1' : '\0'));
    for (const Tensor& c : o.components) tensor_to_proto(c, p->add_tensors());
    return;
  }
  const auto& l = static_cast<const ops::TensorList&>(*v);
  p->set_type_name(kListType);
  std::string metadata;
  uint64_t num_unset = 0;
  for (const Tensor& e : l.elements) num_unset += e.valid() ? 0 : 1;
  put_varint(&metadata, num_unset);
  for (size_t i = 0; i < l.elements.size(); ++i)
    if (!l.elements[i].valid()) put_varint(&metadata, i);
  put_varint(&metadata, static_cast<uint64_t>(static_cast<int>(l.element_dtype)));
  put_varint(&metadata, static_cast<uint64_t>(l.max_num_elements));
  tensorflow::TensorShapeProto shape;
  shape_to_proto(l.element_shape, &shape);
  shape.AppendToString(&metadata);
  p->set_metadata(metadata);
  for (const Tensor& e : l.elements)
    if (e.valid()) tensor_to_proto(e, p->add_tensors());
}

}  // namespace io
}  // namespace tagflow::graph
