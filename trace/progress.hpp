// Progress of long steps: a sink that counts as events arrive — live frame
// instances, iterations started per live frame instance, nodes run and
// messages sent — and gives a snapshot with rates since the last one.
// `tagflow run --progress` prints one a second; C++ callers read the same
// figures. Thread-safe; counting costs a lock per event.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "trace/sink.hpp"

namespace tagflow::trace {

struct Progress {
  int64_t elapsed_ns = 0;
  int64_t steps_done = 0;
  int64_t live_frames = 0;                  // frame instances created and not done
  std::map<std::string, int64_t> iterations;  // by frame name: iterations of its live instances
  int64_t nodes_run = 0;
  int64_t messages = 0;  // messages actors took
  double nodes_per_second = 0;    // since the previous snapshot
  double messages_per_second = 0;
};

class ProgressSink final : public Sink {
 public:
  // A snapshot; rates are over the time since the previous one.
  Progress snapshot();
  // "12.0 s: 3 live frames (while: 81234 iterations), 1.2 M nodes/s, 40 k messages/s"
  static std::string format(const Progress& p);

 protected:
  void write(Event&& e) override;
  void write_names(uint64_t id, const std::shared_ptr<const PartitionNames>& table) override;

 private:
  std::mutex mu_;
  std::map<uint64_t, std::shared_ptr<const PartitionNames>> tables_;
  std::map<std::pair<uint64_t, int32_t>, uint64_t> table_of_;  // (step, partition) -> table
  struct Live {
    std::string frame;
    int64_t iterations = 0;
    int partitions = 0;  // a split frame instance is live on several
  };
  std::map<std::pair<uint64_t, uint64_t>, Live> live_;  // (step, frame instance)
  int64_t steps_done_ = 0;
  int64_t nodes_ = 0, messages_ = 0;
  int64_t last_ns_ = 0, last_nodes_ = 0, last_messages_ = 0;
};

}  // namespace tagflow::trace
