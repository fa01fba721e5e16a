// The worker: the actor a `tagflow worker` process publishes on its task's
// port. It answers hello with tagflow's version and its task name, and
// makes a partition actor for each partition a client ships (create): the
// GraphDef is read within the worker's limits, validated and built, and an
// error names the partition and the task. A client is monitored: when it
// goes (its session ends, its process dies) its partitions are stopped and
// the resources of its devices freed. Each client gets its own resources
// per device, as a session does. One line per client connect and
// disconnect goes to `log`.
#pragma once

#include <caf/all.hpp>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "actors/session.hpp"
#include "net/cluster.hpp"

namespace tagflow::actors {
class SessionConfig;
}

namespace tagflow::net {

struct WorkerOptions {
  std::string task;               // "/job:worker/task:0"
  int64_t max_nodes = 0;          // 0: graph's default
  int64_t max_frame_depth = 0;    // 0: none
  FILE* log = stderr;             // null: silent
};

caf::actor spawn_worker(caf::actor_system& system, WorkerOptions options);

// A worker process's node: its configuration (the cluster's file and
// flags, read like a session's), its actor system with the middleman, and
// the worker actor published on its task's address. The caller waits for
// a signal and destroys it, which unpublishes and stops everything.
class WorkerNode {
 public:
  // `options` as for a session (config_file, cluster, threads, limits);
  // hosts are set here. Errors name the task and its address: a task the
  // cluster does not have, a port in use.
  static Expected<std::unique_ptr<WorkerNode>> start(actors::SessionOptions options, const std::string& job,
                                                     int task, FILE* log = stderr);
  ~WorkerNode();
  WorkerNode(const WorkerNode&) = delete;
  WorkerNode& operator=(const WorkerNode&) = delete;

  const std::string& task() const { return task_; }
  const TaskAddress& address() const { return address_; }

 private:
  WorkerNode() = default;
  std::string task_;
  TaskAddress address_;
  bool tls_ = false;
  std::unique_ptr<actors::SessionConfig> config_;
  std::unique_ptr<caf::actor_system> system_;
  caf::actor worker_;
};

}  // namespace tagflow::net
