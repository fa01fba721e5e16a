// Control-flow, transfer, function-boundary and functional ops: signatures
// and roles only. None but Abort (ops/assert_kernels.cpp) has a kernel —
// the executor implements Switch, Merge, Enter, Exit, NextIteration,
// LoopCond, ControlTrigger, _Send/_Recv and _Arg/_Retval itself (DESIGN.md
// §3), and the functional ops (If, While, Case, PartitionedCall ...) are
// lowered in graph/ before a step runs.
// Signatures follow TensorFlow's control_flow_ops.cc, sendrecv_ops.cc,
// function_ops.cc and functional_ops.cc (shared/reference/graphdef-format.md §D).
#include "ops/op_def.hpp"
#include "ops/shape_fns.hpp"
#include "ops/state_kernels.hpp"
#include "ops/truth_value.hpp"

namespace tagflow::ops {

namespace {

// The predicate of a lowered If or While: ops::truth_value.
Status to_bool(KernelContext& ctx) {
  Expected<bool> truth = truth_value(ctx.input(0));
  if (!truth.ok()) return truth.status().with_prefix("ToBool: ");
  ctx.set_output(0, Tensor::scalar<bool>(*truth));
  return ok_status();
}

// Registers `name` and, when `ref_name` is given, its Ref twin, whose
// arguments of type T are Ref(T). `build` adds the arguments.
template <class Build>
void register_with_ref(OpRegistry& r, const char* name, const char* ref_name, OpRole role,
                       Build&& build) {
  OpDef plain(name);
  build(plain, "T");
  register_builtin(r, std::move(plain.role(role)));
  if (ref_name == nullptr) return;
  OpDef ref(ref_name);
  build(ref, "Ref(T)");
  register_builtin(r, std::move(ref.role(role)));
}

// One-input, one-output forwarding ops: Exit, NextIteration and their Ref twins.
void register_forward(OpRegistry& r, const char* name, const char* ref_name, OpRole role) {
  register_with_ref(r, name, ref_name, role, [](OpDef& d, const std::string& t) {
    d.shape_fn(shape_fns::identity).input("data: " + t).output("output: " + t).type_attr("T");
  });
}

void register_v1_control_flow(OpRegistry& r) {
  register_with_ref(r, "Switch", "RefSwitch", OpRole::switch_op,
                    [](OpDef& d, const std::string& t) {
                      d.shape_fn(shape_fns::switch_op)
                          .input("data: " + t)
                          .input("pred: bool")
                          .output("output_false: " + t)
                          .output("output_true: " + t)
                          .type_attr("T");
                    });
  register_builtin(r, OpDef("_SwitchN").shape_fn(shape_fns::switch_n)
                          .input("data: T")
                          .input("output_index: int32")
                          .output("outputs: num_outs * T")
                          .attr("num_outs", "int", std::nullopt, 1)
                          .type_attr("T")
                          .role(OpRole::switch_n));
  register_with_ref(r, "Merge", "RefMerge", OpRole::merge, [](OpDef& d, const std::string& t) {
    const std::string list = t == "T" ? "N * T" : "Ref(N * T)";
    d.input("inputs: " + list)
        .output("output: " + t)
        .output("value_index: int32")
        .type_attr("T")
        .attr("N", "int", std::nullopt, 1);
  });
  register_with_ref(r, "Enter", "RefEnter", OpRole::enter, [](OpDef& d, const std::string& t) {
    d.shape_fn(shape_fns::identity)
        .input("data: " + t)
        .output("output: " + t)
        .type_attr("T")
        .attr("frame_name", "string")
        .attr("is_constant", "bool", false)
        .attr("parallel_iterations", "int", int64_t{10});
  });
  register_forward(r, "Exit", "RefExit", OpRole::exit);
  register_forward(r, "NextIteration", "RefNextIteration", OpRole::next_iteration);
  register_builtin(r, OpDef("LoopCond").shape_fn(shape_fns::identity)
                          .input("input: bool")
                          .output("output: bool")
                          .role(OpRole::loop_cond));
  register_builtin(r, OpDef("RefSelect").shape_fn(shape_fns::of_input<1>)
                          .input("index: int32")
                          .input("inputs: Ref(N * T)")
                          .output("output: Ref(T)")
                          .type_attr("T")
                          .attr("N", "int", std::nullopt, 1));
  register_builtin(r, OpDef("ControlTrigger").shape_fn(shape_fns::none).role(OpRole::control_trigger));
  // TensorFlow's truthiness, as If and While read a predicate: a scalar is
  // true when non-zero (a string: non-empty), any other tensor when it has
  // elements.
  register_builtin(r, OpDef("ToBool").shape_fn(shape_fns::scalars)
                          .input("input: T").output("output: bool").type_attr("T")
                          .kernel_fn(to_bool));
  register_builtin(r, OpDef("Abort").shape_fn(shape_fns::none)
                          .attr("error_msg", "string", std::string())
                          .attr("exit_without_error", "bool", false)
                          .kernel(state_kernels::abort_op)
                          .stateful());
}

// _Send/_Recv and their host-memory variants share the rendezvous attrs.
OpDef& rendezvous_attrs(OpDef& d) {
  return d.attr("tensor_name", "string")
      .attr("send_device", "string")
      .attr("send_device_incarnation", "int")
      .attr("recv_device", "string")
      .attr("client_terminated", "bool", false)
      .stateful();
}

void register_transfer_ops(OpRegistry& r) {
  for (const char* name : {"_Send", "_HostSend"}) {
    OpDef d(name);
    d.shape_fn(shape_fns::none).input("tensor: T").type_attr("T").role(OpRole::send);
    register_builtin(r, std::move(rendezvous_attrs(d)));
  }
  for (const char* name : {"_Recv", "_HostRecv"}) {
    OpDef d(name);
    d.shape_fn(shape_fns::recv).output("tensor: tensor_type").type_attr("tensor_type").role(OpRole::recv);
    register_builtin(r, std::move(rendezvous_attrs(d)));
  }
  register_builtin(r, OpDef("_Arg").shape_fn(shape_fns::none)
                          .output("output: T")
                          .type_attr("T")
                          .attr("index", "int", std::nullopt, 0)
                          .stateful());
  register_builtin(r, OpDef("_Retval").shape_fn(shape_fns::none)
                          .input("input: T")
                          .type_attr("T")
                          .attr("index", "int", std::nullopt, 0)
                          .stateful());
}

// If, StatelessIf and the legacy _If (which has no output_shapes).
void register_if(OpRegistry& r, const char* name, bool stateful, bool output_shapes) {
  OpDef d(name);
  d.input("cond: Tcond")
      .input("input: Tin")
      .output("output: Tout")
      .type_attr("Tcond")
      .attr("Tin", "list(type)", std::nullopt, 0)
      .attr("Tout", "list(type)", std::nullopt, 0)
      .attr("then_branch", "func")
      .attr("else_branch", "func")
      .role(OpRole::function_call);
  if (output_shapes) d.attr("output_shapes", "list(shape)", AttrList{});
  if (stateful) d.stateful();
  register_builtin(r, std::move(d));
}

// While, StatelessWhile and the legacy _While (no output_shapes and no
// parallel_iterations).
void register_while(OpRegistry& r, const char* name, bool stateful, bool legacy) {
  OpDef d(name);
  d.input("input: T")
      .output("output: T")
      .attr("T", "list(type)", std::nullopt, 0)
      .attr("cond", "func")
      .attr("body", "func")
      .role(OpRole::function_call);
  if (!legacy)
    d.attr("output_shapes", "list(shape)", AttrList{})
        .attr("parallel_iterations", "int", int64_t{10});
  if (stateful) d.stateful();
  register_builtin(r, std::move(d));
}

// For(start, limit, delta, input) runs body(i, vars) for i from start
// while i < limit (delta > 0) or i > limit (delta < 0); lowered to a loop.
void register_for(OpRegistry& r) {
  OpDef d("For");
  d.input("start: int32")
      .input("limit: int32")
      .input("delta: int32")
      .input("input: T")
      .output("output: T")
      .attr("T", "list(type)", std::nullopt, 0)
      .attr("body", "func")
      .role(OpRole::function_call);
  register_builtin(r, std::move(d));
}

void register_case(OpRegistry& r, const char* name, bool stateful) {
  OpDef d(name);
  d.input("branch_index: int32")
      .input("input: Tin")
      .output("output: Tout")
      .attr("Tin", "list(type)", std::nullopt, 0)
      .attr("Tout", "list(type)", std::nullopt, 0)
      .attr("branches", "list(func)", std::nullopt, 1)
      .attr("output_shapes", "list(shape)", AttrList{})
      .role(OpRole::function_call);
  if (stateful) d.stateful();
  register_builtin(r, std::move(d));
}

void register_partitioned_call(OpRegistry& r, const char* name, bool stateful) {
  OpDef d(name);
  d.input("args: Tin")
      .output("output: Tout")
      .attr("Tin", "list(type)", std::nullopt, 0)
      .attr("Tout", "list(type)", std::nullopt, 0)
      .attr("f", "func")
      .attr("config", "string", std::string())
      .attr("config_proto", "string", std::string())
      .attr("executor_type", "string", std::string())
      .role(OpRole::function_call);
  if (stateful) d.stateful();
  register_builtin(r, std::move(d));
}

void register_functional_ops(OpRegistry& r) {
  register_if(r, "If", /*stateful=*/true, /*output_shapes=*/true);
  register_if(r, "StatelessIf", false, true);
  register_if(r, "_If", true, false);
  register_while(r, "While", /*stateful=*/true, /*legacy=*/false);
  register_while(r, "StatelessWhile", false, false);
  register_for(r);
  register_while(r, "_While", true, true);
  register_case(r, "Case", /*stateful=*/true);
  register_case(r, "StatelessCase", false);
  register_partitioned_call(r, "PartitionedCall", /*stateful=*/false);
  register_partitioned_call(r, "StatefulPartitionedCall", true);
}

}  // namespace

void register_control_flow_ops(OpRegistry& r) {
  register_v1_control_flow(r);
  register_transfer_ops(r);
  register_functional_ops(r);
}

}  // namespace tagflow::ops
