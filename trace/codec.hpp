// How events and name tables are written in the two file forms (JSONL and
// binary, docs/trace.md) and read back. Internal to trace/.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trace/event.hpp"
#include "trace/names.hpp"
#include "trace/trace.hpp"

namespace tagflow::trace::codec {

inline constexpr char kBinaryMagic[8] = {'T', 'F', 'T', 'R', 'A', 'C', 'E', '\0'};
inline constexpr uint8_t kNamesRecord = 1;
inline constexpr uint8_t kEventRecord = 2;

std::string json_header(const Header& header);
// The binary header after the magic and version: a count, then key, value.
void binary_header(const Header& header, std::string* out);
std::string json_event(const Event& e);
std::string json_names(uint64_t id, const PartitionNames& t);

void binary_event(const Event& e, std::string* out);
void binary_names(uint64_t id, const PartitionNames& t, std::string* out);

// Reading: false and *error (without the file's name) if malformed.
class BinaryReader {
 public:
  explicit BinaryReader(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return pos_ >= bytes_.size(); }
  size_t pos() const { return pos_; }
  bool u8(uint8_t* v);
  bool var(uint64_t* v);
  bool svar(int64_t* v);
  bool str(std::string* s);
  bool event(Event* e);
  bool names(uint64_t* id, PartitionNames* t);
  bool header(Header* h);

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

}  // namespace tagflow::trace::codec
