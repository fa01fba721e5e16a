#include "actors/session.hpp"

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <thread>

#include "actors/partition_actor.hpp"
#include "actors/step_waiter.hpp"
#include "graph/lower_functional.hpp"
#include "graph/step_graph.hpp"
#include "graph/validate.hpp"
#include "ops/resource.hpp"

namespace tagflow::actors {

namespace {

class SessionConfig : public caf::actor_system_config {
 public:
  explicit SessionConfig(const SessionOptions& o) {
    if (o.deterministic) {
      set("scheduler.policy", caf::atom("testing"));
    } else {
      // One worker per core unless told otherwise: CAF's own default is at
      // least 4, and on 2 cores the extra workers' polling competes with
      // the ones that compute (64x64 MatMul loop: 22-24 vs 17-19 µs).
      const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
      set("scheduler.max-threads", o.threads > 0 ? static_cast<size_t>(o.threads) : size_t{cores});
      // Workers poll for a while before they sleep: a step is a burst of
      // short messages, and a sleeping worker costs tens of µs to wake.
      set("work-stealing.aggressive-poll-attempts", size_t{1000});
      set("work-stealing.moderate-sleep-duration", caf::timespan{std::chrono::microseconds(10)});
    }
  }
};

// What one (feeds, fetches, targets) signature needs, made once.
struct Prepared {
  std::shared_ptr<const Executable> exec;
  std::vector<ops::DType> feed_types;
  caf::actor partition;
  std::vector<caf::actor> workers;
};

std::string signature(const Feeds& feeds, const std::vector<std::string>& fetches,
                      const std::vector<std::string>& targets) {
  std::string s;
  for (auto& f : feeds) s += f.first + '\x1f';
  s += '\x1e';
  for (auto& f : fetches) s += f + '\x1f';
  s += '\x1e';
  for (auto& t : targets) s += t + '\x1f';
  return s;
}

}  // namespace

struct Session::Impl {
  Impl(SessionOptions o, std::unique_ptr<SessionConfig> c)
      : options(std::move(o)), config(std::move(c)), system(*config) {}
  ~Impl() {
    for (auto& [sig, p] : prepared) {
      caf::anon_send_exit(p.partition, caf::exit_reason::user_shutdown);
      for (auto& w : p.workers) caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
    }
    if (options.deterministic) drain();
  }

  caf::scheduler::test_coordinator& coordinator() {
    return dynamic_cast<caf::scheduler::test_coordinator&>(system.scheduler());
  }
  void drain() {
    auto& c = coordinator();
    while (c.try_run_once()) {
    }
  }

  ops::Expected<const Prepared*> prepare(const Feeds& feeds, const std::vector<std::string>& fetches,
                                         const std::vector<std::string>& targets) {
    std::string sig = signature(feeds, fetches, targets);
    auto it = prepared.find(sig);
    if (it != prepared.end()) return &it->second;
    std::vector<std::string> feed_names;
    for (auto& f : feeds) feed_names.push_back(f.first);
    TF_ASSIGN_OR_RETURN(graph::StepGraph sg, graph::make_step_graph(graph, feed_names, fetches, targets));
    TF_ASSIGN_OR_RETURN(std::shared_ptr<const Executable> exec, Executable::build(std::move(sg.graph)));
    Prepared p;
    p.exec = exec;
    p.feed_types = std::move(sg.feed_types);
    p.partition = system.spawn<PartitionActor>(exec, sg.fetches);
    // Workers only pay off when another core can run them.
    size_t cores = options.deterministic ? 1 : system.scheduler().num_workers();
    if (cores > 1)
      for (size_t i = 0; i < cores; ++i) p.workers.push_back(system.spawn<KernelWorker>());
    return &prepared.emplace(sig, std::move(p)).first->second;
  }

  SessionOptions options;
  std::unique_ptr<SessionConfig> config;  // must outlive the system
  caf::actor_system system;
  graph::Graph graph;
  std::map<std::string, Prepared> prepared;
  uint64_t next_step = 1;
  ops::ResourceManager resources;  // variables, stacks, TensorArrays
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

ops::Expected<std::unique_ptr<Session>> Session::create(graph::Graph g, SessionOptions options) {
  // Functional ops become Switch/Merge/Enter/Exit first: their names stay
  // valid fetches, and the executor only knows the primitives.
  TF_RETURN_IF_ERROR(graph::lower_functional_ops(&g));
  graph::ValidateOptions v;
  v.allow_unknown_ops = true;
  TF_RETURN_IF_ERROR(graph::validate(g, v));
  auto config = std::make_unique<SessionConfig>(options);
  if (!options.config_file.empty()) {
    std::ifstream ini(options.config_file);
    if (!ini)
      return Status(ops::Error::not_found, "cannot read the configuration file '" + options.config_file + "'");
    caf::error e = config->parse(caf::actor_system_config::string_list{}, ini);
    if (e)
      return Status(ops::Error::parse_error, fmt::format("configuration file '{}': {}", options.config_file,
                                                         caf::to_string(e)));
  }
  auto impl = std::make_unique<Impl>(options, std::move(config));
  impl->graph = std::move(g);
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const graph::Graph& Session::graph() const { return impl_->graph; }

size_t Session::running_actors() const {
  if (impl_->options.deterministic) impl_->drain();
  return impl_->system.registry().running();
}

size_t Session::resident_actors() const {
  size_t n = 0;
  for (auto& [sig, p] : impl_->prepared) n += 1 + p.workers.size();
  return n;
}

ops::Expected<std::vector<ops::Tensor>> Session::run(const Feeds& feeds,
                                                     const std::vector<std::string>& fetches,
                                                     const std::vector<std::string>& targets) {
  TF_ASSIGN_OR_RETURN(const Prepared* p, impl_->prepare(feeds, fetches, targets));
  auto step = std::make_shared<StepShared>();
  step->context.step_id = impl_->next_step++;
  step->context.events = impl_->options.events;
  step->context.resources = &impl_->resources;
  step->max_iterations = impl_->options.max_iterations;
  step->timeout = impl_->options.timeout;
  if (step->timeout.count() > 0) step->deadline = std::chrono::steady_clock::now() + step->timeout;
  step->waiter = std::make_shared<StepWaiter>();
  step->workers = p->workers;
  step->context.use_workers = !p->workers.empty();
  for (size_t i = 0; i < feeds.size(); ++i) {
    const ops::Tensor& t = feeds[i].second;
    if (!t.valid())
      return Status(ops::Error::invalid_argument, fmt::format("feed '{}' has no value", feeds[i].first));
    if (ops::base_dtype(t.dtype()) != p->feed_types[i])
      return Status(ops::Error::invalid_argument,
                    fmt::format("feed '{}' is {} but the graph produces {} there", feeds[i].first,
                                ops::dtype_name(t.dtype()), ops::dtype_name(p->feed_types[i])));
    step->feeds.push_back(t);
  }
  step->context.feeds = &step->feeds;
  std::shared_ptr<StepWaiter> waiter = step->waiter;
  const uint64_t step_id = step->context.step_id;
  caf::anon_send(p->partition, run_step_atom::value, StepPtr(std::move(step)));
  StepWaiter::Result result = Status(ops::Error::internal, "step not run");
  if (!impl_->options.deterministic) {
    result = waiter->wait();
  } else {
    auto& c = impl_->coordinator();
    while (!waiter->done()) {
      if (!c.try_run_once()) {
        waiter->fulfil(Status(ops::Error::internal, "step stalled: no actor has a message to process"));
        break;
      }
    }
    impl_->drain();
    result = waiter->take();
  }
  impl_->resources.end_step(step_id);  // stacks and TensorArrays of the step
  return result;
}

}  // namespace tagflow::actors
