// Numbers read from text as TensorFlow's strings::safe_strto* read them
// (StringToNumber, InitializeTableFromTextFileV2): integers are decimal
// digits with an optional '-' inside ASCII whitespace, nothing else ('+',
// hex and overflow refused); floats take a sign, fractions, exponents,
// "0x" hex integers and "inf" / "nan" in any case, read in the "C" locale
// and correctly rounded to the type (no double rounding for float), text
// of 32 bytes or more refused, whitespace alone read as 0. Its ASCII
// whitespace rule (is_ascii_space, trim_space) is also StringStrip's and
// StringSplitV2's.
// Plain functions; thread-safe.
#pragma once

#include <locale.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

namespace tagflow::ops::number_text {

inline bool is_ascii_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_hex_digit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

inline std::string_view trim_space(std::string_view s) {
  while (!s.empty() && is_ascii_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ascii_space(s.back())) s.remove_suffix(1);
  return s;
}

// Decimal digits, '-' for signed types, within whitespace; false on
// anything else or a value outside T.
template <class T>
bool parse_integer(std::string_view s, T* value) {
  s = trim_space(s);
  const bool negative = std::is_signed_v<T> && !s.empty() && s.front() == '-';
  if (negative) s.remove_prefix(1);
  if (s.empty()) return false;
  using U = std::make_unsigned_t<T>;
  const U limit = negative ? U(std::numeric_limits<T>::max()) + 1 : U(std::numeric_limits<T>::max());
  U v = 0;
  for (char c : s) {
    if (!is_digit(c)) return false;
    const auto digit = static_cast<U>(c - '0');
    if (v > (limit - digit) / 10) return false;
    v = static_cast<U>(v * 10 + digit);
  }
  *value = negative ? static_cast<T>(U(0) - v) : static_cast<T>(v);
  return true;
}

inline bool consume_word(std::string_view* s, std::string_view word) {
  if (s->size() < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (((*s)[i] | 0x20) != word[i]) return false;
  s->remove_prefix(word.size());
  return true;
}

inline size_t count_digits(std::string_view s, size_t from, bool (*digit)(char)) {
  size_t i = from;
  while (i < s.size() && digit(s[i])) ++i;
  return i - from;
}

// Whether s (trimmed) is a number the float parser takes, after an
// optional sign: "0x" and hex digits, or digits with an optional fraction
// (one digit at least) and an optional exponent.
inline bool is_float_number(std::string_view s) {
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) s.remove_prefix(1);
  if (s.size() > 2 && s[0] == '0' && (s[1] | 0x20) == 'x') return count_digits(s, 2, is_hex_digit) == s.size() - 2;
  size_t i = count_digits(s, 0, is_digit);
  size_t mantissa = i;
  if (i < s.size() && s[i] == '.') {
    const size_t fraction = count_digits(s, i + 1, is_digit);
    mantissa += fraction;
    i += 1 + fraction;
  }
  if (mantissa == 0) return false;
  if (i < s.size() && (s[i] | 0x20) == 'e') {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    const size_t exponent = count_digits(s, i, is_digit);
    if (exponent == 0) return false;
    i += exponent;
  }
  return i == s.size();
}

// The "C" locale, so that '.' is the decimal point whatever the process's.
inline locale_t c_numeric() {
  static const locale_t locale = newlocale(LC_NUMERIC_MASK, "C", locale_t{});
  return locale;
}

template <class T>
bool parse_float(std::string_view text, T* value) {
  if (text.empty() || text.size() >= 32) return false;
  std::string_view s = trim_space(text);
  if (s.empty()) {  // TensorFlow's parser reads whitespace alone as 0
    *value = 0;
    return true;
  }
  const bool negative = s.front() == '-';
  std::string_view word = s;
  if (s.front() == '+' || s.front() == '-') word.remove_prefix(1);
  if (consume_word(&word, "inf") && word.empty()) {
    *value = negative ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    return true;
  }
  if (consume_word(&word, "nan") && word.empty()) {
    *value = std::copysign(std::numeric_limits<T>::quiet_NaN(), negative ? T(-1) : T(1));
    return true;
  }
  if (!is_float_number(s)) return false;
  const std::string number(s);  // checked above: strto* reads all of it, correctly rounded
  if constexpr (std::is_same_v<T, float>) *value = strtof_l(number.c_str(), nullptr, c_numeric());
  else *value = strtod_l(number.c_str(), nullptr, c_numeric());
  return true;
}

}  // namespace tagflow::ops::number_text
