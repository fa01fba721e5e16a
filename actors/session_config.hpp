// SessionConfig: a session's CAF configuration — the embedded default
// (configs/local.ini), then the session's file, then the settings of
// SessionOptions that no file may override — and tagflow's own keys in its
// [tagflow] section (devices, strict-merge and the limits). CAF accepts
// unknown keys, drops ill-typed values and takes any number: here every key
// must be an option of CAF or of tagflow, of its type, and the numbers the
// scheduler divides by or spawns threads for must lie in their range.
// Errors name the file the value came from, its section and key, and the
// allowed range. Built and loaded once per session, read-only afterwards.
// Internal to actors/ (includes CAF).
#pragma once

#include <caf/all.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/messages.hpp"
#include "actors/partition_hosts.hpp"
#include "actors/session.hpp"

namespace tagflow::actors {

class SessionConfig : public caf::actor_system_config {
 public:
  // `o` must have been checked (Session::resolve_options): its thread count
  // becomes the scheduler's.
  explicit SessionConfig(const SessionOptions& o);

  // Reads the embedded default, then the session's file if any (a missing
  // or unreadable file, or a directory, is an error), then its configuration
  // text if any; then the session's own
  // settings; then checks the scheduler's numbers.
  ops::Status load();

  bool strict_merge() const;
  bool no_shortcuts() const;  // no-shortcuts, or its old name iteration-actors
  // `[graph] lower-functional`, if the configuration sets it.
  std::optional<bool> lower_functional() const;
  // `[graph] optimize`, if the configuration sets it.
  std::optional<std::string> optimize() const;
  // The [cluster] section: each key a job, its value the host:port of each
  // task in task order; and where it came from.
  const std::vector<std::pair<std::string, std::vector<std::string>>>& cluster() const { return cluster_; }
  std::string cluster_source() const { return source_of("cluster"); }
  // [tagflow] task-devices: the devices of every task of the cluster
  // (default CPU:0).
  std::vector<std::string> task_devices() const;
  // tagflow.devices, if set: a list of at most limits::kMaxDevices names.
  ops::Expected<std::vector<std::string>> devices() const;
  // The integer [tagflow] `key`, if set, within [min, max].
  ops::Expected<std::optional<int64_t>> integer(const std::string& key, int64_t min, int64_t max) const;
  // [tagflow] memory-limit, if set: bytes (4294967296) or a size ("4G"),
  // within the limits::kMinMemoryLimit..kMaxMemoryLimit range.
  ops::Expected<std::optional<int64_t>> memory_limit() const;

 private:
  ops::Status read(const std::string& text, const std::string& source);
  ops::Status read_cluster(const caf::settings& section, const std::string& source);
  ops::Status check_scheduler() const;
  // TAGFLOW_ISA and [tagflow] isa name a level the machine has, and agree
  // with the level kernels already run at (ops/cpu/isa.hpp).
  ops::Status check_isa() const;
  // Where the value of "section.key" came from, for messages.
  std::string source_of(const std::string& key) const;
  ops::Status out_of_range(const std::string& key, const std::string& value, int64_t min, int64_t max) const;

  SessionOptions options_;
  std::map<std::string, std::string> sources_;  // "section.key" -> its file
  std::optional<caf::config_value> memory_limit_;  // as written: a number or a string
  std::vector<std::pair<std::string, std::vector<std::string>>> cluster_;
};

// "1 to 256", or "at least 1" when there is no upper bound.
std::string range_text(int64_t min, int64_t max);

}  // namespace tagflow::actors
