// The message-trace harness for Boost.Test: a thin layer on the trace
// library (trace/) — run a step with every event recorded into a
// trace::MemorySink (under CAF's testing scheduler the order is the exact
// delivery order, one message at a time), check it with trace::check, and
// ask it the questions the protocol tests ask (iterations per frame
// instance, the parallel_iterations window, overlap).
#pragma once

#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "session_test_util.hpp"
#include "trace/check.hpp"
#include "trace/sink.hpp"

namespace tagflow::testing {

using trace::Event;
using trace::Kind;
using trace::Trace;

// Runs one step of `g` with every event recorded.
inline Trace trace_step(graph::Graph g, const Mode& mode, const actors::Feeds& feeds,
                        const std::vector<std::string>& fetches, std::vector<ops::Tensor>* values = nullptr,
                        actors::SessionOptions o = {}) {
  trace::MemorySink sink;
  o.events = &sink;
  auto s = make_session(std::move(g), mode, o);
  auto out = must_run(*s, feeds, fetches);
  if (values != nullptr) *values = out;
  s.reset();
  return sink.trace();
}

// Every violation of the semantics' invariants, one per line; "" if none.
inline std::string violations(const Trace& t) {
  std::string out;
  for (const trace::Violation& v : trace::check(t)) out += trace::to_string(v) + "\n";
  return out;
}

// The index of the partition named `name` ("CPU:1") in the trace's first
// step, or -2.
inline int32_t partition_named(const Trace& t, const std::string& name) {
  for (const Event& e : t.events())
    if (e.kind == Kind::step_started && t.partition_name(e.step, e.partition) == name) return e.partition;
  return -2;
}

// Events of one kind, of one partition (by name; "" for all).
inline std::vector<Event> events_of(const Trace& t, Kind k, const std::string& partition = "") {
  const int32_t p = partition.empty() ? -2 : partition_named(t, partition);
  std::vector<Event> out;
  for (const Event& e : t.events())
    if (e.kind == k && (partition.empty() || e.partition == p)) out.push_back(e);
  return out;
}

// "w", "o/0/o/in": the tag of a frame instance without its iteration.
inline std::string instance_name(const Trace& t, uint64_t instance) {
  const std::string tag = t.tag(instance, 0);
  return tag.substr(0, tag.rfind('/'));
}

// Iterations started per frame instance (the root excluded), on one
// partition or on all.
inline std::map<std::string, int64_t> iterations_per_frame_instance(const Trace& t, const std::string& partition = "") {
  std::map<std::string, int64_t> n;
  for (const Event& e : events_of(t, Kind::iteration_started, partition))
    if (e.instance != 0) ++n[instance_name(t, e.instance)];
  return n;
}

// The most iterations of one frame instance outstanding at once.
inline int64_t max_outstanding_iterations(const Trace& t, const std::string& instance) {
  int64_t now = 0, most = 0;
  for (const Event& e : t.events()) {
    if (e.instance == 0 || instance_name(t, e.instance) != instance) continue;
    if (e.kind == Kind::iteration_started) most = std::max(most, ++now);
    if (e.kind == Kind::iteration_done) --now;
  }
  return most;
}

// True if some iteration n+1 of `instance` started before n was done.
inline bool iterations_overlap(const Trace& t, const std::string& instance) {
  std::map<int64_t, size_t> started, done;
  for (size_t i = 0; i < t.size(); ++i) {
    const Event& e = t[i];
    if (e.instance == 0 || instance_name(t, e.instance) != instance) continue;
    if (e.kind == Kind::iteration_started) started[e.iteration] = i;
    if (e.kind == Kind::iteration_done) done[e.iteration] = i;
  }
  for (auto& [n, at] : done)
    if (started.count(n + 1) != 0 && started[n + 1] < at) return true;
  return false;
}

// A received message as a line: "frame w <- enter w/limit (dead)",
// "iteration w/1 <- start w/NextIteration".
inline std::string received_line(const Trace& t, const Event& e) {
  const std::string to = e.to.role == trace::Role::frame ? "frame " + instance_name(t, e.instance)
                                                         : "iteration " + t.tag_of(e);
  const std::string what = e.node >= 0 ? " " + t.node_name(e) : std::string();
  return fmt::format("{} <- {}{}{}", to, trace::to_string(e.message), what, e.dead ? " (dead)" : "");
}

}  // namespace tagflow::testing
