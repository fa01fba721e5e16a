#include "graph/io/tensor_proto.hpp"

#include <algorithm>
#include <cstring>

#include "graph/io/variant_proto.hpp"
#include "graph/proto/graph_def.pb.h"

namespace tagflow::graph {
inline namespace io {

using ops::DType;
using ops::Error;
using ops::Expected;
using ops::Status;
using ops::Tensor;

namespace {

// A GraphDef constant may say `float_val: 0` with a huge shape; refuse
// tensors whose storage would exceed this rather than die allocating it.
constexpr int64_t kMaxTensorBytes = int64_t{1} << 30;

// The newer 1-byte types TensorFlow numbers after uint64.
bool is_float8(DType t) {
  int n = static_cast<int>(t);
  return n >= 24 && n <= 28;
}
bool is_small_int(DType t) {  // int4, uint4, int2, uint2: one byte per element
  int n = static_cast<int>(t);
  return n >= 29 && n <= 32;
}

template <class S>
void store(void* base, int64_t i, S v) {
  std::memcpy(static_cast<char*>(base) + i * static_cast<int64_t>(sizeof(S)), &v, sizeof(S));
}

// TensorFlow's FromProtoField: the first min(n, in_n) values, then the
// last value repeated; no values leave the zero fill of a new tensor.
template <class S, class Get>
void fill_n(int64_t in_n, int64_t n, void* out, Get get) {
  if (in_n <= 0 || n == 0) return;
  int64_t m = std::min(in_n, n);
  for (int64_t i = 0; i < m; ++i) store<S>(out, i, get(i));
  S last = get(m - 1);
  for (int64_t i = m; i < n; ++i) store<S>(out, i, last);
}

template <class S, class Field>
void fill_cast(const Field& field, int64_t n, void* out) {
  fill_n<S>(field.size(), n, out,
            [&](int64_t i) { return static_cast<S>(field.Get(static_cast<int>(i))); });
}

// complex values come as (re, im) pairs in one repeated field.
template <class C, class Field>
void fill_complex(const Field& field, int64_t n, void* out) {
  fill_n<C>(field.size() / 2, n, out, [&](int64_t i) {
    return C(field.Get(static_cast<int>(2 * i)), field.Get(static_cast<int>(2 * i + 1)));
  });
}

void fill_strings(const std::vector<std::string>& in, int64_t n, std::string* out) {
  if (in.empty()) return;
  int64_t m = std::min(static_cast<int64_t>(in.size()), n);
  for (int64_t i = 0; i < m; ++i) out[i] = in[static_cast<size_t>(i)];
  for (int64_t i = m; i < n; ++i) out[i] = in[static_cast<size_t>(m - 1)];
}

template <class Repeated>
std::vector<std::string> serialize_each(const Repeated& field) {
  std::vector<std::string> out;
  out.reserve(static_cast<size_t>(field.size()));
  for (const auto& m : field) out.push_back(m.SerializeAsString());
  return out;
}

// TensorFlow's encoding of a string tensor in tensor_content: the varint
// lengths of all elements, then their bytes.
Status decode_string_content(const std::string& content, int64_t n, std::string* out) {
  size_t pos = 0;
  std::vector<uint64_t> lengths(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    uint64_t len = 0;
    int shift = 0;
    for (;;) {
      if (pos >= content.size() || shift > 63)
        return Status(Error::invalid_argument, "string tensor_content is truncated");
      auto byte = static_cast<unsigned char>(content[pos++]);
      len |= static_cast<uint64_t>(byte & 0x7f) << shift;
      shift += 7;
      if ((byte & 0x80) == 0) break;
    }
    lengths[static_cast<size_t>(i)] = len;
  }
  for (int64_t i = 0; i < n; ++i) {
    uint64_t len = lengths[static_cast<size_t>(i)];
    if (len > content.size() - pos)
      return Status(Error::invalid_argument, "string tensor_content is truncated");
    out[i].assign(content, pos, static_cast<size_t>(len));
    pos += static_cast<size_t>(len);
  }
  if (pos != content.size())
    return Status(Error::invalid_argument, "string tensor_content has trailing bytes");
  return ops::ok_status();
}

Status fill_objects(const tensorflow::TensorProto& p, DType dtype, int64_t n, Tensor& t, int depth) {
  if (dtype == DType::variant) return variants_from_proto(p, n, t, depth);
  auto* out = t.mutable_data<std::string>();
  switch (dtype) {
    case DType::string:
      if (p.string_val_size() == 0 && !p.tensor_content().empty())
        return decode_string_content(p.tensor_content(), n, out);
      fill_strings({p.string_val().begin(), p.string_val().end()}, n, out);
      return ops::ok_status();
    default:  // resource: each element a serialized ResourceHandleProto
      fill_strings(serialize_each(p.resource_handle_val()), n, out);
      return ops::ok_status();
  }
}

void fill_typed(const tensorflow::TensorProto& p, DType dtype, int64_t n, void* out) {
  switch (dtype) {
    case DType::float32: fill_cast<float>(p.float_val(), n, out); return;
    case DType::float64: fill_cast<double>(p.double_val(), n, out); return;
    case DType::int32: case DType::qint32: fill_cast<int32_t>(p.int_val(), n, out); return;
    case DType::uint8: case DType::quint8: fill_cast<uint8_t>(p.int_val(), n, out); return;
    case DType::int8: case DType::qint8: fill_cast<int8_t>(p.int_val(), n, out); return;
    case DType::int16: case DType::qint16: fill_cast<int16_t>(p.int_val(), n, out); return;
    case DType::uint16: case DType::quint16: fill_cast<uint16_t>(p.int_val(), n, out); return;
    case DType::int64: fill_cast<int64_t>(p.int64_val(), n, out); return;
    case DType::uint32: fill_cast<uint32_t>(p.uint32_val(), n, out); return;
    case DType::uint64: fill_cast<uint64_t>(p.uint64_val(), n, out); return;
    case DType::boolean: fill_cast<bool>(p.bool_val(), n, out); return;
    case DType::half: case DType::bfloat16:  // the 16-bit pattern in the low bits
      fill_cast<uint16_t>(p.half_val(), n, out);
      return;
    case DType::complex64: fill_complex<std::complex<float>>(p.scomplex_val(), n, out); return;
    case DType::complex128: fill_complex<std::complex<double>>(p.dcomplex_val(), n, out); return;
    default:
      if (is_small_int(dtype)) fill_cast<uint8_t>(p.int_val(), n, out);
      if (is_float8(dtype)) {  // float8_val is one byte per element
        const std::string& bytes = p.float8_val();
        fill_n<uint8_t>(static_cast<int64_t>(bytes.size()), n, out, [&](int64_t i) {
          return static_cast<uint8_t>(bytes[static_cast<size_t>(i)]);
        });
      }
      return;
  }
}

bool storable(DType t) {
  int n = static_cast<int>(t);
  return n >= 1 && n <= 32;
}

}  // namespace

ops::PartialShape shape_from_proto(const tensorflow::TensorShapeProto& p) {
  ops::PartialShape s;
  s.unknown_rank = p.unknown_rank();
  if (s.unknown_rank) return s;
  s.dims.reserve(static_cast<size_t>(p.dim_size()));
  for (const auto& d : p.dim()) s.dims.push_back(d.size());
  return s;
}

void shape_to_proto(const ops::PartialShape& s, tensorflow::TensorShapeProto* p) {
  p->Clear();
  if (s.unknown_rank) {
    p->set_unknown_rank(true);
    return;
  }
  for (int64_t d : s.dims) p->add_dim()->set_size(d);
}

Expected<Tensor> tensor_from_proto(const tensorflow::TensorProto& p) { return tensor_from_proto_at(p, 0); }

Expected<Tensor> tensor_from_proto_at(const tensorflow::TensorProto& p, int depth) {
  auto dtype = static_cast<DType>(static_cast<int>(p.dtype()));
  if (ops::is_ref(dtype) || !storable(dtype))
    return Status(Error::invalid_argument,
                  "TensorProto has dtype " + ops::dtype_enum_name(dtype) +
                      ", which a tensor cannot have");
  ops::PartialShape partial = shape_from_proto(p.tensor_shape());
  if (partial.unknown_rank)
    return Status(Error::invalid_argument, "TensorProto shape has an unknown rank");
  for (int64_t d : partial.dims)
    if (d < 0)
      return Status(Error::invalid_argument,
                    "TensorProto shape " + partial.to_string() + " has an unknown dimension");
  auto shape = ops::Shape::make(partial.dims);
  if (!shape.ok()) return shape.status().with_prefix("TensorProto: ");
  const int64_t n = shape->num_elements();
  const bool object = ops::dtype_is_object(dtype);
  const int64_t elem = object ? static_cast<int64_t>(sizeof(std::string)) : ops::dtype_size(dtype);
  if (n > kMaxTensorBytes / elem)
    return Status(Error::invalid_argument, "TensorProto of shape " + shape->to_string() +
                                               " is too large (" + std::to_string(n) +
                                               " elements)");

  Tensor t(dtype, *shape);
  if (object) {
    TF_RETURN_IF_ERROR(fill_objects(p, dtype, n, t, depth).with_prefix("TensorProto: "));
    return t;
  }
  const std::string& content = p.tensor_content();
  if (!content.empty()) {
    // Raw little-endian bytes; tagflow only builds for little-endian hosts.
    if (static_cast<int64_t>(content.size()) != n * elem)
      return Status(Error::invalid_argument,
                    "TensorProto tensor_content has " + std::to_string(content.size()) +
                        " bytes but a " + ops::dtype_name(dtype) + " tensor of shape " +
                        shape->to_string() + " needs " + std::to_string(n * elem));
    if (dtype == DType::boolean) {  // any non-zero byte is true
      bool* out = t.mutable_data<bool>();
      for (int64_t i = 0; i < n; ++i) out[i] = content[static_cast<size_t>(i)] != 0;
    } else {
      std::memcpy(t.raw_mutable_data(), content.data(), content.size());
    }
    return t;
  }
  fill_typed(p, dtype, n, t.raw_mutable_data());
  return t;
}

void tensor_to_proto(const Tensor& t, tensorflow::TensorProto* p) {
  p->Clear();
  p->set_dtype(static_cast<tensorflow::DataType>(static_cast<int>(t.dtype())));
  if (!t.valid()) return;
  auto* shape = p->mutable_tensor_shape();
  for (int i = 0; i < t.rank(); ++i) shape->add_dim()->set_size(t.dim(i));
  const int64_t n = t.num_elements();
  switch (ops::base_dtype(t.dtype())) {
    case DType::string:
      for (int64_t i = 0; i < n; ++i) p->add_string_val(t.data<std::string>()[i]);
      return;
    case DType::resource:
      for (int64_t i = 0; i < n; ++i)
        p->add_resource_handle_val()->ParseFromString(t.data<std::string>()[i]);
      return;
    case DType::variant:
      for (int64_t i = 0; i < n; ++i) variant_to_proto(t.data<ops::VariantPtr>()[i], p->add_variant_val());
      return;
    default:
      p->set_tensor_content(static_cast<const char*>(t.raw_data()), t.byte_size());
      return;
  }
}

Expected<ops::AttrValue> attr_from_proto(const tensorflow::AttrValue& p) {
  using tensorflow::AttrValue;
  auto to_dtype = [](int n) -> Expected<DType> {
    if (n != 0 && !ops::is_known_dtype_number(n))
      return Status(Error::invalid_argument,
                    "type value " + std::to_string(n) + " is not a TensorFlow DataType");
    return static_cast<DType>(n);
  };
  switch (p.value_case()) {
    case AttrValue::VALUE_NOT_SET: return ops::AttrValue();
    case AttrValue::kS: return ops::AttrValue(p.s());
    case AttrValue::kI: return ops::AttrValue(int64_t{p.i()});
    case AttrValue::kF: return ops::AttrValue(p.f());
    case AttrValue::kB: return ops::AttrValue(p.b());
    case AttrValue::kType: {
      TF_ASSIGN_OR_RETURN(DType t, to_dtype(p.type()));
      return ops::AttrValue(t);
    }
    case AttrValue::kShape: return ops::AttrValue(shape_from_proto(p.shape()));
    case AttrValue::kTensor: {
      TF_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(p.tensor()));
      return ops::AttrValue(std::move(t));
    }
    case AttrValue::kPlaceholder: return ops::AttrValue(ops::AttrPlaceholder{p.placeholder()});
    case AttrValue::kFunc: {
      ops::NameAttrList f;
      f.name = p.func().name();
      for (const auto& [key, value] : p.func().attr()) {
        auto v = attr_from_proto(value);
        if (!v.ok()) return v.status().with_prefix("func '" + f.name + "' attr '" + key + "': ");
        f.attr.emplace(key, std::move(v).value());
      }
      return ops::AttrValue(std::move(f));
    }
    case AttrValue::kList: break;
  }
  const auto& l = p.list();
  ops::AttrList out;
  out.s.assign(l.s().begin(), l.s().end());
  out.i.assign(l.i().begin(), l.i().end());
  out.f.assign(l.f().begin(), l.f().end());
  out.b.assign(l.b().begin(), l.b().end());
  for (int t : l.type()) {
    TF_ASSIGN_OR_RETURN(DType d, to_dtype(t));
    out.type.push_back(d);
  }
  for (const auto& s : l.shape()) out.shape.push_back(shape_from_proto(s));
  for (const auto& t : l.tensor()) {
    TF_ASSIGN_OR_RETURN(Tensor v, tensor_from_proto(t));
    out.tensor.push_back(std::move(v));
  }
  for (const auto& f : l.func()) {
    tensorflow::AttrValue wrapped;
    *wrapped.mutable_func() = f;
    TF_ASSIGN_OR_RETURN(ops::AttrValue v, attr_from_proto(wrapped));
    out.func.push_back(v.get<ops::NameAttrList>());
  }
  return ops::AttrValue(std::move(out));
}

namespace {

void func_to_proto(const ops::NameAttrList& f, tensorflow::NameAttrList* p) {
  p->set_name(f.name);
  for (const auto& [key, value] : f.attr) attr_to_proto(value, &(*p->mutable_attr())[key]);
}

void list_to_proto(const ops::AttrList& l, tensorflow::AttrValue::ListValue* p) {
  for (const auto& s : l.s) p->add_s(s);
  for (int64_t i : l.i) p->add_i(i);
  for (float f : l.f) p->add_f(f);
  for (bool b : l.b) p->add_b(b);
  for (DType t : l.type) p->add_type(static_cast<tensorflow::DataType>(static_cast<int>(t)));
  for (const auto& s : l.shape) shape_to_proto(s, p->add_shape());
  for (const auto& t : l.tensor) tensor_to_proto(t, p->add_tensor());
  for (const auto& f : l.func) func_to_proto(f, p->add_func());
}

}  // namespace

void attr_to_proto(const ops::AttrValue& v, tensorflow::AttrValue* p) {
  p->Clear();
  struct Visitor {
    tensorflow::AttrValue* p;
    void operator()(std::monostate) const {}
    void operator()(const ops::AttrList& l) const { list_to_proto(l, p->mutable_list()); }
    void operator()(const std::string& s) const { p->set_s(s); }
    void operator()(int64_t i) const { p->set_i(i); }
    void operator()(float f) const { p->set_f(f); }
    void operator()(bool b) const { p->set_b(b); }
    void operator()(DType t) const {
      p->set_type(static_cast<tensorflow::DataType>(static_cast<int>(t)));
    }
    void operator()(const ops::PartialShape& s) const { shape_to_proto(s, p->mutable_shape()); }
    void operator()(const Tensor& t) const { tensor_to_proto(t, p->mutable_tensor()); }
    void operator()(const ops::NameAttrList& f) const { func_to_proto(f, p->mutable_func()); }
    void operator()(const ops::AttrPlaceholder& ph) const { p->set_placeholder(ph.name); }
  };
  v.visit(Visitor{p});
}

}  // namespace io
}  // namespace tagflow::graph
