// CRC32C (Castagnoli, polynomial 0x82f63b78 reflected) and LevelDB's
// checksum mask, as TensorFlow's checkpoints store them (docs/formats.md):
// every tensor's entry in a checkpoint index carries the masked CRC32C of
// its bytes. Table-driven, one byte at a time: checkpoints are read once.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tagflow::ops::crc32c {

// The CRC32C of `n` bytes at `data` continued from `crc`, the CRC32C of
// what came before them (0 for none): extend(extend(0, a), b) == value(ab).
uint32_t extend(uint32_t crc, const void* data, size_t n);

inline uint32_t value(const void* data, size_t n) { return extend(0, data, n); }
inline uint32_t value(std::string_view bytes) { return value(bytes.data(), bytes.size()); }

// The stored form: a CRC of bytes that themselves hold CRCs is a poor
// check, so what is stored is the CRC rotated right by 15 bits plus a
// constant (LevelDB's crc32c::Mask).
constexpr uint32_t kMaskDelta = 0xa282ead8u;
inline uint32_t mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t unmask(uint32_t masked) {
  const uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace tagflow::ops::crc32c
