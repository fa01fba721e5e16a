// FunctionRuntime: TensorFlow 2's functional ops run as written, without
// lowering (docs/tf2.md, "Running functional ops"). `If`/`StatelessIf`,
// `Case`/`StatelessCase`, `While`/`StatelessWhile`, `For`,
// `PartitionedCall`/`StatefulPartitionedCall` and plain calls of library
// functions get kernels that run function bodies: each function (with its
// attrs) is instantiated once per session into an Executable of its own,
// cached and shared by every call; a call runs the body inline, as a child
// of the caller's iteration, on the caller's thread, with the caller's
// step (resources, memory budget, step id). An If runs only its taken
// branch; a While evaluates cond and body per iteration — no dead values,
// no frames. Errors inside a body name the call chain
// ("Mul 'm' (node 'loop' → body 'b' (iteration 3) → node 'm') at tag / on
// partition CPU:0: ..."); events say when calls and loop iterations start
// and end (trace/event.hpp).
//
// Which functional nodes run as written is decided by a graph pass and
// written on them (graph/functions/run_as_written.hpp: no TF 1.x control flow,
// Send/Recv or blocking kernel in what a node reaches, and, on a session
// with several devices, no body node placed on a device of its own; such
// nodes are lowered and partitioned like the caller's nodes); bodies are
// built by graph::body_graph. Thread-safe: kernels run on several threads
// at once.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "actors/executable.hpp"
#include "actors/iteration_state.hpp"
#include "graph/functions/function_library.hpp"

namespace tagflow::actors {

// Where a function body runs: the call that runs it, that call's own place
// (nullptr: a node of the step's graph), and for the top call the
// caller's iteration. Lives on the stack of the call; rendered only when
// an error needs it.
struct CallChain {
  const CallChain* parent = nullptr;
  const std::string* node = nullptr;      // the calling node, in its body or graph
  const char* role = "function";          // "then_branch", "body", "cond", ...
  const std::string* function = nullptr;  // the function it calls
  int64_t iteration = -1;                 // While / For: which iteration; -1: none
  int64_t depth = 1;                      // bodies within bodies: 1 at the top
  const IterationState* top = nullptr;    // the outermost caller's iteration
};

// "node 'loop' → body 'b' (iteration 3)".
std::string to_string(const CallChain& chain);

// What the executor tells a kernel that runs functions about its call
// (ops::KernelContext::caller).
struct KernelCall final : ops::KernelCaller {
  KernelCall(const StepContext* s, const IterationState* st, const NodeItem* i) : step(s), state(st), item(i) {}
  const StepContext* step;
  const IterationState* state;
  const NodeItem* item;
};

struct FunctionRuntimeOptions {
  int64_t max_iterations = 0;  // per While / For call; 0: no limit
  // Bodies running within bodies (max-frame-depth, and at most
  // kMaxCallDepth: each level takes the calling thread's stack).
  int64_t max_depth = kMaxCallDepth;
  static constexpr int64_t kMaxCallDepth = 1000;
};

class FunctionRuntime final : public FunctionKernels {
 public:
  // `whole` is the session's graph, whose library holds the functions; it
  // must outlive the runtime.
  FunctionRuntime(const graph::Graph& whole, FunctionRuntimeOptions options);
  ~FunctionRuntime() override;

  // Every functional node an executable meets runs as written: a step
  // graph's were marked so (graph/functions/run_as_written.hpp) and the others
  // lowered, and a body that runs as written calls only functions that
  // may too.
  bool runs(const graph::Node& n) const override;
  Expected<std::unique_ptr<ops::Kernel>> make(const graph::Node& n) const override;

  // One function instantiated: its body as an Executable whose `_Arg` and
  // `_Retval` nodes are its arguments and results.
  struct Body {
    std::string name;
    std::shared_ptr<const Executable> exec;
    int num_args = 0;
    int num_rets = 0;
  };
  // The body of `f` (cached): errors name the function.
  Expected<std::shared_ptr<const Body>> body(const ops::NameAttrList& f) const;

  const FunctionRuntimeOptions& options() const { return options_; }

 private:
  const graph::Graph& whole_;
  graph::FunctionLibrary lib_;
  FunctionRuntimeOptions options_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::shared_ptr<const Body>> bodies_;  // by function key
};

}  // namespace tagflow::actors
