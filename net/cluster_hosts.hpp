// ClusterHosts: partitions on the tasks of a cluster, reached through
// CAF's middleman (actors::PartitionHosts). configure() loads the
// middleman with tagflow's heartbeat defaults (a stopped peer is found
// within about 1.5 s; [middleman] heartbeat-interval and
// connection-timeout override them), workers reaching each other through
// the client; spawn() connects to the task's worker, checks it runs the same
// tagflow (hello), ships the partition's GraphDef and returns the handle
// the worker answers with. Every wait is bounded. With an [openssl]
// section (certificate, key, cafile or capath) every connection is TLS
// through CAF's openssl module: a node must present a certificate the CA
// signed. Thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>

#include "actors/partition_hosts.hpp"
#include "net/cluster.hpp"

namespace tagflow::net {

class ClusterHosts : public actors::PartitionHosts {
 public:
  void configure(caf::actor_system_config& cfg) override;
  Status loaded(caf::actor_system_config& cfg) override;
  bool tls() const;
  Status set_cluster(const std::vector<std::pair<std::string, std::vector<std::string>>>& jobs,
                     const std::string& source, const std::string& flag,
                     const std::vector<std::string>& task_devices) override;
  std::vector<std::string> devices() const override;
  bool is_remote(const std::string& device) const override;
  Expected<caf::actor> spawn(caf::actor_system& system, const actors::RemotePartition& p) override;
  std::string describe(const std::string& device) const override;

  ClusterSpec cluster() const;
  // "/job:worker/task:1"
  static std::string task_name(const std::string& job, int task);

  // How long a worker may take to answer a request.
  static constexpr std::chrono::seconds kRequestTimeout{10};

 private:
  mutable std::mutex mu_;
  ClusterSpec cluster_;
  std::vector<std::string> devices_;
  bool tls_ = false;
};

// The middleman's settings every node of a cluster uses.
void configure_middleman(caf::actor_system_config& cfg);

// Connects to the worker at `address` and checks its version (hello):
// errors name `task` and the address.
Expected<caf::actor> connect_worker(caf::actor_system& system, const std::string& task, const TaskAddress& address,
                                    bool tls = false);

}  // namespace tagflow::net
