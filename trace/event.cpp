#include "trace/event.hpp"

#include <fmt/format.h>

#include <cstring>
#include <tuple>

namespace tagflow::trace {

bool ActorRef::operator<(const ActorRef& o) const {
  return std::tie(role, partition, instance, index) < std::tie(o.role, o.partition, o.instance, o.index);
}

namespace {

Event at_event(Kind kind, const At& at) {
  Event e;
  e.kind = kind;
  e.step = at.step;
  e.partition = at.partition;
  e.instance = at.instance;
  e.iteration = at.iteration;
  return e;
}

Event message(Kind kind, const At& at, MessageKind m, const ActorRef& from, const ActorRef& to, int32_t node,
              uint64_t key, bool dead, int64_t bytes) {
  Event e = at_event(kind, at);
  e.message = m;
  e.from = from;
  e.to = to;
  e.node = node;
  e.key = key;
  e.dead = dead;
  e.bytes = bytes;
  return e;
}

}  // namespace

Event step_started(uint64_t step, int32_t partition, uint64_t names) {
  Event e = at_event(Kind::step_started, At{step, partition, 0, 0});
  e.key = names;
  return e;
}

Event step_done(uint64_t step, int32_t partition, std::string error) {
  Event e = at_event(Kind::step_done, At{step, partition, 0, 0});
  e.text = std::move(error);
  return e;
}

Event frame_created(const At& at, int32_t frame, uint64_t parent_instance, int64_t parent_iteration) {
  Event e = at_event(Kind::frame_created, at);
  e.node = frame;
  e.parent_instance = parent_instance;
  e.parent_iteration = parent_iteration;
  return e;
}

Event frame_done(const At& at) { return at_event(Kind::frame_done, at); }
Event iteration_started(const At& at) { return at_event(Kind::iteration_started, at); }
Event iteration_done(const At& at) { return at_event(Kind::iteration_done, at); }

Event node_ran(const At& at, int32_t node, int64_t start_ns, int64_t duration_ns, int32_t live_port) {
  Event e = at_event(Kind::node_ran, at);
  e.node = node;
  e.time_ns = start_ns;
  e.duration_ns = duration_ns;
  e.port = live_port;
  return e;
}

Event value_dead(const At& at, int32_t node, int32_t input, int32_t src_node, int32_t src_port) {
  Event e = at_event(Kind::value_dead, at);
  e.node = node;
  e.port = input;
  e.src_node = src_node;
  e.src_port = src_port;
  return e;
}

Event merge_input_ignored(const At& at, int32_t node, int32_t input, int32_t first_live) {
  Event e = at_event(Kind::merge_input_ignored, at);
  e.node = node;
  e.port = input;
  e.src_port = first_live;
  return e;
}

Event message_sent(const At& at, MessageKind kind, const ActorRef& from, const ActorRef& to, int32_t node,
                   uint64_t key, bool dead, int64_t bytes) {
  return message(Kind::message_sent, at, kind, from, to, node, key, dead, bytes);
}

Event message_received(const At& at, MessageKind kind, const ActorRef& from, const ActorRef& to, int32_t node,
                       uint64_t key, bool dead, int64_t bytes) {
  return message(Kind::message_received, at, kind, from, to, node, key, dead, bytes);
}

Event message_taken(uint64_t step, const ActorRef& by, const ActorRef& from, MessageKind kind, uint64_t seq) {
  Event e = at_event(Kind::message_taken, At{step, by.partition, by.instance, 0});
  e.message = kind;
  e.to = by;
  e.from = from;
  e.seq = seq;
  return e;
}

Event partition_up(uint64_t step, int32_t partition, std::string name) {
  Event e = at_event(Kind::partition_up, At{step, partition, 0, 0});
  e.text = std::move(name);
  return e;
}

Event partition_down(uint64_t step, int32_t partition, std::string why) {
  Event e = at_event(Kind::partition_down, At{step, partition, 0, 0});
  e.text = std::move(why);
  return e;
}

Event call_started(const At& at, int32_t node, int32_t branch) {
  Event e = at_event(Kind::call_started, at);
  e.node = node;
  e.port = branch;
  return e;
}

Event call_done(const At& at, int32_t node, int32_t branch, int64_t duration_ns, std::string error) {
  Event e = at_event(Kind::call_done, at);
  e.node = node;
  e.port = branch;
  e.duration_ns = duration_ns;
  e.text = std::move(error);
  return e;
}

Event function_iteration_started(const At& at, int32_t node, int64_t iteration) {
  Event e = at_event(Kind::function_iteration_started, at);
  e.node = node;
  e.key = static_cast<uint64_t>(iteration);
  return e;
}

Event function_iteration_done(const At& at, int32_t node, int64_t iteration) {
  Event e = at_event(Kind::function_iteration_done, at);
  e.node = node;
  e.key = static_cast<uint64_t>(iteration);
  return e;
}

Event node_rewritten(uint64_t step, std::string what) {
  Event e = at_event(Kind::node_rewritten, At{step, -1, 0, 0});
  e.text = std::move(what);
  return e;
}

Event step_request(uint64_t step, std::string what) {
  Event e = at_event(Kind::step_request, At{step, -1, 0, 0});
  e.text = std::move(what);
  return e;
}

namespace {

constexpr const char* kKindNames[] = {
    "step_started",      "step_done",   "frame_created",       "frame_done",     "iteration_started",
    "iteration_done",    "node_ran",    "value_dead",          "merge_input_ignored", "message_sent",
    "message_received",  "message_taken", "partition_up",      "partition_down",
    "call_started",      "call_done",   "function_iteration_started", "function_iteration_done",
    "node_rewritten",    "step_request",
};
static_assert(sizeof(kKindNames) / sizeof(kKindNames[0]) == kNumKinds);

constexpr const char* kMessageNames[] = {
    "none",  "transfer",    "enter", "deliver", "start",   "report",  "exits",
    "frame_done", "step_start", "step_result", "abort", "route", "compute", "other",
};
static_assert(sizeof(kMessageNames) / sizeof(kMessageNames[0]) == kNumMessageKinds);

constexpr const char* kRoleNames[] = {"none", "caller", "coordinator", "partition", "frame", "iteration", "worker"};

template <class E, size_t N>
bool parse(const char* const (&names)[N], const std::string& s, E* out) {
  for (size_t i = 0; i < N; ++i)
    if (s == names[i]) {
      *out = static_cast<E>(i);
      return true;
    }
  return false;
}

}  // namespace

const char* to_string(Kind k) {
  const auto i = static_cast<size_t>(k);
  return i < kNumKinds ? kKindNames[i] : "unknown";
}
const char* to_string(MessageKind k) {
  const auto i = static_cast<size_t>(k);
  return i < kNumMessageKinds ? kMessageNames[i] : "unknown";
}
const char* to_string(Role r) {
  const auto i = static_cast<size_t>(r);
  return i < sizeof(kRoleNames) / sizeof(kRoleNames[0]) ? kRoleNames[i] : "unknown";
}
bool parse_kind(const std::string& s, Kind* k) { return parse(kKindNames, s, k); }
bool parse_message_kind(const std::string& s, MessageKind* k) { return parse(kMessageNames, s, k); }
bool parse_role(const std::string& s, Role* r) { return parse(kRoleNames, s, r); }

std::string describe(const ActorRef& a) {
  switch (a.role) {
    case Role::none: return "nobody";
    case Role::caller: return "the caller";
    case Role::coordinator: return "the coordinator";
    case Role::partition: return fmt::format("partition {}", a.partition);
    case Role::frame: return fmt::format("frame {:#x} on partition {}", a.instance, a.partition);
    case Role::iteration:
      return fmt::format("iteration actor {} of frame {:#x} on partition {}", a.index, a.instance, a.partition);
    case Role::worker: return fmt::format("kernel worker {}", a.index);
  }
  return "unknown actor";
}

}  // namespace tagflow::trace
