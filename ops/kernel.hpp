// Kernel: how one node computes. A kernel object is made once per node from
// the node's attrs (KernelInit) and is then called for every node instance,
// possibly from several threads at once: compute() is const and must not
// keep per-call state in the kernel (the one exception: the random ops
// move their generator on under a lock, ops/random_ops.cpp). Per-session state
// (variables, stacks, TensorArrays) lives in the ResourceManager reached
// through the context.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ops/attr_value.hpp"
#include "ops/cancellation.hpp"
#include "ops/status.hpp"
#include "ops/tensor.hpp"

namespace tagflow::ops {

class ResourceManager;  // ops/resource.hpp: per-session state
class MemoryBudget;     // ops/memory_budget.hpp: a step's tensor bytes

// What a kernel may read when it is made: the node's attrs (defaults
// applied) and its resolved input and output dtypes.
struct KernelInit {
  const std::string& node_name;
  const AttrMap& attrs;
  const DTypes& input_types;
  const DTypes& output_types;

  // The attr `name` as T (int64_t, float, bool, std::string, DType,
  // AttrList, PartialShape, Tensor, NameAttrList); an error names the attr.
  template <class T>
  Expected<T> attr(const std::string& name) const {
    auto it = attrs.find(name);
    if (it == attrs.end())
      return Status(Error::invalid_argument, "missing attr '" + name + "'");
    if (const T* v = it->second.template get_if<T>()) return *v;
    return Status(Error::invalid_argument, "attr '" + name + "' has type " +
                                               it->second.type_name());
  }
};

// What the executor that makes a call tells a kernel that runs functions
// (If, While, calls run as written). Declared here so that kernels see a
// typed interface; the executor derives from it (actors::KernelCall,
// actors/function_runtime.hpp) and such a kernel casts it back with
// dynamic_cast, so a call from any other executor is refused, not misread.
class KernelCaller {
 public:
  virtual ~KernelCaller() = default;

 protected:
  KernelCaller() = default;
  KernelCaller(const KernelCaller&) = default;
  KernelCaller& operator=(const KernelCaller&) = default;
};

// The inputs and outputs of one kernel call. Owned by the caller (one
// executor thread) for the duration of the call. `step_id` names the step
// the call belongs to: stacks and TensorArrays a kernel creates belong to
// that step and are freed by ResourceManager::end_step(step_id). The
// tensors a kernel allocates count against `memory`, the step's budget, if
// the call goes through run_kernel.
class KernelContext {
 public:
  KernelContext(Tensor* inputs, int num_inputs, Tensor* outputs, int num_outputs,
                ResourceManager* resources = nullptr, uint64_t step_id = 0,
                MemoryBudget* memory = nullptr)
      : inputs_(inputs), num_inputs_(num_inputs), outputs_(outputs),
        num_outputs_(num_outputs), resources_(resources), step_id_(step_id), memory_(memory) {}

  int num_inputs() const { return num_inputs_; }
  int num_outputs() const { return num_outputs_; }
  const Tensor& input(int i) const { return inputs_[i]; }
  void set_output(int i, const Tensor& t) { outputs_[i] = t; }
  void set_output(int i, Tensor&& t) { outputs_[i] = std::move(t); }
  Tensor& output(int i) { return outputs_[i]; }
  // Moves input i out, leaving it invalid: for a kernel that has checked
  // the input is_unique() and writes its result into that buffer.
  Tensor take_input(int i) { return std::move(inputs_[i]); }

  // A tensor of `dtype` and `shape` to write into: input i's buffer when no
  // one else holds it and it has the same dtype and element count (the
  // input is then moved from), else a fresh one.
  Tensor forward_input_or_allocate(int i, DType dtype, const Shape& shape);

  // nullptr when the caller runs kernels without session state.
  ResourceManager* resources() const { return resources_; }
  // The step this call runs in (0 when the caller has no steps).
  uint64_t step_id() const { return step_id_; }
  // The step's memory budget; nullptr: unlimited.
  MemoryBudget* memory() const { return memory_; }

  // Kernels that may block (Kernel::may_block): how long this call may
  // wait; nullptr: it must not wait. A call that would wait without a
  // Waiting calls set_would_block() and returns ok with no output and its
  // inputs untouched; the executor then calls it again where it may wait.
  const Waiting* waiting() const { return waiting_; }
  void allow_waiting(const Waiting* w) { waiting_ = w; }
  void set_would_block() { would_block_ = true; }
  bool would_block() const { return would_block_; }

  // What the executor that makes the call tells kernels that run
  // functions; nullptr for callers that run no functions.
  const KernelCaller* caller() const { return caller_; }
  void set_caller(const KernelCaller* c) { caller_ = c; }

 private:
  Tensor* inputs_;
  int num_inputs_;
  Tensor* outputs_;
  int num_outputs_;
  ResourceManager* resources_;
  uint64_t step_id_;
  MemoryBudget* memory_;
  const Waiting* waiting_ = nullptr;
  const KernelCaller* caller_ = nullptr;
  bool would_block_ = false;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Reads ctx inputs, sets every output or returns an error whose message
  // says what is wrong with the inputs (the caller adds node and tag).
  virtual Status compute(KernelContext& ctx) const = 0;
  // Whether a call may have to wait for another step (queue ops): the
  // executor never lets such a call wait on a scheduler thread
  // (KernelContext::waiting).
  virtual bool may_block() const { return false; }
  // Whether every output a call sets is a tensor the kernel itself keeps
  // for its lifetime (Const): the executor then lends it to the consumers
  // (Tensor::borrow) instead of counting a reference for each.
  virtual bool holds_outputs() const { return false; }
};

// Calls kernel.compute(ctx) with the tensors it allocates counted against
// ctx.memory(): going over the budget, or running out of memory altogether
// (std::bad_alloc, std::length_error), ends the call with
// resource_exhausted saying so — no exception leaves a kernel.
Status run_kernel(const Kernel& kernel, KernelContext& ctx);

using KernelFactory = std::function<Expected<std::unique_ptr<Kernel>>(const KernelInit&)>;

// A kernel from a plain function, for ops whose attrs need no parsing.
class FunctionKernel final : public Kernel {
 public:
  using Fn = Status (*)(KernelContext&);
  explicit FunctionKernel(Fn fn) : fn_(fn) {}
  Status compute(KernelContext& ctx) const override { return fn_(ctx); }

 private:
  Fn fn_;
};

}  // namespace tagflow::ops
