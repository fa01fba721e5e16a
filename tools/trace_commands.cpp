// `tagflow trace check|stats|timeline|explain`: a recorded trace read back.
#include "tools/commands.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <fstream>

#include "trace/check.hpp"
#include "trace/explain.hpp"
#include "trace/stats.hpp"
#include "trace/timeline.hpp"
#include "trace/trace.hpp"

namespace tagflow::tools {

namespace {

bool load(const std::string& path, trace::Trace* t) {
  std::string error;
  if (trace::read_trace(path, t, &error)) return true;
  fail(Status(ops::Error::parse_error, error));
  return false;
}

}  // namespace

int trace_check(const std::string& path) {
  trace::Trace t;
  if (!load(path, &t)) return 1;
  const std::vector<trace::Violation> found = trace::check(t);
  for (const trace::Violation& v : found) std::printf("%s\n", trace::to_string(v).c_str());
  if (!found.empty()) {
    std::fprintf(stderr, "tagflow: %zu violation(s) in %zu events of %zu step(s)\n", found.size(), t.size(),
                 t.steps().size());
    return 1;
  }
  std::printf("%s: %zu events of %zu step(s): every invariant holds\n", path.c_str(), t.size(), t.steps().size());
  return 0;
}

int trace_stats(const std::string& path) {
  trace::Trace t;
  if (!load(path, &t)) return 1;
  std::fputs(trace::format_stats(trace::stats(t)).c_str(), stdout);
  return 0;
}

int trace_timeline(const std::string& path, const std::string& out) {
  trace::Trace t;
  if (!load(path, &t)) return 1;
  std::ofstream f(out, std::ios::binary);
  if (!f) return fail(Status(ops::Error::not_found, "cannot write the timeline file '" + out + "'"));
  f << trace::timeline_json(t);
  if (!f) return fail(Status(ops::Error::internal, "cannot write the timeline file '" + out + "'"));
  std::printf("wrote %s (%zu events; open it in https://ui.perfetto.dev or chrome://tracing)\n", out.c_str(),
              t.size());
  return 0;
}

int trace_explain(const std::string& path, const std::string& node, std::optional<int64_t> iteration) {
  trace::Trace t;
  if (!load(path, &t)) return 1;
  trace::ExplainQuery q;
  q.node = node.substr(0, node.find(':'));
  q.iteration = iteration;
  const trace::Explanation e = trace::explain(t, q);
  std::fputs(trace::format_explanation(e).c_str(), stdout);
  return e.found ? 0 : 1;
}

}  // namespace tagflow::tools
