#include "actors/session.hpp"

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <condition_variable>
#include <limits>
#include <map>
#include <mutex>

#include "actors/coordinator.hpp"
#include "actors/execution_plan.hpp"
#include "actors/function_runtime.hpp"
#include "actors/network.hpp"
#include "actors/partition_actor.hpp"
#include "actors/partition_hosts.hpp"
#include "actors/session_config.hpp"
#include "actors/step_waiter.hpp"
#include "graph/device.hpp"
#include "graph/function_instantiator.hpp"
#include "graph/implementation_selection.hpp"
#include "graph/optimize/optimizer.hpp"
#include "graph/partition.hpp"
#include "graph/step_graph.hpp"
#include "graph/step_plan.hpp"
#include "graph/shape_inference.hpp"
#include "graph/validate.hpp"
#include "ops/memory_budget.hpp"
#include "ops/tensor_wire.hpp"
#include "ops/resource.hpp"

namespace tagflow::actors {

namespace {

// What one (feeds, fetches, targets) signature needs, made once: a
// partition actor per device that holds nodes of the step.
struct Prepared {
  std::vector<std::shared_ptr<const Executable>> execs;
  std::vector<std::string> partition_names;
  std::vector<std::string> partition_devices;  // full names
  std::vector<std::string> partition_places;   // names with their task and address, for the coordinator
  std::vector<graph::DeclaredOutput> feeds;  // what the graph declares at each feed
  std::vector<caf::actor> partitions;
  // By partition: the feeds it reads (the others are not sent to it).
  std::vector<std::vector<bool>> reads_feed;
  bool remote = false;  // some partition runs on another task
  // A step run on the caller's thread (Session::run): one partition of this
  // process, no control flow, no transfers, at most one expensive node,
  // no events; set when the step may run so (and then `partitions` is
  // empty: no actor runs it). Its fetch names, and the
  // iteration states callers take turns with (one each while they run).
  std::shared_ptr<ops::ResourceManager> direct_resources;
  std::vector<std::string> fetch_names;
  // What the optimiser changed in the step graph, recorded as events at
  // the start of each step (trace::node_rewritten).
  std::vector<std::string> rewrites;
  mutable std::mutex direct_mu;
  mutable std::vector<std::unique_ptr<IterationState>> direct_states;
};

// The values of `feeds` partition `i` of `p` reads, at their positions;
// invalid tensors for the feeds it does not read.
std::vector<ops::Tensor> feeds_of(const Prepared& p, size_t i, const Feeds& feeds) {
  std::vector<ops::Tensor> values(feeds.size());
  for (size_t f = 0; f < feeds.size(); ++f)
    if (p.reads_feed[i][f]) values[f] = feeds[f].second;
  return values;
}

// The feeds `exec` reads, by position among the step's `n` feeds.
std::vector<bool> feeds_read(const Executable& exec, size_t n) {
  std::vector<bool> reads(n, false);
  for (const NodeItem& item : exec.items())
    if (item.kind == NodeKind::arg && item.index >= 0 && static_cast<size_t>(item.index) < n)
      reads[static_cast<size_t>(item.index)] = true;
  return reads;
}

// "CPU:0" for a device of the local task, else its full name.
std::string partition_label(const std::string& device) {
  auto d = graph::parse_device_name(device);
  if (!d.ok() || !d->type || !d->id) return device;
  if (d->job.value_or("localhost") == "localhost" && d->replica.value_or(0) == 0 &&
      d->task.value_or(0) == 0)
    return fmt::format("{}:{}", *d->type, *d->id);
  return device;
}

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

Status outside(const std::string& what, int64_t min, int64_t max, const char* note = "") {
  return Status(ops::Error::invalid_argument,
                fmt::format("{} is outside the allowed range ({}){}", what, range_text(min, max), note));
}

// A limit from the options if set, else the configuration's [tagflow] key,
// else its default.
ops::Expected<int64_t> resolve_limit(const std::optional<int64_t>& option, const char* name,
                                     const SessionConfig& config, int64_t min, int64_t max,
                                     int64_t fallback) {
  if (option) {
    if (*option < min || *option > max) return outside(fmt::format("--{} {}", name, *option), min, max);
    return *option;
  }
  TF_ASSIGN_OR_RETURN(std::optional<int64_t> configured, config.integer(name, min, max));
  return configured.value_or(fallback);
}

ops::Expected<int64_t> resolve_memory_limit(const std::optional<int64_t>& option, const SessionConfig& config) {
  if (option) {
    if (*option < limits::kMinMemoryLimit || *option > limits::kMaxMemoryLimit)
      return Status(ops::Error::invalid_argument,
                    fmt::format("--memory-limit {} is outside the allowed range ({} to {})",
                                ops::format_bytes(*option), ops::format_bytes(limits::kMinMemoryLimit),
                                ops::format_bytes(limits::kMaxMemoryLimit)));
    return *option;
  }
  TF_ASSIGN_OR_RETURN(std::optional<int64_t> configured, config.memory_limit());
  if (configured) return *configured;
  return std::clamp(ops::default_memory_limit(), limits::kMinMemoryLimit, limits::kMaxMemoryLimit);
}

// The session's devices: the options' names, else `num_devices` local
// CPUs, else the configuration's, else CPU:0; each a full name.
ops::Expected<std::vector<std::string>> resolve_devices(const SessionOptions& o, const SessionConfig& config) {
  std::vector<std::string> devices = o.devices;
  if (devices.empty() && o.num_devices > 0) devices = graph::local_devices(o.num_devices);
  TF_ASSIGN_OR_RETURN(std::vector<std::string> configured, config.devices());
  if (devices.empty()) devices = std::move(configured);
  if (devices.empty()) devices = graph::local_devices(1);
  for (const std::string& d : devices) {
    auto name = graph::parse_device_name(d);
    if (!name.ok()) return name.status().with_prefix("session devices: ");
    if (!name->job || !name->replica || !name->task || !name->type || !name->id)
      return Status(ops::Error::invalid_argument,
                    fmt::format("session devices: '{}' is not a full device name "
                                "(/job:J/replica:R/task:T/device:TYPE:ID)", ops::abbreviate(d)));
  }
  return devices;
}

// Frames within frames beyond the limit, on any partition of a step.
Status check_frame_depth(const Executable& exec, int64_t max_depth) {
  for (const graph::FrameInfo& f : exec.control_flow().frames)
    if (f.depth > max_depth)
      return Status(ops::Error::resource_exhausted,
                    fmt::format("frame '{}' on partition {} is nested {} frames deep, over the "
                                "limit of {} (--max-frame-depth, [tagflow] max-frame-depth)",
                                f.name, exec.partition(), f.depth, max_depth));
  return ops::ok_status();
}

}  // namespace

ops::Expected<std::chrono::nanoseconds> timeout_from_ms(int64_t milliseconds) {
  const int64_t max_ms = std::chrono::duration_cast<std::chrono::milliseconds>(limits::kMaxTimeout).count();
  if (milliseconds < 0 || milliseconds > max_ms)
    return Status(ops::Error::invalid_argument,
                  fmt::format("--timeout {} ms is outside the allowed range (0 to {} ms: 366 days)",
                              milliseconds, max_ms));
  return std::chrono::nanoseconds(std::chrono::milliseconds(milliseconds));
}

ops::Expected<bool> Session::names_cluster(const SessionOptions& options) {
  if (!options.cluster.empty()) return true;
  SessionOptions o = options;
  o.hosts = nullptr;
  o.threads = 0;  // resolve_options checks it; it does not name a cluster
  SessionConfig config(o);
  TF_RETURN_IF_ERROR(config.load());
  return !config.cluster().empty();
}

ops::Expected<SessionOptions> Session::resolve_options(SessionOptions o) {
  if (o.threads < 0 || o.threads > limits::kMaxThreads)
    return outside(fmt::format("--threads {}", o.threads), 0, limits::kMaxThreads, "; 0: one per core");
  if (o.num_devices < 0 || o.num_devices > limits::kMaxDevices)
    return outside(fmt::format("--devices {}", o.num_devices), 1, limits::kMaxDevices);
  if (static_cast<int64_t>(o.devices.size()) > limits::kMaxDevices)
    return outside(fmt::format("session devices: {} devices", o.devices.size()), 1, limits::kMaxDevices);
  if (o.timeout.count() < 0 || o.timeout > limits::kMaxTimeout)
    return Status(ops::Error::invalid_argument,
                  fmt::format("the timeout of {} ns is outside the allowed range (0 to 366 days)",
                              o.timeout.count()));
  SessionConfig config(o);
  TF_RETURN_IF_ERROR(config.load());
  TF_ASSIGN_OR_RETURN(o.devices, resolve_devices(o, config));
  if (!config.cluster().empty() || !o.cluster.empty()) {
    if (o.deterministic)
      return Status(ops::Error::invalid_argument,
                    fmt::format("{} names a cluster, but a deterministic session runs in one process",
                                o.cluster.empty() ? config.cluster_source() : "--cluster"));
    if (!o.hosts)
      return Status(ops::Error::invalid_argument,
                    fmt::format("{} names a cluster, but this session cannot reach other processes "
                                "(SessionOptions::hosts: a net::ClusterHosts)",
                                o.cluster.empty() ? config.cluster_source() : "--cluster"));
    TF_RETURN_IF_ERROR(o.hosts->set_cluster(config.cluster(), config.cluster_source(), o.cluster,
                                            config.task_devices()));
    for (const std::string& d : o.hosts->devices())
      if (std::find(o.devices.begin(), o.devices.end(), d) == o.devices.end()) o.devices.push_back(d);
  }
  o.num_devices = 0;
  constexpr int64_t kAny = std::numeric_limits<int64_t>::max();
  TF_ASSIGN_OR_RETURN(o.max_iterations, resolve_limit(o.max_iterations, "max-iterations", config, 0, kAny, 0));
  TF_ASSIGN_OR_RETURN(o.max_nodes, resolve_limit(o.max_nodes, "max-nodes", config, 1, limits::kMaxNodes,
                                                 limits::kDefaultMaxNodes));
  TF_ASSIGN_OR_RETURN(o.max_frame_depth, resolve_limit(o.max_frame_depth, "max-frame-depth", config, 1,
                                                       limits::kMaxFrameDepth, limits::kDefaultMaxFrameDepth));
  TF_ASSIGN_OR_RETURN(o.memory_limit, resolve_memory_limit(o.memory_limit, config));
  o.strict_merge = o.strict_merge || config.strict_merge();
  o.no_shortcuts = o.no_shortcuts || config.no_shortcuts();
  if (!o.lower_functional) o.lower_functional = config.lower_functional();
  if (!o.lower_functional) o.lower_functional = limits::kDefaultLowerFunctional;
  // TAGFLOW_OPTIMIZE runs every session of a process (a test suite) through
  // the optimiser (docs/testing.md).
  if (!o.optimize)
    if (const char* env = std::getenv("TAGFLOW_OPTIMIZE"); env != nullptr && *env != '\0') o.optimize = env;
  if (!o.optimize) o.optimize = config.optimize();
  if (!o.optimize) o.optimize = std::string(limits::kDefaultOptimize);
  // Partitions on other processes get graphs without function libraries.
  if (!config.cluster().empty() || !o.cluster.empty()) o.lower_functional = true;
  return o;
}

struct Session::Impl {
  Impl(SessionOptions o, std::unique_ptr<SessionConfig> c)
      : options(std::move(o)), config(std::move(c)), system(*config),
        network(options.deterministic ? Network::installed() : nullptr) {
    coordinator = system.spawn<StepCoordinator>(options.events);
    // Workers only pay off when another core can run them.
    size_t cores = options.deterministic ? 1 : system.scheduler().num_workers();
    if (cores > 1)
      for (size_t i = 0; i < cores; ++i) workers.push_back(system.spawn<KernelWorker>());
  }
  ~Impl() {
    end_running_steps();
    for (auto& [sig, p] : prepared)
      for (auto& a : p->partitions) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    for (auto& w : workers) caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(coordinator, caf::exit_reason::user_shutdown);
    if (options.deterministic) drain();
  }

  // A step that still runs when the session is destroyed (its kernels
  // may wait for a step that never comes) ends with `cancelled`; the
  // destructor goes on when every Session::run has returned. The step's
  // actors end with their partitions, which cancel its waits.
  void end_running_steps() {
    std::unique_lock<std::mutex> lock(running_mu);
    closing = true;
    for (auto& [waiter, step_id] : waiting)
      waiter->fail_all(Status(ops::Error::cancelled,
                              fmt::format("step {} was cancelled: its session was destroyed while it ran", step_id)));
    runs_done.wait(lock, [&] { return runs == 0; });
  }

  // Runs the step's actors until one of them, or (under a network) the
  // schedule, ends it.
  void run_deterministic(StepWaiter& waiter) {
    auto& c = coordinator_of_tests();
    while (!waiter.done()) {
      if (c.try_run_once()) continue;
      if (network != nullptr && network->has_pending()) {
        if (network->deliver_next()) continue;
        waiter.fail_all(Status(ops::Error::aborted, "step stopped by the schedule"));
        break;
      }
      waiter.fail_all(Status(ops::Error::internal, "step stalled: no actor has a message to process"));
      break;
    }
    drain();
  }

  // A step's error that names a node lowered from a function body names
  // its call chain instead.
  Status with_call_chain(const Status& s) {
    std::lock_guard<std::mutex> lock(prepare_mu);
    return functions->with_call_chain(s);
  }

  // Partitions no step will use again: the coordinator stops watching
  // them, then stops them (their end is no partition_down).
  void release(const Prepared& p) {
    if (!p.partitions.empty()) caf::anon_send(coordinator, release_atom::value, p.partitions);
  }

  caf::scheduler::test_coordinator& coordinator_of_tests() {
    return dynamic_cast<caf::scheduler::test_coordinator&>(system.scheduler());
  }
  // Runs every actor until none has anything left to do (under a network:
  // with every held message delivered).
  void drain() {
    auto& c = coordinator_of_tests();
    for (;;) {
      while (c.try_run_once()) {
      }
      if (network == nullptr || !network->has_pending()) return;
      if (!network->chooses_after_step() || !network->deliver_next()) network->deliver_all();
    }
  }

  // The resources of a device of this process (prepare_mu held).
  std::shared_ptr<ops::ResourceManager> resources_of(const std::string& device) {
    auto& r = resources[device];
    if (!r) r = std::make_shared<ops::ResourceManager>();
    return r;
  }

  ops::Expected<caf::actor> spawn_partition(const Prepared& p, size_t i, const std::vector<std::string>& fetches) {
    const std::string& device = p.partition_devices[i];
    if (options.hosts && options.hosts->is_remote(device)) {
      RemotePartition r;
      r.device = device;
      r.name = p.partition_names[i];
      r.graph = &p.execs[i]->graph();
      r.devices = p.partition_devices;
      r.index = static_cast<int>(i);
      r.fetch_names = fetches;
      r.client = coordinator;
      return options.hosts->spawn(system, r);
    }
    PartitionEnv env{resources_of(device), workers, options.events, static_cast<int32_t>(i),
                     options.protocol_mutant == SessionOptions::ProtocolMutant::partition_drops_early_transfers,
                     !options.deterministic};
    return system.spawn<PartitionActor>(p.execs[i], fetches, std::move(env));
  }

  graph::PartitionMutant partition_mutant() const {
    graph::PartitionMutant m;
    m.indicators_ignore_control_inputs =
        options.protocol_mutant == SessionOptions::ProtocolMutant::indicators_ignore_control_inputs;
    return m;
  }

  ops::Expected<std::shared_ptr<const Prepared>> prepare(const Feeds& feeds, const std::vector<std::string>& fetches,
                                                         const std::vector<std::string>& targets) {
    std::string sig = signature(feeds, fetches, targets);
    std::lock_guard<std::mutex> lock(prepare_mu);
    auto it = prepared.find(sig);
    if (it != prepared.end()) return it->second;
    graph::StepSignature step;
    for (const auto& f : feeds) step.feeds.push_back(f.first);
    step.fetches = fetches;
    step.targets = targets;
    TF_ASSIGN_OR_RETURN(graph::StepPlan plan, plan_step(step));
    auto p = std::make_shared<Prepared>();
    for (const graph::optimize::Change& c : plan.changes)
      p->rewrites.push_back(fmt::format("{}: {} '{}'{}{}", c.pass, c.action, c.node, c.detail.empty() ? "" : " ",
                                        c.detail));
    std::vector<graph::Graph> graphs;
    for (graph::Partition& part : plan.partitions) {
      p->partition_devices.push_back(part.device);
      graphs.push_back(std::move(part.graph));
    }
    for (const std::string& d : p->partition_devices) {
      std::string label = partition_label(d);
      std::string place = label;
      if (options.hosts && options.hosts->is_remote(d)) {
        label = d;
        place = d + " on " + options.hosts->describe(d);
        p->remote = true;
      }
      p->partition_names.push_back(std::move(label));
      p->partition_places.push_back(std::move(place));
    }
    TF_ASSIGN_OR_RETURN(p->execs, Executable::build_partitions(std::move(graphs), p->partition_names, runtime.get()));
    for (const auto& exec : p->execs) TF_RETURN_IF_ERROR(check_frame_depth(*exec, *options.max_frame_depth));
    p->feeds = std::move(plan.feeds);
    for (const auto& exec : p->execs) p->reads_feed.push_back(feeds_read(*exec, feeds.size()));
    ExecutionPolicy policy;
    policy.shortcuts = !options.no_shortcuts;
    policy.events = options.events != nullptr;
    policy.deterministic = options.deterministic;
    policy.timeout = options.timeout.count() > 0;
    if (plan_execution(p->execs, p->remote, policy).on_callers_thread) {
      // Its steps run on the callers' threads: no partition actor.
      p->direct_resources = resources_of(p->partition_devices[0]);
      p->fetch_names = plan.fetches;
    } else {
      for (size_t i = 0; i < p->execs.size(); ++i) {
        auto actor = spawn_partition(*p, i, plan.fetches);
        if (!actor.ok()) {
          release(*p);
          return actor.status();
        }
        p->partitions.push_back(std::move(actor).value());
      }
    }
    prepared.emplace(sig, p);
    return std::shared_ptr<const Prepared>(p);
  }

  // A step on the caller's thread: the partition's root iteration runs here
  // as its partition actor would run it (PartitionActor::run_inline), with
  // nothing to wait for — no kernel batches, transfers or child frames.
  StepWaiter::Result run_direct(const Prepared& p, const Feeds& feeds) {
    const Executable& exec = *p.execs[0];
    uint64_t step_id = 0;
    {
      std::lock_guard<std::mutex> starting(start_mu);
      step_id = next_step++;
    }
    const std::vector<ops::Tensor> feed_values = feeds_of(p, 0, feeds);
    auto memory = std::make_shared<ops::MemoryBudget>(*options.memory_limit);
    StepContext ctx;
    ctx.step_id = step_id;
    ctx.feeds = &feed_values;
    ctx.resources = p.direct_resources.get();
    ctx.partition = 0;
    ctx.memory = memory.get();
    ctx.strict_merge = options.strict_merge;
    StepGuard guard;  // no deadline: a timed step does not run here
    guard.step_id = step_id;
    guard.max_iterations = *options.max_iterations;
    ctx.guard = &guard;
    std::unique_ptr<IterationState> state;
    {
      std::lock_guard<std::mutex> lock(p.direct_mu);
      if (!p.direct_states.empty()) {
        state = std::move(p.direct_states.back());
        p.direct_states.pop_back();
      }
    }
    if (!state) state = std::make_unique<IterationState>();
    state->reset(exec, graph::kRootFrame, Tag(), ctx);
    // Nothing but fetches leaves such a root iteration.
    struct Fetches : OutboxSink {
      std::vector<OutValue> values;
      Status drain(Outbox& out) {
        for (OutValue& v : out.fetches) values.push_back(std::move(v));
        out.clear();
        return ops::ok_status();
      }
    } fetches;
    Outbox out;
    Status s = state->run_until_idle(ctx, out, fetches);
    p.direct_resources->end_step(step_id);
    {
      std::lock_guard<std::mutex> lock(p.direct_mu);
      p.direct_states.push_back(std::move(state));
    }
    if (!s.ok()) return s;
    return collect_fetches(exec, p.fetch_names, step_id, fetches.values);
  }

  // What each device runs in the step (graph::plan_step) with this
  // session's devices, placement, passes, functions and pinned resources
  // (prepare_mu held). Variables, stacks and TensorArrays live on one
  // device for the whole session (each device has its own resources): a
  // node that makes one goes, in every step, where placing the session's
  // whole graph puts it.
  ops::Expected<graph::StepPlan> plan_step(const graph::StepSignature& step) {
    if (!resource_devices) {
      // an error here is the step's own placement's to report, if it matters
      auto pinned = graph::resource_devices(graph, devices, options.placement);
      resource_devices = pinned.ok() ? std::move(pinned).value() : std::map<std::string, std::string>{};
    }
    graph::StepPlanOptions o;
    o.devices = devices;
    o.placement = options.placement;
    o.passes = passes;
    o.max_constant_bytes = *options.memory_limit;
    o.functions = functions.get();
    o.resource_devices = &*resource_devices;
    o.mutant = partition_mutant();
    return graph::plan_step(graph, step, o);
  }

  // After a partition went down: every prepared step that runs a partition
  // on another task is made again (its worker reconnected) on its next run.
  void forget_remote() {
    std::lock_guard<std::mutex> lock(prepare_mu);
    for (auto it = prepared.begin(); it != prepared.end();) {
      if (it->second->remote) {
        release(*it->second);
        it = prepared.erase(it);
      } else {
        ++it;
      }
    }
  }

  SessionOptions options;
  std::unique_ptr<SessionConfig> config;  // must outlive the system
  std::vector<std::string> devices;
  caf::actor_system system;
  caf::actor coordinator;
  std::vector<caf::actor> workers;  // compute jobs of kernel batches
  graph::Graph graph;  // functional ops not lowered
  // The functions steps call, instantiated when a step first needs them
  // (prepare_mu held).
  std::unique_ptr<graph::FunctionInstantiator> functions;
  // Runs the functional ops that are not lowered (lower_functional false).
  std::unique_ptr<FunctionRuntime> runtime;
  // The optimiser's passes every step graph goes through.
  std::vector<const graph::optimize::Pass*> passes;
  std::map<std::string, std::shared_ptr<const Prepared>> prepared;
  std::map<std::string, std::shared_ptr<ops::ResourceManager>> resources;  // by local device
  std::optional<std::map<std::string, std::string>> resource_devices;  // node -> device
  std::mutex prepare_mu;  // prepared, resources
  // Step ids are taken and the steps handed to the coordinator under this
  // lock, so that every partition sees its steps start in id order
  // (PartitionActor relies on it to tell ended steps from coming ones).
  std::mutex start_mu;
  uint64_t next_step = 1;
  mutable std::mutex last_mu;  // last_partitions
  std::vector<std::string> last_partitions;
  // Steps in Session::run, and the waiters of those the actors run, for
  // the destructor (end_running_steps).
  std::mutex running_mu;
  std::condition_variable runs_done;
  int runs = 0;
  bool closing = false;
  std::map<StepWaiter*, uint64_t> waiting;
  Network* network;  // deterministic sessions made under one: its schedule
  std::mutex deterministic_mu;  // the testing scheduler runs on its caller
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

ops::Expected<std::unique_ptr<Session>> Session::create(graph::Graph g, SessionOptions options) {
  TF_ASSIGN_OR_RETURN(options, resolve_options(std::move(options)));
  // Functional ops stay as they are: each step lowers those it needs to
  // Switch/Merge/Enter/Exit (their names stay valid fetches), so a function
  // no step calls is never instantiated.
  graph::select_implementations(&g);
  if (g.num_nodes() > *options.max_nodes)
    return Status(ops::Error::resource_exhausted,
                  fmt::format("the graph has {} nodes, over the limit of {} (--max-nodes, [tagflow] "
                              "max-nodes)", g.num_nodes(), *options.max_nodes));
  graph::ValidateOptions v;
  v.allow_unknown_ops = true;
  TF_RETURN_IF_ERROR(graph::validate(g, v));
  // Shapes that no run could make agree (docs/shapes.md) refuse the graph
  // here, naming the node, rather than in whichever step reaches it.
  TF_RETURN_IF_ERROR(graph::check_shapes(g));
  auto config = std::make_unique<SessionConfig>(options);
  TF_RETURN_IF_ERROR(config->load());
  auto impl = std::make_unique<Impl>(options, std::move(config));
  impl->graph = std::move(g);
  impl->functions = std::make_unique<graph::FunctionInstantiator>(impl->graph, *impl->options.max_nodes);
  if (!*impl->options.lower_functional) {
    FunctionRuntimeOptions fo;
    fo.max_iterations = *impl->options.max_iterations;
    fo.max_depth = std::min(*impl->options.max_frame_depth, FunctionRuntimeOptions::kMaxCallDepth);
    fo.several_devices = impl->options.devices.size() > 1;
    impl->runtime = std::make_unique<FunctionRuntime>(impl->graph, fo);
    const FunctionRuntime* runtime = impl->runtime.get();
    impl->functions->set_keep([runtime](const graph::Node& n) { return runtime->runs_as_written(n); });
  }
  impl->devices = impl->options.devices;
  TF_ASSIGN_OR_RETURN(impl->passes, graph::optimize::parse_pass_list(*impl->options.optimize));
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

const graph::Graph& Session::graph() const { return impl_->graph; }
std::shared_ptr<const ops::ResourceManager> Session::resources(const std::string& device) const {
  std::lock_guard<std::mutex> lock(impl_->prepare_mu);
  auto it = impl_->resources.find(device);
  return it == impl_->resources.end() ? nullptr : it->second;
}
const std::vector<std::string>& Session::devices() const { return impl_->devices; }
std::vector<std::string> Session::last_partitions() const {
  std::lock_guard<std::mutex> lock(impl_->last_mu);
  return impl_->last_partitions;
}

size_t Session::running_actors() const {
  if (impl_->options.deterministic) impl_->drain();
  return impl_->system.registry().running();
}

size_t Session::resident_actors() const {
  std::lock_guard<std::mutex> lock(impl_->prepare_mu);
  size_t n = impl_->workers.size() + 1;  // and the coordinator
  for (auto& [sig, p] : impl_->prepared)
    for (size_t i = 0; i < p->partitions.size(); ++i)
      if (!(impl_->options.hosts && impl_->options.hosts->is_remote(p->partition_devices[i]))) ++n;
  return n;
}

namespace {

// The step a caller asked for, as step_request events (trace/event.hpp).
void record_request(trace::Sink& events, uint64_t step, const Feeds& feeds, const std::vector<std::string>& fetches,
                    const std::vector<std::string>& targets) {
  for (const auto& [name, value] : feeds) {
    std::string text = "feed " + name + " ";
    for (unsigned char c : ops::encode_tensor_wire(value)) text += fmt::format("{:02x}", c);
    events.record(trace::step_request(step, std::move(text)));
  }
  for (const std::string& f : fetches) events.record(trace::step_request(step, "fetch " + f));
  for (const std::string& t : targets) events.record(trace::step_request(step, "target " + t));
}

// Counts a Session::run in progress, for the session's destructor.
class RunInProgress {
 public:
  RunInProgress(std::mutex& mu, std::condition_variable& done, int& runs) : mu_(mu), done_(done), runs_(runs) {
    std::lock_guard<std::mutex> lock(mu_);
    ++runs_;
  }
  ~RunInProgress() {
    std::lock_guard<std::mutex> lock(mu_);
    if (--runs_ == 0) done_.notify_all();
  }
  RunInProgress(const RunInProgress&) = delete;
  RunInProgress& operator=(const RunInProgress&) = delete;

 private:
  std::mutex& mu_;
  std::condition_variable& done_;
  int& runs_;
};

}  // namespace

ops::Expected<graph::StepPlan> Session::plan(const graph::StepSignature& step) const {
  std::lock_guard<std::mutex> lock(impl_->prepare_mu);
  return impl_->plan_step(step);
}

ops::Expected<std::vector<ops::Tensor>> Session::run(const Feeds& feeds,
                                                     const std::vector<std::string>& fetches,
                                                     const std::vector<std::string>& targets) {
  // A session destroyed while this step runs waits for it to return, so
  // nothing after the wait may read `impl_` itself.
  Impl& impl = *impl_;
  RunInProgress in_progress(impl.running_mu, impl.runs_done, impl.runs);
  std::unique_lock<std::mutex> serial;
  if (impl.options.deterministic) serial = std::unique_lock<std::mutex>(impl.deterministic_mu);
  TF_ASSIGN_OR_RETURN(std::shared_ptr<const Prepared> p, impl.prepare(feeds, fetches, targets));
  {
    std::lock_guard<std::mutex> lock(impl.last_mu);
    impl.last_partitions = p->partition_names;
  }
  for (size_t i = 0; i < feeds.size(); ++i)
    TF_RETURN_IF_ERROR(graph::check_feed(feeds[i].first, p->feeds[i], feeds[i].second));
  if (p->direct_resources) {
    StepWaiter::Result direct = impl.run_direct(*p, feeds);
    if (!direct.ok()) return impl.with_call_chain(direct.status());
    return direct;
  }
  const size_t n = p->partitions.size();
  auto waiter = std::make_shared<StepWaiter>(static_cast<int>(n));
  StepPlan plan;
  plan.waiter = waiter;
  plan.partitions = p->partitions;
  plan.names = p->partition_places;
  if (impl.options.timeout.count() > 0) plan.deadline = std::chrono::steady_clock::now() + impl.options.timeout;
  plan.starts.resize(n);
  for (size_t i = 0; i < n; ++i) {
    StepStart& s = plan.starts[i];
    s.max_iterations = *impl.options.max_iterations;
    s.memory_limit = *impl.options.memory_limit;
    s.strict_merge = impl.options.strict_merge;
    s.no_shortcuts = impl.options.no_shortcuts;
    s.feeds = feeds_of(*p, i, feeds);
  }
  {
    std::lock_guard<std::mutex> starting(impl.start_mu);
    const uint64_t step_id = impl.next_step++;
    for (StepStart& s : plan.starts) s.step_id = step_id;
    if (impl.options.events != nullptr) {
      record_request(*impl.options.events, step_id, feeds, fetches, targets);
      for (const std::string& what : p->rewrites) impl.options.events->record(trace::node_rewritten(step_id, what));
    }
    std::lock_guard<std::mutex> lock(impl.running_mu);
    if (impl.closing)
      return Status(ops::Error::cancelled, fmt::format("step {} was cancelled: its session is being destroyed", step_id));
    impl.waiting.emplace(waiter.get(), step_id);
    caf::anon_send(impl.coordinator, begin_atom::value, std::move(plan));
  }
  StepWaiter::Result result = Status(ops::Error::internal, "step not run");
  if (!impl.options.deterministic) {
    result = waiter->wait();
    std::lock_guard<std::mutex> lock(impl.running_mu);
    impl.waiting.erase(waiter.get());
  } else {
    impl.run_deterministic(*waiter);
    result = waiter->take();
    std::lock_guard<std::mutex> lock(impl.running_mu);
    impl.waiting.erase(waiter.get());
  }
  if (!result.ok() && result.status().code() == ops::Error::unavailable && p->remote) impl.forget_remote();
  if (!result.ok()) return impl.with_call_chain(result.status());
  return result;
}

}  // namespace tagflow::actors
