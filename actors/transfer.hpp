// TransferValue: one value of a `_Send` on its way to the peer partition's
// `_Recv`, whole or in parts — what actors/messages.hpp's TransferBatch
// carries and IterationState::receive_transfer takes. Plain data; CAF's
// inspect for it is in messages.hpp.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ops/tensor.hpp"

namespace tagflow::actors {

// One value of a `_Send`, addressed by its transfer key (Executable::
// transfer_hash of "tensor_name;send_device;recv_device"): the receiving
// partition finds its `_Recv` by the key, never by a node id.
//
// A live value of fixed-size elements larger than kTransferPartBytes is
// sent as `parts` TransferBatch messages of one part each, so that between
// processes one part is written to the socket while the next is
// serialised and the previous one read (docs/protocol.md, "A large
// tensor"). Part i stands for the bytes [i * kTransferPartBytes, ...) of
// the value. Within a process every part carries the whole tensor by
// reference (nothing is copied; the receiver takes it when every part has
// come); a part read from the wire holds only its own bytes (`fragment`)
// and the whole tensor's dtype and shape, and the receiver copies it into
// the tensor it allocates at the first part.
struct TransferValue {
  uint64_t key = 0;
  ops::Tensor value;
  bool dead = false;
  uint32_t part = 0;
  uint32_t parts = 1;
  bool fragment = false;  // set when read from the wire
  ops::DType whole_dtype = ops::DType::invalid;  // of a fragment's tensor
  ops::Shape whole_shape;
};

constexpr uint64_t kTransferPartBytes = uint64_t{256} << 10;

// How many parts a value of `bytes` bytes is sent as.
inline uint32_t transfer_parts(uint64_t bytes) {
  return bytes <= kTransferPartBytes ? 1u : static_cast<uint32_t>((bytes + kTransferPartBytes - 1) / kTransferPartBytes);
}
// The bytes of the whole value a TransferValue carries or is a part of.
inline int64_t transfer_bytes(const TransferValue& v) {
  return v.fragment ? v.whole_shape.num_elements() * ops::dtype_size(ops::base_dtype(v.whole_dtype))
                    : static_cast<int64_t>(v.value.byte_size());
}
// The bytes part `part` of a value of `bytes` bytes stands for.
inline uint64_t transfer_part_size(uint64_t bytes, uint32_t part) {
  const uint64_t at = uint64_t{part} * kTransferPartBytes;
  return at >= bytes ? 0 : std::min(kTransferPartBytes, bytes - at);
}

}  // namespace tagflow::actors
