// UTF-8 as the string kernels read it (StringLength, Substr, StringLower,
// StringUpper): which bytes start a character, decoding with U+FFFD for
// ill-formed bytes, encoding, and the `unit` attr ("BYTE" or "UTF8_CHAR")
// of the ops that count characters. Counting and stepping look only at
// continuation bytes (10xxxxxx), as TensorFlow's kernels do, so they never
// fail on ill-formed text; decoding follows the Unicode standard's
// "maximal subpart" rule, one U+FFFD per ill-formed piece, as ICU's
// converter does. Plain functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ops/kernel.hpp"

namespace tagflow::ops::utf8 {

inline bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The number of characters: the bytes that do not continue one.
inline int64_t length(std::string_view s) {
  int64_t n = 0;
  for (char c : s) n += is_continuation(c) ? 0 : 1;
  return n;
}

constexpr char32_t kReplacement = 0xFFFD;

struct Decoded {
  char32_t code_point;  // kReplacement for an ill-formed piece
  size_t size;          // bytes consumed, >= 1
};

// The character at s[i] (i < s.size()). The well-formed sequences are
// those of the Unicode standard's table 3-7; an ill-formed piece is the
// longest prefix of one of them (at least one byte).
inline Decoded decode(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return {lead, 1};
  size_t need = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  char32_t cp = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 1, cp = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 2, cp = lead & 0x0F;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 3, cp = lead & 0x07;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
  } else {
    return {kReplacement, 1};
  }
  size_t k = 1;
  for (; k <= need; ++k) {
    if (i + k >= s.size()) return {kReplacement, k};
    const unsigned char b = byte(i + k);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return {kReplacement, k};
    cp = (cp << 6) | (b & 0x3F);
  }
  return {cp, k};
}

// Appends code point cp (at most U+10FFFF, not a surrogate) as UTF-8.
inline void append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// What the `unit` attr of StringLength and Substr counts in.
enum class CharUnit { byte, utf8_char };

inline Expected<CharUnit> char_unit(const KernelInit& init) {
  TF_ASSIGN_OR_RETURN(std::string unit, init.attr<std::string>("unit"));
  if (unit == "BYTE") return CharUnit::byte;
  if (unit == "UTF8_CHAR") return CharUnit::utf8_char;
  return Status(Error::invalid_argument,
                "unit must be \"BYTE\" or \"UTF8_CHAR\", got \"" + abbreviate(unit) + "\"");
}

}  // namespace tagflow::ops::utf8
