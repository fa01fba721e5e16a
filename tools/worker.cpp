// `tagflow worker`: one task of a cluster. Publishes the worker actor on
// the task's address and serves clients until SIGINT or SIGTERM.
#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <pthread.h>

#include "net/worker.hpp"
#include "tools/commands.hpp"

namespace tagflow::tools {

int run_worker(const WorkerArgs& args) {
  // The signals are taken by sigwait below: blocked before any thread
  // starts, so that every thread of the actor system inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  actors::SessionOptions o;
  o.config_file = args.config;
  o.cluster = args.cluster;
  o.threads = args.threads;
  if (!net::is_job_name(args.job))
    return fail(Status(ops::Error::invalid_argument,
                       fmt::format("--job '{}' is not a job name (a letter, then letters, digits and _)",
                                   ops::abbreviate(args.job))));
  auto node = net::WorkerNode::start(std::move(o), args.job, args.task);
  if (!node.ok()) return fail(node.status());
  std::fprintf(stderr, "tagflow worker %s: listening on %s\n", (*node)->task().c_str(),
               (*node)->address().to_string().c_str());
  std::fflush(stderr);
  int signal = 0;
  sigwait(&stop_signals, &signal);
  std::fprintf(stderr, "tagflow worker %s: stopping (%s)\n", (*node)->task().c_str(),
               signal == SIGINT ? "SIGINT" : "SIGTERM");
  node->reset();
  return 0;
}

}  // namespace tagflow::tools
