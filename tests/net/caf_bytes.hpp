// One value through CAF's own binary serialiser and back, as it crosses a
// process boundary: for the tests of the wire forms (tensors, transfers).
#pragma once

#include <caf/all.hpp>

#include <stdexcept>
#include <vector>

namespace tagflow::testing {

// An actor system for the serialisers (they need one for their types).
struct System {
  caf::actor_system_config config;
  caf::actor_system system{config};
};

template <class T>
std::vector<char> save(caf::actor_system& sys, T x) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  if (auto e = sink(x)) throw std::runtime_error(sys.render(e));
  return buf;
}

template <class T>
caf::error load(caf::actor_system& sys, const std::vector<char>& buf, T* x) {
  caf::binary_deserializer source{sys, buf};
  return source(*x);
}

}  // namespace tagflow::testing
