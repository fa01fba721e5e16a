// ClusterSpec: the jobs of a cluster and the address of each of their
// tasks, as TensorFlow's ClusterSpec — written in one flag as
// `worker=127.0.0.1:7001,127.0.0.1:7002;ps=10.0.0.5:7000` (jobs separated
// by `;`, a job's tasks by `,`, task i being the i-th address). A device
// `/job:worker/replica:0/task:1/device:CPU:0` lives on the task its job and
// task name. Parsing checks everything — job names as TensorFlow spells them
// (a letter, then letters, digits and `_`), hosts (a name, IPv4, or IPv6 in
// brackets), ports 1..65535, no job twice, no address twice — and an error
// (invalid_argument) quotes the text and names the job, the task and the
// character position. Plain values; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "graph/device.hpp"

namespace tagflow::net {

using ops::Expected;
using ops::Status;

struct TaskAddress {
  std::string host;  // as written; IPv6 without its brackets
  uint16_t port = 0;

  // "host:port", IPv6 in brackets.
  std::string to_string() const;
  bool operator==(const TaskAddress& o) const { return host == o.host && port == o.port; }
};

class ClusterSpec {
 public:
  ClusterSpec() = default;  // no jobs: everything runs in this process

  static Expected<ClusterSpec> parse(std::string_view text);

  bool empty() const { return jobs_.empty(); }
  // Job names in alphabetical order.
  std::vector<std::string> jobs() const;
  // 0 for a job the cluster does not have.
  int num_tasks(const std::string& job) const;
  // nullptr when the cluster has no such task.
  const TaskAddress* find(const std::string& job, int task) const;

  // The address of the task a device names (its job and task must be set
  // and in the cluster); an error names the device and what the cluster
  // has instead.
  Expected<TaskAddress> task_of(const graph::DeviceName& device) const;

  // Sets or replaces one job's tasks (a `--cluster` flag over a file).
  void set_job(const std::string& job, std::vector<TaskAddress> tasks) { jobs_[job] = std::move(tasks); }

  // The one-flag form, jobs in alphabetical order; parse(to_string()) gives
  // the same cluster.
  std::string to_string() const;
  bool operator==(const ClusterSpec& o) const { return jobs_ == o.jobs_; }

 private:
  std::map<std::string, std::vector<TaskAddress>> jobs_;
};

// A job name as TensorFlow accepts it: [A-Za-z][A-Za-z0-9_]*.
bool is_job_name(std::string_view name);
// "host:port" (IPv6 as "[::1]:7001"); errors say what is wrong with it.
Expected<TaskAddress> parse_task_address(std::string_view text);

}  // namespace tagflow::net
