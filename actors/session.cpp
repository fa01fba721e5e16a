#include "actors/session.hpp"

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "actors/partition_actor.hpp"
#include "actors/step_waiter.hpp"
#include "graph/device.hpp"
#include "graph/lower_functional.hpp"
#include "graph/partition.hpp"
#include "graph/step_graph.hpp"
#include "graph/validate.hpp"
#include "ops/resource.hpp"

namespace tagflow::actors {

// configs/local.ini, built into the library (actors/embedded_config.cpp.in).
extern const char* const kEmbeddedConfig;

namespace {

// How CAF checks, stores and parses a value of tagflow's option of type T.
// opt_group::add<T> would take this from a function-local static of an
// inline template (caf::detail::option_meta_state_instance<T>) that
// Debian's libcaf, built by g++, instantiates too, with a GNU-unique guard
// variable. In a clang build the library's guard then stands for tagflow's
// copy as well, which stays zero: the first check of the option called a
// null pointer (found by fuzz/config; tests/actors/session_config_test.cpp).
// This copy is tagflow's alone.
template <class T>
const caf::config_option::meta_state* option_meta() {
  static const std::string type_name = caf::select_config_value_access_t<T>::type_name();
  static const caf::config_option::meta_state meta{
      caf::detail::check_impl<T>, caf::detail::store_impl<T>, caf::detail::get_impl<T>,
      caf::detail::parse_impl_delegate<T>, type_name};
  return &meta;
}

class SessionConfig : public caf::actor_system_config {
 public:
  explicit SessionConfig(const SessionOptions& o) : options_(o) {
    custom_options_.add(caf::config_option("tagflow", "devices",
                                           "full names of the devices graphs are placed on",
                                           option_meta<std::vector<std::string>>()));
    custom_options_.add(caf::config_option("tagflow", "strict-merge",
                                           "a second live input of a Merge is an error, not ignored",
                                           option_meta<bool>()));
    if (!o.deterministic) {
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

  // Reads the embedded default, then the session's file if any; then the
  // session's own settings that no file may override.
  Status load() {
    if (options_.config_file.empty()) return load_text({}, {});
    std::ifstream in(options_.config_file);
    if (!in)
      return Status(ops::Error::not_found,
                    "cannot read the configuration file '" + options_.config_file + "'");
    std::stringstream text;
    text << in.rdbuf();
    return load_text(text.str(), "configuration file '" + options_.config_file + "'");
  }

  // load() with the file's text (`source` names it in errors; no text: no file).
  Status load_text(const std::string& text, const std::string& source) {
    TF_RETURN_IF_ERROR(read(kEmbeddedConfig, "the embedded configuration"));
    if (!source.empty()) TF_RETURN_IF_ERROR(read(text, source));
    if (options_.deterministic) set("scheduler.policy", caf::atom("testing"));
    else if (options_.threads > 0) set("scheduler.max-threads", static_cast<size_t>(options_.threads));
    std::istringstream none;
    caf::error e = parse(caf::actor_system_config::string_list{}, none);
    if (e) return Status(ops::Error::parse_error, "configuration: " + caf::to_string(e));
    return ops::ok_status();
  }

  bool strict_merge() const { return caf::get_or(content, "tagflow.strict-merge", false); }

  // tagflow.devices, if set: a list of strings.
  Expected<std::vector<std::string>> devices() const {
    const caf::config_value* v = caf::get_if(&content, "tagflow.devices");
    if (v == nullptr) return std::vector<std::string>{};
    const auto* list = caf::get_if<caf::config_value::list>(v);
    std::vector<std::string> out;
    if (list != nullptr)
      for (const caf::config_value& item : *list) {
        const auto* text = caf::get_if<std::string>(&item);
        if (text == nullptr) {
          list = nullptr;
          break;
        }
        out.push_back(*text);
      }
    if (list == nullptr)
      return Status(ops::Error::invalid_argument,
                    fmt::format("configuration: [tagflow] devices = {} is not a list of device names",
                                caf::to_string(*v)));
    return out;
  }

 private:
  // CAF accepts unknown keys silently and drops ill-typed values of known
  // ones: every key must be an option of CAF or of tagflow, of its type.
  Status read(const std::string& text, const std::string& source) {
    // Untyped first: with the option set CAF drops an ill-typed value
    // without a word.
    std::istringstream in(text);
    auto raw = parse_config(in);
    if (!raw)
      return Status(ops::Error::parse_error, fmt::format("{}: {}", source, caf::to_string(raw.error())));
    const caf::settings& parsed = *raw;
    for (const auto& [category, value] : parsed) {
      const auto* section = caf::get_if<caf::settings>(&value);
      if (section == nullptr) {
        if (custom_options_.qualified_name_lookup("global", category) == nullptr)
          return Status(ops::Error::invalid_argument,
                        fmt::format("{}: unknown key '{}'", source, category));
        continue;
      }
      for (const auto& [key, v] : *section) {
        const caf::config_option* opt = custom_options_.qualified_name_lookup(category, key);
        if (opt == nullptr)
          return Status(ops::Error::invalid_argument,
                        fmt::format("{}: unknown key '{}' in section [{}]", source, key, category));
        if (caf::error e = opt->check(v))
          return Status(ops::Error::invalid_argument,
                        fmt::format("{}: [{}] {} = {} is not a {}", source, category, key,
                                    caf::to_string(v), std::string(opt->type_name().data(), opt->type_name().size())));
      }
    }
    std::istringstream again(text);
    if (caf::error e = parse_config(again, custom_options_, content))
      return Status(ops::Error::parse_error, fmt::format("{}: {}", source, caf::to_string(e)));
    return ops::ok_status();
  }

  SessionOptions options_;
};

// What one (feeds, fetches, targets) signature needs, made once: a
// partition actor per device that holds nodes of the step.
struct Prepared {
  std::vector<std::shared_ptr<const Executable>> execs;
  std::vector<std::string> partition_names;
  std::vector<ops::DType> feed_types;
  std::vector<caf::actor> partitions;
  std::vector<caf::actor> workers;
};

// "CPU:0" for a device of the local task, else its full name.
std::string partition_label(const std::string& device) {
  auto d = graph::parse_device_name(device);
  if (!d.ok() || !d->type || !d->id) return device;
  if (d->job.value_or("localhost") == "localhost" && d->replica.value_or(0) == 0 &&
      d->task.value_or(0) == 0)
    return fmt::format("{}:{}", *d->type, *d->id);
  return device;
}

Status check_devices(const std::vector<std::string>& devices) {
  for (const std::string& d : devices) {
    auto name = graph::parse_device_name(d);
    if (!name.ok()) return name.status().with_prefix("session devices: ");
    if (!name->job || !name->replica || !name->task || !name->type || !name->id)
      return Status(ops::Error::invalid_argument,
                    fmt::format("session devices: '{}' is not a full device name "
                                "(/job:J/replica:R/task:T/device:TYPE:ID)", d));
  }
  return ops::ok_status();
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

}  // namespace

struct Session::Impl {
  Impl(SessionOptions o, std::unique_ptr<SessionConfig> c)
      : options(std::move(o)), config(std::move(c)), system(*config) {}
  ~Impl() {
    for (auto& [sig, p] : prepared) {
      for (auto& a : p.partitions) caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
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
    // Prepared entries never move or go away while the session lives.
    std::lock_guard<std::mutex> lock(prepare_mu);
    auto it = prepared.find(sig);
    if (it != prepared.end()) return &it->second;
    std::vector<std::string> feed_names;
    for (auto& f : feeds) feed_names.push_back(f.first);
    TF_ASSIGN_OR_RETURN(graph::StepGraph sg, graph::make_step_graph(graph, feed_names, fetches, targets));
    TF_RETURN_IF_ERROR(graph::place(&sg.graph, devices, options.placement));
    Prepared p;
    std::vector<graph::Graph> graphs;
    // All on one device (the common case): the step graph is the partition.
    const std::string& first = sg.graph.num_nodes() > 0 ? sg.graph.node(0).device : devices[0];
    const bool one_device = std::all_of(sg.graph.nodes().begin(), sg.graph.nodes().end(),
                                        [&](const graph::Node& n) { return n.device == first; });
    if (one_device) {
      p.partition_names.push_back(partition_label(first));
      graphs.push_back(std::move(sg.graph));
    } else {
      TF_ASSIGN_OR_RETURN(std::vector<graph::Partition> parts, graph::partition_graph(sg.graph, devices));
      for (graph::Partition& part : parts) {
        p.partition_names.push_back(partition_label(part.device));
        graphs.push_back(std::move(part.graph));
      }
    }
    TF_ASSIGN_OR_RETURN(p.execs, Executable::build_partitions(std::move(graphs), p.partition_names));
    p.feed_types = std::move(sg.feed_types);
    for (const auto& exec : p.execs) p.partitions.push_back(system.spawn<PartitionActor>(exec, sg.fetches));
    // Workers only pay off when another core can run them.
    size_t cores = options.deterministic ? 1 : system.scheduler().num_workers();
    if (cores > 1)
      for (size_t i = 0; i < cores; ++i) p.workers.push_back(system.spawn<KernelWorker>());
    return &prepared.emplace(sig, std::move(p)).first->second;
  }

  SessionOptions options;
  std::unique_ptr<SessionConfig> config;  // must outlive the system
  std::vector<std::string> devices;
  std::vector<std::string> last_partitions;
  caf::actor_system system;
  graph::Graph graph;
  std::map<std::string, Prepared> prepared;
  std::mutex prepare_mu;  // prepared
  // Step ids are taken and the steps handed to the partitions under this
  // lock, so that every partition sees its steps start in id order
  // (PartitionActor relies on it to tell ended steps from coming ones).
  std::mutex start_mu;
  uint64_t next_step = 1;
  mutable std::mutex last_mu;  // last_partitions
  std::mutex deterministic_mu;  // the testing scheduler runs on its caller
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
  TF_RETURN_IF_ERROR(config->load());
  std::vector<std::string> devices = options.devices;
  if (devices.empty() && options.num_devices > 0) devices = graph::local_devices(options.num_devices);
  TF_ASSIGN_OR_RETURN(std::vector<std::string> configured, config->devices());
  if (devices.empty()) devices = std::move(configured);
  if (devices.empty()) devices = graph::local_devices(1);
  TF_RETURN_IF_ERROR(check_devices(devices));
  auto impl = std::make_unique<Impl>(options, std::move(config));
  impl->graph = std::move(g);
  impl->devices = std::move(devices);
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

ops::Expected<std::vector<std::string>> read_session_config(const std::string& text,
                                                            const std::string& source) {
  SessionConfig config{SessionOptions{}};
  TF_RETURN_IF_ERROR(config.load_text(text, source.empty() ? "configuration" : source));
  TF_ASSIGN_OR_RETURN(std::vector<std::string> devices, config.devices());
  TF_RETURN_IF_ERROR(check_devices(devices));
  return devices;
}

const graph::Graph& Session::graph() const { return impl_->graph; }
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
  size_t n = 0;
  for (auto& [sig, p] : impl_->prepared) n += p.partitions.size() + p.workers.size();
  return n;
}

ops::Expected<std::vector<ops::Tensor>> Session::run(const Feeds& feeds,
                                                     const std::vector<std::string>& fetches,
                                                     const std::vector<std::string>& targets) {
  std::unique_lock<std::mutex> serial;
  if (impl_->options.deterministic) serial = std::unique_lock<std::mutex>(impl_->deterministic_mu);
  TF_ASSIGN_OR_RETURN(const Prepared* p, impl_->prepare(feeds, fetches, targets));
  {
    std::lock_guard<std::mutex> lock(impl_->last_mu);
    impl_->last_partitions = p->partition_names;
  }
  std::vector<ops::Tensor> fed;
  for (size_t i = 0; i < feeds.size(); ++i) {
    const ops::Tensor& t = feeds[i].second;
    if (!t.valid())
      return Status(ops::Error::invalid_argument, fmt::format("feed '{}' has no value", feeds[i].first));
    if (ops::base_dtype(t.dtype()) != p->feed_types[i])
      return Status(ops::Error::invalid_argument,
                    fmt::format("feed '{}' is {} but the graph produces {} there", feeds[i].first,
                                ops::dtype_name(t.dtype()), ops::dtype_name(p->feed_types[i])));
    fed.push_back(t);
  }
  std::unique_lock<std::mutex> starting(impl_->start_mu);
  const uint64_t step_id = impl_->next_step++;
  auto waiter = std::make_shared<StepWaiter>(static_cast<int>(p->partitions.size()));
  const auto deadline = impl_->options.timeout.count() > 0
                            ? std::chrono::steady_clock::now() + impl_->options.timeout
                            : std::chrono::steady_clock::time_point::max();
  for (size_t i = 0; i < p->partitions.size(); ++i) {
    auto step = std::make_shared<StepShared>();
    step->context.step_id = step_id;
    step->context.events = impl_->options.events;
    step->context.resources = &impl_->resources;
    step->context.strict_merge = impl_->options.strict_merge || impl_->config->strict_merge();
    step->max_iterations = impl_->options.max_iterations;
    step->timeout = impl_->options.timeout;
    step->deadline = deadline;
    step->waiter = waiter;
    step->workers = p->workers;
    step->context.use_workers = !p->workers.empty();
    step->peers = p->partitions;
    step->partition_index = static_cast<int>(i);
    if (p->partitions.size() > 1) step->routes = std::make_shared<TransferRoutes>();
    step->feeds = fed;
    step->context.feeds = &step->feeds;
    caf::anon_send(p->partitions[i], run_step_atom::value, StepPtr(std::move(step)));
  }
  starting.unlock();
  StepWaiter::Result result = Status(ops::Error::internal, "step not run");
  if (!impl_->options.deterministic) {
    result = waiter->wait();
  } else {
    auto& c = impl_->coordinator();
    while (!waiter->done()) {
      if (!c.try_run_once()) {
        waiter->fail_all(Status(ops::Error::internal, "step stalled: no actor has a message to process"));
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
