#include "actors/session_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include "actors/kernel_threads.hpp"
#include "ops/cpu/isa.hpp"
#include "ops/memory_budget.hpp"

namespace tagflow::actors {

// configs/local.ini, built into the library (actors/embedded_config.cpp.in).
extern const char* const kEmbeddedConfig;

namespace {

using ops::Error;
using ops::Status;

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

// CAF's numbers that must not be 0 (the work-stealing scheduler divides by
// the steal intervals; a throughput of 0 runs no message) or too large
// (a thread each).
struct KeyRange {
  const char* key;
  int64_t min;
  int64_t max;
};
constexpr KeyRange kSchedulerRanges[] = {
    {"scheduler.max-threads", 1, limits::kMaxThreads},
    {"scheduler.max-throughput", 1, kUnbounded},
    {"work-stealing.aggressive-steal-interval", 1, kUnbounded},
    {"work-stealing.moderate-steal-interval", 1, kUnbounded},
    {"work-stealing.relaxed-steal-interval", 1, kUnbounded},
};

// "[scheduler] max-threads" for "scheduler.max-threads".
std::string key_text(const std::string& key) {
  const size_t dot = key.find('.');
  return fmt::format("[{}] {}", key.substr(0, dot), key.substr(dot + 1));
}

// How CAF checks, stores and parses a value of tagflow's option of type T.
// opt_group::add<T> takes this from a function-local static of an inline
// template (caf::detail::option_meta_state_instance<T>) that Debian's
// libcaf, built by g++, instantiates too, with a GNU-unique guard variable.
// In a clang build the library's guard then stands for tagflow's copy as
// well, which stays zero: the first check of an option called a null
// pointer (found by fuzz/config; tests/actors/session_config_test.cpp).
// This copy is tagflow's alone.
template <class T>
const caf::config_option::meta_state* option_meta() {
  static const std::string type_name = caf::select_config_value_access_t<T>::type_name();
  static const caf::config_option::meta_state meta{caf::detail::check_impl<T>, caf::detail::store_impl<T>,
                                                   caf::detail::get_impl<T>,
                                                   caf::detail::parse_impl_delegate<T>, type_name};
  return &meta;
}

template <class T>
void add_option(caf::config_option_set& options, caf::string_view name, caf::string_view description,
                caf::string_view category = "tagflow") {
  options.add(caf::config_option(category, name, description, option_meta<T>()));
}

// The strings of a list value; nothing if it is not a list of strings.
std::optional<std::vector<std::string>> strings_of(const caf::config_value& v) {
  const auto* list = caf::get_if<caf::config_value::list>(&v);
  if (list == nullptr) return std::nullopt;
  std::vector<std::string> out;
  for (const caf::config_value& item : *list) {
    const auto* text = caf::get_if<std::string>(&item);
    if (text == nullptr) return std::nullopt;
    out.push_back(*text);
  }
  return out;
}

}  // namespace

std::string range_text(int64_t min, int64_t max) {
  return max == kUnbounded ? fmt::format("at least {}", min) : fmt::format("{} to {}", min, max);
}

SessionConfig::SessionConfig(const SessionOptions& o) : options_(o) {
  add_option<std::vector<std::string>>(custom_options_, "devices",
                                      "full names of the devices graphs are placed on");
  add_option<bool>(custom_options_, "strict-merge", "a second live input of a Merge is an error, not ignored");
  add_option<bool>(custom_options_, "no-shortcuts",
                   "no shortcut past the actors: every step through its partition actors, every root frame in a "
                   "frame actor, every loop iteration in an actor of its own (actors/execution_plan.hpp)");
  add_option<bool>(custom_options_, "iteration-actors", "the old name of no-shortcuts");
  add_option<bool>(custom_options_, "lower-functional",
                   "functional ops are lowered to Switch/Merge/Enter/Exit instead of running as written", "graph");
  add_option<std::string>(custom_options_, "optimize",
                          "optimizer passes run on every step graph: default, none, or names separated by commas",
                          "graph");
  add_option<int64_t>(custom_options_, "max-iterations", "iterations per frame instance; 0: no limit");
  add_option<std::string>(custom_options_, "isa",
                          "the instruction-set level kernels run at, at most the machine's: baseline, avx2, "
                          "avx512 (chosen once per process; TAGFLOW_ISA)");
  add_option<int64_t>(custom_options_, "max-nodes", "nodes a graph may have, functional ops lowered");
  add_option<int64_t>(custom_options_, "max-frame-depth", "how deep frames may nest");
  add_option<std::string>(custom_options_, "memory-limit",
                          "bytes a step's tensors may hold at once (a number or \"4G\")");
  add_option<std::vector<std::string>>(custom_options_, "task-devices",
                                      "the devices of every task of the cluster (default [\"CPU:0\"])");
  actors::add_message_types(*this);
  // The deterministic scheduler runs one process's actors in turn: no
  // networking (its brokers would never stop under it).
  if (o.hosts && !o.deterministic) o.hosts->configure(*this);
  if (!o.deterministic) {
    // Large kernels split onto the scheduler's workers (ops/cpu/parallel.hpp).
    add_kernel_thread_hook(*this);
    // One worker per core unless told otherwise: CAF's own default is at
    // least 4, and on 2 cores the extra workers' polling competes with
    // the ones that compute (64x64 MatMul loop: 22-24 vs 17-19 µs).
    const auto cores = std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, limits::kMaxThreads);
    set("scheduler.max-threads", static_cast<size_t>(o.threads > 0 ? o.threads : cores));
    // Workers poll for a while before they sleep: a step is a burst of
    // short messages, and a sleeping worker costs tens of µs to wake.
    set("work-stealing.aggressive-poll-attempts", size_t{1000});
    set("work-stealing.moderate-sleep-duration", caf::timespan{std::chrono::microseconds(10)});
  }
}

Status SessionConfig::load() {
  TF_RETURN_IF_ERROR(read(kEmbeddedConfig, "the embedded configuration"));
  if (!options_.config_file.empty()) {
    const std::string& path = options_.config_file;
    const std::string name = "configuration file '" + ops::abbreviate(path) + "'";
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      return Status(Error::invalid_argument, "cannot read the " + name + ": it is a directory");
    std::ifstream in(path);
    std::stringstream text;
    if (in) text << in.rdbuf();
    if (!in || in.bad()) return Status(Error::not_found, "cannot read the " + name);
    TF_RETURN_IF_ERROR(read(text.str(), name));
  }
  if (!options_.config_text.empty()) TF_RETURN_IF_ERROR(read(options_.config_text, "the configuration text"));
  if (options_.deterministic) set("scheduler.policy", caf::atom("testing"));
  else if (options_.threads > 0) set("scheduler.max-threads", static_cast<size_t>(options_.threads));
  std::istringstream none;
  caf::error e = parse(caf::actor_system_config::string_list{}, none);
  if (e) return Status(Error::parse_error, "configuration: " + caf::to_string(e));
  TF_RETURN_IF_ERROR(check_scheduler());
  TF_RETURN_IF_ERROR(check_isa());
  if (options_.hosts && !options_.deterministic) TF_RETURN_IF_ERROR(options_.hosts->loaded(*this));
  return ops::ok_status();
}

std::vector<std::string> SessionConfig::task_devices() const {
  auto devices = caf::get_if<std::vector<std::string>>(&content, "tagflow.task-devices");
  if (!devices || devices->empty()) return {"CPU:0"};
  return *devices;
}

bool SessionConfig::strict_merge() const { return caf::get_or(content, "tagflow.strict-merge", false); }
std::optional<bool> SessionConfig::lower_functional() const {
  if (auto v = caf::get_if<bool>(&content, "graph.lower-functional")) return *v;
  return std::nullopt;
}
std::optional<std::string> SessionConfig::optimize() const {
  if (auto v = caf::get_if<std::string>(&content, "graph.optimize")) return *v;
  return std::nullopt;
}
bool SessionConfig::no_shortcuts() const {
  return caf::get_or(content, "tagflow.no-shortcuts", false) || caf::get_or(content, "tagflow.iteration-actors", false);
}

std::string SessionConfig::source_of(const std::string& key) const {
  auto it = sources_.find(key);
  return it != sources_.end() ? it->second : "the session options";
}

Status SessionConfig::out_of_range(const std::string& key, const std::string& value, int64_t min,
                                   int64_t max) const {
  return Status(Error::invalid_argument,
                fmt::format("{}: {} = {} is outside the allowed range ({})", source_of(key),
                            key_text(key), ops::abbreviate(value), range_text(min, max)));
}

Status SessionConfig::check_isa() const {
  // The key before anything reads the level: reading fixes it.
  if (auto v = caf::get_if<std::string>(&content, "tagflow.isa")) {
    const std::string source = source_of("tagflow.isa") + ": [tagflow] isa";
    ops::Expected<ops::cpu::Isa> isa = ops::cpu::parse_isa(*v);
    if (!isa.ok()) return isa.status().with_prefix(source + ": ");
    TF_RETURN_IF_ERROR(ops::cpu::request_isa(*isa, source));
  }
  return ops::cpu::isa_status();
}

Status SessionConfig::check_scheduler() const {
  for (const KeyRange& r : kSchedulerRanges) {
    const caf::config_value* v = caf::get_if(&content, caf::string_view(r.key, std::strlen(r.key)));
    if (v == nullptr) continue;
    const auto* n = caf::get_if<caf::config_value::integer>(v);
    if (n == nullptr || *n < r.min || *n > r.max) return out_of_range(r.key, caf::to_string(*v), r.min, r.max);
  }
  return ops::ok_status();
}

ops::Expected<std::vector<std::string>> SessionConfig::devices() const {
  const caf::config_value* v = caf::get_if(&content, "tagflow.devices");
  if (v == nullptr) return std::vector<std::string>{};
  std::optional<std::vector<std::string>> out = strings_of(*v);
  if (!out)
    return Status(Error::invalid_argument,
                  fmt::format("{}: [tagflow] devices = {} is not a list of device names",
                              source_of("tagflow.devices"), ops::abbreviate(caf::to_string(*v))));
  if (static_cast<int64_t>(out->size()) > limits::kMaxDevices)
    return Status(Error::invalid_argument,
                  fmt::format("{}: [tagflow] devices lists {} devices, outside the allowed range ({})",
                              source_of("tagflow.devices"), out->size(), range_text(1, limits::kMaxDevices)));
  return std::move(*out);
}

ops::Expected<std::optional<int64_t>> SessionConfig::integer(const std::string& key, int64_t min,
                                                             int64_t max) const {
  const std::string qualified = "tagflow." + key;
  const caf::config_value* v = caf::get_if(&content, qualified);
  if (v == nullptr) return std::optional<int64_t>();
  const auto* n = caf::get_if<caf::config_value::integer>(v);
  if (n == nullptr || *n < min || *n > max) return out_of_range(qualified, caf::to_string(*v), min, max);
  return std::optional<int64_t>(*n);
}

ops::Expected<std::optional<int64_t>> SessionConfig::memory_limit() const {
  if (!memory_limit_) return std::optional<int64_t>();
  const std::string key = "tagflow.memory-limit";
  int64_t bytes = 0;
  if (const auto* n = caf::get_if<caf::config_value::integer>(&*memory_limit_)) {
    bytes = *n;
  } else {
    auto parsed = ops::parse_byte_size(caf::get<std::string>(*memory_limit_));
    if (!parsed.ok()) return parsed.status().with_prefix(source_of(key) + ": [tagflow] memory-limit: ");
    bytes = *parsed;
  }
  if (bytes < limits::kMinMemoryLimit || bytes > limits::kMaxMemoryLimit)
    return Status(Error::invalid_argument,
                  fmt::format("{}: [tagflow] memory-limit = {} is outside the allowed range ({} to {})",
                              source_of(key), ops::abbreviate(caf::to_string(*memory_limit_)),
                              ops::format_bytes(limits::kMinMemoryLimit),
                              ops::format_bytes(limits::kMaxMemoryLimit)));
  return std::optional<int64_t>(bytes);
}

// CAF accepts unknown keys silently and drops ill-typed values of known
// ones: every key must be an option of CAF or of tagflow, of its type.
Status SessionConfig::read(const std::string& text, const std::string& source) {
  // Untyped first: with the option set CAF drops an ill-typed value
  // without a word.
  std::istringstream in(text);
  auto raw = parse_config(in);
  if (!raw) return Status(Error::parse_error, fmt::format("{}: {}", source, caf::to_string(raw.error())));
  const caf::settings& parsed = *raw;
  for (const auto& [category, value] : parsed) {
    const auto* section = caf::get_if<caf::settings>(&value);
    if (section == nullptr) {
      if (custom_options_.qualified_name_lookup("global", category) == nullptr)
        return Status(Error::invalid_argument,
                      fmt::format("{}: unknown key '{}'", source, ops::abbreviate(category)));
      sources_[category] = source;
      continue;
    }
    if (category == "cluster") {
      TF_RETURN_IF_ERROR(read_cluster(*section, source));
      continue;
    }
    for (const auto& [key, v] : *section) {
      const caf::config_option* opt = custom_options_.qualified_name_lookup(category, key);
      if (opt == nullptr)
        return Status(Error::invalid_argument,
                      fmt::format("{}: unknown key '{}' in section [{}]", source, ops::abbreviate(key),
                                  ops::abbreviate(category)));
      sources_[category + "." + key] = source;
      // A size is a number of bytes or a string such as "4G".
      if (category == "tagflow" && key == "memory-limit" &&
          (caf::holds_alternative<caf::config_value::integer>(v) || caf::holds_alternative<std::string>(v))) {
        memory_limit_ = v;
        continue;
      }
      if (caf::error e = opt->check(v))
        return Status(Error::invalid_argument,
                      fmt::format("{}: [{}] {} = {} is not a {}", source, category, key,
                                  ops::abbreviate(caf::to_string(v)),
                                  std::string(opt->type_name().data(), opt->type_name().size())));
    }
  }
  std::istringstream again(text);
  if (caf::error e = parse_config(again, custom_options_, content))
    return Status(Error::parse_error, fmt::format("{}: {}", source, caf::to_string(e)));
  return ops::ok_status();
}

// [cluster]: each key a job, each value a list of "host:port".
Status SessionConfig::read_cluster(const caf::settings& section, const std::string& source) {
  for (const auto& [job, v] : section) {
    std::optional<std::vector<std::string>> tasks = strings_of(v);
    if (!tasks || tasks->empty())
      return Status(Error::invalid_argument,
                    fmt::format("{}: [cluster] {} = {} is not a list of \"host:port\" addresses, one per task",
                                source, ops::abbreviate(job), ops::abbreviate(caf::to_string(v))));
    auto it = cluster_.begin();
    while (it != cluster_.end() && it->first != job) ++it;
    if (it != cluster_.end()) it->second = std::move(*tasks);
    else cluster_.emplace_back(job, std::move(*tasks));
  }
  sources_["cluster"] = source;
  return ops::ok_status();
}

}  // namespace tagflow::actors
