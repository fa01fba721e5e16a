// The one typed event stream of tagflow (DESIGN.md §6): step, frame,
// iteration, node and message events. Every observer — the message-trace
// test harness, `--trace` JSONL files, timelines, progress lines — is an
// EventSink. Emitting is a single pointer test when nobody listens.
// Sinks are called concurrently from every actor: they must be thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tagflow::actors {

enum class EventKind {
  step_started,
  step_done,
  frame_created,
  frame_done,
  iteration_started,
  iteration_done,
  node_ran,
  value_dead,
  merge_input_ignored,  // a later live input of a Merge in one tag (node, tag, detail)
  message_sent,
  message_received,
  partition_up,
  partition_down,
};

const char* to_string(EventKind k);

struct Event {
  explicit Event(EventKind k) : kind(k) {}

  EventKind kind;
  int64_t time_ns = 0;        // steady clock, since the sink's epoch
  uint64_t step = 0;
  std::string partition;
  std::string tag;            // "/", "while/0", ...
  std::string node;           // node_ran, value_dead
  std::string op;             // node_ran
  int64_t duration_ns = 0;    // node_ran
  std::string from;           // message_*: sending actor's role and tag
  std::string to;             // message_*: receiving actor's role and tag
  std::string key;            // message_*: what the message carries
  bool dead = false;          // message_*: the value is dead
  int64_t bytes = 0;          // message_*: tensor payload size
  std::string detail;         // free text: errors, frame names

  // One line of JSON, without a trailing newline.
  std::string to_json() const;
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void record(Event e) = 0;
  // Nanoseconds since this sink was made; used as Event::time_ns.
  int64_t now_ns() const;

 private:
  std::chrono::steady_clock::time_point epoch_ = std::chrono::steady_clock::now();
};

// Keeps every event in memory (tests, timelines).
class RecordingSink final : public EventSink {
 public:
  void record(Event e) override;
  std::vector<Event> events() const;
  void clear();

 private:
  mutable std::mutex mu_;
  std::vector<Event> events_;
};

// Writes one JSON object per line (`tagflow run --trace FILE.jsonl`).
class JsonlSink final : public EventSink {
 public:
  // nullptr if the file cannot be opened.
  static std::unique_ptr<JsonlSink> open(const std::string& path);
  ~JsonlSink() override;
  void record(Event e) override;

 private:
  explicit JsonlSink(std::FILE* f) : file_(f) {}
  std::mutex mu_;
  std::FILE* file_;
};

}  // namespace tagflow::actors
