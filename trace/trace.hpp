// Trace: a recorded event stream read back — the events in the order they
// were recorded, the name tables they refer to, and what can be derived
// from both: the tag of an event ("/", "while/3", "o/1/in/0"), the names
// of its partition and node. Made by a MemorySink or read from a file
// (JSONL or binary, told apart by their first bytes). Immutable once read;
// safe to share between threads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "trace/event.hpp"
#include "trace/names.hpp"

namespace tagflow::trace {

// A trace's header fields beside the schema version: what the recording
// process ran with — "isa" (the kernels' instruction-set level),
// "machine_isa", "onednn" — set by the process (set_process_header).
using Header = std::map<std::string, std::string>;

// The header every sink opened from now on writes; thread-safe.
void set_process_header(Header header);
Header process_header();

class Trace {
 public:
  Trace() = default;
  Trace(std::vector<Event> events, std::map<uint64_t, std::shared_ptr<const PartitionNames>> tables,
        Header header = {});

  // What the recording process ran with ("isa": "avx2", ...).
  const Header& header() const { return header_; }

  const std::vector<Event>& events() const { return events_; }
  size_t size() const { return events_.size(); }
  const Event& operator[](size_t i) const { return events_[i]; }

  // The name table of a partition in a step (from its step_started), or
  // nullptr.
  const PartitionNames* names(uint64_t step, int32_t partition) const;
  const PartitionNames* names_of(const Event& e) const { return names(e.step, e.partition); }
  // "CPU:1", or "partition 1" if the trace does not name it.
  std::string partition_name(uint64_t step, int32_t partition) const;
  // The node's name, or "node 7".
  std::string node_name(uint64_t step, int32_t partition, int32_t node) const;
  std::string node_name(const Event& e) const { return node_name(e.step, e.partition, e.node); }
  std::string op(uint64_t step, int32_t partition, int32_t node) const;
  // The static frame name of a frame instance ("" for the root).
  std::string frame_name(uint64_t instance) const;
  // "/" for the root frame, else "outer/2/inner/0".
  std::string tag(uint64_t instance, int64_t iteration) const;
  std::string tag_of(const Event& e) const { return tag(e.instance, e.iteration); }
  // The frame instance and iteration a frame instance was entered from.
  bool parent(uint64_t instance, uint64_t* parent_instance, int64_t* parent_iteration) const;
  // Steps in the order they started.
  std::vector<uint64_t> steps() const;
  // The events of one step, in order (indexes into events()).
  std::vector<size_t> of_step(uint64_t step) const;

 private:
  struct Instance {
    uint64_t parent = 0;
    int64_t parent_iteration = 0;
    std::string frame;
  };
  std::vector<Event> events_;
  Header header_;
  std::map<uint64_t, std::shared_ptr<const PartitionNames>> tables_;
  std::map<std::pair<uint64_t, int32_t>, uint64_t> table_of_;  // (step, partition) -> table id
  std::map<uint64_t, Instance> instances_;
};

// Reads a trace file a JsonlSink or BinarySink wrote. False, with *error
// naming the file and the line or byte, if it is not one or is malformed.
bool read_trace(const std::string& path, Trace* out, std::string* error);

}  // namespace tagflow::trace
