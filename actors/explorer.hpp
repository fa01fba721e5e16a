// The interleaving explorer: runs one step of a graph under every order in
// which its messages can arrive that can make a difference, checking after
// each that the step gave the values it gives on one device and that its
// trace holds every invariant (trace/check.hpp).
//
// Each run is a fresh deterministic session under a Network
// (actors/network.hpp): whenever no actor has anything to do, the
// explorer's schedule picks which held message (the head of one channel,
// sender → receiver) is delivered next. Two orders that give every actor
// the same sequence of messages lead to the same state (actors are
// deterministic), so the search is over states: a state already expanded
// is not expanded again, and an alternative whose next state is known is
// not run (stateless search with state caching; with the per-receiver
// histories as the state, orders of independent deliveries collapse).
// Larger graphs get seeded random schedules instead. A failing schedule is
// made as short as it can be (its choices other than the first pending
// message, one by one, set back to the first) and is kept with its trace,
// which `tagflow trace replay` re-runs. docs/protocol.md says what was
// explored. Thread-compatible (each call makes its own sessions).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/schedule.hpp"
#include "actors/session.hpp"
#include "trace/check.hpp"
#include "trace/trace.hpp"

namespace tagflow::actors {

struct StepRequest {
  Feeds feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> targets;
  std::vector<std::string> inits;  // targets run first, a step each (variables)
};

struct ExploreOptions {
  int64_t max_runs = 20000;  // runs of the step, at most
  // At most this many deliveries out of arrival order per schedule (-1: no
  // bound): the search is complete within the bound.
  int max_deviations = -1;
  int64_t random_runs = 0;   // > 0: this many seeded random schedules instead
  uint64_t seed = 1;
};

// One run of the step under one schedule.
struct ScheduleRun {
  std::vector<int> choices;                 // the pick at each decision point
  std::vector<PendingMessage> delivered;    // what was delivered, in order
  std::string outcome;                      // the values (hashed) or the error's code
  std::string error;                        // the error, if the step failed
  std::vector<trace::Violation> violations;
  trace::Trace trace;
  uint64_t end_state = 0;
};

struct ExploreReport {
  int64_t runs = 0;
  int64_t states = 0;          // distinct states expanded
  int64_t interleavings = 0;   // distinct complete interleavings (end states)
  int64_t decisions = 0;       // decision points with more than one message
  bool complete = false;       // every order that can differ (within the bound) was run
  int max_deviations = -1;     // the bound it ran with
  std::string reference;       // what the step gives on one device
  std::optional<ScheduleRun> failure;  // a failing schedule, made short
  std::string failure_why;
};

// `base` gives the devices, placement and limits (it runs deterministic).
ExploreReport explore(const graph::Graph& graph, const SessionOptions& base, const StepRequest& step,
                      const ExploreOptions& options = {});

// Runs the step under `choices` (past their end: the first pending
// message each time).
ScheduleRun run_schedule(const graph::Graph& graph, const SessionOptions& base, const StepRequest& step,
                         const std::vector<int>& choices);

// Replays a recorded trace (of the same graph, options and steps): every
// actor is given its messages in the order it took them in the recording
// (its message_taken events). `*diverged` says where the replay could not
// follow the recording ("" if it followed it to the end).
ScheduleRun replay(const graph::Graph& graph, const SessionOptions& base, const StepRequest& step,
                   const trace::Trace& recorded, std::string* diverged);

// The step a trace recorded (its sessions' step_request events,
// trace/event.hpp): the last step's feeds, fetches and targets, and the
// steps before it as its initialisers — each one target, nothing fetched,
// fed what the last step is fed (as `tagflow run --init` runs them). An
// error says why a trace cannot give one (no requests, another kind of
// earlier step, a feed that does not decode).
ops::Expected<StepRequest> recorded_request(const trace::Trace& recorded);

// "deliver report from iteration actor 0 of frame 0x… on partition 1 to …"
std::string describe(const PendingMessage& m);

}  // namespace tagflow::actors
