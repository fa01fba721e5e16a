// The threads a session's kernels split their work onto: CAF's scheduler
// workers themselves (ops/cpu/parallel.hpp). A thread hook installs one
// SchedulerPool on every thread the session's actor system starts; a
// kernel's parallel blocks are enqueued to the scheduler as one-shot
// resumables and run on whichever worker is free, so the threads computing
// never outnumber [scheduler] max-threads, and `--threads 1` is one thread
// in all. Internal to actors/ (includes CAF).
#pragma once

#include <caf/all.hpp>

namespace tagflow::actors {

// Adds the hook to `cfg` (before the actor system is made from it).
void add_kernel_thread_hook(caf::actor_system_config& cfg);

}  // namespace tagflow::actors
