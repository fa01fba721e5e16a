#include "ops/philox.hpp"

#include <random>

namespace tagflow::ops::philox {

void GuardedPhilox::init(int64_t seed, int64_t seed2) {
  auto s = static_cast<uint64_t>(seed), s2 = static_cast<uint64_t>(seed2);
  if (seed == 0 && seed2 == 0) {
    std::random_device device;
    auto draw64 = [&device] { return (uint64_t{device()} << 32) | device(); };
    s = draw64();
    s2 = draw64();
  }
  std::lock_guard<std::mutex> lock(mu_);
  gen_ = Philox::from_seeds(s, s2);
}

}  // namespace tagflow::ops::philox
