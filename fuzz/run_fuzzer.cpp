// libFuzzer harness: runs the step that run_program.hpp decodes from the
// input in a Session under tight limits — at most kMaxIterations iterations
// per frame instance, kTimeout per step and kMemoryLimit of tensors — on 1-4 devices with random
// placement, on the deterministic or the threaded scheduler, twice. A step
// error is an ordinary outcome; a finding is a crash, a sanitizer report, a
// hang (libFuzzer's -timeout), an actor of a finished step left alive, or,
// for a program whose Merges never see two live inputs, a result that
// differs between the two steps or from the same graph run on one device by
// the deterministic scheduler, or from the same step with every optimiser
// pass (graph/optimize/). Seeds: fuzz/corpus/run.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "actors/session.hpp"
#include "run_program.hpp"

namespace {

using namespace tagflow;

constexpr int64_t kMaxIterations = 16;
constexpr std::chrono::seconds kTimeout{5};
constexpr int64_t kMemoryLimit = int64_t{64} << 20;

struct Outcome {
  ops::Status status;
  std::vector<ops::Tensor> values;

  std::string to_string() const {
    if (!status.ok()) return status.to_string();
    std::string s;
    for (const ops::Tensor& t : values) s += t.debug_string() + "; ";
    return s;
  }
};

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "tagflow fuzz run: %s\n", what.c_str());
  std::abort();
}

bool same(const Outcome& a, const Outcome& b) {
  if (a.status.ok() != b.status.ok()) return false;
  if (!a.status.ok()) return true;  // which error is reported may differ
  if (a.values.size() != b.values.size()) return false;
  for (size_t i = 0; i < a.values.size(); ++i)
    if (!a.values[i].equals(b.values[i])) return false;
  return true;
}

// A timeout depends on the machine, not on the graph.
bool timed_out(const Outcome& o) { return o.status.code() == ops::Error::deadline_exceeded; }

actors::SessionOptions options(const fuzz::RunCase& c, bool reference) {
  actors::SessionOptions o;
  o.max_iterations = kMaxIterations;
  o.timeout = kTimeout;
  o.memory_limit = kMemoryLimit;
  o.strict_merge = c.strict_merge;
  if (reference) {
    o.deterministic = true;
    o.num_devices = 1;
    return o;
  }
  o.deterministic = !c.threaded;
  o.threads = 2;
  o.num_devices = c.devices;
  o.placement.strategy = graph::PlacementOptions::Strategy::random;
  o.placement.seed = c.placement_seed;
  return o;
}

// Runs the case's step `steps` times in one session; the first outcome.
Outcome run(const fuzz::RunCase& c, const actors::SessionOptions& o, int steps) {
  auto session = actors::Session::create(c.graph, o);
  if (!session.ok()) return {session.status(), {}};
  Outcome first;
  for (int i = 0; i < steps; ++i) {
    auto r = (*session)->run(c.feeds, c.fetches);
    Outcome now = r.ok() ? Outcome{ops::ok_status(), std::move(r).value()} : Outcome{r.status(), {}};
    if (o.deterministic && (*session)->running_actors() != (*session)->resident_actors())
      finding("step " + std::to_string(i + 1) + " left " +
              std::to_string((*session)->running_actors() - (*session)->resident_actors()) +
              " actors alive");
    if (i == 0) {
      first = std::move(now);
    } else if (c.deterministic_result && !timed_out(first) && !timed_out(now) && !same(first, now)) {
      finding("two steps of one session differ: " + first.to_string() + " vs " + now.to_string());
    }
  }
  return first;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto c = fuzz::decode_run_case(data, size);
  if (!c.ok()) return -1;  // nothing to run: not worth keeping in the corpus
  Outcome subject = run(*c, options(*c, false), 2);
  if (!c->deterministic_result) return 0;
  const bool spread = c->devices > 1 || c->threaded;  // else the subject is the one-device run
  Outcome reference = spread ? run(*c, options(*c, true), 1) : subject;
  if (spread && !timed_out(subject) && !timed_out(reference) && !same(subject, reference))
    finding("on " + std::to_string(c->devices) + " device(s)" + (c->threaded ? ", threaded: " : ": ") +
            subject.to_string() + "; on one device: " + reference.to_string());
  // The graph optimiser changes no value (docs/optimizer.md): a step that
  // gives values gives the same ones, bitwise, with every pass.
  if (reference.status.ok()) {
    actors::SessionOptions o = options(*c, false);
    o.optimize = "default";
    Outcome optimized = run(*c, o, 1);
    if (!timed_out(optimized) && !same(reference, optimized))
      finding("the optimiser changed the step: " + optimized.to_string() + "; as written: " + reference.to_string());
  }
  return 0;
}
