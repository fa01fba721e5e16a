// Worker processes for the multi-process tests: `tagflow worker` started
// on free loopback ports and stopped again. Every wait is bounded; each
// worker dies with the test process (PR_SET_PDEATHSIG) and is killed by
// the destructor, so that no process is left behind even when a test
// fails.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace tagflow::testing {

// A loopback port nothing listens on right now.
inline int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("no free loopback port");
  ::close(fd);
  return ntohs(a.sin_port);
}

// One `tagflow worker` process.
class WorkerProcess {
 public:
  // Starts task `task` of `cluster` ("worker=127.0.0.1:P0,127.0.0.1:P1")
  // and waits until it listens (at most `wait`); the log is kept.
  WorkerProcess(const std::string& cluster, int task, std::chrono::milliseconds wait = std::chrono::seconds(10),
                const std::vector<std::string>& extra = {}) {
    const std::string t = std::to_string(task);
    std::vector<std::string> args = {TAGFLOW_BINARY, "worker", "--cluster", cluster, "--task", t, "--threads", "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int out[2];
    if (::pipe(out) != 0) throw std::runtime_error("pipe");
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(126);
      ::dup2(out[1], 2);
      ::close(out[0]);
      ::close(out[1]);
      ::execv(TAGFLOW_BINARY, argv.data());
      ::_exit(127);
    }
    ::close(out[1]);
    err_ = out[0];
    ::fcntl(err_, F_SETFL, O_NONBLOCK);
    const auto until = std::chrono::steady_clock::now() + wait;
    while (log_.find("listening on") == std::string::npos) {
      if (std::chrono::steady_clock::now() > until || !read_log(50)) {
        stop();
        throw std::runtime_error("worker " + std::to_string(task) + " did not start: " + log_);
      }
    }
  }
  ~WorkerProcess() { stop(); }
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int sig) const {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  // The log so far (reads what arrived).
  const std::string& log() {
    read_log(0);
    return log_;
  }
  // SIGTERM, then SIGKILL after 10 s; true if it exited 0 on SIGTERM.
  bool stop() {
    if (pid_ <= 0) return false;
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGTERM);
    int status = 0;
    bool clean = false;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    for (;;) {
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        break;
      }
      if (std::chrono::steady_clock::now() > until) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    pid_ = -1;
    read_log(0);
    if (err_ >= 0) ::close(err_);
    err_ = -1;
    return clean;
  }
  // SIGKILL and reap.
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    if (err_ >= 0) ::close(err_);
    err_ = -1;
  }

 private:
  // Reads what the worker wrote; false once it has exited.
  bool read_log(int timeout_ms) {
    if (err_ < 0) return false;
    pollfd p{err_, POLLIN, 0};
    ::poll(&p, 1, timeout_ms);
    char buf[4096];
    for (;;) {
      ssize_t n = ::read(err_, buf, sizeof buf);
      if (n > 0) {
        log_.append(buf, static_cast<size_t>(n));
        continue;
      }
      if (n == 0) return false;  // closed: the worker exited
      return true;
    }
  }

  pid_t pid_ = -1;
  int err_ = -1;
  std::string log_;
};

// `n` workers of job `worker` on free loopback ports.
class Cluster {
 public:
  explicit Cluster(int n, const std::vector<std::string>& extra = {}) : extra_(extra) {
    for (int attempt = 0;; ++attempt) {
      ports_.clear();
      for (int i = 0; i < n; ++i) ports_.push_back(free_port());
      try {
        for (int i = 0; i < n; ++i)
          workers_.push_back(std::make_unique<WorkerProcess>(spec(), i, std::chrono::seconds(10), extra_));
        return;
      } catch (const std::exception&) {
        workers_.clear();  // a port taken meanwhile: new ports
        if (attempt == 4) throw;
      }
    }
  }
  // "worker=127.0.0.1:P0,..."
  std::string spec() const {
    std::string s = "worker=";
    for (size_t i = 0; i < ports_.size(); ++i) s += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(ports_[i]);
    return s;
  }
  // The devices of the tasks, one CPU each.
  std::vector<std::string> devices() const {
    std::vector<std::string> d;
    for (size_t i = 0; i < ports_.size(); ++i)
      d.push_back("/job:worker/replica:0/task:" + std::to_string(i) + "/device:CPU:0");
    return d;
  }
  WorkerProcess& worker(int i) { return *workers_[static_cast<size_t>(i)]; }
  int port(int i) const { return ports_[static_cast<size_t>(i)]; }
  // Starts task i again (after it was killed) on its port.
  void restart(int i) {
    workers_[static_cast<size_t>(i)] = std::make_unique<WorkerProcess>(spec(), i, std::chrono::seconds(10), extra_);
  }

 private:
  std::vector<std::string> extra_;
  std::vector<int> ports_;
  std::vector<std::unique_ptr<WorkerProcess>> workers_;
};

}  // namespace tagflow::testing
