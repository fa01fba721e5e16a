#include "trace/timeline.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <tuple>

namespace tagflow::trace {

namespace {

using nlohmann::json;

double us(int64_t ns) { return static_cast<double>(ns) / 1000.0; }
int pid(const Event& e) { return e.partition + 2; }  // the session (-1) is process 1

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

std::string hex(uint64_t v) { return fmt::format("{:#x}", v); }

}  // namespace

std::string timeline_json(const Trace& t) {
  json events = json::array();
  std::set<std::pair<int, uint32_t>> threads;
  std::map<int, std::string> processes;
  processes[1] = "session";
  for (const Event& e : t.events()) {
    const int p = pid(e);
    if (e.partition >= 0 && processes.count(p) == 0) processes[p] = t.partition_name(e.step, e.partition);
    threads.insert({p, e.thread});
    const std::string tag = t.tag_of(e);
    switch (e.kind) {
      case Kind::node_ran:
        events.push_back({{"ph", "X"}, {"name", t.node_name(e)}, {"cat", t.op(e.step, e.partition, e.node)},
                          {"pid", p}, {"tid", e.thread}, {"ts", us(e.time_ns)}, {"dur", us(e.duration_ns)},
                          {"args", {{"tag", tag}, {"step", e.step}}}});
        break;
      case Kind::frame_created:
      case Kind::frame_done: {
        const bool begin = e.kind == Kind::frame_created;
        const uint64_t id = mix(mix(mix(1, e.step), static_cast<uint64_t>(e.partition)), e.instance);
        events.push_back({{"ph", begin ? "b" : "e"}, {"cat", "frame"}, {"id", hex(id)},
                          {"name", "frame " + t.tag(e.instance, 0).substr(0, t.tag(e.instance, 0).rfind('/'))},
                          {"pid", p}, {"tid", e.thread}, {"ts", us(e.time_ns)}, {"args", {{"step", e.step}}}});
        break;
      }
      case Kind::iteration_started:
      case Kind::iteration_done: {
        if (e.instance == 0) break;
        const bool begin = e.kind == Kind::iteration_started;
        const uint64_t id =
            mix(mix(mix(mix(2, e.step), static_cast<uint64_t>(e.partition)), e.instance), static_cast<uint64_t>(e.iteration));
        events.push_back({{"ph", begin ? "b" : "e"}, {"cat", "iteration"}, {"id", hex(id)}, {"name", tag},
                          {"pid", p}, {"tid", e.thread}, {"ts", us(e.time_ns)},
                          {"args", {{"step", e.step}, {"frame_instance", hex(e.instance)}}}});
        break;
      }
      case Kind::message_sent:
      case Kind::message_received: {
        if (e.message != MessageKind::transfer) break;
        const bool sent = e.kind == Kind::message_sent;
        const int32_t to = sent ? e.to.partition : e.partition;
        const uint64_t id = mix(mix(mix(mix(mix(3, e.step), e.key), e.instance), static_cast<uint64_t>(e.iteration)),
                                static_cast<uint64_t>(to) * 2 + (e.dead ? 1 : 0));
        const std::string name = std::string(sent ? "send " : "receive ") + (e.dead ? "(dead) " : "") + tag;
        // A slice to carry the arrow's end, and the arrow.
        events.push_back({{"ph", "X"}, {"name", name}, {"cat", "transfer"}, {"pid", p}, {"tid", e.thread},
                          {"ts", us(e.time_ns)}, {"dur", 0.001}, {"args", {{"bytes", e.bytes}, {"step", e.step}}}});
        json flow = {{"ph", sent ? "s" : "f"}, {"name", "transfer"}, {"cat", "transfer"}, {"id", hex(id)},
                     {"pid", p}, {"tid", e.thread}, {"ts", us(e.time_ns)}};
        if (!sent) flow["bp"] = "e";
        events.push_back(std::move(flow));
        break;
      }
      case Kind::step_started:
      case Kind::step_done:
      case Kind::partition_up:
      case Kind::partition_down:
      case Kind::node_rewritten:
      case Kind::step_request:
        events.push_back({{"ph", "i"}, {"name", to_string(e.kind)}, {"s", "p"}, {"pid", p}, {"tid", e.thread},
                          {"ts", us(e.time_ns)}, {"args", {{"step", e.step}, {"text", e.text}}}});
        break;
      default:
        break;
    }
  }
  for (const auto& [p, name] : processes)
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", p}, {"tid", 0}, {"args", {{"name", name}}}});
  for (const auto& [p, thread] : threads)
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", p}, {"tid", thread},
                      {"args", {{"name", fmt::format("thread {}", thread)}}}});
  json out = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
  return out.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace tagflow::trace
