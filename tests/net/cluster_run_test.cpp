// Partitions in other processes: real `tagflow worker` processes on free
// loopback ports. Every graph of the executor's multi-device suite gives
// its one-device result spread over 2 and 3 workers (and the client's own
// device); a killed worker ends the step with an error naming its task
// within 2 s and the session runs again once it is back; a stopped one is
// found by the heartbeat; a worker of another version, an unreachable one,
// a port in use and bad requests are clear errors; malformed messages do
// not bring a worker down.
#include <boost/test/unit_test.hpp>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "actors/messages.hpp"
#include "actors/partition_cases.hpp"
#include "net/cluster_hosts.hpp"
#include "net/remote.hpp"
#include "worker_processes.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using namespace tagflow::testing::partition_cases;
using ops::Tensor;
using Clock = std::chrono::steady_clock;

namespace {

// A session whose devices are the client's CPU:0 and the cluster's tasks.
actors::SessionOptions cluster_options(const Cluster& cluster, int threads = 2) {
  actors::SessionOptions o;
  o.threads = threads;
  o.hosts = std::make_shared<net::ClusterHosts>();
  o.cluster = cluster.spec();
  o.devices = {"/job:localhost/replica:0/task:0/device:CPU:0"};
  for (const std::string& d : cluster.devices()) o.devices.push_back(d);
  return o;
}

std::vector<std::string> run_steps(const Case& c, const actors::SessionOptions& o, size_t* most, bool* remote) {
  auto s = actors::Session::create(c.graph(), o);
  if (!s.ok()) throw std::runtime_error(s.status().to_string());
  std::vector<std::string> out;
  for (const Step& step : c.steps) {
    auto r = (*s)->run(step.feeds, step.fetches, step.targets);
    if (!r.ok()) BOOST_TEST_MESSAGE(r.status().to_string());
    out.push_back(outcome(r));
    for (const std::string& p : (*s)->last_partitions())
      if (p.find("/job:worker/") != std::string::npos) *remote = true;
    *most = std::max(*most, (*s)->last_partitions().size());
  }
  BOOST_TEST(no_step_actor_left(**s));
  return out;
}

// A counting loop to `n` (fed), spread over every device round robin.
std::string counting_graph() {
  return int_const("start", 0) + node("n", "Placeholder", {}, type_attr("dtype", "DT_INT32")) +
         counting_loop("w", "start", "n", 1);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cluster_run)

BOOST_AUTO_TEST_CASE(every_graph_gives_its_one_device_result_across_worker_processes) {
  for (int workers : {2, 3}) {
    Cluster cluster(workers);
    for (const Case& c : cases()) {
      BOOST_TEST_CONTEXT(c.name << ", " << workers << " workers") {
        actors::SessionOptions one;
        one.num_devices = 1;
        size_t partitions = 0;
        bool remote = false;
        const std::vector<std::string> want = run_steps(c, one, &partitions, &remote);
        size_t most = 0;
        bool any_remote = false;
        for (uint64_t seed = 1; seed <= 4; ++seed) {
          BOOST_TEST_CONTEXT("random:" << seed) {
            actors::SessionOptions o = cluster_options(cluster, 1 + static_cast<int>(seed % 2));
            o.placement.strategy = graph::PlacementOptions::Strategy::random;
            o.placement.seed = seed + static_cast<uint64_t>(workers) * 100;
            BOOST_TEST(run_steps(c, o, &most, &any_remote) == want, boost::test_tools::per_element());
          }
        }
        BOOST_TEST(most > 1u, "no placement split the graph");
        BOOST_TEST(any_remote, "no placement used a worker");
      }
    }
    // Clients come and go: each connect and disconnect is one line.
    const std::string& log = cluster.worker(0).log();
    BOOST_TEST(log.find("connected") != std::string::npos, log);
    BOOST_TEST(log.find("disconnected") != std::string::npos, log);
    BOOST_TEST(cluster.worker(0).stop(), "the worker did not exit cleanly on SIGTERM");
  }
}

BOOST_AUTO_TEST_CASE(a_killed_worker_ends_the_step_naming_its_task_and_the_session_runs_again) {
  Cluster cluster(2);
  trace::MemorySink events;
  actors::SessionOptions o = cluster_options(cluster);
  o.devices = cluster.devices();
  o.events = &events;
  o.placement.strategy = graph::PlacementOptions::Strategy::round_robin;
  auto s = make_session(parse(counting_graph()), {"2 threads", false, 2}, o);
  BOOST_TEST(must_run(*s, {{"n", Tensor::scalar<int32_t>(10)}}, {"w/Exit"})[0].scalar_value<int32_t>() == 10);
  BOOST_TEST(s->last_partitions().size() == 2u);
  ops::Expected<std::vector<Tensor>> result = ops::Status(ops::Error::internal, "not run");
  std::thread step([&] { result = s->run({{"n", Tensor::scalar<int32_t>(1'000'000)}}, {"w/Exit"}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto killed = Clock::now();
  cluster.worker(1).kill();
  step.join();
  const auto took = Clock::now() - killed;
  BOOST_TEST(std::chrono::duration_cast<std::chrono::milliseconds>(took).count() < 2000);
  BOOST_REQUIRE(!result.ok());
  BOOST_TEST(result.status().code() == ops::Error::unavailable, result.status().to_string());
  const std::string task1 = "/job:worker/task:1 at 127.0.0.1:" + std::to_string(cluster.port(1));
  BOOST_TEST(result.status().message().find(task1) != std::string::npos, result.status().message());
  // The coordinator saw both partitions come up and the killed one go down.
  int ups = 0, downs = 0;
  for (const trace::Event& e : events.events()) {
    if (e.kind == trace::Kind::partition_up) ++ups;
    if (e.kind == trace::Kind::partition_down) {
      ++downs;
      BOOST_TEST(e.text.find("/job:worker/replica:0/task:1/") != std::string::npos, e.text);
    }
  }
  BOOST_TEST(ups == 2);
  BOOST_TEST(downs == 1, "worker 0 said: " << cluster.worker(0).log());
  // While it is down, a step is a clear error too, at once.
  auto down = s->run({{"n", Tensor::scalar<int32_t>(3)}}, {"w/Exit"});
  BOOST_REQUIRE(!down.ok());
  BOOST_TEST(down.status().code() == ops::Error::unavailable);
  BOOST_TEST(down.status().message().find(task1) != std::string::npos, down.status().message());
  // Restarted, it serves the same session again.
  cluster.restart(1);
  BOOST_TEST(must_run(*s, {{"n", Tensor::scalar<int32_t>(7)}}, {"w/Exit"})[0].scalar_value<int32_t>() == 7);
  BOOST_TEST(no_step_actor_left(*s));
  // The partitions the session let go of when it made the step again
  // (worker 0's among them) ended without a partition_down.
  int later_downs = 0;
  for (const trace::Event& e : events.events()) later_downs += e.kind == trace::Kind::partition_down;
  BOOST_TEST(later_downs == 1);
}

// An 800 KB tensor crosses from the client to a worker at the root, between
// the workers in every iteration of a loop (through the client), and back:
// in parts each time, put together byte for byte.
BOOST_AUTO_TEST_CASE(a_large_tensor_crosses_processes_in_parts) {
  Cluster cluster(2);
  const std::vector<std::string> devices = cluster.devices();
  const std::string client = "/job:localhost/replica:0/task:0/device:CPU:0";
  graph::Graph g = parse(large_tensor_loop());
  for (graph::NodeId id = 0; id < g.num_nodes(); ++id) {
    const std::string& name = g.node(id).name;
    const bool in_loop = name.rfind("w/", 0) == 0;
    g.mutable_node(id).device = name == "w/scaled" ? devices[1] : in_loop ? devices[0] : client;
  }
  actors::SessionOptions one;
  one.num_devices = 1;
  size_t ignored = 0;
  bool remote = false;
  Case c{"large", [&] { return g; }, {{{}, {"w/acc_exit", "total"}, {}}}};
  const Case unplaced{"large", [] { return parse(large_tensor_loop()); }, c.steps};
  const std::vector<std::string> want = run_steps(unplaced, one, &ignored, &remote);
  BOOST_REQUIRE(want.front().rfind("float32[200001]", 0) == 0);
  for (int threads : {1, 2, 4}) {
    BOOST_TEST_CONTEXT(threads << " threads") {
      size_t partitions = 0;
      remote = false;
      BOOST_TEST(run_steps(c, cluster_options(cluster, threads), &partitions, &remote) == want,
                 boost::test_tools::per_element());
      BOOST_TEST(partitions == 3u);
      BOOST_TEST(remote);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_stopped_worker_is_found_by_the_heartbeat) {
  Cluster cluster(2);
  actors::SessionOptions o = cluster_options(cluster);
  o.devices = cluster.devices();
  o.placement.strategy = graph::PlacementOptions::Strategy::round_robin;
  auto s = make_session(parse(counting_graph()), {"2 threads", false, 2}, o);
  ops::Expected<std::vector<Tensor>> result = ops::Status(ops::Error::internal, "not run");
  std::thread step([&] { result = s->run({{"n", Tensor::scalar<int32_t>(1'000'000)}}, {"w/Exit"}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto stopped = Clock::now();
  cluster.worker(0).signal(SIGSTOP);
  step.join();
  const auto took = Clock::now() - stopped;
  cluster.worker(0).signal(SIGCONT);
  BOOST_TEST(std::chrono::duration_cast<std::chrono::milliseconds>(took).count() < 3000);
  BOOST_REQUIRE(!result.ok());
  BOOST_TEST(result.status().code() == ops::Error::unavailable, result.status().to_string());
  BOOST_TEST(result.status().message().find("/job:worker/task:0") != std::string::npos, result.status().message());
}

BOOST_AUTO_TEST_CASE(a_worker_that_cannot_be_reached_is_an_error_naming_the_task_and_address) {
  const int port = free_port();
  actors::SessionOptions o;
  o.hosts = std::make_shared<net::ClusterHosts>();
  o.cluster = "worker=127.0.0.1:" + std::to_string(port);
  o.devices = {"/job:worker/replica:0/task:0/device:CPU:0"};
  auto s = make_session(parse(counting_graph()), {"2 threads", false, 2}, o);
  auto r = s->run({{"n", Tensor::scalar<int32_t>(3)}}, {"w/Exit"});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().code() == ops::Error::unavailable);
  BOOST_TEST(r.status().message().find("/job:worker/task:0 at 127.0.0.1:" + std::to_string(port)) != std::string::npos,
             r.status().message());
}

BOOST_AUTO_TEST_CASE(a_device_of_a_task_the_cluster_does_not_have_is_an_error) {
  Cluster cluster(1);
  actors::SessionOptions o = cluster_options(cluster);
  auto g = parse(int_const("a", 1) + node("b", "Identity", {"a"}, type_attr("T", "DT_INT32") +
                                          " device: \"/job:worker/replica:0/task:5/device:CPU:0\""));
  auto s = make_session(std::move(g), {"2 threads", false, 2}, o);
  auto r = s->run({}, {"b"});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message().find("task:5") != std::string::npos, r.status().message());
}

BOOST_AUTO_TEST_CASE(a_second_worker_on_a_port_in_use_is_an_error_naming_the_address) {
  Cluster cluster(1);
  BOOST_CHECK_EXCEPTION(WorkerProcess(cluster.spec(), 0, std::chrono::seconds(5)), std::runtime_error,
                        [&](const std::runtime_error& e) {
                          const std::string m = e.what();
                          return m.find("cannot listen on 127.0.0.1:" + std::to_string(cluster.port(0))) !=
                                 std::string::npos;
                        });
}

namespace {

// The client side of the handshake, as another tagflow version would be:
// a fake worker that answers hello with another version.
// (An argument: CAF 0.17 spawns an argument-less function actor through a
// null shared_ptr, which UBSan reports.)
caf::behavior other_version_worker(int) {
  return {[](net::hello_atom, const std::string&) {
    return caf::make_message(std::string("tagflow 9.9.9, wire 7"), std::string("/job:worker/task:0"));
  }};
}

struct NetConfig : caf::actor_system_config {
  NetConfig() {
    actors::add_message_types(*this);
    net::configure_middleman(*this);
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_worker_of_another_version_is_refused_by_name) {
  NetConfig cfg;
  caf::actor_system system{cfg};
  auto fake = system.spawn(other_version_worker, 0);
  auto port = system.middleman().publish(fake, 0, "127.0.0.1");
  BOOST_REQUIRE(port);
  net::TaskAddress at{"127.0.0.1", *port};
  auto worker = net::connect_worker(system, "/job:worker/task:0", at);
  BOOST_REQUIRE(!worker.ok());
  BOOST_TEST(worker.status().code() == ops::Error::failed_precondition);
  BOOST_TEST(worker.status().message().find("runs tagflow 9.9.9") != std::string::npos, worker.status().message());
  BOOST_TEST(worker.status().message().find("127.0.0.1:" + std::to_string(*port)) != std::string::npos);
  system.middleman().unpublish(fake, *port);
  caf::anon_send_exit(fake, caf::exit_reason::user_shutdown);
}

namespace {

// A tensor whose wire bytes are whatever a test says: what a broken or
// hostile peer could send under tagflow's type name.
struct RawTensor {
  std::string wire;
};
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, RawTensor& x) {
  return f(caf::meta::type_name("tagflow.tensor"), x.wire);
}

struct HostileConfig : caf::actor_system_config {
  HostileConfig() {
    add_message_type<RawTensor>("tagflow.tensor");
    add_message_type<net::PartitionSpec>("tagflow.partition_spec");
    load<caf::io::middleman>();
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(malformed_requests_and_messages_do_not_bring_a_worker_down) {
  Cluster cluster(1);
  HostileConfig cfg;
  caf::actor_system system{cfg};
  auto worker = system.middleman().remote_actor("127.0.0.1", static_cast<uint16_t>(cluster.port(0)));
  BOOST_REQUIRE(worker);
  auto hello = [&] {
    bool answered = false;
    caf::error e = net::request_and_wait(system, *worker, std::chrono::seconds(5),
                                         caf::make_message(net::hello_atom::value, net::protocol_version()),
                                         [&](const std::string&, const std::string&) { answered = true; });
    return answered && !e;
  };
  auto create = [&](const net::PartitionSpec& spec) {
    caf::error e = net::request_and_wait(system, *worker, std::chrono::seconds(5),
                                         caf::make_message(net::create_atom::value, spec), [](caf::actor&) {});
    return system.render(e);
  };
  // The client the requests name: an actor that lives as long as the test.
  auto client = system.spawn(other_version_worker, 0);
  BOOST_TEST(hello());
  // A GraphDef that is not one, and an index out of range: errors that
  // name the partition and the task.
  net::PartitionSpec spec;
  spec.graph_def = "\xff\xff\xff garbage";
  spec.name = "p0";
  spec.devices = {"/job:worker/replica:0/task:0/device:CPU:0"};
  spec.client = client;
  std::string error = create(spec);
  BOOST_TEST(error.find("partition p0 on /job:worker/task:0") != std::string::npos, error);
  spec.index = 3;
  error = create(spec);
  BOOST_TEST(error.find("index 3") != std::string::npos, error);
  // Tensors whose bytes lie: a truncated one, one that claims 2^40
  // elements, one of an unknown dtype. The worker drops each message
  // (it cannot be read) and goes on.
  auto wire = ops::encode_tensor_wire(Tensor::vector<float>({1, 2, 3}));
  std::vector<std::string> bad = {wire.substr(0, wire.size() - 5), wire, wire};
  bad[1][6] = 40;                    // rank... whatever the byte: a malformed header
  bad[2].replace(1, 4, "\x7f\x7f\x7f\x7f");  // dtype number
  for (const std::string& b : bad) caf::anon_send(*worker, net::hello_atom::value, RawTensor{b});
  BOOST_TEST(hello());
  const std::string log = cluster.worker(0).log();
  BOOST_TEST(log.find("dropped a message that could not be read") != std::string::npos, log);
  BOOST_TEST(cluster.worker(0).stop(), "the worker did not exit cleanly after malformed messages");
  caf::anon_send_exit(client, caf::exit_reason::user_shutdown);
}

namespace {

// A throwaway CA and certificates made with the `openssl` command, in a
// directory of their own, removed afterwards.
class Certificates {
 public:
  Certificates() {
    char dir[] = "/tmp/tagflow-tls-XXXXXX";
    if (::mkdtemp(dir) == nullptr) throw std::runtime_error("mkdtemp");
    dir_ = dir;
    authority("ca");
    authority("other_ca");
    signed_by("worker", "ca");
    signed_by("client", "ca");
    signed_by("stranger", "other_ca");
  }
  ~Certificates() { std::filesystem::remove_all(dir_); }

  // An INI file for `node` (signed by the CA of `ca_of`), checking peers
  // against "ca".
  std::string config(const std::string& node, const std::string& extra = "") const {
    const std::string path = dir_ + "/" + node + ".ini";
    std::ofstream(path) << "[openssl]\ncertificate=\"" << dir_ << "/" << node << ".pem\"\nkey=\"" << dir_ << "/"
                        << node << ".key\"\ncafile=\"" << dir_ << "/ca.pem\"\n"
                        << extra;
    return path;
  }

 private:
  void run(const std::string& command) const {
    if (std::system(("cd " + dir_ + " && " + command + " > /dev/null 2>&1").c_str()) != 0)
      throw std::runtime_error("openssl failed: " + command);
  }
  void authority(const std::string& name) const {
    run("openssl req -x509 -newkey rsa:2048 -nodes -keyout " + name + ".key -out " + name +
        ".pem -days 1 -subj /CN=" + name);
  }
  void signed_by(const std::string& name, const std::string& ca) const {
    run("openssl req -newkey rsa:2048 -nodes -keyout " + name + ".key -out " + name + ".csr -subj /CN=" + name);
    run("openssl x509 -req -in " + name + ".csr -CA " + ca + ".pem -CAkey " + ca + ".key -CAcreateserial -out " +
        name + ".pem -days 1");
  }
  std::string dir_;
};

}  // namespace

BOOST_AUTO_TEST_CASE(a_step_runs_over_tls_and_a_node_without_a_valid_certificate_is_refused) {
  Certificates certs;
  Cluster cluster(2, {"--config", certs.config("worker")});
  auto session_with = [&](const std::string& config) {
    actors::SessionOptions o = cluster_options(cluster);
    o.devices = cluster.devices();
    o.placement.strategy = graph::PlacementOptions::Strategy::round_robin;
    o.config_file = config;
    return make_session(parse(counting_graph()), {"2 threads", false, 2}, o);
  };
  // Both workers and the client present certificates of the CA: the loop
  // runs across the three processes over TLS. (One session at a time: the
  // sessions of one process are one CAF node, docs/protocol.md.)
  {
    auto s = session_with(certs.config("client"));
    BOOST_TEST(must_run(*s, {{"n", Tensor::scalar<int32_t>(50)}}, {"w/Exit"})[0].scalar_value<int32_t>() == 50);
    BOOST_TEST(s->last_partitions().size() == 2u);
  }
  // A client without TLS, and one whose certificate another CA signed, are
  // refused during the handshake.
  for (const std::string& config : {std::string(), certs.config("stranger")}) {
    auto refused = session_with(config)->run({{"n", Tensor::scalar<int32_t>(5)}}, {"w/Exit"});
    BOOST_REQUIRE(!refused.ok());
    BOOST_TEST(refused.status().code() == ops::Error::unavailable);
    BOOST_TEST(refused.status().message().find("cannot reach the worker of /job:worker/task:") != std::string::npos,
               refused.status().message());
  }
  // The workers go on serving clients that have a certificate.
  auto s = session_with(certs.config("client"));
  BOOST_TEST(must_run(*s, {{"n", Tensor::scalar<int32_t>(7)}}, {"w/Exit"})[0].scalar_value<int32_t>() == 7);
}

BOOST_AUTO_TEST_CASE(an_incomplete_tls_configuration_is_an_error_naming_the_key) {
  Certificates certs;
  const std::string half = certs.config("client");
  std::ofstream(half, std::ios::app) << "";
  actors::SessionOptions o;
  o.hosts = std::make_shared<net::ClusterHosts>();
  o.config_text = "[openssl]\ncafile=\"/nonexistent/ca.pem\"\n";
  auto r = actors::Session::resolve_options(o);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message().find("[openssl]: TLS between nodes needs") != std::string::npos, r.status().message());
  o.config_text = "[openssl]\ncertificate=\"" + half + "\"\nkey=\"" + half + "\"\ncafile=\"" + half + "\"\n";
  r = actors::Session::resolve_options(o);
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message().find("[openssl] certificate = ") != std::string::npos, r.status().message());
  BOOST_TEST(r.status().message().find("not a PEM certificate") != std::string::npos, r.status().message());
}

BOOST_AUTO_TEST_SUITE_END()
