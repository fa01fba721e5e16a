// The message-trace harness: runs a step with every event recorded (under
// CAF's testing scheduler the order is the exact delivery order, one
// message at a time) and checks protocol invariants over the recording:
// every iteration starts once and ends once, no message reaches a frame
// instance after it is done, the parallel_iterations window holds.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "actors/events.hpp"
#include "session_test_util.hpp"

namespace tagflow::testing {

using actors::Event;
using actors::EventKind;

// "w/3" -> "w"; "o/0/o/in/7" -> "o/0/o/in"; "/" -> "/".
inline std::string frame_instance_of(const std::string& tag) {
  size_t slash = tag.rfind('/');
  return slash == std::string::npos || tag == "/" ? "/" : tag.substr(0, slash);
}

inline int64_t iteration_of(const std::string& tag) {
  size_t slash = tag.rfind('/');
  return tag == "/" ? 0 : std::stoll(tag.substr(slash + 1));
}

struct Trace {
  std::vector<Event> events;

  // The events of one partition (a partitioned step has one stream per
  // partition, interleaved; each obeys the single-partition invariants).
  Trace of_partition(const std::string& partition) const {
    Trace t;
    for (const Event& e : events)
      if (e.partition == partition) t.events.push_back(e);
    return t;
  }

  // "" if every transfer sent (key, sender tag) is received exactly once,
  // with the same tag and dead bit, and nothing is received unsent.
  std::string check_transfers_match() const {
    std::map<std::string, int> balance;
    for (const Event& e : events) {
      if (e.key.rfind("transfer:", 0) != 0) continue;
      std::string id = e.key + " at " + e.tag + (e.dead ? " dead" : " live");
      if (e.kind == EventKind::message_sent) ++balance[id];
      if (e.kind == EventKind::message_received) --balance[id];
    }
    for (auto& [id, n] : balance)
      if (n != 0) return id + (n > 0 ? " sent but not received" : " received but not sent (or twice)");
    return "";
  }

  std::vector<Event> of(EventKind k) const {
    std::vector<Event> out;
    for (const Event& e : events)
      if (e.kind == k) out.push_back(e);
    return out;
  }

  // Index of the first event of kind k with tag t, or -1.
  int64_t find(EventKind k, const std::string& tag, size_t from = 0) const {
    for (size_t i = from; i < events.size(); ++i)
      if (events[i].kind == k && events[i].tag == tag) return static_cast<int64_t>(i);
    return -1;
  }

  // Iterations started per frame instance (the root frame excluded).
  std::map<std::string, int64_t> iterations_per_frame_instance() const {
    std::map<std::string, int64_t> n;
    for (const Event& e : events)
      if (e.kind == EventKind::iteration_started && e.tag != "/") ++n[frame_instance_of(e.tag)];
    return n;
  }

  // "" if every started iteration is started exactly once and done exactly
  // once, after it started; else what is wrong.
  std::string check_iterations_start_once_and_end() const {
    std::map<std::string, int> started, done;
    for (const Event& e : events) {
      if (e.kind == EventKind::iteration_started) {
        if (++started[e.tag] > 1) return "iteration " + e.tag + " started twice";
      } else if (e.kind == EventKind::iteration_done) {
        if (started[e.tag] == 0) return "iteration " + e.tag + " done before it started";
        if (++done[e.tag] > 1) return "iteration " + e.tag + " done twice";
      }
    }
    for (auto& [tag, n] : started)
      if (done[tag] != 1) return "iteration " + tag + " never done";
    return "";
  }

  // "" if no message is sent or received with a tag of a frame instance
  // after that frame instance is done.
  std::string check_no_message_after_frame_done() const {
    std::set<std::string> finished;
    for (const Event& e : events) {
      const std::string instance = frame_instance_of(e.tag);
      if (e.kind == EventKind::frame_done) {
        finished.insert(instance);
      } else if ((e.kind == EventKind::message_received || e.kind == EventKind::message_sent) &&
                 finished.count(instance) != 0) {
        return "message " + e.key + " to " + e.to + " at tag " + e.tag + " after frame " +
               instance + " was done";
      }
    }
    return "";
  }

  // The most iterations of one frame instance outstanding at once.
  int64_t max_outstanding_iterations(const std::string& instance) const {
    int64_t now = 0, most = 0;
    for (const Event& e : events) {
      if (frame_instance_of(e.tag) != instance) continue;
      if (e.kind == EventKind::iteration_started) most = std::max(most, ++now);
      if (e.kind == EventKind::iteration_done) --now;
    }
    return most;
  }

  // True if some iteration n+1 of `instance` started before n was done.
  bool iterations_overlap(const std::string& instance) const {
    std::map<int64_t, size_t> started, done;
    for (size_t i = 0; i < events.size(); ++i) {
      const Event& e = events[i];
      if (e.tag == "/" || frame_instance_of(e.tag) != instance) continue;
      if (e.kind == EventKind::iteration_started) started[iteration_of(e.tag)] = i;
      if (e.kind == EventKind::iteration_done) done[iteration_of(e.tag)] = i;
    }
    for (auto& [n, at] : done)
      if (started.count(n + 1) != 0 && started[n + 1] < at) return true;
    return false;
  }
};

// Runs one step of `g` with every event recorded.
inline Trace trace_step(graph::Graph g, const Mode& mode, const actors::Feeds& feeds,
                        const std::vector<std::string>& fetches,
                        std::vector<ops::Tensor>* values = nullptr, actors::SessionOptions o = {}) {
  actors::RecordingSink sink;
  o.events = &sink;
  auto s = make_session(std::move(g), mode, o);
  auto out = must_run(*s, feeds, fetches);
  if (values != nullptr) *values = out;
  s.reset();
  return Trace{sink.events()};
}

}  // namespace tagflow::testing
