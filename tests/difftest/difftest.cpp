#include "difftest.hpp"

#include <fmt/format.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "actors/session.hpp"

namespace tagflow::difftest {

std::string RunConfig::describe() const {
  std::string s = fmt::format("{} device{}", devices, devices == 1 ? "" : "s");
  if (devices > 1) s += round_robin ? ", round-robin" : fmt::format(", random:{}", seed);
  s += deterministic ? ", deterministic" : fmt::format(", {} thread{}", threads, threads == 1 ? "" : "s");
  if (no_shortcuts) s += ", no shortcuts";
  if (lower) s += ", lowered";
  if (!timed) s += ", no timeout";
  return s;
}

std::string RunConfig::flags() const {
  std::string s = fmt::format("--devices {}", devices);
  if (devices > 1) s += round_robin ? " --place round-robin" : fmt::format(" --place random:{}", seed);
  if (!deterministic) s += fmt::format(" --threads {}", threads);
  if (lower) s += " --lower";
  return s;
}

std::string Outcome::summary() const {
  if (!ok) return message;
  std::string s;
  for (const std::string& v : values) s += (s.empty() ? "" : "; ") + v;
  return s;
}

namespace {

std::string bits(const ops::Tensor& t) {
  std::string s = fmt::format("{} {} ", ops::dtype_name(t.dtype()), t.shape().to_string());
  const auto* p = static_cast<const unsigned char*>(t.raw_data());
  for (size_t i = 0; p != nullptr && i < t.byte_size(); ++i) s += fmt::format("{:02x}", p[i]);
  return s + " (" + t.values_string(8) + ")";
}

}  // namespace

namespace {

// Ends the process if a run outlives its bound: a run without a step
// timeout that hangs must fail the test, not stop it.
class Watchdog {
 public:
  Watchdog(bool armed, std::chrono::milliseconds bound, std::string what) {
    if (!armed) return;
    thread_ = std::thread([this, bound, what = std::move(what)] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, bound, [this] { return done_; })) {
        std::fprintf(stderr, "difftest: a run did not end within %lld ms: %s\n",
                     static_cast<long long>(bound.count()), what.c_str());
        std::_Exit(3);
      }
    });
  }
  ~Watchdog() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

Outcome run_once(const Emitted& e, const RunConfig& c, const Limits& limits) {
  Watchdog watchdog(!c.timed, 3 * limits.timeout, c.describe());
  Outcome out;
  actors::SessionOptions o;
  o.num_devices = c.devices;
  o.placement.strategy = c.round_robin ? graph::PlacementOptions::Strategy::round_robin
                                       : graph::PlacementOptions::Strategy::random;
  o.placement.seed = c.seed;
  o.deterministic = c.deterministic;
  o.threads = c.deterministic ? 1 : c.threads;
  o.no_shortcuts = c.no_shortcuts;
  o.lower_functional = c.lower;
  if (c.mutant) o.protocol_mutant = actors::SessionOptions::ProtocolMutant::indicators_ignore_control_inputs;
  if (c.timed) o.timeout = limits.timeout;
  o.max_iterations = limits.max_iterations;
  auto fail = [&](const ops::Status& s) {
    out.ok = false;
    out.code = s.code();
    out.message = s.to_string();
    return out;
  };
  auto session = actors::Session::create(e.graph, o);
  if (!session.ok()) return fail(session.status());
  for (const std::string& init : e.inits) {
    auto r = (*session)->run({}, {}, {init});
    if (!r.ok()) return fail(r.status().with_prefix("init " + init + ": "));
  }
  // Two steps: the second reuses the prepared step and the partitions'
  // state, and sees what the first did to the variables.
  for (int step = 0; step < 2; ++step) {
    auto r = (*session)->run(e.feeds, e.fetches);
    if (!r.ok()) return fail(step == 0 ? r.status() : r.status().with_prefix("step 2: "));
    for (const ops::Tensor& t : *r) out.values.push_back(bits(t));
  }
  out.ok = true;
  return out;
}

bool agree(const Outcome& reference, const Outcome& got) {
  if (reference.ok != got.ok) return false;
  return reference.ok ? reference.values == got.values : reference.code == got.code;
}

RunConfig reference_config() { return RunConfig{}; }

std::vector<RunConfig> draw_configs(std::mt19937_64& rng, Form form, int count) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<RunConfig> out;
  for (int k = 0; k < count; ++k) {
    RunConfig c;
    // One device at other thread counts and executor modes now and then;
    // split mostly.
    c.devices = k == 0 || pick(0, 4) > 0 ? pick(2, 5) : 1;
    c.round_robin = pick(0, 5) == 0;
    c.seed = static_cast<uint64_t>(pick(1, 1 << 30));
    const int mode = pick(0, 3);
    c.deterministic = mode == 0;
    c.threads = mode == 3 ? 4 : mode == 2 ? 2 : 1;
    c.no_shortcuts = pick(0, 1) == 1;
    // A TF 2 graph: lowered mostly (the TF 1 executor split), as written
    // now and then on several devices.
    c.lower = form == Form::tf2 && (k == 0 || pick(0, 3) > 0);
    c.timed = c.deterministic || pick(0, 1) == 0;
    out.push_back(c);
  }
  return out;
}

bool usable_reference(const Outcome& o) {
  if (o.ok) return true;
  switch (o.code) {
    case ops::Error::resource_exhausted:
    case ops::Error::deadline_exceeded:
    case ops::Error::internal:
    case ops::Error::aborted:
    case ops::Error::unavailable:
      return false;
    default:
      return true;
  }
}

GraphCheck check_graph(const Program& p, Form form, uint64_t config_seed, int configs, bool mutant) {
  GraphCheck r;
  auto e = emit(p, form);
  if (!e.ok()) {
    r.build_error = e.status().to_string();
    return r;
  }
  r.nodes = e->graph.num_nodes();
  r.reference = run_once(*e, reference_config());
  r.usable = usable_reference(r.reference);
  if (!r.usable) return r;
  std::mt19937_64 rng(config_seed);
  for (RunConfig c : draw_configs(rng, form, configs)) {
    c.mutant = mutant;
    r.runs.push_back(c);
    r.got = run_once(*e, c);
    if (!agree(r.reference, r.got)) {
      r.disagrees = true;
      break;
    }
  }
  return r;
}

}  // namespace tagflow::difftest
