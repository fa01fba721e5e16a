// Session options resolved: each limit from the options, else the
// configuration's [tagflow] key, else its default; the session's devices;
// a cluster checked against what the session can reach. Session::create
// runs this first; tools call it to check their flags.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>

#include "actors/partition_hosts.hpp"
#include "actors/session.hpp"
#include "actors/session_config.hpp"
#include "graph/device.hpp"
#include "ops/memory_budget.hpp"

namespace tagflow::actors {

namespace {

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

}  // namespace tagflow::actors
