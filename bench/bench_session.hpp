// Sessions for the benchmarks: options with TAGFLOW_BENCH_THREADS (else
// one thread per core), and runs that end the benchmark with the error
// (named after the program) instead of measuring a failure.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "actors/session.hpp"

namespace tagflow::bench {

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, what.c_str());
  std::exit(1);
}

inline actors::SessionOptions session_options() {
  actors::SessionOptions o;
  if (const char* env = std::getenv("TAGFLOW_BENCH_THREADS")) o.threads = std::atoi(env);
  return o;
}

inline std::unique_ptr<actors::Session> session(graph::Graph g, const actors::SessionOptions& o = session_options()) {
  auto s = actors::Session::create(std::move(g), o);
  if (!s.ok()) fail(s.status().to_string());
  return std::move(s).value();
}

inline std::vector<ops::Tensor> run(actors::Session& s, const actors::Feeds& feeds,
                                    const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets = {}) {
  auto r = s.run(feeds, fetches, targets);
  if (!r.ok()) fail(r.status().to_string());
  return std::move(r).value();
}

}  // namespace tagflow::bench
