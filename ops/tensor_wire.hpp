// The wire form of a Tensor: how a tensor crosses a process boundary (the
// payload of net/'s messages). A tensor is its dtype, its shape and one
// contiguous block of element bytes, copied with one memcpy each way —
// never element by element (CAF 0.17 serialises a vector<float> one float
// at a time, ~0.1 GB/s). Strings (and resource handles) are a length and
// the bytes, per element; variant elements (TensorLists, Optionals) are
// their fields and their element tensors, nested wire forms.
//
// Layout, little-endian (the only byte order tagflow builds for):
//   u8   format version (kTensorWireVersion)
//   u32  dtype number (TensorFlow's, references included: 101 = float32_ref);
//        0: the invalid tensor (a dead value), and nothing follows
//   u8   rank, 0..Shape::kMaxRank
//   i64  dims[rank], each >= 0
//   u64  payload bytes
//   the payload: fixed-size elements as stored (num_elements * dtype_size);
//        string and resource elements as u64 length + bytes, one after
//        another; variant elements as described in docs/protocol.md
//        ("Variant tensors"): a kind byte, then a TensorList's element
//        dtype, element shape, bound and elements, or an Optional's
//        components, each element tensor a nested wire form
//
// Decoding trusts nothing: a truncated or malformed tensor (unknown format
// or dtype, rank over 8, a negative dimension, an element count that
// overflows, a payload whose size disagrees with the shape, bytes left over,
// a variant field out of range, variants nested deeper than
// kMaxVariantWireDepth)
// is a parse_error naming what is wrong and where (the byte offset); a
// tensor larger than the caller's limit is resource_exhausted, refused
// before anything is allocated. Stateless; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ops/tensor.hpp"

namespace tagflow::ops {

constexpr uint8_t kTensorWireVersion = 1;
// How deep variant values may nest on the wire (a list of lists of ...):
// decoding recurses once per level.
constexpr int kMaxVariantWireDepth = 16;

// Appends the wire form of `t` (valid or not) to *out.
void append_tensor_wire(const Tensor& t, std::string* out);
std::string encode_tensor_wire(const Tensor& t);
// The size append_tensor_wire adds, computed without encoding.
size_t tensor_wire_size(const Tensor& t);

// Reads one tensor from the front of *bytes and advances it past it. Its
// elements may take at most `max_bytes` (fixed-size storage, or the bytes
// of its strings). `offset` is where *bytes starts in the whole message,
// for errors.
Expected<Tensor> read_tensor_wire(std::string_view* bytes, int64_t max_bytes, size_t offset = 0);
// The whole of `bytes` is one tensor.
Expected<Tensor> decode_tensor_wire(std::string_view bytes, int64_t max_bytes);

// The wire form in two parts, for a serialiser that copies raw bytes
// itself (CAF's, actors/tensor_inspect.hpp): the head is the wire form up
// to and including the payload size for a fixed-size dtype — the payload,
// the tensor's own bytes, follows separately — and the whole wire form for
// strings (and the invalid tensor).
void append_tensor_wire_head(const Tensor& t, std::string* out);
// The bytes that follow a head of `t` (0 for strings and invalid tensors).
size_t detached_payload_size(const Tensor& t);
// Reads a head. A fixed-size tensor comes back allocated, not filled:
// *payload is the number of bytes to copy into raw_mutable_data(); they
// must be at most `available` (what can still follow), else the head is
// malformed and nothing is allocated. Otherwise the tensor is complete and
// *payload is 0. The checks and errors are read_tensor_wire's.
Expected<Tensor> read_tensor_wire_head(std::string_view head, uint64_t available, int64_t max_bytes,
                                       uint64_t* payload);

// What a head of a fixed-size tensor says, read without allocating the
// tensor (a transfer in parts: actors/messages.hpp). The checks are
// read_tensor_wire's; the head of a string tensor or of the invalid tensor
// is malformed here.
struct TensorWireHead {
  DType dtype = DType::invalid;
  Shape shape;
  uint64_t payload = 0;  // bytes: num_elements * dtype size
};
Expected<TensorWireHead> describe_tensor_wire_head(std::string_view head);

}  // namespace tagflow::ops
