// PartitionHosts: where the partitions of a session's devices on other
// tasks run. The session asks it for a partition actor of each such device
// and from then on treats that handle like any other: nothing else in
// actors/ knows whether a partition is local. net/ implements it over
// CAF's middleman (net/cluster_hosts.hpp). Internal to actors/ and net/;
// includes CAF.
#pragma once

#include <caf/all.hpp>

#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "ops/status.hpp"

namespace tagflow::actors {

// One partition to make on another task.
struct RemotePartition {
  std::string device;  // its full device name
  std::string name;    // its label in messages
  const graph::Graph* graph = nullptr;  // the partition's graph, _Send/_Recv included
  std::vector<std::string> devices;     // the full device names of the step's partitions
  int index = 0;                        // this one's position among them
  std::vector<std::string> fetch_names;  // the step's fetches
  caf::actor client;  // the session's coordinator: the worker drops the partition when it goes
};

class PartitionHosts {
 public:
  virtual ~PartitionHosts() = default;
  // Called on the session's actor-system configuration before it is read
  // (modules such as the middleman, their options, message types).
  virtual void configure(caf::actor_system_config& cfg) = 0;
  // Called once the configuration is read (its files and text): settings
  // that depend on what it says, and their errors.
  virtual ops::Status loaded(caf::actor_system_config& cfg) = 0;
  // The cluster, after the configuration is read: `jobs` from its [cluster]
  // section (job -> host:port of each task, in task order), `flag` the
  // --cluster text that gives or replaces jobs, `task_devices` the devices
  // of every task ("CPU:0", ...). `source` names where `jobs` came from.
  virtual ops::Status set_cluster(const std::vector<std::pair<std::string, std::vector<std::string>>>& jobs,
                             const std::string& source, const std::string& flag,
                             const std::vector<std::string>& task_devices) = 0;
  // The full names of the devices of every task of the cluster.
  virtual std::vector<std::string> devices() const = 0;
  // Whether `device` (a full name) lives on a task of the cluster.
  virtual bool is_remote(const std::string& device) const = 0;
  // Makes the partition on its task; errors name the task and its address.
  virtual ops::Expected<caf::actor> spawn(caf::actor_system& system, const RemotePartition& p) = 0;
  // "/job:worker/task:1 at 127.0.0.1:7002" for a device of the cluster.
  virtual std::string describe(const std::string& device) const = 0;
};

}  // namespace tagflow::actors
