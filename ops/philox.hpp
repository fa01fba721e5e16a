// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers:
// as easy as 1, 2, 3", SC 2011): the counter-based generator behind
// TensorFlow's random ops, with TensorFlow's seeding and the conversions its
// distributions make of the generator's 32-bit words (TensorFlow's
// lib/random/philox_random.h, random_distributions.h). The random kernels
// (ops/random_ops.cpp) build on these to draw TensorFlow's numbers.
//
// One call of a Philox gives a block of four 32-bit words, a function of the
// 128-bit counter and the 64-bit key, and advances the counter by one; skip
// advances it by many. A Philox is a small value, copied freely; one object
// is not thread-safe. GuardedPhilox is the thread-safe generator of one
// kernel: each call reserves the blocks it will use, as TensorFlow's
// GuardedPhiloxRandom does.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>

#include <Eigen/Core>

namespace tagflow::ops::philox {

using Block = std::array<uint32_t, 4>;
using Key = std::array<uint32_t, 2>;

class Philox {
 public:
  Philox() = default;
  Philox(const Block& counter, const Key& key) : counter_(counter), key_(key) {}

  // TensorFlow's seeding from an op's (seed, seed2): the key is seed (low
  // word first), counter words 2 and 3 are seed2, words 0 and 1 start at 0.
  static Philox from_seeds(uint64_t seed, uint64_t seed2) {
    return Philox({0, 0, static_cast<uint32_t>(seed2), static_cast<uint32_t>(seed2 >> 32)},
                  {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
  }

  const Block& counter() const { return counter_; }
  const Key& key() const { return key_; }

  // The block of the current counter; then the counter moves on by one.
  Block operator()() {
    Block c = counter_;
    Key k = key_;
    for (int round = 0; round < 10; ++round) {
      if (round > 0) {
        k[0] += kW0;
        k[1] += kW1;
      }
      c = single_round(c, k);
    }
    skip(1);
    return c;
  }

  // Advances the counter by `blocks` (a 128-bit addition).
  void skip(uint64_t blocks) {
    const auto lo = static_cast<uint32_t>(blocks);
    auto hi = static_cast<uint32_t>(blocks >> 32);
    counter_[0] += lo;
    if (counter_[0] < lo) ++hi;  // carry out of word 0
    counter_[1] += hi;
    if (counter_[1] < hi && ++counter_[2] == 0) ++counter_[3];
  }

 private:
  static constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57;  // round multipliers
  static constexpr uint32_t kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;  // key increments (Weyl)

  static Block single_round(const Block& c, const Key& k) {
    const uint64_t p0 = uint64_t{kM0} * c[0];
    const uint64_t p1 = uint64_t{kM1} * c[2];
    return {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
            static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
  }

  Block counter_{0, 0, 0, 0};
  Key key_{0, 0};
};

// The words of a Philox one at a time (TensorFlow's SingleSampleAdapter):
// a block is drawn when the last one is used up.
class WordStream {
 public:
  explicit WordStream(Philox gen) : gen_(gen) {}
  uint32_t operator()() {
    if (used_ == 4) {
      block_ = gen_();
      used_ = 0;
    }
    return block_[used_++];
  }

 private:
  Philox gen_;
  Block block_{};
  int used_ = 4;
};

// The generator of one stateful random kernel. Thread-safe.
class GuardedPhilox {
 public:
  // Seeds as TensorFlow's GuardedPhiloxRandom::Init: seed = seed2 = 0
  // means "seed randomly" (a nondeterministic seed and seed2), anything
  // else Philox::from_seeds(seed, seed2).
  void init(int64_t seed, int64_t seed2);
  // A generator for the next `blocks` blocks; the shared one moves past
  // them, so each caller gets blocks no other caller gets.
  Philox reserve(uint64_t blocks) {
    std::lock_guard<std::mutex> lock(mu_);
    Philox local = gen_;
    gen_.skip(blocks);
    return local;
  }

 private:
  std::mutex mu_;
  Philox gen_;
};

// --- the conversions of TensorFlow's distributions --------------------------

// [0, 1) from the low 23 bits of x: the float 1.m (m those bits) minus 1.
inline float uint32_to_float(uint32_t x) {
  const uint32_t bits = (uint32_t{127} << 23) | (x & 0x7fffffu);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f - 1.0f;
}

// [0, 1) from 52 bits: the low 20 of x0 above the 32 of x1, as 1.m - 1.
inline double uint64_to_double(uint32_t x0, uint32_t x1) {
  const uint64_t mantissa = (uint64_t{x0 & 0xfffffu} << 32) | x1;
  const uint64_t bits = (uint64_t{1023} << 52) | mantissa;
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d - 1.0;
}

// [0, 1) from the low 10 bits of x, as a half 1.m - 1.
inline Eigen::half uint16_to_half(uint16_t x) {
  const auto bits = static_cast<uint16_t>((15u << 10) | (x & 0x3ffu));
  return Eigen::numext::bit_cast<Eigen::half>(bits) - Eigen::half(1.0f);
}

// Two standard normals from two words by Box-Muller, in float as
// TensorFlow computes them: u1 (at least 1e-7) gives the radius
// sqrt(-2 log u1), u2 the angle 2 pi u2 (the product taken in double, then
// rounded to float); f0 is the sine leg, f1 the cosine leg.
inline void box_muller(uint32_t x0, uint32_t x1, float* f0, float* f1) {
  float u1 = uint32_to_float(x0);
  if (u1 < 1.0e-7f) u1 = 1.0e-7f;
  const auto angle = static_cast<float>(2.0 * M_PI * static_cast<double>(uint32_to_float(x1)));
  const float radius = std::sqrt(-2.0f * std::log(u1));
  *f0 = std::sin(angle) * radius;
  *f1 = std::cos(angle) * radius;
}

// The same in double from four words (two per uniform).
inline void box_muller(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, double* d0,
                       double* d1) {
  double u1 = uint64_to_double(x0, x1);
  if (u1 < 1.0e-7) u1 = 1.0e-7;
  const double angle = 2.0 * M_PI * uint64_to_double(x2, x3);
  const double radius = std::sqrt(-2.0 * std::log(u1));
  *d0 = std::sin(angle) * radius;
  *d1 = std::cos(angle) * radius;
}

}  // namespace tagflow::ops::philox
