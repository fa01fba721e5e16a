// The threads a session's kernels split their work onto: CAF's scheduler
// workers themselves (ops/cpu/parallel.hpp). A thread hook installs one
// SchedulerPool on every thread the session's actor system starts; a
// kernel's parallel blocks are enqueued to the scheduler as one-shot
// resumables and run on whichever worker is free, so the threads computing
// never outnumber [scheduler] max-threads, and `--threads 1` is one thread
// in all. Internal to actors/ (includes CAF).
#pragma once

#include <caf/all.hpp>

#include <memory>

#include "ops/cpu/parallel.hpp"

namespace tagflow::actors {

// Adds the hook to `cfg` (before the actor system is made from it).
void add_kernel_thread_hook(caf::actor_system_config& cfg);

// A pool over `system`'s workers for a thread that is not one of them: a
// step run on the caller's thread (actors/execution_plan.hpp) splits its
// kernels onto the workers, which are idle while it runs.
std::unique_ptr<ops::cpu::WorkerPool> make_scheduler_pool(caf::actor_system& system);

}  // namespace tagflow::actors
