#include "ops/status.hpp"

#include <ostream>

namespace tagflow::ops {

const char* to_string(Error e) {
  switch (e) {
    case Error::ok: return "ok";
    case Error::invalid_argument: return "invalid_argument";
    case Error::not_found: return "not_found";
    case Error::unimplemented: return "unimplemented";
    case Error::parse_error: return "parse_error";
    case Error::invalid_graph: return "invalid_graph";
    case Error::failed_precondition: return "failed_precondition";
    case Error::out_of_range: return "out_of_range";
    case Error::dead_value: return "dead_value";
    case Error::resource_exhausted: return "resource_exhausted";
    case Error::deadline_exceeded: return "deadline_exceeded";
    case Error::aborted: return "aborted";
    case Error::unavailable: return "unavailable";
    case Error::data_loss: return "data_loss";
    case Error::internal: return "internal";
    case Error::cancelled: return "cancelled";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, Error e) { return os << to_string(e); }

std::string abbreviate(std::string_view text, size_t max_chars) {
  if (text.size() <= max_chars) return std::string(text);
  size_t cut = max_chars;
  // Never cut a UTF-8 sequence in two: back up to the start of a character.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "... (" + std::to_string(text.size()) + " bytes)";
}

const std::string& Status::no_message() {
  static const std::string empty;
  return empty;
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return std::string(ops::to_string(code_)) + ": " + message();
}

Status Status::with_prefix(const std::string& context) const {
  if (ok()) return *this;
  Status s(code_, context + message());
  s.detail_->says_where = says_where();
  return s;
}

}  // namespace tagflow::ops
