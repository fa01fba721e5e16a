#include "trace/progress.hpp"

#include <fmt/format.h>

namespace tagflow::trace {

void ProgressSink::write(Event&& e) {
  std::lock_guard<std::mutex> lock(mu_);
  switch (e.kind) {
    case Kind::step_started: table_of_[{e.step, e.partition}] = e.key; break;
    case Kind::step_done: ++steps_done_; break;
    case Kind::frame_created: {
      if (e.instance == 0) break;  // the root frame: live as long as the step
      Live& l = live_[{e.step, e.instance}];
      if (l.partitions++ == 0) {
        auto t = table_of_.find({e.step, e.partition});
        auto names = t == table_of_.end() ? tables_.end() : tables_.find(t->second);
        l.frame = names == tables_.end() ? fmt::format("frame {}", e.node) : names->second->frame(e.node);
      }
      break;
    }
    case Kind::frame_done: {
      auto it = live_.find({e.step, e.instance});
      if (it != live_.end() && --it->second.partitions == 0) live_.erase(it);
      break;
    }
    case Kind::iteration_started: {
      auto it = live_.find({e.step, e.instance});
      if (it != live_.end() && it->second.partitions > 0) ++it->second.iterations;
      break;
    }
    case Kind::node_ran: ++nodes_; break;
    case Kind::message_taken: ++messages_; break;
    default: break;
  }
}

void ProgressSink::write_names(uint64_t id, const std::shared_ptr<const PartitionNames>& table) {
  std::lock_guard<std::mutex> lock(mu_);
  tables_[id] = table;
}

Progress ProgressSink::snapshot() {
  const int64_t now = now_ns();
  std::lock_guard<std::mutex> lock(mu_);
  Progress p;
  p.elapsed_ns = now;
  p.steps_done = steps_done_;
  p.live_frames = static_cast<int64_t>(live_.size());
  for (const auto& [key, l] : live_) p.iterations[l.frame] += l.iterations;
  p.nodes_run = nodes_;
  p.messages = messages_;
  const double seconds = static_cast<double>(now - last_ns_) / 1e9;
  if (seconds > 0) {
    p.nodes_per_second = static_cast<double>(nodes_ - last_nodes_) / seconds;
    p.messages_per_second = static_cast<double>(messages_ - last_messages_) / seconds;
  }
  last_ns_ = now;
  last_nodes_ = nodes_;
  last_messages_ = messages_;
  return p;
}

namespace {
std::string si(double v) {
  if (v >= 1e6) return fmt::format("{:.1f} M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.1f} k", v / 1e3);
  return fmt::format("{:.0f}", v);
}
}  // namespace

std::string ProgressSink::format(const Progress& p) {
  std::string frames;
  for (const auto& [name, n] : p.iterations) {
    if (!frames.empty()) frames += ", ";
    frames += fmt::format("{}: {} iterations", name, n);
  }
  return fmt::format("{:.1f} s: {} live frame instance(s){}, {} nodes/s, {} messages/s", p.elapsed_ns / 1e9,
                     p.live_frames, frames.empty() ? "" : " (" + frames + ")", si(p.nodes_per_second),
                     si(p.messages_per_second));
}

}  // namespace tagflow::trace
