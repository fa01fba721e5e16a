// How CAF serialises a Tensor: as its wire form (ops/tensor_wire.hpp) in
// one byte string — dtype, shape and one contiguous block of bytes, never
// element by element. Loading checks everything the wire form checks: a
// malformed tensor from a peer fails the message's deserialisation with
// CAF's `invalid_argument` and tagflow's message, never a crash. No limit
// beyond the message's own size is needed: decoding allocates at most a
// few times the bytes that arrived. Internal to actors/ and net/ (includes CAF).
#pragma once

#include <caf/all.hpp>

#include <limits>
#include <string>

#include "ops/tensor_wire.hpp"

namespace tagflow::ops {

// Found by argument-dependent lookup from CAF's inspectors.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, Tensor& t) {
  std::string wire;
  if constexpr (Inspector::reads_state) wire = encode_tensor_wire(t);
  auto load = caf::meta::load_callback([&]() -> caf::error {
    auto decoded = decode_tensor_wire(wire, std::numeric_limits<int64_t>::max());
    if (!decoded.ok()) return caf::make_error(caf::sec::invalid_argument, decoded.status().to_string());
    t = std::move(decoded).value();
    return caf::none;
  });
  return f(caf::meta::type_name("tagflow.tensor"), wire, load);
}

}  // namespace tagflow::ops
