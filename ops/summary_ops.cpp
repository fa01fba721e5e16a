// ScalarSummary(tags, values) -> summary: a scalar string holding a
// serialized tensorflow.Summary protocol buffer with one Value{tag,
// simple_value} per element, in order, as TensorFlow's kernel makes it.
// tags and values have the same shape; values are converted to float.
// ops/ does not depend on protobuf, so the few bytes of the message are
// written here by hand. Field numbers (summary.proto): Summary.value = 1,
// Value.tag = 1, Value.simple_value = 2 (a float, fixed 32 bits).
// Signature as in TensorFlow's core/ops/logging_ops.cc; stateless.
#include <cstring>
#include <string>

#include "ops/array_ops.hpp"
#include "ops/shape_fns.hpp"

namespace tagflow::ops {

namespace {

constexpr char kLengthDelimited = 2;  // protobuf wire types
constexpr char kFixed32 = 5;

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_key(std::string& out, int field, char wire_type) {
  put_varint(out, (static_cast<uint64_t>(field) << 3) | static_cast<uint64_t>(wire_type));
}

void put_bytes(std::string& out, int field, const std::string& bytes) {
  put_key(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out += bytes;
}

// Summary.Value{tag, simple_value}.
std::string scalar_value(const std::string& tag, float value) {
  std::string v;
  put_bytes(v, 1, tag);
  put_key(v, 2, kFixed32);
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  for (int i = 0; i < 4; ++i) v.push_back(static_cast<char>(bits >> (8 * i) & 0xff));
  return v;
}

Status scalar_summary(KernelContext& ctx) {
  const Tensor& tags = ctx.input(0);
  const Tensor& values = ctx.input(1);
  if (!tags.valid() || !values.valid() || tags.shape() != values.shape())
    return Status(Error::invalid_argument,
                  "ScalarSummary tags and values must have the same shape, got " +
                      (tags.valid() ? tags.shape().to_string() : std::string("no tensor")) +
                      " and " +
                      (values.valid() ? values.shape().to_string() : std::string("no tensor")));
  if (tags.dtype() != DType::string)
    return Status(Error::invalid_argument,
                  "ScalarSummary tags must be strings, got " + dtype_name(tags.dtype()));
  const std::string* tag = tags.data<std::string>();
  std::string summary;
  for (int64_t i = 0; i < tags.num_elements(); ++i)
    put_bytes(summary, 1, scalar_value(tag[i], static_cast<float>(element_as_double(values, i))));
  ctx.set_output(0, Tensor::string_scalar(std::move(summary)));
  return ok_status();
}

}  // namespace

void register_summary_ops(OpRegistry& r) {
  register_builtin(r, OpDef("ScalarSummary").shape_fn(shape_fns::scalars)
                          .input("tags: string")
                          .input("values: T")
                          .output("summary: string")
                          .type_attr("T", {DType::float32, DType::float64, DType::int32,
                                           DType::uint8, DType::int16, DType::int8, DType::int64,
                                           DType::bfloat16, DType::uint16, DType::half,
                                           DType::uint32, DType::uint64})
                          .kernel_fn(scalar_summary));
}

}  // namespace tagflow::ops
