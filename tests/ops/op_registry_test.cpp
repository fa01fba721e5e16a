// The op registry: every built-in spec is consistent, signatures resolve to
// the right dtypes and roles, and check_and_complete_attrs fills defaults
// and rejects missing, ill-typed and disallowed attrs with clear messages.
#include <boost/test/unit_test.hpp>

#include "ops/op_def.hpp"

using namespace tagflow::ops;

namespace {

const OpDef& op(const std::string& name) {
  const OpDef* def = OpRegistry::global().find(name);
  BOOST_REQUIRE_MESSAGE(def != nullptr, "no op " << name);
  return *def;
}

AttrList types(std::vector<DType> v) {
  AttrList l;
  l.type = std::move(v);
  return l;
}

NameAttrList func(const std::string& name) { return NameAttrList{name, {}}; }

// The op's attrs completed with defaults; fails the test on an error.
AttrMap completed(const std::string& name, AttrMap attrs) {
  Status s = op(name).check_and_complete_attrs(attrs);
  BOOST_REQUIRE_MESSAGE(s.ok(), name << ": " << s.to_string());
  return attrs;
}

// "float32,int32": dtypes for messages and comparisons.
std::string names(const std::vector<DType>& types) {
  std::string s;
  for (DType t : types) s += (s.empty() ? "" : ",") + dtype_name(t);
  return s;
}

// "bool false", "int 10", "string \"\"": an attr value with its type.
std::string show(const AttrValue& v) { return v.type_name() + " " + v.to_string(); }

std::string inputs_of(const std::string& name, AttrMap attrs) {
  AttrMap a = completed(name, std::move(attrs));
  auto t = op(name).input_types(a);
  BOOST_REQUIRE_MESSAGE(t.ok(), t.status().to_string());
  return names(*t);
}

std::string outputs_of(const std::string& name, AttrMap attrs) {
  AttrMap a = completed(name, std::move(attrs));
  auto t = op(name).output_types(a);
  BOOST_REQUIRE_MESSAGE(t.ok(), t.status().to_string());
  return names(*t);
}

// The error message of check_and_complete_attrs, or "" if it succeeds.
std::string attr_error(const std::string& name, AttrMap attrs) {
  Status s = op(name).check_and_complete_attrs(attrs);
  return s.ok() ? std::string() : s.message();
}

constexpr DType f32 = DType::float32;
constexpr DType i32 = DType::int32;
constexpr DType boolean = DType::boolean;

}  // namespace

BOOST_AUTO_TEST_SUITE(op_registry)

BOOST_AUTO_TEST_CASE(every_registered_spec_validates) {
  const auto all = OpRegistry::global().all();
  BOOST_TEST(!all.empty());
  for (const OpDef* def : all) {
    Status s = def->validate();
    BOOST_TEST(s.ok(), def->name() << ": " << s.to_string());
  }
}

BOOST_AUTO_TEST_CASE(the_array_control_flow_and_state_families_are_registered) {
  const char* const kNames[] = {
      // array
      "Const", "Placeholder", "PlaceholderWithDefault", "Identity", "IdentityN", "NoOp",
      "Reshape", "Shape", "Size", "Rank", "Fill", "ZerosLike", "OnesLike", "Range",
      "ExpandDims", "Squeeze", "Transpose", "ConcatV2", "Pack", "Unpack", "Slice",
      "StridedSlice", "Tile", "BroadcastTo", "GatherV2", "OneHot",
      // control flow, transfer, functions
      "Switch", "RefSwitch", "_SwitchN", "Merge", "RefMerge", "Enter", "RefEnter", "Exit",
      "RefExit", "NextIteration", "RefNextIteration", "LoopCond", "ControlTrigger", "Abort",
      "_Send", "_HostSend", "_Recv", "_HostRecv", "_Arg", "_Retval", "If", "StatelessIf", "_If",
      "While", "StatelessWhile", "_While", "Case", "StatelessCase", "PartitionedCall",
      "StatefulPartitionedCall",
      // state
      "VarHandleOp", "ReadVariableOp", "AssignVariableOp", "AssignAddVariableOp",
      "AssignSubVariableOp", "VarIsInitializedOp", "VariableV2", "Assign", "AssignAdd",
      "AssignSub", "IsVariableInitialized", "StackV2", "StackPushV2", "StackPopV2",
      "StackCloseV2", "TensorArrayV3", "TensorArrayWriteV3", "TensorArrayReadV3",
      "TensorArrayGatherV3", "TensorArrayScatterV3", "TensorArraySizeV3",
      "TensorArrayConcatV3", "TensorArraySplitV3", "TensorArrayGradV3", "TensorArrayCloseV3",
      "Assert"};
  for (const char* name : kNames)
    BOOST_TEST(OpRegistry::global().find(name) != nullptr, "missing op " << name);
}

BOOST_AUTO_TEST_CASE(array_ops_have_kernels) {
  for (const char* name : {"Const", "Placeholder", "Reshape", "StridedSlice", "GatherV2",
                           "OneHot", "NoOp", "IdentityN"})
    BOOST_TEST(op(name).has_kernel(), name);
  BOOST_TEST(!op("Const").is_stateful());
}

// --- control flow ---------------------------------------------------------------

BOOST_AUTO_TEST_CASE(switch_and_ref_switch) {
  BOOST_TEST((op("Switch").role() == OpRole::switch_op));
  BOOST_TEST((op("RefSwitch").role() == OpRole::switch_op));
  BOOST_TEST(inputs_of("Switch", {{"T", f32}}) == "float32,bool");
  BOOST_TEST(outputs_of("Switch", {{"T", f32}}) == "float32,float32");
  BOOST_TEST(op("Switch").outputs()[0].name == "output_false");
  BOOST_TEST(op("Switch").outputs()[1].name == "output_true");
  BOOST_TEST(inputs_of("RefSwitch", {{"T", f32}}) == "float32_ref,bool");
  BOOST_TEST(outputs_of("RefSwitch", {{"T", f32}}) == "float32_ref,float32_ref");
  BOOST_TEST(!op("Switch").has_kernel());
}

BOOST_AUTO_TEST_CASE(switch_n_needs_at_least_one_output) {
  BOOST_TEST((op("_SwitchN").role() == OpRole::switch_n));
  BOOST_TEST(outputs_of("_SwitchN", {{"T", i32}, {"num_outs", 3}}) == "int32,int32,int32");
  BOOST_TEST(inputs_of("_SwitchN", {{"T", i32}, {"num_outs", 3}}) == "int32,int32");
  BOOST_TEST(attr_error("_SwitchN", {{"T", i32}, {"num_outs", 0}}) ==
             "attr 'num_outs' of op _SwitchN is 0, less than the minimum 1");
}

BOOST_AUTO_TEST_CASE(merge_with_four_inputs) {
  BOOST_TEST((op("Merge").role() == OpRole::merge));
  BOOST_TEST(inputs_of("Merge", {{"T", f32}, {"N", 4}}) == "float32,float32,float32,float32");
  BOOST_TEST(outputs_of("Merge", {{"T", f32}, {"N", 4}}) == "float32,int32");
  BOOST_TEST(op("Merge").outputs()[1].name == "value_index");
  BOOST_TEST((op("RefMerge").role() == OpRole::merge));
  BOOST_TEST(inputs_of("RefMerge", {{"T", DType::int64}, {"N", 2}}) == "int64_ref,int64_ref");
  BOOST_TEST(outputs_of("RefMerge", {{"T", DType::int64}, {"N", 2}}) == "int64_ref,int32");
  BOOST_TEST(attr_error("Merge", {{"T", f32}, {"N", 0}}) ==
             "attr 'N' of op Merge is 0, less than the minimum 1");
}

BOOST_AUTO_TEST_CASE(enter_defaults) {
  AttrMap a = completed("Enter", {{"T", f32}, {"frame_name", "while/while_context"}});
  BOOST_TEST(show(a.at("is_constant")) == "bool false");
  BOOST_TEST(show(a.at("parallel_iterations")) == "int 10");
  BOOST_TEST((op("Enter").role() == OpRole::enter));
  BOOST_TEST((op("RefEnter").role() == OpRole::enter));
  BOOST_TEST(outputs_of("RefEnter", {{"T", f32}, {"frame_name", "f"}}) == "float32_ref");
  // Given attrs are kept.
  AttrMap b = completed("Enter", {{"T", f32}, {"frame_name", "f"}, {"is_constant", true},
                                  {"parallel_iterations", 32}});
  BOOST_TEST(show(b.at("is_constant")) == "bool true");
  BOOST_TEST(show(b.at("parallel_iterations")) == "int 32");
}

BOOST_AUTO_TEST_CASE(exit_next_iteration_loop_cond_and_control_trigger) {
  BOOST_TEST((op("Exit").role() == OpRole::exit));
  BOOST_TEST((op("RefExit").role() == OpRole::exit));
  BOOST_TEST((op("NextIteration").role() == OpRole::next_iteration));
  BOOST_TEST((op("RefNextIteration").role() == OpRole::next_iteration));
  BOOST_TEST(outputs_of("RefNextIteration", {{"T", i32}}) == "int32_ref");
  BOOST_TEST((op("LoopCond").role() == OpRole::loop_cond));
  BOOST_TEST(inputs_of("LoopCond", {}) == "bool");
  BOOST_TEST(outputs_of("LoopCond", {}) == "bool");
  BOOST_TEST((op("ControlTrigger").role() == OpRole::control_trigger));
  BOOST_TEST(op("ControlTrigger").inputs().empty());
  BOOST_TEST(op("ControlTrigger").outputs().empty());
  BOOST_TEST((op("Identity").role() == OpRole::ordinary));
}

BOOST_AUTO_TEST_CASE(abort_is_stateful_with_defaults) {
  AttrMap a = completed("Abort", {});
  BOOST_TEST(show(a.at("error_msg")) == "string \"\"");
  BOOST_TEST(show(a.at("exit_without_error")) == "bool false");
  BOOST_TEST(op("Abort").is_stateful());
}

BOOST_AUTO_TEST_CASE(send_and_recv) {
  const AttrMap rendezvous{{"tensor_name", "edge_1"},
                           {"send_device", "/job:localhost/replica:0/task:0/device:CPU:0"},
                           {"send_device_incarnation", 1},
                           {"recv_device", "/job:localhost/replica:0/task:0/device:CPU:1"}};
  for (const char* name : {"_Send", "_HostSend"}) {
    AttrMap attrs = rendezvous;
    attrs["T"] = f32;
    AttrMap a = completed(name, attrs);
    BOOST_TEST(show(a.at("client_terminated")) == "bool false");
    BOOST_TEST((op(name).role() == OpRole::send));
    BOOST_TEST(op(name).is_stateful());
    BOOST_TEST(inputs_of(name, attrs) == "float32");
    BOOST_TEST(outputs_of(name, attrs).empty());
  }
  for (const char* name : {"_Recv", "_HostRecv"}) {
    AttrMap attrs = rendezvous;
    attrs["tensor_type"] = i32;
    BOOST_TEST((op(name).role() == OpRole::recv));
    BOOST_TEST(inputs_of(name, attrs).empty());
    BOOST_TEST(outputs_of(name, attrs) == "int32");
  }
  BOOST_TEST(attr_error("_Recv", {{"tensor_type", i32}}) ==
             "op _Recv needs attr 'tensor_name' of type string");
}

BOOST_AUTO_TEST_CASE(arg_and_retval) {
  BOOST_TEST(outputs_of("_Arg", {{"T", f32}, {"index", 0}}) == "float32");
  BOOST_TEST(inputs_of("_Retval", {{"T", f32}, {"index", 2}}) == "float32");
}

// Regression: the minimum check once used -1 as "no count" and so let
// negative ints through (`index: int >= 0` accepted -1).
BOOST_AUTO_TEST_CASE(negative_ints_below_a_minimum_are_rejected) {
  BOOST_TEST(attr_error("_Arg", {{"T", f32}, {"index", -1}}) ==
             "attr 'index' of op _Arg is -1, less than the minimum 0");
}

// --- functional ops -------------------------------------------------------------

BOOST_AUTO_TEST_CASE(if_with_no_inputs) {
  AttrMap attrs{{"Tcond", boolean}, {"Tin", AttrList{}}, {"Tout", types({i32})},
                {"then_branch", func("then")}, {"else_branch", func("else")}};
  for (const char* name : {"If", "StatelessIf", "_If"}) {
    BOOST_TEST((op(name).role() == OpRole::function_call));
    BOOST_TEST(!op(name).has_kernel());
    BOOST_TEST(inputs_of(name, attrs) == "bool");
    BOOST_TEST(outputs_of(name, attrs) == "int32");
  }
  BOOST_TEST(show(completed("If", attrs).at("output_shapes")) == "list() []");
  BOOST_TEST(completed("_If", attrs).count("output_shapes") == 0u);
  BOOST_TEST(op("If").is_stateful());
  BOOST_TEST(!op("StatelessIf").is_stateful());
  attrs["Tin"] = types({f32, DType::string});
  BOOST_TEST(inputs_of("If", attrs) == "bool,float32,string");
}

BOOST_AUTO_TEST_CASE(while_case_and_partitioned_call) {
  AttrMap w{{"T", AttrList{}}, {"cond", func("c")}, {"body", func("b")}};
  BOOST_TEST(inputs_of("While", w).empty());
  AttrMap done = completed("StatelessWhile", w);
  BOOST_TEST(show(done.at("parallel_iterations")) == "int 10");
  BOOST_TEST(completed("_While", w).count("parallel_iterations") == 0u);
  w["T"] = types({i32, f32});
  BOOST_TEST(outputs_of("_While", w) == "int32,float32");

  AttrList branches;
  branches.func = {func("b0"), func("b1")};
  AttrMap c{{"Tin", types({f32})}, {"Tout", types({f32})}, {"branches", branches}};
  BOOST_TEST(inputs_of("Case", c) == "int32,float32");
  BOOST_TEST((op("StatelessCase").role() == OpRole::function_call));
  c["branches"] = AttrList{};
  BOOST_TEST(attr_error("Case", c) == "attr 'branches' of op Case is 0, less than the minimum 1");

  AttrMap p = completed("StatefulPartitionedCall",
                        {{"Tin", types({f32})}, {"Tout", AttrList{}}, {"f", func("fn")}});
  BOOST_TEST(show(p.at("config")) == "string \"\"");
  BOOST_TEST(show(p.at("config_proto")) == "string \"\"");
  BOOST_TEST(show(p.at("executor_type")) == "string \"\"");
  BOOST_TEST(op("StatefulPartitionedCall").is_stateful());
  BOOST_TEST(!op("PartitionedCall").is_stateful());
  BOOST_TEST((op("PartitionedCall").role() == OpRole::function_call));
}

// --- state ops --------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(variables) {
  AttrMap h = completed("VarHandleOp", {{"dtype", f32}, {"shape", PartialShape{false, {2}}}});
  BOOST_TEST(show(h.at("container")) == "string \"\"");
  BOOST_TEST(show(h.at("shared_name")) == "string \"\"");
  BOOST_TEST(show(h.at("allowed_devices")) == "list() []");
  BOOST_TEST(outputs_of("VarHandleOp", h) == "resource");
  BOOST_TEST(outputs_of("ReadVariableOp", {{"dtype", f32}}) == "float32");
  BOOST_TEST(inputs_of("AssignVariableOp", {{"dtype", f32}}) == "resource,float32");
  BOOST_TEST(outputs_of("VarIsInitializedOp", {}) == "bool");

  BOOST_TEST(outputs_of("VariableV2", {{"dtype", f32}, {"shape", PartialShape{}}}) ==
             "float32_ref");
  AttrMap a = completed("Assign", {{"T", f32}});
  BOOST_TEST(show(a.at("validate_shape")) == "bool true");
  BOOST_TEST(show(a.at("use_locking")) == "bool true");
  BOOST_TEST(inputs_of("Assign", {{"T", f32}}) == "float32_ref,float32");
  BOOST_TEST(outputs_of("AssignAdd", {{"T", f32}}) == "float32_ref");
  BOOST_TEST(show(completed("AssignSub", {{"T", f32}}).at("use_locking")) == "bool false");
  BOOST_TEST(inputs_of("IsVariableInitialized", {{"dtype", i32}}) == "int32_ref");
}

BOOST_AUTO_TEST_CASE(stacks_tensor_arrays_and_assert) {
  BOOST_TEST(inputs_of("StackPushV2", {{"T", f32}}) == "resource,float32");
  BOOST_TEST(show(completed("StackV2", {{"elem_type", f32}}).at("stack_name")) == "string \"\"");
  BOOST_TEST(outputs_of("StackPopV2", {{"elem_type", i32}}) == "int32");
  AttrMap ta = completed("TensorArrayV3", {{"dtype", f32}});
  BOOST_TEST(show(ta.at("element_shape")) == "shape ?");
  BOOST_TEST(show(ta.at("dynamic_size")) == "bool false");
  BOOST_TEST(show(ta.at("clear_after_read")) == "bool true");
  BOOST_TEST(show(ta.at("identical_element_shapes")) == "bool false");
  BOOST_TEST(show(ta.at("tensor_array_name")) == "string \"\"");
  BOOST_TEST(outputs_of("TensorArrayV3", {{"dtype", f32}}) == "resource,float32");
  BOOST_TEST(inputs_of("TensorArrayWriteV3", {{"T", i32}}) == "resource,int32,int32,float32");
  BOOST_TEST(outputs_of("TensorArrayConcatV3", {{"dtype", i32}}) == "int32,int64");
  BOOST_TEST(outputs_of("TensorArrayGradV3", {{"source", "gradients"}}) ==
             "resource,float32");
  BOOST_TEST(outputs_of("TensorArraySizeV3", {}) == "int32");

  AttrMap a = completed("Assert", {{"T", types({i32, DType::string})}});
  BOOST_TEST(show(a.at("summarize")) == "int 3");
  BOOST_TEST(inputs_of("Assert", a) == "bool,int32,string");

  for (const char* name : {"VarHandleOp", "ReadVariableOp", "AssignVariableOp", "VariableV2",
                           "Assign", "StackV2", "StackPopV2", "TensorArrayV3",
                           "TensorArrayReadV3", "TensorArrayCloseV3", "Assert"}) {
    BOOST_TEST(op(name).is_stateful(), name);
    BOOST_TEST(op(name).has_kernel(), name);
  }
}

// --- attr checking ---------------------------------------------------------------

BOOST_AUTO_TEST_CASE(missing_attrs_are_named) {
  BOOST_TEST(attr_error("Enter", {{"T", f32}}) ==
             "op Enter needs attr 'frame_name' of type string");
  BOOST_TEST(attr_error("Merge", {{"T", f32}}) == "op Merge needs attr 'N' of type int");
  BOOST_TEST(attr_error("If", {{"Tcond", boolean}, {"Tin", AttrList{}}, {"Tout", AttrList{}}}) ==
             "op If needs attr 'then_branch' of type func");
}

BOOST_AUTO_TEST_CASE(ill_typed_attrs_are_rejected) {
  BOOST_TEST(attr_error("Enter", {{"T", f32}, {"frame_name", "f"}, {"parallel_iterations", "ten"}}) ==
             "attr 'parallel_iterations' of op Enter must be int, got string \"ten\"");
  BOOST_TEST(attr_error("Identity", {{"T", 3}}) == "attr 'T' of op Identity must be type, got int 3");
  AttrList ints;
  ints.i = {1, 2};
  BOOST_TEST(attr_error("If", {{"Tcond", boolean}, {"Tin", ints}, {"Tout", AttrList{}},
                               {"then_branch", func("t")}, {"else_branch", func("e")}}) ==
             "attr 'Tin' of op If must be list(type), got list(int) [1,2]");
}

BOOST_AUTO_TEST_CASE(disallowed_dtypes_are_rejected) {
  BOOST_TEST(attr_error("Reshape", {{"T", f32}, {"Tshape", f32}}) ==
             "attr 'Tshape' of op Reshape is float32, which is not one of {int32, int64}");
  BOOST_TEST(attr_error("OneHot", {{"T", f32}, {"TI", DType::int16}}) ==
             "attr 'TI' of op OneHot is int16, which is not one of {uint8, int8, int32, int64}");
  BOOST_TEST(attr_error("AssignAdd", {{"T", DType::string}}).find("not one of") !=
             std::string::npos);
  BOOST_TEST(attr_error("OnesLike", {{"T", DType::string}}).find("not one of") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(array_op_defaults) {
  BOOST_TEST(show(completed("Shape", {{"T", f32}}).at("out_type")) == "type int32");
  BOOST_TEST(outputs_of("Shape", {{"T", f32}, {"out_type", DType::int64}}) ==
             "int64");
  BOOST_TEST(outputs_of("Rank", {{"T", f32}}) == "int32");
  BOOST_TEST(show(completed("Placeholder", {{"dtype", f32}}).at("shape")) == "shape ?");
  BOOST_TEST(show(completed("Range", {}).at("Tidx")) == "type int32");
  AttrMap ss = completed("StridedSlice", {{"T", f32}, {"Index", i32}});
  for (const char* mask :
       {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"})
    BOOST_TEST(show(ss.at(mask)) == "int 0", mask);
  BOOST_TEST(attr_error("Slice", {{"T", f32}}) == "op Slice needs attr 'Index' of type type");
  AttrMap g = completed("GatherV2", {{"Tparams", f32}, {"Tindices", i32}, {"Taxis", i32}});
  BOOST_TEST(show(g.at("batch_dims")) == "int 0");
  AttrMap oh = completed("OneHot", {{"T", f32}});
  BOOST_TEST(show(oh.at("axis")) == "int -1");
  BOOST_TEST(show(oh.at("TI")) == "type int64");
  BOOST_TEST(inputs_of("OneHot", {{"T", f32}}) == "int64,int32,float32,float32");
  BOOST_TEST(show(completed("Squeeze", {{"T", f32}}).at("squeeze_dims")) == "list() []");
  BOOST_TEST(attr_error("ConcatV2", {{"T", f32}, {"N", 1}}) ==
             "attr 'N' of op ConcatV2 is 1, less than the minimum 2");
  BOOST_TEST(inputs_of("ConcatV2", {{"T", f32}, {"N", 3}}) == "float32,float32,float32,int32");
  BOOST_TEST(outputs_of("Unpack", {{"T", f32}, {"num", 0}}).empty());
  BOOST_TEST(inputs_of("IdentityN", {{"T", types({f32, i32})}}) == "float32,int32");
}

// --- the kernels gradient graphs run -----------------------------------------

BOOST_AUTO_TEST_CASE(gradient_kernels_have_tensorflow_signatures) {
  for (const char* name :
       {"AddN", "SigmoidGrad", "TanhGrad", "ReluGrad", "SqrtGrad", "RsqrtGrad", "ReciprocalGrad",
        "Reciprocal", "Sign", "StopGradient", "PreventGradient", "LogSoftmax",
        "BroadcastGradientArgs", "UnsortedSegmentSum", "StridedSliceGrad", "ShapeN",
        "ConcatOffset", "InvertPermutation", "Split", "SplitV", "BiasAddGrad", "All", "Any",
        "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits", "RandomUniform",
        "RandomStandardNormal", "TruncatedNormal", "ReverseSequence", "DynamicStitch", "Pad",
        "PadV2", "SquaredDifference"})
    BOOST_TEST(op(name).has_kernel(), name);
  BOOST_TEST(inputs_of("AddN", {{"N", 3}, {"T", f32}}) == "float32,float32,float32");
  BOOST_TEST(outputs_of("BroadcastGradientArgs", {}) == "int32,int32");
  BOOST_TEST(inputs_of("ConcatOffset", {{"N", 2}}) == "int32,int32,int32");
  BOOST_TEST(outputs_of("ShapeN", {{"N", 2}, {"T", f32}}) == "int32,int32");
  BOOST_TEST(inputs_of("SplitV", {{"num_split", 2}, {"T", f32}}) == "float32,int64,int32");
  BOOST_TEST(outputs_of("Split", {{"num_split", 3}, {"T", boolean}}) == "bool,bool,bool");
  BOOST_TEST(inputs_of("UnsortedSegmentSum", {{"T", f32}, {"Tindices", DType::int64}}) ==
             "float32,int64,int32");
  BOOST_TEST(inputs_of("SparseSoftmaxCrossEntropyWithLogits", {{"T", f32}}) == "float32,int64");
  BOOST_TEST(inputs_of("StridedSliceGrad", {{"T", f32}, {"Index", i32}}) ==
             "int32,int32,int32,int32,float32");
  BOOST_TEST(inputs_of("DynamicStitch", {{"N", 2}, {"T", f32}}) == "int32,int32,float32,float32");
  BOOST_TEST(inputs_of("ReverseSequence", {{"T", f32}, {"seq_dim", 1}}) == "float32,int64");
  BOOST_TEST(inputs_of("All", {}) == "bool,int32");
  BOOST_TEST(show(completed("PreventGradient", {{"T", f32}}).at("message")) == "string \"\"");
  BOOST_TEST(op("RandomUniform").is_stateful());
  BOOST_TEST(!op("AddN").is_stateful());
  BOOST_TEST(attr_error("AddN", {{"N", 0}, {"T", f32}}) ==
             "attr 'N' of op AddN is 0, less than the minimum 1");
}

BOOST_AUTO_TEST_CASE(control_flow_ops_have_no_kernel) {
  AttrMap attrs{{"T", f32}, {"N", 2}};
  BOOST_REQUIRE(op("Merge").check_and_complete_attrs(attrs).ok());
  const std::string name = "m";
  const std::vector<DType> in{f32, f32}, out{f32, i32};
  auto k = op("Merge").make_kernel(KernelInit{name, attrs, in, out});
  BOOST_REQUIRE(!k.ok());
  BOOST_TEST((k.status().code() == Error::unimplemented));
}

BOOST_AUTO_TEST_SUITE_END()
