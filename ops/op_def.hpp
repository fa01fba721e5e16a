// OpDef and OpRegistry: what an op is — its inputs, outputs and attrs with
// their type rules (as TensorFlow's OpDef: `x: T`, `N * T`, `Ref(T)`, type
// lists), whether it is stateful, its control-flow role, and its kernel.
// The registry of built-in ops is built once and immutable afterwards:
// OpRegistry::global() is thread-safe to read.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ops/attr_value.hpp"
#include "ops/kernel.hpp"
#include "ops/shape_fn.hpp"
#include "ops/status.hpp"

namespace tagflow::ops {

// The role an op plays for the executor; every op that is not a
// control-flow or transfer primitive is `ordinary`. Ref variants share the
// role of their plain twin.
enum class OpRole {
  ordinary,
  switch_op,       // Switch, RefSwitch
  switch_n,        // _SwitchN
  merge,           // Merge, RefMerge
  enter,           // Enter, RefEnter
  exit,            // Exit, RefExit
  next_iteration,  // NextIteration, RefNextIteration
  loop_cond,       // LoopCond
  control_trigger, // ControlTrigger
  send,            // _Send, _HostSend
  recv,            // _Recv, _HostRecv
  function_call,   // If, While, Case, PartitionedCall ... (lowered before run)
};

// One input or output argument: `name: type`, `name: N * T`, `name: Ref(T)`
// or `name: Tlist` (a list(type) attr).
struct ArgSpec {
  std::string name;
  DType fixed_type = DType::invalid;  // set when the type is fixed ("bool")
  std::string type_attr;              // "T"
  std::string number_attr;            // "N": the argument is N tensors
  std::string type_list_attr;         // "Tin": one tensor per listed type
  bool is_ref = false;
};

struct AttrSpec {
  std::string name;
  std::string type;  // "type", "int", "float", "bool", "string", "shape",
                     // "tensor", "func", "list(type)", "list(int)", ...
  std::optional<AttrValue> default_value;
  std::vector<DType> allowed_types;  // empty: any
  std::optional<int64_t> minimum;    // for "int" and list lengths
};

class OpDef {
 public:
  explicit OpDef(std::string name) : name_(std::move(name)) {}

  // Builders, TensorFlow's REGISTER_OP spelling for arguments:
  //   .input("x: T")  .input("values: N * T")  .input("ref: Ref(T)")
  //   .input("pred: bool")  .input("args: Tin")  .output("z: T")
  //   .type_attr("T", {DType::float32, ...})   .attr("N", "int", {}, 1)
  //   .attr("transpose_a", "bool", false)
  OpDef& input(std::string_view spec);
  OpDef& output(std::string_view spec);
  OpDef& type_attr(std::string name, std::vector<DType> allowed = {},
                   std::optional<AttrValue> default_value = std::nullopt);
  OpDef& attr(std::string name, std::string type,
              std::optional<AttrValue> default_value = std::nullopt,
              std::optional<int64_t> minimum = std::nullopt);
  OpDef& stateful() { stateful_ = true; return *this; }
  // The op's cost class: its kernel is heavy enough (a MatMul, a
  // convolution) that two ready instances in one iteration are worth
  // handing to the kernel workers to run at once (docs/protocol.md,
  // "Expensive kernels"), and a frame whose such nodes could overlap
  // across iterations keeps an actor per iteration.
  OpDef& expensive() { expensive_ = true; return *this; }
  // Its kernel may wait for another step (a queue's enqueue and dequeue):
  // the executor never lets it wait on a scheduler thread, and a function
  // body with such a node is lowered rather than run as written
  // (graph/functions/run_as_written.hpp). The kernel says so too (Kernel::may_block).
  OpDef& blocking() { blocking_ = true; return *this; }
  OpDef& role(OpRole r) { role_ = r; return *this; }
  // Its static shape rule (ops/shape_fns.hpp): what graph/ shape inference
  // runs for every node of the op. Every op with a kernel has one
  // (tests/ops/op_registry_test.cpp checks); the functional ops' rules
  // follow their functions and are graph/'s.
  OpDef& shape_fn(ShapeFn fn) { shape_fn_ = fn; return *this; }
  OpDef& kernel(KernelFactory factory) { kernel_ = std::move(factory); return *this; }
  // A kernel made from a plain function (no attrs to read at creation).
  OpDef& kernel_fn(FunctionKernel::Fn fn);

  const std::string& name() const { return name_; }
  const std::vector<ArgSpec>& inputs() const { return inputs_; }
  const std::vector<ArgSpec>& outputs() const { return outputs_; }
  const std::vector<AttrSpec>& attrs() const { return attrs_; }
  const AttrSpec* find_attr(std::string_view name) const;
  bool is_stateful() const { return stateful_; }
  bool is_expensive() const { return expensive_; }
  bool is_blocking() const { return blocking_; }
  OpRole role() const { return role_; }
  bool has_kernel() const { return static_cast<bool>(kernel_); }
  ShapeFn shape_function() const { return shape_fn_; }  // nullptr: none
  const KernelFactory& kernel_factory() const { return kernel_; }

  // Checks `attrs` against the specs and adds defaults for missing ones:
  // a missing attr without default, an ill-typed attr, a type not allowed
  // or an int below its minimum is an error naming the attr.
  Status check_and_complete_attrs(AttrMap& attrs) const;
  // The same checks without changing `attrs`: a missing attr with a
  // default is checked as its default and sets *needs_defaults.
  Status check_attrs(const AttrMap& attrs, bool* needs_defaults) const;
  // Adds the defaults of the attrs `attrs` lacks.
  void add_default_attrs(AttrMap& attrs) const;
  // The dtypes of the node's input / output tensors, in order (a `N * T`
  // argument expands to N entries). Attrs must have been completed.
  Expected<std::vector<DType>> input_types(const AttrMap& attrs) const;
  Expected<std::vector<DType>> output_types(const AttrMap& attrs) const;

  // Makes the node's kernel; unimplemented if the op has none.
  Expected<std::unique_ptr<Kernel>> make_kernel(const KernelInit& init) const;

  // Checks internal consistency of the spec (every referenced attr exists
  // with the right type); used by the registry.
  Status validate() const;

 private:
  Expected<std::vector<DType>> arg_types(const std::vector<ArgSpec>& args,
                                         const AttrMap& attrs) const;

  std::string name_;
  std::vector<ArgSpec> inputs_;
  std::vector<ArgSpec> outputs_;
  std::vector<AttrSpec> attrs_;
  bool stateful_ = false;
  bool expensive_ = false;
  bool blocking_ = false;
  OpRole role_ = OpRole::ordinary;
  ShapeFn shape_fn_ = nullptr;
  KernelFactory kernel_;
};

class OpRegistry {
 public:
  // Every built-in op of tagflow (registered in ops/builtin_ops.cpp).
  static const OpRegistry& global();

  // Fails if the name is taken or the spec is inconsistent.
  Status add(OpDef def);
  const OpDef* find(std::string_view name) const;
  std::vector<const OpDef*> all() const;  // sorted by name

 private:
  std::map<std::string, std::unique_ptr<OpDef>, std::less<>> ops_;
};

// Adds a built-in op; a failure is a bug in tagflow's own registrations,
// so it is printed and the process aborts (caught by every test run).
void register_builtin(OpRegistry& r, OpDef def);

// The registration functions of the built-in op families, each in its own
// file of ops/ (array_ops.cpp, math_ops.cpp, ...).
void register_array_ops(OpRegistry& r);
void register_math_ops(OpRegistry& r);
void register_nn_ops(OpRegistry& r);
void register_control_flow_ops(OpRegistry& r);
void register_state_ops(OpRegistry& r);
// Called by register_state_ops: SaveV2, RestoreV2, MergeV2Checkpoints,
// ShardedFilename (checkpoint_ops.cpp).
void register_checkpoint_ops(OpRegistry& r);
// Called by register_array_ops: the string ops (string_ops.cpp, which
// registers the rest of the family from string_split_ops.cpp and
// string_convert_ops.cpp).
void register_string_ops(OpRegistry& r);
void register_training_ops(OpRegistry& r);  // training_ops.cpp

}  // namespace tagflow::ops
