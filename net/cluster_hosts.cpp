#include "net/cluster_hosts.hpp"

#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>
#include <fmt/format.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <fstream>
#include <memory>

#include "actors/messages.hpp"
#include "graph/io/export.hpp"
#include "net/remote.hpp"

namespace tagflow::net {

std::string protocol_version() {
  // The version of tagflow, and of the wire form of its messages.
  return "tagflow 0.1.0, wire 1";
}

void add_net_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<PartitionSpec>("tagflow.partition_spec");
}

void configure_middleman(caf::actor_system_config& cfg) {
  cfg.load<caf::io::middleman>();
  add_net_message_types(cfg);
  // A peer that stops answering (SIGSTOP, a hung host) is dropped after
  // about 1.5 s: its partitions go down and their steps end. The
  // configuration's [middleman] section may set other values.
  cfg.set("middleman.heartbeat-interval", caf::timespan{std::chrono::milliseconds(250)});
  cfg.set("middleman.connection-timeout", caf::timespan{std::chrono::milliseconds(1500)});
  // Workers reach each other through the client's connections. CAF 0.17's
  // automatic direct connections lost a message sent while the connection
  // was being set up (a step waited forever on a loaded machine).
  cfg.set("middleman.enable-automatic-connections", false);
}

void ClusterHosts::configure(caf::actor_system_config& cfg) {
  configure_middleman(cfg);
  cfg.load<caf::openssl::manager>();
}

namespace {

// OpenSSL's last error, for messages.
std::string ssl_error() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "no detail";
  char text[256];
  ERR_error_string_n(e, text, sizeof text);
  return text;
}

// What CAF's openssl module would only find out (and throw, ending the
// process) on the first connection: the files of [openssl] load, and the
// key is the certificate's.
Status check_tls_files(const caf::actor_system_config& cfg) {
  std::unique_ptr<SSL_CTX, void (*)(SSL_CTX*)> ctx(SSL_CTX_new(TLS_method()), SSL_CTX_free);
  auto bad = [](const char* key, const std::string& path, const std::string& why) {
    return Status(ops::Error::invalid_argument,
                  fmt::format("[openssl] {} = \"{}\": {}", key, ops::abbreviate(path), why));
  };
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), cfg.openssl_certificate.c_str()) != 1)
    return bad("certificate", cfg.openssl_certificate, "not a PEM certificate (" + ssl_error() + ")");
  if (cfg.openssl_passphrase.empty()) {
    if (SSL_CTX_use_PrivateKey_file(ctx.get(), cfg.openssl_key.c_str(), SSL_FILETYPE_PEM) != 1)
      return bad("key", cfg.openssl_key, "not a PEM private key (" + ssl_error() + ")");
    if (SSL_CTX_check_private_key(ctx.get()) != 1)
      return bad("key", cfg.openssl_key, "not the key of the certificate (" + ssl_error() + ")");
  }
  const char* cafile = cfg.openssl_cafile.empty() ? nullptr : cfg.openssl_cafile.c_str();
  const char* capath = cfg.openssl_capath.empty() ? nullptr : cfg.openssl_capath.c_str();
  if (SSL_CTX_load_verify_locations(ctx.get(), cafile, capath) != 1)
    return bad(cafile ? "cafile" : "capath", cafile ? cfg.openssl_cafile : cfg.openssl_capath,
               "no CA certificates to check peers with (" + ssl_error() + ")");
  return ops::ok_status();
}

}  // namespace

Status ClusterHosts::loaded(caf::actor_system_config& cfg) {
  const bool tls = !cfg.openssl_certificate.empty() || !cfg.openssl_key.empty() || !cfg.openssl_cafile.empty() ||
                   !cfg.openssl_capath.empty();
  // A node presents its certificate and checks its peers' against the CA:
  // all three are needed, or none.
  if (tls && (cfg.openssl_certificate.empty() || cfg.openssl_key.empty() ||
              (cfg.openssl_cafile.empty() && cfg.openssl_capath.empty())))
    return Status(ops::Error::invalid_argument,
                  "[openssl]: TLS between nodes needs the node's certificate, its key and the CA "
                  "(certificate, key, and cafile or capath)");
  if (tls) TF_RETURN_IF_ERROR(check_tls_files(cfg));
  std::lock_guard<std::mutex> lock(mu_);
  tls_ = tls;
  return ops::ok_status();
}

bool ClusterHosts::tls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tls_;
}

std::string ClusterHosts::task_name(const std::string& job, int task) {
  return fmt::format("/job:{}/task:{}", job, task);
}

Status ClusterHosts::set_cluster(const std::vector<std::pair<std::string, std::vector<std::string>>>& jobs,
                                 const std::string& source, const std::string& flag,
                                 const std::vector<std::string>& task_devices) {
  ClusterSpec spec;
  if (!jobs.empty()) {
    std::string text;
    for (const auto& [job, tasks] : jobs) {
      if (!text.empty()) text += ';';
      text += job + '=';
      for (size_t i = 0; i < tasks.size(); ++i) text += (i ? "," : "") + tasks[i];
    }
    auto parsed = ClusterSpec::parse(text);
    if (!parsed.ok()) return parsed.status().with_prefix(source + ": [cluster]: ");
    spec = std::move(parsed).value();
  }
  if (!flag.empty()) {
    auto parsed = ClusterSpec::parse(flag);
    if (!parsed.ok()) return parsed.status().with_prefix("--cluster: ");
    for (const std::string& job : parsed->jobs()) {
      std::vector<TaskAddress> tasks;
      for (int t = 0; t < parsed->num_tasks(job); ++t) tasks.push_back(*parsed->find(job, t));
      spec.set_job(job, std::move(tasks));
    }
  }
  std::vector<std::string> devices;
  for (const std::string& d : task_devices) {
    auto name = graph::parse_device_name("/device:" + d);
    if (!name.ok() || !name->type || !name->id || name->job || name->task)
      return Status(ops::Error::invalid_argument,
                    fmt::format("[tagflow] task-devices: '{}' is not a device of a task (\"CPU:0\")",
                                ops::abbreviate(d)));
  }
  for (const std::string& job : spec.jobs())
    for (int t = 0; t < spec.num_tasks(job); ++t)
      for (const std::string& d : task_devices)
        devices.push_back(fmt::format("/job:{}/replica:0/task:{}/device:{}", job, t, d));
  std::lock_guard<std::mutex> lock(mu_);
  cluster_ = std::move(spec);
  devices_ = std::move(devices);
  return ops::ok_status();
}

ClusterSpec ClusterHosts::cluster() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cluster_;
}

std::vector<std::string> ClusterHosts::devices() const {
  std::lock_guard<std::mutex> lock(mu_);
  return devices_;
}

bool ClusterHosts::is_remote(const std::string& device) const {
  auto name = graph::parse_device_name(device);
  if (!name.ok() || !name->job || !name->task) return false;
  std::lock_guard<std::mutex> lock(mu_);
  return cluster_.find(*name->job, static_cast<int>(*name->task)) != nullptr;
}

std::string ClusterHosts::describe(const std::string& device) const {
  auto name = graph::parse_device_name(device);
  if (!name.ok() || !name->job || !name->task) return device;
  std::lock_guard<std::mutex> lock(mu_);
  const TaskAddress* at = cluster_.find(*name->job, static_cast<int>(*name->task));
  const std::string task = task_name(*name->job, static_cast<int>(*name->task));
  return at == nullptr ? task : fmt::format("{} at {}", task, at->to_string());
}

Expected<caf::actor> connect_worker(caf::actor_system& system, const std::string& task, const TaskAddress& address,
                                    bool tls) {
  auto worker = tls ? caf::openssl::remote_actor<caf::actor>(system, address.host, address.port)
                    : system.middleman().remote_actor(address.host, address.port);
  if (!worker) {
    const bool handshake = worker.error() == caf::sec::disconnect_during_handshake;
    return Status(ops::Error::unavailable,
                  fmt::format("cannot reach the worker of {} at {}: {}{}", task, address.to_string(),
                              system.render(worker.error()),
                              handshake ? " (a worker that uses TLS refuses a node without a certificate "
                                          "its CA signed; one that does not, a node that uses TLS)"
                                        : ""));
  }
  Status status = ops::ok_status();
  caf::error e = request_and_wait(
      system, *worker, ClusterHosts::kRequestTimeout, caf::make_message(hello_atom::value, protocol_version()),
      [&](const std::string& version, const std::string& name) {
        if (version != protocol_version())
          status = Status(ops::Error::failed_precondition,
                          fmt::format("the worker at {} ({}) runs {}, this process {}", address.to_string(), name,
                                      version, protocol_version()));
        else if (name != task)
          status = Status(ops::Error::failed_precondition,
                          fmt::format("the worker at {} is {}, not {} as the cluster says", address.to_string(),
                                      name, task));
      });
  if (e)
    return Status(ops::Error::unavailable, fmt::format("the worker of {} at {} did not answer hello: {}", task,
                                                       address.to_string(), system.render(e)));
  if (!status.ok()) return status;
  return *worker;
}

Expected<caf::actor> ClusterHosts::spawn(caf::actor_system& system, const actors::RemotePartition& p) {
  auto name = graph::parse_device_name(p.device);
  if (!name.ok()) return name.status();
  const std::string task = task_name(*name->job, static_cast<int>(*name->task));
  TaskAddress address;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const TaskAddress* at = cluster_.find(*name->job, static_cast<int>(*name->task));
    if (at == nullptr)
      return Status(ops::Error::not_found, fmt::format("device {}: the cluster has no task {}", p.device, task));
    address = *at;
  }
  TF_ASSIGN_OR_RETURN(caf::actor worker, connect_worker(system, task, address, tls()));
  PartitionSpec spec;
  spec.graph_def = graph::graph_to_binary(*p.graph);
  spec.name = p.name;
  spec.devices = p.devices;
  spec.index = p.index;
  spec.fetch_names = p.fetch_names;
  spec.client = p.client;
  Expected<caf::actor> out = Status(ops::Error::internal, "no answer");
  caf::error e = request_and_wait(system, worker, kRequestTimeout,
                                  caf::make_message(create_atom::value, std::move(spec)),
                                  [&](caf::actor& partition) { out = std::move(partition); });
  if (e) {
    Status s = actors::from_caf_error(e);
    if (e.category() != caf::atom("tagflow")) s = Status(ops::Error::unavailable, system.render(e));
    out = s.with_prefix(fmt::format("partition {} on {} at {}: ", p.name, task, address.to_string()));
  }
  return out;
}

}  // namespace tagflow::net
