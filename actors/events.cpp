#include "actors/events.hpp"

#include <fmt/format.h>

namespace tagflow::actors {

const char* to_string(EventKind k) {
  switch (k) {
    case EventKind::step_started: return "step_started";
    case EventKind::step_done: return "step_done";
    case EventKind::frame_created: return "frame_created";
    case EventKind::frame_done: return "frame_done";
    case EventKind::iteration_started: return "iteration_started";
    case EventKind::iteration_done: return "iteration_done";
    case EventKind::node_ran: return "node_ran";
    case EventKind::value_dead: return "value_dead";
    case EventKind::merge_input_ignored: return "merge_input_ignored";
    case EventKind::message_sent: return "message_sent";
    case EventKind::message_received: return "message_received";
    case EventKind::partition_up: return "partition_up";
    case EventKind::partition_down: return "partition_down";
  }
  return "unknown";
}

namespace {

std::string json_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20) out += fmt::format("\\u{:04x}", c);
        else out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

std::string Event::to_json() const {
  std::string out = fmt::format(R"({{"event":"{}","t_ns":{},"step":{})", to_string(kind), time_ns, step);
  auto field = [&](const char* name, const std::string& v) {
    if (!v.empty()) out += fmt::format(R"(,"{}":"{}")", name, json_escape(v));
  };
  field("partition", partition);
  field("tag", tag);
  field("node", node);
  field("op", op);
  if (kind == EventKind::node_ran) out += fmt::format(R"(,"duration_ns":{})", duration_ns);
  field("from", from);
  field("to", to);
  field("key", key);
  if (kind == EventKind::message_sent || kind == EventKind::message_received) {
    out += fmt::format(R"(,"dead":{},"bytes":{})", dead ? "true" : "false", bytes);
  }
  field("detail", detail);
  return out + "}";
}

int64_t EventSink::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                              epoch_)
      .count();
}

void RecordingSink::record(Event e) {
  std::lock_guard<std::mutex> lock(mu_);
  events_.push_back(std::move(e));
}

std::vector<Event> RecordingSink::events() const {
  std::lock_guard<std::mutex> lock(mu_);
  return events_;
}

void RecordingSink::clear() {
  std::lock_guard<std::mutex> lock(mu_);
  events_.clear();
}

std::unique_ptr<JsonlSink> JsonlSink::open(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return nullptr;
  return std::unique_ptr<JsonlSink>(new JsonlSink(f));
}

JsonlSink::~JsonlSink() { std::fclose(file_); }

void JsonlSink::record(Event e) {
  std::string line = e.to_json();
  line += '\n';
  std::lock_guard<std::mutex> lock(mu_);
  std::fwrite(line.data(), 1, line.size(), file_);
}

}  // namespace tagflow::actors
