#include "actors/session.hpp"

#include <caf/all.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "actors/coordinator.hpp"
#include "actors/deterministic_driver.hpp"
#include "actors/execution_plan.hpp"
#include "actors/function_runtime.hpp"
#include "actors/kernel_threads.hpp"
#include "actors/partition_actor.hpp"
#include "actors/partition_hosts.hpp"
#include "actors/prepared_signature.hpp"
#include "actors/session_config.hpp"
#include "actors/step_waiter.hpp"
#include "graph/functions/function_instantiator.hpp"
#include "graph/functions/implementation_selection.hpp"
#include "graph/functions/run_as_written.hpp"
#include "graph/optimize/optimizer.hpp"
#include "graph/shapes/shape_inference.hpp"
#include "graph/step_plan.hpp"
#include "graph/validate.hpp"
#include "ops/cpu/kernel_info.hpp"
#include "ops/resource.hpp"
#include "trace/trace.hpp"

namespace tagflow::actors {

struct Session::Impl {
  Impl(SessionOptions o, std::unique_ptr<SessionConfig> c)
      : options(std::move(o)), config(std::move(c)), system(*config),
        driver(system, options.deterministic ? Network::installed() : nullptr) {
    coordinator = system.spawn<StepCoordinator>(options.events);
    if (!options.deterministic) kernel_pool = make_scheduler_pool(system);
    // Workers only pay off when another core can run them.
    size_t cores = options.deterministic ? 1 : system.scheduler().num_workers();
    if (cores > 1)
      for (size_t i = 0; i < cores; ++i) workers.push_back(system.spawn<KernelWorker>());
  }
  ~Impl() {
    // A step that still runs (its kernels may wait for a step that never
    // comes) ends with `cancelled`; its actors end with their partitions,
    // which cancel its waits.
    running.close();
    for (auto& [sig, p] : prepared)
      for (auto& a : p->partitions) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    for (auto& w : workers) caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(coordinator, caf::exit_reason::user_shutdown);
    if (options.deterministic) driver.drain();
  }

  // A step's error that names a node lowered from a function body names
  // its call chain instead.
  Status with_call_chain(const Status& s) {
    std::lock_guard<std::mutex> lock(prepare_mu);
    return functions->with_call_chain(s);
  }

  // Partitions no step will use again: the coordinator stops watching
  // them, then stops them (their end is no partition_down).
  void release(const PreparedSignature& p) {
    if (!p.partitions.empty()) caf::anon_send(coordinator, release_atom::value, p.partitions);
  }

  // The resources of a device of this process (prepare_mu held).
  std::shared_ptr<ops::ResourceManager> resources_of(const std::string& device) {
    auto& r = resources[device];
    if (!r) r = std::make_shared<ops::ResourceManager>();
    return r;
  }

  ops::Expected<caf::actor> spawn_partition(const PreparedSignature& p, size_t i, const std::vector<std::string>& fetches) {
    const std::string& device = p.partition_devices[i];
    if (options.hosts && options.hosts->is_remote(device))
      return options.hosts->spawn(system, remote_partition_of(p, i, fetches, coordinator));
    PartitionEnv env{resources_of(device), workers, options.events, static_cast<int32_t>(i),
                     options.protocol_mutant == SessionOptions::ProtocolMutant::partition_drops_early_transfers,
                     !options.deterministic};
    return system.spawn<PartitionActor>(p.execs[i], fetches, std::move(env));
  }

  ops::Expected<std::shared_ptr<const PreparedSignature>> prepare(const Feeds& feeds, const std::vector<std::string>& fetches,
                                                         const std::vector<std::string>& targets) {
    std::string sig = signature_key(feeds, fetches, targets);
    std::lock_guard<std::mutex> lock(prepare_mu);
    auto it = prepared.find(sig);
    if (it != prepared.end()) return it->second;
    graph::StepSignature step;
    for (const auto& f : feeds) step.feeds.push_back(f.first);
    step.fetches = fetches;
    step.targets = targets;
    TF_ASSIGN_OR_RETURN(graph::StepPlan plan, plan_step(step));
    TF_ASSIGN_OR_RETURN(std::shared_ptr<PreparedSignature> p,
                        prepare_signature(plan, feeds.size(), options.hosts.get(), runtime.get(),
                                          *options.max_frame_depth));
    if (plan_execution(p->execs, p->remote, execution_policy_of(options)).on_callers_thread) {
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
    return std::shared_ptr<const PreparedSignature>(p);
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
      auto pinned = graph::resource_devices(graph, devices, options.placement, *options.max_nodes);
      resource_devices = pinned.ok() ? std::move(pinned).value() : std::map<std::string, std::string>{};
    }
    graph::StepPlanOptions o;
    o.devices = devices;
    o.placement = options.placement;
    o.passes = passes;
    o.max_constant_bytes = *options.memory_limit;
    o.functions = functions.get();
    o.resource_devices = &*resource_devices;
    o.mutant.indicators_ignore_control_inputs =
        options.protocol_mutant == SessionOptions::ProtocolMutant::indicators_ignore_control_inputs;
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
  // Kernels of steps run on the caller's thread split onto the workers
  // through this (nullptr under the deterministic scheduler).
  std::unique_ptr<ops::cpu::WorkerPool> kernel_pool;
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
  std::map<std::string, std::shared_ptr<const PreparedSignature>> prepared;
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
  RunningSteps running;  // for the destructor
  DeterministicDriver driver;  // deterministic sessions: runs their steps
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
  // The ISA level is fixed by now (config->load() checked it): every trace
  // written from here on says what the kernels ran with.
  trace::set_process_header(ops::cpu::kernel_info());
  auto impl = std::make_unique<Impl>(options, std::move(config));
  impl->graph = std::move(g);
  if (!*impl->options.lower_functional) {
    // Which functional nodes run as written is decided here, once, and
    // written on them; each step lowers the others it needs.
    graph::RunAsWrittenOptions ro;
    ro.several_devices = impl->options.devices.size() > 1;
    graph::mark_run_as_written(&impl->graph, ro);
    FunctionRuntimeOptions fo;
    fo.max_iterations = *impl->options.max_iterations;
    fo.max_depth = std::min(*impl->options.max_frame_depth, FunctionRuntimeOptions::kMaxCallDepth);
    impl->runtime = std::make_unique<FunctionRuntime>(impl->graph, fo);
  }
  impl->functions = std::make_unique<graph::FunctionInstantiator>(impl->graph, *impl->options.max_nodes);
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
  if (impl_->options.deterministic) impl_->driver.drain();
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
  RunningSteps::Run in_progress(impl.running);
  std::unique_lock<std::mutex> serial;
  if (impl.options.deterministic) serial = std::unique_lock<std::mutex>(impl.deterministic_mu);
  TF_ASSIGN_OR_RETURN(std::shared_ptr<const PreparedSignature> p, impl.prepare(feeds, fetches, targets));
  {
    std::lock_guard<std::mutex> lock(impl.last_mu);
    impl.last_partitions = p->partition_names;
  }
  for (size_t i = 0; i < feeds.size(); ++i)
    TF_RETURN_IF_ERROR(graph::check_feed(feeds[i].first, p->feeds[i], feeds[i].second, impl.options.check_feed_shapes));
  if (p->direct_resources) {
    uint64_t step_id = 0;
    {
      std::lock_guard<std::mutex> starting(impl.start_mu);
      step_id = impl.next_step++;
    }
    ops::cpu::WorkerPoolScope kernel_threads(impl.kernel_pool.get(), ops::cpu::WorkerPoolScope::Role::outside);
    StepWaiter::Result direct = run_on_callers_thread(*p, feeds, step_id, step_limits(impl.options));
    if (!direct.ok()) return impl.with_call_chain(direct.status());
    return direct;
  }
  auto waiter = std::make_shared<StepWaiter>(static_cast<int>(p->partitions.size()));
  StepLaunch launch = launch_of(*p, feeds, step_limits(impl.options), waiter);
  {
    std::lock_guard<std::mutex> starting(impl.start_mu);
    const uint64_t step_id = impl.next_step++;
    for (StepStart& s : launch.starts) s.step_id = step_id;
    if (impl.options.events != nullptr) {
      record_request(*impl.options.events, step_id, feeds, fetches, targets);
      for (const std::string& what : p->rewrites) impl.options.events->record(trace::node_rewritten(step_id, what));
    }
    if (!impl.running.start(waiter.get(), step_id,
                             [&] { caf::anon_send(impl.coordinator, begin_atom::value, std::move(launch)); }))
      return Status(ops::Error::cancelled, fmt::format("step {} was cancelled: its session is being destroyed", step_id));
  }
  StepWaiter::Result result = Status(ops::Error::internal, "step not run");
  if (!impl.options.deterministic) {
    result = waiter->wait();
  } else {
    impl.driver.run_step(*waiter);
    result = waiter->take();
  }
  impl.running.finished(waiter.get());
  if (!result.ok() && result.status().code() == ops::Error::unavailable && p->remote) impl.forget_remote();
  if (!result.ok()) return impl.with_call_chain(result.status());
  return result;
}

}  // namespace tagflow::actors
