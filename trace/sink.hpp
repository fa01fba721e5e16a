// Sinks: where events go. A Sink stamps each event with its time and the
// recording thread and keeps the name tables it has been given; a
// MemorySink keeps everything in memory (tests, the explorer), a JsonlSink
// writes JSON lines (a header with the schema version, then name tables
// and events: docs/trace.md), a BinarySink a compact binary form for long
// runs. `open_sink` picks the form by the file's extension. Every sink is
// thread-safe: actors on every thread record into it at once.
#pragma once

#include <cstdio>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "trace/event.hpp"
#include "trace/names.hpp"
#include "trace/trace.hpp"

namespace tagflow::trace {

class Sink {
 public:
  virtual ~Sink() = default;
  // Records `e`, stamping its time and thread (if it has none).
  void record(Event e);
  // The id of `table` in this sink's stream; the first call for a table
  // writes it.
  uint64_t names(const std::shared_ptr<const PartitionNames>& table);
  // Nanoseconds since this sink was made.
  int64_t now_ns() const;

 protected:
  virtual void write(Event&& e) = 0;
  virtual void write_names(uint64_t id, const std::shared_ptr<const PartitionNames>& table) = 0;

 private:
  std::chrono::steady_clock::time_point epoch_ = std::chrono::steady_clock::now();
  std::mutex names_mu_;
  std::map<const PartitionNames*, uint64_t> ids_;
  std::vector<std::shared_ptr<const PartitionNames>> tables_;  // keeps the keys of ids_ alive
};

// A small number for the calling thread, the same for all its events.
uint32_t thread_number();

// Keeps every event in memory.
class MemorySink final : public Sink {
 public:
  // Everything recorded so far, as a trace a reader would give.
  Trace trace() const;
  std::vector<Event> events() const;
  void clear();

 protected:
  void write(Event&& e) override;
  void write_names(uint64_t id, const std::shared_ptr<const PartitionNames>& table) override;

 private:
  mutable std::mutex mu_;
  std::vector<Event> events_;
  std::map<uint64_t, std::shared_ptr<const PartitionNames>> tables_;
};

// Writes to a file; nullptr and *error if it cannot be opened. The file
// is complete when the sink is destroyed (or flush()ed). Its header is
// written with the first record (or at the end): a sink opened before the
// session that records into it still says what the session's kernels ran
// with (process_header(), unless the header was given).
class FileSink : public Sink {
 public:
  ~FileSink() override;
  void flush();

 protected:
  using HeaderBytes = std::string (*)(const Header&);
  FileSink(std::FILE* f, const Header* header, HeaderBytes header_bytes) : file_(f), header_bytes_(header_bytes) {
    if (header) header_ = *header;
  }
  void put(const std::string& bytes);

 private:
  void put_header_locked();

  std::mutex mu_;
  std::FILE* file_;
  HeaderBytes header_bytes_;
  std::optional<Header> header_;
  bool header_written_ = false;
};

// One JSON object per line: {"tagflow_trace": 2, "header": {...}} first.
class JsonlSink final : public FileSink {
 public:
  // header: nullptr for process_header().
  static std::unique_ptr<JsonlSink> open(const std::string& path, std::string* error,
                                         const Header* header = nullptr);

 protected:
  void write(Event&& e) override;
  void write_names(uint64_t id, const std::shared_ptr<const PartitionNames>& table) override;
  static std::string header_bytes(const Header& header);

 private:
  JsonlSink(std::FILE* f, const Header* header) : FileSink(f, header, &header_bytes) {}
};

// "TFTRACE" 0, the schema version (u32), then records: a name table or an
// event, little-endian (docs/trace.md).
class BinarySink final : public FileSink {
 public:
  static std::unique_ptr<BinarySink> open(const std::string& path, std::string* error,
                                          const Header* header = nullptr);

 protected:
  void write(Event&& e) override;
  void write_names(uint64_t id, const std::shared_ptr<const PartitionNames>& table) override;
  static std::string header_bytes(const Header& header);

 private:
  BinarySink(std::FILE* f, const Header* header) : FileSink(f, header, &header_bytes) {}
};

// A JsonlSink for ".jsonl" (and ".json"), a BinarySink for anything else
// (".tft" by convention). The file's header is `header`, or
// process_header() when it is nullptr.
std::unique_ptr<Sink> open_sink(const std::string& path, std::string* error, const Header* header = nullptr);

// Writes a trace read back or recorded in memory to a file (the form by
// the extension, as open_sink); false and *error if it cannot.
bool write_trace(const Trace& t, const std::string& path, std::string* error);

// Records into several sinks (a file and a progress counter, say).
class TeeSink final : public Sink {
 public:
  explicit TeeSink(std::vector<Sink*> sinks) : sinks_(std::move(sinks)) {}

 protected:
  void write(Event&& e) override;
  void write_names(uint64_t id, const std::shared_ptr<const PartitionNames>& table) override;

 private:
  std::vector<Sink*> sinks_;
  std::mutex mu_;
  std::map<uint64_t, std::shared_ptr<const PartitionNames>> tables_;  // by this sink's ids
};

}  // namespace tagflow::trace
