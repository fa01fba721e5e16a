#include "trace/stats.hpp"

#include <fmt/format.h>

#include <set>
#include <tuple>

namespace tagflow::trace {

std::map<uint64_t, StepStats> stats(const Trace& t) {
  std::map<uint64_t, StepStats> out;
  std::map<uint64_t, std::pair<int64_t, int64_t>> span;
  std::set<std::pair<uint64_t, uint64_t>> instances;  // (step, frame instance)
  for (const Event& e : t.events()) {
    if (e.kind == Kind::partition_up || e.kind == Kind::partition_down || e.kind == Kind::message_taken ||
        e.partition < 0)
      continue;
    StepStats& s = out[e.step];
    auto [it, fresh] = span.try_emplace(e.step, e.time_ns, e.time_ns);
    if (!fresh) {
      it->second.first = std::min(it->second.first, e.time_ns);
      it->second.second = std::max(it->second.second, e.time_ns + e.duration_ns);
    }
    FrameStats& f = s.frames[t.frame_name(e.instance)];
    switch (e.kind) {
      case Kind::step_started: ++s.partitions; break;
      case Kind::step_done:
        if (!e.text.empty() && s.error.empty()) s.error = e.text;
        break;
      case Kind::frame_created:
        if (instances.insert({e.step, e.instance}).second) ++f.instances;
        break;
      case Kind::iteration_started:
        if (e.instance != 0) ++f.iterations;
        break;
      case Kind::node_ran: ++f.nodes_run; break;
      case Kind::value_dead: ++f.dead_values; break;
      case Kind::message_sent:
        ++f.messages;
        f.bytes += e.bytes;
        break;
      default: break;
    }
  }
  for (auto& [step, s] : out) s.duration_ns = span[step].second - span[step].first;
  return out;
}

std::string format_stats(const std::map<uint64_t, StepStats>& all) {
  std::string out;
  for (const auto& [step, s] : all) {
    out += fmt::format("step {}: {} partition(s), {:.3f} ms{}\n", step, s.partitions, s.duration_ns / 1e6,
                       s.error.empty() ? "" : ", failed: " + s.error);
    out += fmt::format("  {:<40} {:>9} {:>10} {:>10} {:>10} {:>10} {:>12}\n", "frame", "instances", "iterations",
                       "nodes run", "dead", "messages", "bytes");
    for (const auto& [name, f] : s.frames)
      out += fmt::format("  {:<40} {:>9} {:>10} {:>10} {:>10} {:>10} {:>12}\n", name.empty() ? "(root)" : name,
                         name.empty() ? 1 : f.instances, f.iterations, f.nodes_run, f.dead_values, f.messages,
                         f.bytes);
  }
  return out;
}

}  // namespace tagflow::trace
