#include "ops/tensor_wire.hpp"

#include <fmt/format.h>

#include <cstring>
#include <limits>

#include "ops/variant.hpp"

namespace tagflow::ops {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the tensor wire format stores numbers as the host does: little-endian");

namespace {

template <class T>
void put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

uint64_t variant_element_size(const VariantPtr& v);

// The payload bytes of a valid tensor.
uint64_t payload_size(const Tensor& t) {
  if (!dtype_is_object(t.dtype())) return t.byte_size();
  uint64_t n = 0;
  if (base_dtype(t.dtype()) == DType::variant) {
    const VariantPtr* v = t.data<VariantPtr>();
    for (int64_t i = 0; i < t.num_elements(); ++i) n += variant_element_size(v[i]);
    return n;
  }
  const std::string* s = t.data<std::string>();
  for (int64_t i = 0; i < t.num_elements(); ++i) n += sizeof(uint64_t) + s[i].size();
  return n;
}

// Reads the wire form from a string_view, keeping the offset for errors.
class Reader {
 public:
  Reader(std::string_view bytes, size_t offset) : bytes_(bytes), start_(offset) {}

  template <class T>
  Status get(T* v, const char* what) {
    if (bytes_.size() - pos_ < sizeof(T))
      return malformed(fmt::format("it ends inside its {} ({} of {} bytes left)", what, bytes_.size() - pos_,
                                   sizeof(T)));
    std::memcpy(v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return ok_status();
  }
  std::string_view take(size_t n) {
    std::string_view s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  size_t left() const { return bytes_.size() - pos_; }
  size_t pos() const { return pos_; }
  // What is left, and where it starts in the whole message.
  std::string_view rest() const { return bytes_.substr(pos_); }
  size_t offset() const { return start_ + pos_; }
  void skip(size_t n) { pos_ += n; }

  Status malformed(const std::string& what) const {
    return Status(Error::parse_error,
                  fmt::format("malformed tensor on the wire at byte {}: {}", start_ + pos_, what));
  }

 private:
  std::string_view bytes_;
  size_t start_;
  size_t pos_ = 0;
};

}  // namespace

size_t tensor_wire_size(const Tensor& t) {
  size_t n = sizeof(uint8_t) + sizeof(uint32_t);
  if (!t.valid()) return n;
  return n + sizeof(uint8_t) + sizeof(int64_t) * static_cast<size_t>(t.rank()) + sizeof(uint64_t) +
         payload_size(t);
}

namespace {

// One variant element on the wire (docs/protocol.md, "Variant tensors"):
// a kind byte (0: null), then a list's element dtype, element shape, bound
// and elements (each a present byte and, if present, a nested tensor), or
// an optional's has-value byte and components (nested tensors).
constexpr uint8_t kUnknownRank = 0xff;

uint64_t tensors_wire_size(const std::vector<Tensor>& ts, bool flags) {
  uint64_t n = sizeof(uint64_t);
  for (const Tensor& t : ts) n += (flags ? sizeof(uint8_t) : 0) + (t.valid() || !flags ? tensor_wire_size(t) : 0);
  return n;
}

uint64_t variant_element_size(const VariantPtr& v) {
  uint64_t n = sizeof(uint8_t);
  if (v == nullptr) return n;
  if (v->kind() == VariantValue::Kind::tensor_list) {
    const auto& l = static_cast<const TensorList&>(*v);
    const uint64_t rank = l.element_shape.unknown_rank ? 0 : l.element_shape.dims.size();
    return n + sizeof(uint32_t) + sizeof(uint8_t) + rank * sizeof(int64_t) + sizeof(int64_t) +
           tensors_wire_size(l.elements, true);
  }
  const auto& o = static_cast<const OptionalValue&>(*v);
  return n + sizeof(uint8_t) + tensors_wire_size(o.components, false);
}

void append_wire(const Tensor& t, std::string* out, bool detached);

void append_variant_element(const VariantPtr& v, std::string* out) {
  if (v == nullptr) {
    put<uint8_t>(out, 0);
    return;
  }
  put<uint8_t>(out, static_cast<uint8_t>(v->kind()));
  if (v->kind() == VariantValue::Kind::tensor_list) {
    const auto& l = static_cast<const TensorList&>(*v);
    put<uint32_t>(out, static_cast<uint32_t>(l.element_dtype));
    put<uint8_t>(out, l.element_shape.unknown_rank ? kUnknownRank : static_cast<uint8_t>(l.element_shape.dims.size()));
    if (!l.element_shape.unknown_rank)
      for (int64_t d : l.element_shape.dims) put<int64_t>(out, d);
    put<int64_t>(out, l.max_num_elements);
    put<uint64_t>(out, l.elements.size());
    for (const Tensor& e : l.elements) {
      put<uint8_t>(out, e.valid() ? 1 : 0);
      if (e.valid()) append_wire(e, out, false);
    }
    return;
  }
  const auto& o = static_cast<const OptionalValue&>(*v);
  put<uint8_t>(out, o.has_value ? 1 : 0);
  put<uint64_t>(out, o.components.size());
  for (const Tensor& c : o.components) append_wire(c, out, false);
}

// The wire form; without the payload of a fixed-size tensor if `detached`.
void append_wire(const Tensor& t, std::string* out, bool detached) {
  out->reserve(out->size() + tensor_wire_size(t) - (detached ? detached_payload_size(t) : 0));
  put<uint8_t>(out, kTensorWireVersion);
  if (!t.valid()) {
    put<uint32_t>(out, 0);
    return;
  }
  put<uint32_t>(out, static_cast<uint32_t>(t.dtype()));
  put<uint8_t>(out, static_cast<uint8_t>(t.rank()));
  for (int i = 0; i < t.rank(); ++i) put<int64_t>(out, t.dim(i));
  put<uint64_t>(out, payload_size(t));
  if (!dtype_is_object(t.dtype())) {
    if (t.byte_size() > 0 && !detached) out->append(static_cast<const char*>(t.raw_data()), t.byte_size());
    return;
  }
  if (base_dtype(t.dtype()) == DType::variant) {
    const VariantPtr* v = t.data<VariantPtr>();
    for (int64_t i = 0; i < t.num_elements(); ++i) append_variant_element(v[i], out);
    return;
  }
  const std::string* s = t.data<std::string>();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    put<uint64_t>(out, s[i].size());
    out->append(s[i]);
  }
}

}  // namespace

void append_tensor_wire(const Tensor& t, std::string* out) { append_wire(t, out, false); }
void append_tensor_wire_head(const Tensor& t, std::string* out) { append_wire(t, out, true); }

size_t detached_payload_size(const Tensor& t) {
  return t.valid() && !dtype_is_object(t.dtype()) ? t.byte_size() : 0;
}

std::string encode_tensor_wire(const Tensor& t) {
  std::string out;
  append_tensor_wire(t, &out);
  return out;
}

namespace {

Expected<Tensor> read_wire(std::string_view* bytes, int64_t max_bytes, size_t offset, uint64_t* detached,
                           TensorWireHead* described = nullptr, int depth = 0);

// A nested tensor of a variant element, read from r's rest.
Expected<Tensor> read_nested(Reader& r, int64_t max_bytes, int depth) {
  std::string_view rest = r.rest();
  TF_ASSIGN_OR_RETURN(Tensor t, read_wire(&rest, max_bytes, r.offset(), nullptr, nullptr, depth + 1));
  r.skip(r.left() - rest.size());
  return t;
}

Status read_list(Reader& r, int64_t max_bytes, int depth, VariantPtr* out) {
  uint32_t number = 0;
  TF_RETURN_IF_ERROR(r.get(&number, "list element dtype"));
  const DType dtype = static_cast<DType>(number);
  if (number == 0 || number > static_cast<uint32_t>(std::numeric_limits<int>::max()) ||
      !is_known_dtype_number(static_cast<int>(number)) || is_ref(dtype) ||
      !(dtype_is_object(dtype) || dtype_size(dtype) > 0))
    return r.malformed(fmt::format("list element dtype number {} is not one a tensor can have", number));
  uint8_t rank = 0;
  TF_RETURN_IF_ERROR(r.get(&rank, "list element rank"));
  PartialShape shape{rank == kUnknownRank, {}};
  if (!shape.unknown_rank) {
    if (rank > Shape::kMaxRank)
      return r.malformed(fmt::format("list element rank {} is over the largest, {}", rank, Shape::kMaxRank));
    shape.dims.resize(rank);
    for (int64_t& d : shape.dims) {
      TF_RETURN_IF_ERROR(r.get(&d, "list element shape"));
      if (d < -1) return r.malformed(fmt::format("list element dimension {} is below -1 (unknown)", d));
    }
  }
  int64_t max_num_elements = 0;
  TF_RETURN_IF_ERROR(r.get(&max_num_elements, "list bound"));
  if (max_num_elements < -1)
    return r.malformed(fmt::format("list bound {} is below -1 (none)", max_num_elements));
  uint64_t count = 0;
  TF_RETURN_IF_ERROR(r.get(&count, "list length"));
  if (count > r.left())  // every element takes at least its present byte
    return r.malformed(fmt::format("a list of {} elements in {} bytes", count, r.left()));
  auto list = std::make_shared<TensorList>(dtype, std::move(shape), max_num_elements);
  list->elements.resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    uint8_t present = 0;
    TF_RETURN_IF_ERROR(r.get(&present, "list element's present flag"));
    if (present > 1) return r.malformed(fmt::format("list element {} has present flag {}", i, present));
    if (present == 0) continue;
    TF_ASSIGN_OR_RETURN(Tensor e, read_nested(r, max_bytes, depth));
    if (!e.valid() || e.dtype() != dtype || !shape_compatible(list->element_shape, e.shape()))
      return r.malformed(fmt::format("list element {} is {}, in a list of {} {}", i,
                                     e.valid() ? dtype_name(e.dtype()) + e.shape().to_string() : "an invalid tensor",
                                     dtype_name(dtype), list->element_shape.to_string()));
    list->elements[i] = std::move(e);
  }
  *out = std::move(list);
  return ok_status();
}

Status read_optional(Reader& r, int64_t max_bytes, int depth, VariantPtr* out) {
  uint8_t has_value = 0;
  TF_RETURN_IF_ERROR(r.get(&has_value, "optional's has-value flag"));
  uint64_t count = 0;
  TF_RETURN_IF_ERROR(r.get(&count, "optional's component count"));
  if (has_value > 1 || (has_value == 0) != (count == 0))
    return r.malformed(fmt::format("an optional with has-value flag {} and {} components", has_value, count));
  if (count > r.left() / 5)  // a tensor takes at least 5 bytes
    return r.malformed(fmt::format("an optional of {} components in {} bytes", count, r.left()));
  std::vector<Tensor> components(count);
  for (uint64_t i = 0; i < count; ++i) {
    TF_ASSIGN_OR_RETURN(components[i], read_nested(r, max_bytes, depth));
    if (!components[i].valid()) return r.malformed(fmt::format("optional component {} is an invalid tensor", i));
  }
  *out = has_value ? std::make_shared<OptionalValue>(std::move(components)) : std::make_shared<OptionalValue>();
  return ok_status();
}

Status read_variant_element(Reader& r, int64_t max_bytes, int depth, VariantPtr* out) {
  uint8_t kind = 0;
  TF_RETURN_IF_ERROR(r.get(&kind, "variant kind"));
  switch (kind) {
    case 0: return ok_status();
    case static_cast<uint8_t>(VariantValue::Kind::tensor_list): return read_list(r, max_bytes, depth, out);
    case static_cast<uint8_t>(VariantValue::Kind::optional): return read_optional(r, max_bytes, depth, out);
    default: return r.malformed(fmt::format("variant kind {} is not one tagflow knows", kind));
  }
}

// read_tensor_wire; with `detached` (a head), a fixed-size payload is not
// in *bytes: at most *detached bytes may follow, and *detached is set to
// the payload to copy into the tensor (0 if none). With `described` too, a
// fixed-size tensor is not allocated: its dtype and shape go there.
// `depth`: how many variant values hold this tensor.
Expected<Tensor> read_wire(std::string_view* bytes, int64_t max_bytes, size_t offset, uint64_t* detached,
                           TensorWireHead* described, int depth) {
  Reader r(*bytes, offset);
  if (depth > kMaxVariantWireDepth)
    return r.malformed(fmt::format("variant values nest deeper than {}", kMaxVariantWireDepth));
  uint8_t version = 0;
  TF_RETURN_IF_ERROR(r.get(&version, "format version"));
  if (version != kTensorWireVersion)
    return r.malformed(fmt::format("format version {}, this tagflow reads version {}", version,
                                   kTensorWireVersion));
  uint32_t number = 0;
  TF_RETURN_IF_ERROR(r.get(&number, "dtype"));
  Tensor out;
  if (number != 0) {
    const DType dtype = static_cast<DType>(number);
    const bool known = number <= std::numeric_limits<int>::max() &&
                       is_known_dtype_number(static_cast<int>(number)) &&
                       (dtype_is_object(dtype) || dtype_size(base_dtype(dtype)) > 0);
    if (!known) return r.malformed(fmt::format("dtype number {} is not one tagflow knows", number));
    uint8_t rank = 0;
    TF_RETURN_IF_ERROR(r.get(&rank, "rank"));
    if (rank > Shape::kMaxRank)
      return r.malformed(fmt::format("rank {} is over the largest, {}", rank, Shape::kMaxRank));
    std::vector<int64_t> dims(rank);
    for (int64_t& d : dims) TF_RETURN_IF_ERROR(r.get(&d, "shape"));
    auto shape = Shape::make(dims);
    if (!shape.ok()) return r.malformed(shape.status().message());
    uint64_t payload = 0;
    TF_RETURN_IF_ERROR(r.get(&payload, "payload size"));
    const bool apart = detached != nullptr && !dtype_is_object(dtype);
    const uint64_t left = apart ? *detached : r.left();
    if (payload > left)
      return r.malformed(fmt::format("its payload of {} bytes is longer than the {} bytes left", payload,
                                     left));
    const uint64_t n = static_cast<uint64_t>(shape->num_elements());
    const bool object = dtype_is_object(dtype);
    const bool variant = base_dtype(dtype) == DType::variant;
    const uint64_t size = object ? 0 : static_cast<uint64_t>(dtype_size(base_dtype(dtype)));
    // Every string element takes at least its length on the wire, every
    // variant element its kind byte.
    const uint64_t least = variant ? 1 : sizeof(uint64_t);
    if (object ? n > payload / least : (n > payload / size || n * size != payload))
      return r.malformed(fmt::format("{} {} needs {} bytes, its payload has {}", dtype_name(dtype),
                                     shape->to_string(),
                                     object ? fmt::format("at least {}", n * least)
                                            : std::to_string(n * size),
                                     payload));
    if (payload > static_cast<uint64_t>(max_bytes) ||
        (object && n > static_cast<uint64_t>(max_bytes) / sizeof(std::string)))
      return Status(Error::resource_exhausted,
                    fmt::format("a tensor on the wire ({} {}, {} bytes) is larger than the limit of {} bytes",
                                dtype_name(dtype), shape->to_string(), payload, max_bytes));
    if (!object && apart && described != nullptr) {
      *described = TensorWireHead{dtype, *shape, payload};
      *detached = payload;
    } else if (!object) {
      out = Tensor::uninitialized(dtype, *shape);
      if (apart) *detached = payload;
      else if (payload > 0) std::memcpy(out.raw_mutable_data(), r.take(payload).data(), payload);
    } else if (variant) {
      out = Tensor(dtype, *shape);
      VariantPtr* v = out.mutable_data<VariantPtr>();
      const size_t at = r.offset();
      Reader elements(r.take(payload), at);
      for (uint64_t i = 0; i < n; ++i) TF_RETURN_IF_ERROR(read_variant_element(elements, max_bytes, depth, &v[i]));
      if (elements.left() != 0)
        return elements.malformed(fmt::format("{} bytes of the payload follow its last variant element",
                                              elements.left()));
    } else {
      out = Tensor(dtype, *shape);
      std::string* s = out.mutable_data<std::string>();
      uint64_t used = 0;
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t length = 0;
        TF_RETURN_IF_ERROR(r.get(&length, "string length"));
        used += sizeof(uint64_t);
        if (length > payload - used)
          return r.malformed(fmt::format("string element {} of {} bytes runs past its payload ({} bytes left)",
                                         i, length, payload - used));
        s[i].assign(r.take(length));
        used += length;
      }
      if (used != payload)
        return r.malformed(fmt::format("{} bytes of the payload follow its last string element", payload - used));
    }
  }
  if (detached != nullptr && (number == 0 || dtype_is_object(static_cast<DType>(number)))) *detached = 0;
  bytes->remove_prefix(r.pos());
  return out;
}

}  // namespace

Expected<Tensor> read_tensor_wire(std::string_view* bytes, int64_t max_bytes, size_t offset) {
  return read_wire(bytes, max_bytes, offset, nullptr);
}

Expected<Tensor> read_tensor_wire_head(std::string_view head, uint64_t available, int64_t max_bytes,
                                       uint64_t* payload) {
  std::string_view rest = head;
  *payload = available;
  TF_ASSIGN_OR_RETURN(Tensor t, read_wire(&rest, max_bytes, 0, payload));
  if (!rest.empty())
    return Status(Error::parse_error, fmt::format("malformed tensor on the wire at byte {}: {} bytes follow its head",
                                                  head.size() - rest.size(), rest.size()));
  return t;
}

Expected<TensorWireHead> describe_tensor_wire_head(std::string_view head) {
  std::string_view rest = head;
  uint64_t payload = std::numeric_limits<uint64_t>::max();
  TensorWireHead described;
  TF_ASSIGN_OR_RETURN(Tensor t, read_wire(&rest, std::numeric_limits<int64_t>::max(), 0, &payload, &described));
  if (!rest.empty())
    return Status(Error::parse_error, fmt::format("malformed tensor on the wire at byte {}: {} bytes follow its head",
                                                  head.size() - rest.size(), rest.size()));
  if (described.dtype == DType::invalid)
    return Status(Error::parse_error,
                  fmt::format("malformed tensor head on the wire: {} where a tensor of fixed-size elements was expected",
                              t.valid() ? dtype_name(t.dtype()) + " " + t.shape().to_string() : "an invalid tensor"));
  return described;
}

Expected<Tensor> decode_tensor_wire(std::string_view bytes, int64_t max_bytes) {
  std::string_view rest = bytes;
  TF_ASSIGN_OR_RETURN(Tensor t, read_tensor_wire(&rest, max_bytes));
  if (!rest.empty())
    return Status(Error::parse_error, fmt::format("malformed tensor on the wire at byte {}: {} bytes follow it",
                                                  bytes.size() - rest.size(), rest.size()));
  return t;
}

}  // namespace tagflow::ops
