#include "actors/explorer.hpp"

#include <fmt/format.h>

#include <deque>
#include <functional>
#include <limits>
#include <unordered_map>
#include <map>
#include <random>
#include <unordered_set>

#include "actors/network.hpp"
#include "ops/tensor_wire.hpp"
#include "trace/sink.hpp"

namespace tagflow::actors {

namespace {

// The values (every byte, through a hash) or the error's code (its text
// names the partition, which differs from one device).
std::string outcome_of(const ops::Expected<std::vector<ops::Tensor>>& r) {
  if (!r.ok()) return fmt::format("error {}", ops::to_string(r.status().code()));
  std::string s;
  for (const ops::Tensor& t : r.value()) {
    s += t.debug_string(8);
    if (t.valid() && t.raw_data() != nullptr) {
      uint64_t h = 1469598103934665603ull;
      const auto* p = static_cast<const unsigned char*>(t.raw_data());
      for (size_t i = 0; i < t.byte_size(); ++i) h = (h ^ p[i]) * 1099511628211ull;
      s += fmt::format(" #{:x}", h);
    }
    s += "; ";
  }
  return s;
}

// Where a run may branch: the state before a delivery and the state after
// each message that could have been delivered.
struct Decision {
  uint64_t state = 0;
  std::vector<uint64_t> next;
  int chosen = 0;
};

using Choose = std::function<int(const std::vector<PendingMessage>& pending, size_t at)>;

// A session of `graph` that runs the step's initialisers, then the step:
// its outcome, and the error's text in *error if the step failed. The
// session is gone when this returns.
std::string run_request(graph::Graph graph, const SessionOptions& o, const StepRequest& step, std::string* error) {
  auto s = Session::create(std::move(graph), o);
  if (!s.ok()) return "error " + s.status().to_string();
  for (const std::string& init : step.inits) {
    auto r = (*s)->run(step.feeds, {}, {init});
    if (!r.ok()) return "--init " + init + ": " + outcome_of(r);
  }
  auto r = (*s)->run(step.feeds, step.fetches, step.targets);
  if (!r.ok() && error != nullptr) *error = r.status().to_string();
  return outcome_of(r);
}

// A fresh deterministic session under a network whose schedule is
// `choose`; records every decision.
ScheduleRun execute(const graph::Graph& graph, const SessionOptions& base, const StepRequest& step,
                    const Choose& choose, std::vector<Decision>* decisions, bool after_step = false) {
  ScheduleRun run;
  trace::MemorySink sink;
  Network* network = nullptr;
  Network net([&](const std::vector<PendingMessage>& pending) {
    const int pick = choose(pending, run.choices.size());
    if (pick < 0 || static_cast<size_t>(pick) >= pending.size()) return -1;
    if (decisions != nullptr) {
      Decision d;
      d.state = network->state_hash();
      for (const PendingMessage& m : pending) d.next.push_back(network->state_after(m));
      d.chosen = pick;
      decisions->push_back(std::move(d));
    }
    run.choices.push_back(pick);
    run.delivered.push_back(pending[static_cast<size_t>(pick)]);
    return pick;
  }, after_step);
  network = &net;
  {
    Network::Installed installed(&net);
    SessionOptions o = base;
    o.deterministic = true;
    o.threads = 1;
    o.events = &sink;
    run.outcome = run_request(graph, o, step, &run.error);
  }
  run.end_state = net.state_hash();
  run.trace = sink.trace();
  run.violations = trace::check(run.trace);
  return run;
}

// Follows `choices` (an index past the pending list: the first message),
// then the first pending message each time.
Choose following(std::vector<int> choices) {
  return [choices = std::move(choices)](const std::vector<PendingMessage>& pending, size_t at) {
    if (at >= choices.size()) return 0;
    const int c = choices[at];
    return c >= 0 && static_cast<size_t>(c) < pending.size() ? c : 0;
  };
}

}  // namespace

ScheduleRun run_schedule(const graph::Graph& graph, const SessionOptions& base, const StepRequest& step,
                         const std::vector<int>& choices) {
  return execute(graph, base, step, following(choices), nullptr);
}

ExploreReport explore(const graph::Graph& graph, const SessionOptions& base, const StepRequest& step,
                      const ExploreOptions& options) {
  ExploreReport report;
  std::unordered_set<uint64_t> ends;
  const auto fails = [&](const ScheduleRun& r) {
    return r.outcome != report.reference || !r.violations.empty();
  };
  const auto why = [&](const ScheduleRun& r) {
    if (r.outcome != report.reference)
      return fmt::format("the step gave {}, one device gives {}", r.error.empty() ? r.outcome : r.error,
                         report.reference);
    return trace::to_string(r.violations.front());
  };
  {
    // What the step gives on one device, with no schedule: the values
    // every order on the partitions must give.
    SessionOptions one = base;
    one.devices.clear();
    one.num_devices = 1;
    one.cluster.clear();
    one.deterministic = true;
    one.threads = 1;
    one.events = nullptr;
    graph::Graph unplaced = graph;  // device constraints name the partitions' devices
    for (graph::NodeId id = 0; id < unplaced.num_nodes(); ++id) unplaced.mutable_node(id).device.clear();
    report.reference = run_request(std::move(unplaced), one, step, nullptr);
  }
  std::optional<ScheduleRun> failure;
  if (options.random_runs > 0) {
    std::mt19937_64 rng(options.seed);
    for (int64_t k = 0; k < options.random_runs; ++k) {
      Choose random = [&](const std::vector<PendingMessage>& pending, size_t) {
        return k == 0 ? 0 : static_cast<int>(rng() % pending.size());
      };
      std::vector<Decision> decisions;
      ScheduleRun run = execute(graph, base, step, random, &decisions);
      ++report.runs;
      for (const Decision& d : decisions) report.decisions += d.next.size() > 1;
      ends.insert(run.end_state);
      if (fails(run)) {
        failure = std::move(run);
        break;
      }
    }
  } else {
    // A state is expanded again only when reached with fewer deviations
    // from arrival order than before (the bound may have cut it short).
    const int bound = options.max_deviations < 0 ? std::numeric_limits<int>::max() : options.max_deviations;
    std::unordered_map<uint64_t, int> expanded;
    std::unordered_set<uint64_t> queued;
    std::vector<std::vector<int>> stack{{}};
    const auto deviations = [](const std::vector<int>& choices, size_t end) {
      int n = 0;
      for (size_t i = 0; i < end && i < choices.size(); ++i) n += choices[i] != 0;
      return n;
    };
    while (!stack.empty() && report.runs < options.max_runs) {
      std::vector<int> prefix = std::move(stack.back());
      stack.pop_back();
      std::vector<Decision> decisions;
      ScheduleRun run = execute(graph, base, step, following(prefix), &decisions);
      ++report.runs;
      ends.insert(run.end_state);
      if (fails(run)) {
        failure = std::move(run);
        break;
      }
      int used = deviations(run.choices, prefix.size());
      for (size_t d = prefix.size(); d < decisions.size(); ++d) {
        const Decision& at = decisions[d];
        auto seen = expanded.find(at.state);
        if (seen != expanded.end() && seen->second <= used) break;  // explored from here already
        expanded[at.state] = used;
        if (at.next.size() > 1) ++report.decisions;
        if (used >= bound) {
          used += at.chosen != 0;
          continue;
        }
        for (size_t a = 0; a < at.next.size(); ++a) {
          if (static_cast<int>(a) == at.chosen || expanded.count(at.next[a]) != 0 || !queued.insert(at.next[a]).second)
            continue;
          std::vector<int> branch(run.choices.begin(), run.choices.begin() + static_cast<long>(d));
          branch.push_back(static_cast<int>(a));
          stack.push_back(std::move(branch));
        }
        used += at.chosen != 0;
      }
    }
    report.max_deviations = options.max_deviations;
    report.states = static_cast<int64_t>(expanded.size());
    report.complete = !failure && stack.empty();
  }
  report.interleavings = static_cast<int64_t>(ends.size());
  if (failure) {
    // As short as it gets: every choice that can go back to the first
    // pending message while the run still fails does.
    std::vector<int> best = failure->choices;
    for (size_t i = 0; i < best.size(); ++i) {
      if (best[i] == 0) continue;
      std::vector<int> candidate = best;
      candidate[i] = 0;
      ScheduleRun again = run_schedule(graph, base, step, candidate);
      if (fails(again)) {
        best = again.choices;
        failure = std::move(again);
      }
    }
    while (!best.empty() && best.back() == 0) best.pop_back();
    failure->choices = best;
    report.failure_why = why(*failure);
    report.failure = std::move(failure);
  }
  return report;
}

ScheduleRun replay(const graph::Graph& graph, const SessionOptions& base, const StepRequest& step,
                   const trace::Trace& recorded, std::string* diverged) {
  // What each actor took, in order.
  std::map<trace::ActorRef, std::deque<std::pair<trace::ActorRef, uint64_t>>> expected;
  for (const trace::Event& e : recorded.events())
    if (e.kind == trace::Kind::message_taken) expected[e.to].emplace_back(e.from, e.seq);
  diverged->clear();
  Choose follow = [&](const std::vector<PendingMessage>& pending, size_t) -> int {
    bool left = false;
    for (size_t i = 0; i < pending.size(); ++i) {
      auto it = expected.find(pending[i].to);
      if (it == expected.end() || it->second.empty()) continue;
      left = true;
      if (it->second.front() == std::make_pair(pending[i].from, pending[i].seq)) {
        it->second.pop_front();
        return static_cast<int>(i);
      }
    }
    if (!left) return 0;  // past the recording: messages that only stop actors
    if (diverged->empty()) {
      std::string waiting;
      for (const auto& [to, queue] : expected)
        if (!queue.empty()) {
          waiting = fmt::format("{} took message {} from {} next in the recording", trace::describe(to),
                                queue.front().second, trace::describe(queue.front().first));
          break;
        }
      *diverged = fmt::format("the replay cannot follow the recording: {}, but no such message is on its way "
                              "(pending: {})",
                              waiting, describe(pending.front()));
    }
    return -1;
  };
  return execute(graph, base, step, follow, nullptr, /*after_step=*/true);
}

ops::Expected<StepRequest> recorded_request(const trace::Trace& recorded) {
  using ops::Error;
  using ops::Status;
  struct Asked {
    uint64_t step;
    std::vector<std::string> feed_texts;
    StepRequest request;
  };
  std::vector<Asked> steps;
  for (uint64_t step : recorded.steps()) {
    Asked a{step, {}, {}};
    for (size_t i : recorded.of_step(step)) {
      const trace::Event& e = recorded[i];
      if (e.kind != trace::Kind::step_request) continue;
      const size_t space = e.text.find(' ');
      const std::string role = e.text.substr(0, space), rest = space == std::string::npos ? "" : e.text.substr(space + 1);
      if (role == "fetch") {
        a.request.fetches.push_back(rest);
      } else if (role == "target") {
        a.request.targets.push_back(rest);
      } else if (role == "feed") {
        const size_t cut = rest.find(' ');
        const std::string hex = cut == std::string::npos ? "" : rest.substr(cut + 1);
        std::string bytes;
        for (size_t k = 0; k + 1 < hex.size(); k += 2) bytes += static_cast<char>(std::stoi(hex.substr(k, 2), nullptr, 16));
        auto value = ops::decode_tensor_wire(bytes, std::numeric_limits<int64_t>::max());
        if (hex.size() % 2 != 0 || !value.ok())
          return Status(Error::parse_error, fmt::format("the trace's step {} feeds '{}' a value that does not decode{}",
                                                        step, rest.substr(0, cut),
                                                        value.ok() ? "" : ": " + value.status().message()));
        a.feed_texts.push_back(rest);
        a.request.feeds.emplace_back(rest.substr(0, cut), std::move(value).value());
      } else {
        return Status(Error::parse_error, fmt::format("the trace's step {} has a request '{}' of no known kind", step, e.text));
      }
    }
    if (!a.request.fetches.empty() || !a.request.targets.empty()) steps.push_back(std::move(a));
  }
  if (steps.empty())
    return Status(Error::not_found, "the trace records no step's feeds, fetches or targets (recorded by an older "
                                    "tagflow?); give the step's --fetch, --feed and --target");
  StepRequest out = std::move(steps.back().request);
  for (size_t k = 0; k + 1 < steps.size(); ++k) {
    const Asked& a = steps[k];
    if (!a.request.fetches.empty() || a.request.targets.size() != 1 || a.feed_texts != steps.back().feed_texts)
      return Status(Error::invalid_argument,
                    fmt::format("the trace's step {} is not an initialiser of its last step (one target, nothing "
                                "fetched, fed as the last step is); give the steps' flags",
                                a.step));
    out.inits.push_back(a.request.targets.front());
  }
  return out;
}

std::string describe(const PendingMessage& m) {
  return fmt::format("{} #{} from {} to {}", trace::to_string(m.kind), m.seq, trace::describe(m.from),
                     trace::describe(m.to));
}

}  // namespace tagflow::actors
