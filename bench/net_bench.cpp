// Two processes on loopback: what a message and a tensor cost between them,
// through CAF's networking (the io middleman) and through a plain TCP
// socket, measured in the same run. These are the baselines the multi-node
// runtime is held to (a loop iteration split across processes against one
// CAF round trip; tensor throughput against the raw socket).
//   net_bench [ROUNDTRIPS] [MIB]      default: 2000 16
// A child process (forked before any actor system exists) publishes an
// echo actor on a free port and serves a raw TCP socket on another; the
// parent measures, five times each, and prints medians:
//   - round trip: 8 bytes over the socket, and a CAF request/response (an
//     int32) between an actor of each process;
//   - bulk: MIB MiB over the socket and a float32 Tensor of MIB MiB as a
//     CAF message (its wire form: actors/tensor_inspect.hpp), each answered
//     by a short acknowledgement; the same bytes as tensors of 128 KiB to
//     4 MiB sent back to back, one message each;
//   - a step that makes a MIB MiB tensor here and sums it on the worker,
//     against the same step on one device (NET_BENCH_ONLY_TENSOR=1 runs
//     only this and the bulk measures, for profiling);
//   - loops (the child is also a tagflow worker, /job:worker/task:0): the
//     counting loop and the 64x64 MatMul loop with their body on the
//     worker's device and the pivot here, beside the same split between
//     two devices of this process and the same graph on one device, per
//     iteration; ITERATIONS (default 2000) for the counting loop, a tenth
//     for the MatMul loop.
//   net_bench [ROUNDTRIPS] [MIB] [ITERATIONS]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <caf/io/all.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "actors/session.hpp"
#include "actors/tensor_inspect.hpp"
#include "bench/bench_util.hpp"
#include "bench/loop_graphs.hpp"
#include "net/cluster_hosts.hpp"
#include "net/worker.hpp"

using namespace tagflow;

namespace {

constexpr int kReps = 5;
const std::vector<size_t> kChunkSizes = {size_t{128} << 10, size_t{256} << 10, size_t{512} << 10,
                                         size_t{1} << 20, size_t{4} << 20};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "net_bench: %s\n", what.c_str());
  std::exit(1);
}

// -------------------------------------------------------------- raw socket

void write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w <= 0) die(std::string("socket write: ") + std::strerror(errno));
    p += w;
    n -= static_cast<size_t>(w);
  }
}

bool read_all(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

void no_delay(int fd) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Listens on 127.0.0.1 at a port the system picks; returns the socket.
int listen_loopback(uint16_t* port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 1) != 0)
    die(std::string("listen: ") + std::strerror(errno));
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  *port = ntohs(a.sin_port);
  return fd;
}

int connect_loopback(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    die(std::string("connect: ") + std::strerror(errno));
  no_delay(fd);
  return fd;
}

// The child's socket server: 'p' + 8 bytes -> the 8 bytes back; 'b' + u64
// length + that many bytes -> one byte; 'q' or a closed socket: done.
void serve_socket(int listener) {
  int fd = ::accept(listener, nullptr, nullptr);
  if (fd < 0) return;
  no_delay(fd);
  std::vector<char> buf(1 << 20);
  char cmd = 0;
  while (read_all(fd, &cmd, 1) && cmd != 'q') {
    if (cmd == 'p') {
      char ping[8];
      if (!read_all(fd, ping, 8)) break;
      write_all(fd, ping, 8);
    } else if (cmd == 'b') {
      uint64_t n = 0;
      if (!read_all(fd, &n, 8)) break;
      while (n > 0) {
        const size_t chunk = std::min<uint64_t>(n, buf.size());
        if (!read_all(fd, buf.data(), chunk)) return;
        n -= chunk;
      }
      write_all(fd, "k", 1);
    }
  }
  ::close(fd);
}

// ------------------------------------------------------------------- CAF

struct Config : caf::actor_system_config {
  Config() {
    load<caf::io::middleman>();
    add_message_type<ops::Tensor>("tagflow.tensor");
    set("scheduler.max-threads", size_t{2});
  }
};

caf::behavior echo(caf::event_based_actor*) {
  return {
      [](int32_t x) { return x; },
      [](const ops::Tensor& t) { return static_cast<int64_t>(t.byte_size()); },
  };
}

// Sends `left` requests to `remote` one after another, then tells `done`.
void ping(caf::event_based_actor* self, caf::actor remote, int left, caf::actor done) {
  self->request(remote, std::chrono::seconds(10), int32_t{left}).then(
      [=](int32_t) {
        if (left == 1) self->send(done, int32_t{0});
        else ping(self, remote, left - 1, done);
      },
      [=](caf::error& e) { die("CAF round trip: " + self->system().render(e)); });
}

// ----------------------------------------------------------------- loops

std::vector<ops::Tensor> run_or_die(actors::Session& s, const actors::Feeds& feeds, const std::string& fetch) {
  auto r = s.run(feeds, {fetch});
  if (!r.ok()) die(r.status().to_string());
  return std::move(r).value();
}

// The graph with every node on `base` but `body`, which goes to `other`;
// the session has this process's CPU:0 and CPU:1 and the worker's CPU:0.
std::unique_ptr<actors::Session> placed(const std::string& text, const std::vector<std::string>& body,
                                        const std::string& other, uint16_t worker_port) {
  const std::string cpu = "/job:localhost/replica:0/task:0/device:CPU:";
  graph::Graph g = bench::with_body_on(text, body, other);
  actors::SessionOptions o;
  o.threads = 2;
  o.devices = {cpu + "0", cpu + "1"};
  o.hosts = std::make_shared<net::ClusterHosts>();
  o.cluster = "worker=127.0.0.1:" + std::to_string(worker_port);
  auto s = actors::Session::create(std::move(g), o);
  if (!s.ok()) die(s.status().to_string());
  return std::move(s).value();
}

void loops(int n, uint16_t worker_port, double caf_rtt) {
  for (const bench::SplitLoop& k : bench::split_loops(n)) {
    actors::Feeds feeds{{"n", ops::Tensor::scalar<int32_t>(k.n)}};
    auto one = placed(k.text, {}, "", worker_port);
    auto local = placed(k.text, k.body, "/job:localhost/replica:0/task:0/device:CPU:1", worker_port);
    auto remote = placed(k.text, k.body, "/job:worker/replica:0/task:0/device:CPU:0", worker_port);
    for (auto* s : {one.get(), local.get(), remote.get()}) run_or_die(*s, feeds, k.fetch);
    if (remote->last_partitions().size() != 2) die("the graph split across processes is not two partitions");
    const double t1 = bench::median_seconds(kReps, [&] { bench::keep(run_or_die(*one, feeds, k.fetch)); }) / k.n;
    const double t2 = bench::median_seconds(kReps, [&] { bench::keep(run_or_die(*local, feeds, k.fetch)); }) / k.n;
    const double t3 = bench::median_seconds(kReps, [&] { bench::keep(run_or_die(*remote, feeds, k.fetch)); }) / k.n;
    std::printf("%s, n = %d, body in another process: %.1f µs/iteration = %.2fx one CAF round trip (target <= 1.5x)  "
                "| body on another device of this process %.2f µs, one device %.2f µs\n",
                k.what, k.n, t3 * 1e6, t3 / caf_rtt, t2 * 1e6, t1 * 1e6);
  }
}

// A MIB MiB float32 tensor made here (Fill) and summed on `other`: the
// step crosses once with the tensor and once back with a scalar.
std::string tensor_step_text(int mib) {
  const std::string axes =
      "attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 0 int_val: 1 "
      "} } }";
  using namespace tagflow::testing;
  return bench::fill("big", mib * 1024, 256, 1.0f) + unary("moved", "Identity", "big", "DT_FLOAT") +
         node("axes", "Const", {}, type_attr("dtype", "DT_INT32") + " " + axes) +
         node("total", "Sum", {"moved", "axes"}, type_attr("T", "DT_FLOAT") + " " + type_attr("Tidx", "DT_INT32"));
}

// The same step on one device of this process and with the sum on the
// worker: what the transfer adds, against the raw socket's MIB MiB.
void tensor_step(int mib, uint16_t worker_port, double raw_bulk) {
  const std::string text = tensor_step_text(mib);
  const std::vector<std::string> body = {"moved", "axes", "total"};
  auto one = placed(text, {}, "", worker_port);
  auto local = placed(text, body, "/job:localhost/replica:0/task:0/device:CPU:1", worker_port);
  auto remote = placed(text, body, "/job:worker/replica:0/task:0/device:CPU:0", worker_port);
  const float want = static_cast<float>(mib) * 1024 * 256;
  for (auto* s : {one.get(), local.get(), remote.get()})
    if (run_or_die(*s, {}, "total")[0].scalar_value<float>() != want) die("the tensor step summed wrongly");
  const double t1 = bench::median_seconds(kReps, [&] { bench::keep(run_or_die(*one, {}, "total")); });
  const double t2 = bench::median_seconds(kReps, [&] { bench::keep(run_or_die(*local, {}, "total")); });
  const double t3 = bench::median_seconds(kReps, [&] { bench::keep(run_or_die(*remote, {}, "total")); });
  const double bytes = static_cast<double>(mib) * (1 << 20);
  std::printf("%d MiB tensor through a step (Fill here, Sum on the worker), median of %d: %.1f ms  | one device %.1f "
              "ms, Sum on another device of this process %.1f ms  | the transfer: %.1f ms, %.2f GB/s (%.0f%% of the "
              "socket)\n",
              mib, kReps, t3 * 1e3, t1 * 1e3, t2 * 1e3, (t3 - t1) * 1e3, bytes / (t3 - t1) / 1e9,
              100.0 * raw_bulk / (t3 - t1));
}

}  // namespace

int main(int argc, char** argv) {
  const int roundtrips = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int mib = argc > 2 ? std::atoi(argv[2]) : 16;
  const int iterations = argc > 3 ? std::atoi(argv[3]) : 2000;
  if (roundtrips < 1 || mib < 1 || iterations < 1) die("usage: net_bench [ROUNDTRIPS] [MIB] [ITERATIONS]");
  // The worker's port, picked before the fork.
  uint16_t worker_port = 0;
  ::close(listen_loopback(&worker_port));

  int ports_pipe[2], stop_pipe[2];
  if (::pipe(ports_pipe) != 0 || ::pipe(stop_pipe) != 0) die("pipe");
  const pid_t child = ::fork();
  if (child < 0) die("fork");
  if (child == 0) {
    ::close(ports_pipe[0]);
    ::close(stop_pipe[1]);
    Config cfg;
    caf::actor_system sys{cfg};
    auto server = sys.spawn(echo);
    auto caf_port = sys.middleman().publish(server, 0, "127.0.0.1");
    if (!caf_port) die("publish: " + sys.render(caf_port.error()));
    uint16_t raw_port = 0;
    const int listener = listen_loopback(&raw_port);
    actors::SessionOptions wo;
    wo.threads = 2;
    wo.cluster = "worker=127.0.0.1:" + std::to_string(worker_port);
    auto worker = net::WorkerNode::start(wo, "worker", 0, nullptr);
    if (!worker.ok()) die(worker.status().to_string());
    uint16_t ports[2] = {*caf_port, raw_port};
    write_all(ports_pipe[1], ports, sizeof ports);
    serve_socket(listener);
    char byte;
    (void)!::read(stop_pipe[0], &byte, 1);  // the parent is done with CAF too
    (void)sys.middleman().unpublish(server, *caf_port);
    caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
    return 0;
  }
  ::close(ports_pipe[1]);
  ::close(stop_pipe[0]);
  uint16_t ports[2] = {0, 0};
  pollfd pfd{ports_pipe[0], POLLIN, 0};
  if (::poll(&pfd, 1, 10000) != 1 || !read_all(ports_pipe[0], ports, sizeof ports)) {
    ::kill(child, SIGKILL);
    die("the child process did not start within 10 s");
  }

  // Raw socket.
  const int fd = connect_loopback(ports[1]);
  const double raw_rtt = bench::median_seconds(kReps, [&] {
    char msg[9] = "p1234567";
    for (int i = 0; i < roundtrips; ++i) {
      write_all(fd, msg, 9);
      if (!read_all(fd, msg + 1, 8)) die("socket closed");
    }
  }) / roundtrips;
  const size_t bytes = static_cast<size_t>(mib) << 20;
  std::vector<char> block(bytes, 'x');
  const double raw_bulk = bench::median_seconds(kReps, [&] {
    const char cmd = 'b';
    const uint64_t n = bytes;
    write_all(fd, &cmd, 1);
    write_all(fd, &n, 8);
    write_all(fd, block.data(), bytes);
    char ack;
    if (!read_all(fd, &ack, 1)) die("socket closed");
  });
  write_all(fd, "q", 1);
  ::close(fd);

  // CAF.
  double caf_rtt = 0, caf_bulk = 0;
  std::vector<double> caf_chunked;
  {
    Config cfg;
    caf::actor_system sys{cfg};
    auto remote = sys.middleman().remote_actor("127.0.0.1", ports[0]);
    if (!remote) die("remote_actor: " + sys.render(remote.error()));
    caf::scoped_actor self{sys};
    caf_rtt = bench::median_seconds(kReps, [&] {
      sys.spawn(ping, *remote, roundtrips, caf::actor(self));
      self->receive([](int32_t) {}, caf::after(std::chrono::seconds(60)) >> [] { die("round trips timed out"); });
    }) / roundtrips;
    ops::Tensor t = ops::Tensor::uninitialized(ops::DType::float32, ops::Shape{static_cast<int64_t>(bytes / 4)});
    std::memset(t.raw_mutable_data(), 0x3f, t.byte_size());
    caf_bulk = bench::median_seconds(kReps, [&] {
      self->request(*remote, std::chrono::seconds(60), t)
          .receive([&](int64_t n) { if (n != static_cast<int64_t>(bytes)) die("short tensor"); },
                   [&](caf::error& e) { die("tensor: " + sys.render(e)); });
    });
    // The same bytes as smaller tensors sent one after the other without
    // waiting: what sending a large tensor in chunks would give.
    for (size_t chunk_bytes : kChunkSizes) {
      std::vector<ops::Tensor> chunks;
      for (size_t at = 0; at < bytes; at += chunk_bytes) {
        const size_t n = std::min(bytes - at, chunk_bytes);
        ops::Tensor c = ops::Tensor::uninitialized(ops::DType::uint8, ops::Shape{static_cast<int64_t>(n)});
        std::memcpy(c.raw_mutable_data(), static_cast<const char*>(t.raw_data()) + at, n);
        chunks.push_back(std::move(c));
      }
      caf_chunked.push_back(bench::median_seconds(kReps, [&] {
        for (const ops::Tensor& c : chunks) self->send(*remote, c);
        for (size_t i = 0; i < chunks.size(); ++i)
          self->receive([](int64_t) {}, caf::after(std::chrono::seconds(60)) >> [] { die("chunks timed out"); });
      }));
    }
  }
  if (std::getenv("NET_BENCH_ONLY_TENSOR") == nullptr) loops(iterations, worker_port, caf_rtt);
  tensor_step(mib, worker_port, raw_bulk);
  write_all(stop_pipe[1], "s", 1);
  int status = 0;
  for (int i = 0; i < 100 && ::waitpid(child, &status, WNOHANG) == 0; ++i) ::usleep(50000);
  if (::waitpid(child, &status, WNOHANG) == 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
  }

  std::printf("round trip, 2 processes on loopback (median of %d x %d):  CAF request/response %.1f µs  | "
              "raw TCP ping-pong %.1f µs  (%.1fx)\n",
              kReps, roundtrips, caf_rtt * 1e6, raw_rtt * 1e6, caf_rtt / raw_rtt);
  std::printf("%d MiB one way + ack (median of %d):  float32 Tensor as a CAF message %.1f ms, %.2f GB/s  | "
              "raw TCP %.1f ms, %.2f GB/s  (%.0f%% of the socket)\n",
              mib, kReps, caf_bulk * 1e3, bytes / caf_bulk / 1e9, raw_bulk * 1e3, bytes / raw_bulk / 1e9,
              100.0 * raw_bulk / caf_bulk);
  for (size_t i = 0; i < kChunkSizes.size(); ++i)
    std::printf("%d MiB as %zu KiB tensors, one message each, sent back to back (median of %d): %.1f ms, "
                "%.2f GB/s  (%.0f%% of the socket)\n",
                mib, kChunkSizes[i] >> 10, kReps, caf_chunked[i] * 1e3, bytes / caf_chunked[i] / 1e9,
                100.0 * raw_bulk / caf_chunked[i]);
  return 0;
}
