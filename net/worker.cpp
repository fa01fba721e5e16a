#include "net/worker.hpp"

#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>
#include <fmt/format.h>

#include <map>
#include <memory>
#include <vector>

#include "actors/actor_base.hpp"
#include "actors/partition_actor.hpp"
#include "actors/session_config.hpp"
#include "graph/io/import.hpp"
#include "graph/validate.hpp"
#include "net/cluster_hosts.hpp"
#include "net/remote.hpp"
#include "ops/resource.hpp"

namespace tagflow::net {

namespace {

using actors::ExecPtr;
using actors::Executable;

class WorkerActor : public actors::ActorBase {
 public:
  WorkerActor(caf::actor_config& cfg, WorkerOptions options) : ActorBase(cfg), options_(std::move(options)) {}
  const char* name() const override { return "tagflow.worker"; }

  caf::behavior make_behavior() override {
    const size_t cores = system().scheduler().num_workers();
    if (cores > 1)
      for (size_t i = 0; i < cores; ++i) kernel_workers_.push_back(spawn<actors::KernelWorker, caf::linked>());
    set_down_handler([=](caf::down_msg& dm) { on_client_down(dm); });
    on_unreadable([this](const std::string& what) { log("dropped " + what); });
    set_exit_handler([=](caf::exit_msg& em) { stop(em.reason); });
    return {
        [=](hello_atom, const std::string&) { return caf::make_message(protocol_version(), options_.task); },
        [=](create_atom, PartitionSpec& spec) -> caf::result<caf::actor> {
          auto made = create(spec);
          if (!made.ok()) return actors::to_caf_error(made.status());
          return std::move(made).value();
        },
    };
  }

 private:
  struct Client {
    std::map<std::string, std::shared_ptr<ops::ResourceManager>> resources;  // by device
    std::vector<caf::actor> partitions;
  };

  void log(const std::string& line) {
    if (options_.log == nullptr) return;
    fmt::print(options_.log, "tagflow worker {}: {}\n", options_.task, line);
    std::fflush(options_.log);
  }

  ops::Expected<caf::actor> create(PartitionSpec& spec) {
    const std::string what = fmt::format("partition {} on {}", spec.name, options_.task);
    if (!spec.client)
      return Status(ops::Error::invalid_argument, what + ": the request names no client");
    if (spec.index < 0 || static_cast<size_t>(spec.index) >= spec.devices.size())
      return Status(ops::Error::invalid_argument,
                    fmt::format("{}: index {} is not one of the step's {} partitions", what, spec.index,
                                spec.devices.size()));
    graph::ImportOptions io;
    if (options_.max_nodes > 0) io.max_nodes = options_.max_nodes;
    auto g = graph::import_graph_binary(spec.graph_def, what, io);
    if (!g.ok()) return g.status();
    graph::ValidateOptions v;
    v.allow_unknown_ops = true;
    if (Status s = graph::validate(*g, v); !s.ok()) return s.with_prefix(what + ": ");
    auto exec = Executable::build_partition(std::move(g).value(), spec.name, spec.devices, spec.index);
    if (!exec.ok()) return exec.status();
    if (options_.max_frame_depth > 0)
      for (const graph::FrameInfo& f : (*exec)->control_flow().frames)
        if (f.depth > options_.max_frame_depth)
          return Status(ops::Error::resource_exhausted,
                        fmt::format("{}: frame '{}' is nested {} frames deep, over the limit of {}", what,
                                    f.name, f.depth, options_.max_frame_depth));
    const caf::actor_addr client = spec.client.address();
    auto [it, fresh] = clients_.try_emplace(client);
    if (fresh) {
      monitor(spec.client);
      log(fmt::format("client {} connected", caf::to_string(spec.client.node())));
    }
    Client& c = it->second;
    auto& resources = c.resources[spec.devices[static_cast<size_t>(spec.index)]];
    if (!resources) resources = std::make_shared<ops::ResourceManager>();
    actors::PartitionEnv env{resources, kernel_workers_, nullptr, spec.index};
    caf::actor partition = spawn<actors::PartitionActor>(std::move(exec).value(), std::move(spec.fetch_names),
                                                         std::move(env));
    c.partitions.push_back(partition);
    return partition;
  }

  void on_client_down(const caf::down_msg& dm) {
    auto it = clients_.find(dm.source);
    if (it == clients_.end()) return;
    for (const caf::actor& p : it->second.partitions) send_exit(p, caf::exit_reason::user_shutdown);
    log(fmt::format("client {} disconnected ({} partitions stopped)", caf::to_string(dm.source.node()),
                    it->second.partitions.size()));
    clients_.erase(it);
  }

  void stop(const caf::error& reason) {
    for (auto& [addr, c] : clients_)
      for (const caf::actor& p : c.partitions) send_exit(p, caf::exit_reason::user_shutdown);
    clients_.clear();
    quit(reason);
  }

  WorkerOptions options_;
  std::vector<caf::actor> kernel_workers_;
  std::map<caf::actor_addr, Client> clients_;
};

}  // namespace

caf::actor spawn_worker(caf::actor_system& system, WorkerOptions options) {
  return system.spawn<WorkerActor>(std::move(options));
}

Expected<std::unique_ptr<WorkerNode>> WorkerNode::start(actors::SessionOptions options, const std::string& job,
                                                        int task, FILE* log) {
  auto hosts = std::make_shared<ClusterHosts>();
  options.hosts = hosts;
  TF_ASSIGN_OR_RETURN(options, actors::Session::resolve_options(std::move(options)));
  std::unique_ptr<WorkerNode> node(new WorkerNode());
  node->task_ = ClusterHosts::task_name(job, task);
  const ClusterSpec cluster = hosts->cluster();
  const TaskAddress* at = cluster.find(job, task);
  if (at == nullptr)
    return Status(ops::Error::not_found,
                  fmt::format("worker {}: the cluster has no such task (it has: {})", node->task_,
                              cluster.empty() ? "no jobs" : cluster.to_string()));
  node->address_ = *at;
  node->config_ = std::make_unique<actors::SessionConfig>(options);
  node->tls_ = hosts->tls();
  TF_RETURN_IF_ERROR(node->config_->load());
  node->system_ = std::make_unique<caf::actor_system>(*node->config_);
  WorkerOptions w;
  w.task = node->task_;
  w.max_nodes = *options.max_nodes;
  w.max_frame_depth = *options.max_frame_depth;
  w.log = log;
  node->worker_ = spawn_worker(*node->system_, std::move(w));
  // Reusing the address lets a restarted worker listen again at once (its
  // old connections may linger in TIME_WAIT); a live listener still makes
  // it fail.
  auto port = hosts->tls() ? caf::openssl::publish(node->worker_, node->address_.port,
                                                  node->address_.host.c_str(), /*reuse=*/true)
                           : node->system_->middleman().publish(node->worker_, node->address_.port,
                                                                node->address_.host.c_str(), /*reuse_addr=*/true);
  if (!port) {
    const std::string why = node->system_->render(port.error());
    caf::anon_send_exit(node->worker_, caf::exit_reason::user_shutdown);
    return Status(ops::Error::unavailable, fmt::format("worker {} cannot listen on {}: {}", node->task_,
                                                       node->address_.to_string(), why));
  }
  return node;
}

WorkerNode::~WorkerNode() {
  if (!system_) return;
  if (worker_) {
    if (tls_) {
      // (caf/openssl/unpublish.hpp does not compile in 0.17.6: the same
      // request to the openssl manager's middleman actor)
      auto unpublish = caf::make_function_view(system_->openssl_manager().actor_handle());
      (void)unpublish(caf::unpublish_atom::value, worker_.address(), address_.port);
    } else {
      system_->middleman().unpublish(worker_, address_.port);
    }
    caf::anon_send_exit(worker_, caf::exit_reason::user_shutdown);
  }
  worker_ = nullptr;
  system_.reset();
}

}  // namespace tagflow::net
