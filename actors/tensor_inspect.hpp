// How CAF serialises a Tensor: its wire form (ops/tensor_wire.hpp) — dtype,
// shape and one contiguous block of bytes, never element by element. A
// serialiser writes the head (a byte string) and then the tensor's bytes
// straight from its buffer; a deserialiser reads the head, allocates the
// tensor and reads the bytes straight into it — one copy each way besides
// CAF's own buffer. Loading checks everything the wire form checks, and a
// payload longer than what is left of the message is malformed before
// anything is allocated: a malformed tensor from a peer fails the message's
// deserialisation with CAF's `invalid_argument` and tagflow's message,
// never a crash. Internal to actors/ and net/ (includes CAF).
#pragma once

#include <caf/all.hpp>

#include <limits>
#include <string>
#include <type_traits>

#include "ops/tensor_wire.hpp"

namespace tagflow::ops {

// Found by argument-dependent lookup from CAF's inspectors.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Tensor& t) {
  constexpr int64_t kAny = std::numeric_limits<int64_t>::max();
  if constexpr (std::is_base_of<caf::serializer, Inspector>::value) {
    std::string head;
    append_tensor_wire_head(t, &head);
    if (caf::error e = f(head)) return e;
    const size_t n = detached_payload_size(t);
    return n > 0 ? f.apply_raw(n, const_cast<void*>(t.raw_data())) : caf::error{};
  } else if constexpr (std::is_base_of<caf::deserializer, Inspector>::value) {
    std::string head;
    if (caf::error e = f(head)) return e;
    uint64_t available = static_cast<uint64_t>(kAny);
    if (auto* binary = dynamic_cast<caf::binary_deserializer*>(&f)) available = binary->remaining();
    uint64_t payload = 0;
    auto read = read_tensor_wire_head(head, available, kAny, &payload);
    if (!read.ok()) return caf::make_error(caf::sec::invalid_argument, read.status().to_string());
    if (payload > 0)
      if (caf::error e = f.apply_raw(payload, read->raw_mutable_data())) return e;
    t = std::move(read).value();
    return caf::error{};
  } else {
    // Anything else (printing a message): its description.
    std::string text = t.valid() ? dtype_name(t.dtype()) + " " + t.shape().to_string() : "invalid tensor";
    return f(caf::meta::type_name("tagflow.tensor"), text);
  }
}

}  // namespace tagflow::ops
