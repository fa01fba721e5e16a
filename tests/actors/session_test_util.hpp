// Helpers for executor tests: corpus loading, sessions at several thread
// counts (scheduler-sensitive behaviour must not depend on them), and
// single-value fetches.
#pragma once

#include <boost/test/unit_test.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "actors/session.hpp"
#include "graph/io/import.hpp"

namespace tagflow::testing {

struct Mode {
  const char* name;
  bool deterministic;
  int threads;
  // Every loop iteration in an actor of its own, also where a frame would
  // run its iterations itself, every root frame in a frame actor
  // (SessionOptions::no_shortcuts).
  bool no_shortcuts = false;
};

// Every test that runs steps runs them in each of these.
inline std::vector<Mode> modes() {
  return {{"deterministic", true, 1},
          {"1 thread", false, 1},
          {"2 threads", false, 2},
          {"4 threads", false, 4},
          {"2 threads, no shortcuts", false, 2, true}};
}

inline graph::Graph load_corpus(const std::string& file) {
  auto g = graph::import_graph_file(std::string(TAGFLOW_TEST_DATA) + "/corpus/" + file);
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

inline std::unique_ptr<actors::Session> make_session(graph::Graph g, const Mode& m,
                                                actors::SessionOptions o = {}) {
  o.deterministic = m.deterministic;
  o.threads = m.threads;
  o.no_shortcuts = o.no_shortcuts || m.no_shortcuts;
  auto s = actors::Session::create(std::move(g), o);
  if (!s.ok()) throw std::runtime_error(s.status().to_string());
  return std::move(s).value();
}

// The values of a successful run; fails the test with the error otherwise.
inline std::vector<ops::Tensor> must_run(actors::Session& s, const actors::Feeds& feeds,
                                         const std::vector<std::string>& fetches,
                                         const std::vector<std::string>& targets = {}) {
  auto r = s.run(feeds, fetches, targets);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  return std::move(r).value();
}

// Waits (briefly) until only the session's resident actors are left.
inline bool no_step_actor_left(actors::Session& s) {
  for (int i = 0; i < 200; ++i) {
    if (s.running_actors() <= s.resident_actors()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

}  // namespace tagflow::testing
