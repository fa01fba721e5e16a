// ResourceManager: the per-session state that stateful kernels share —
// variables, queues, lookup tables, stacks and TensorArrays — reached through
// KernelContext.
//
// Thread-safe: kernels of one step run concurrently on several threads, and
// every method may be called from any of them. Each map has its own mutex
// and each resource its own, so kernels working on different resources do
// not wait for one another.
//
// Lifetimes. Variables, queues (ops/queue.hpp) and lookup tables live as long as the
// session and keep their value and elements across steps. Stacks and TensorArrays are made by each execution of their
// creating node (StackV2, TensorArrayV3), belong to the step that ran it,
// and are freed by end_step(step) — or earlier by a Close op.
//
// Handles. A resource handle is a scalar Tensor of DType::resource whose one
// std::string element is the resource's name (make_handle / handle_name).
// Ref variables use the same value: VariableV2 outputs a handle naming the
// variable, not its value; Assign, AssignAdd and AssignSub take that handle
// at input 0 and output it again; deref() reads the variable's value for a
// consumer whose input is not a ref.
//
// Names. A variable or a queue is named container + "/" + shared_name (the
// node name when shared_name is empty). A stack or TensorArray is named after its
// creating node, a session-wide counter and its step: "ta#4@step2"; the
// gradient TensorArray of "ta#4@step2" for source "gradients" is
// "ta#4@step2@gradients".
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ops/queue.hpp"
#include "ops/shape.hpp"
#include "ops/status.hpp"
#include "ops/tensor.hpp"
#include "ops/tensor_array.hpp"

namespace tagflow::ops {

class LookupTable;  // ops/lookup_table.hpp

// A scalar DType::resource tensor naming `name`.
Tensor make_handle(const std::string& name);
// The name a handle carries; an error naming `what` if `handle` is not a
// scalar resource tensor.
Expected<std::string> handle_name(const Tensor& handle, const char* what = "handle");

// target = target + delta (or - delta): same dtype and shape, a numeric
// dtype. Writes into target's buffer when no one else holds it, else
// allocates. Shared by variables and aggregating TensorArray writes.
Status accumulate(Tensor& target, const Tensor& delta, bool subtract);

class ResourceManager {
 public:
  ResourceManager();
  ~ResourceManager();
  ResourceManager(const ResourceManager&) = delete;
  ResourceManager& operator=(const ResourceManager&) = delete;

  // --- variables --------------------------------------------------------
  // Records the dtype and shape a node (VarHandleOp, VariableV2) declares
  // for the variable. Declaring it again with another dtype is an error.
  Status declare_variable(const std::string& name, DType dtype, const PartialShape& shape);
  // The current value; failed_precondition "variable 'x' is not
  // initialized" when it was never assigned.
  Expected<Tensor> read_variable(const std::string& name) const;
  bool is_initialized(const std::string& name) const;
  // Sets the value. Its dtype must match the declared (or current) dtype.
  // With validate_shape its shape must also fit the declared shape and, once
  // initialized, equal the current shape.
  Status assign_variable(const std::string& name, const Tensor& value,
                         bool validate_shape = false);
  // value += delta / value -= delta; the variable must be initialized and
  // delta have its dtype and shape.
  Status assign_add(const std::string& name, const Tensor& delta);
  Status assign_sub(const std::string& name, const Tensor& delta);
  // Runs `update` on the value of an initialized variable while holding the
  // variable's lock: for kernels that change part of a variable in place
  // (ScatterAdd, ResourceScatterUpdate, ...). `update` may write into the
  // value only if it is_unique() (readers may share the buffer), else it
  // replaces the value with a changed copy; on error it must leave the
  // value as it was.
  Status modify_variable(const std::string& name,
                         const std::function<Status(Tensor& value)>& update);
  // Calls `update` with the current values of the variables `names`, in
  // that order, while holding each one's lock: the optimiser updates
  // (ops/training_ops.cpp) read and write a variable and its slots as one
  // step. Locks are taken in name order, a name listed twice once (its
  // pointers then alias), so overlapping updates cannot deadlock. `update`
  // may replace a value or, when it is_unique(), write into its buffer.
  // failed_precondition naming the first variable that is not initialized.
  using VariableUpdate = std::function<Status(const std::vector<Tensor*>& values)>;
  Status update_variables(const std::vector<std::string>& names, const VariableUpdate& update);

  // --- queues (FIFOQueueV2 family) ----------------------------------------
  // The queue `name`, made on the first call; a later call must declare
  // the same component types, shapes and capacity (shared_name semantics).
  Expected<std::shared_ptr<FifoQueue>> create_queue(const std::string& name, const DTypes& types,
                                                    const std::vector<PartialShape>& shapes,
                                                    int64_t capacity);
  // The queue a handle names; not_found if no node made it.
  Expected<std::shared_ptr<FifoQueue>> queue(const std::string& name) const;

  // --- lookup tables (HashTableV2 family, ops/lookup_table.hpp) ---------
  // The table `name`, made by `make` on the first call; a later call
  // returns the same table (shared_name semantics: the caller checks that
  // it is the kind of table it declares).
  using TableFactory = std::function<Expected<std::shared_ptr<LookupTable>>()>;
  Expected<std::shared_ptr<LookupTable>> create_table(const std::string& name,
                                                      const TableFactory& make);
  // The table a handle names; not_found if no node made it.
  Expected<std::shared_ptr<LookupTable>> table(const std::string& name) const;

  // --- stacks (StackV2 family) -------------------------------------------
  // A new empty stack of `elem_type` owned by `step_id`; max_size < 0 means
  // unlimited. Returns its name.
  std::string create_stack(const std::string& node_name, uint64_t step_id, DType elem_type,
                           int64_t max_size);
  Status push_stack(const std::string& name, const Tensor& elem);
  // out_of_range naming the stack when it is empty.
  Expected<Tensor> pop_stack(const std::string& name);
  // Frees the stack now; later use of the handle is an error.
  Status close_stack(const std::string& name);

  // --- TensorArrays (TensorArrayV3 family) -------------------------------
  // A new TensorArray owned by `step_id`. Returns its name.
  Expected<std::string> create_tensor_array(const std::string& node_name, uint64_t step_id,
                                            const TensorArray::Options& options);
  // The array to operate on; an error if it does not exist (never made, or
  // freed when its step ended).
  Expected<std::shared_ptr<TensorArray>> tensor_array(const std::string& name) const;
  // The gradient array of `name` for `source`: made on the first call with
  // the forward array's size (an index written in the forward array reads
  // as zeros of its shape until written here; writes add up), the same
  // array on later calls. Returns its name.
  Expected<std::string> tensor_array_grad(const std::string& name, const std::string& source);
  // Frees the array's elements now; later use of the handle is an error.
  Status close_tensor_array(const std::string& name);

  // --- steps ------------------------------------------------------------
  // Frees every stack and TensorArray that step `step_id` created. Called
  // by the executor when a step ends, whether it succeeded or not.
  void end_step(uint64_t step_id);
  // What the stacks hold, over all of them: for the memory of while-loop
  // gradients (a forward loop pushes, its gradient loop pops).
  struct StackStats {
    int64_t entries = 0;       // elements held now
    int64_t bytes = 0;         // their element bytes (Tensor::byte_size)
    int64_t peak_entries = 0;  // the most held at once
    int64_t peak_bytes = 0;
    int64_t pushes = 0;
    int64_t pops = 0;
  };
  StackStats stack_stats() const;
  // Lowers the peaks to what is held now.
  void reset_stack_peaks();
  // Live (not yet freed) stacks and TensorArrays: for tests and leak checks.
  size_t num_stacks() const;
  size_t num_tensor_arrays() const;

 private:
  struct Variable;
  struct Stack;

  std::shared_ptr<Variable> find_variable(const std::string& name) const;
  std::shared_ptr<Variable> find_or_add_variable(const std::string& name);
  Expected<std::shared_ptr<Stack>> find_stack(const std::string& name) const;
  Status update_variable(const std::string& name, const Tensor& delta, bool subtract);
  std::string next_name(const std::string& node_name, uint64_t step_id);

  mutable std::shared_mutex variables_mu_;
  std::unordered_map<std::string, std::shared_ptr<Variable>> variables_;
  void count_stack(int64_t entries, int64_t bytes);
  mutable std::mutex stats_mu_;
  StackStats stack_stats_;
  mutable std::mutex queues_mu_;
  std::unordered_map<std::string, std::shared_ptr<FifoQueue>> queues_;
  mutable std::mutex tables_mu_;
  std::unordered_map<std::string, std::shared_ptr<LookupTable>> tables_;
  mutable std::mutex stacks_mu_;
  std::unordered_map<std::string, std::shared_ptr<Stack>> stacks_;
  mutable std::mutex arrays_mu_;
  std::unordered_map<std::string, std::shared_ptr<TensorArray>> arrays_;
  std::atomic<uint64_t> next_id_{1};
};

// The value a ref names: read_variable(handle_name(ref_value)). For the
// executor, when a ref output feeds an input that is not a ref.
Expected<Tensor> deref(const Tensor& ref_value, ResourceManager& resources);

}  // namespace tagflow::ops
