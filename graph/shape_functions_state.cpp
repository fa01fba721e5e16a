// Shape functions of the ops with state or structure: variables and
// resource variables, training updates, queues, stacks, TensorArrays and
// TensorLists, optionals, checkpoints, summaries and asserts; the
// control-flow primitives (Switch, Enter, Exit, NextIteration pass their
// input's shape through; Merge is the fixed point's own rule, in
// shape_inference.cpp) and the functional ops, which follow their
// functions where they can be instantiated.
#include "graph/functional_op.hpp"
#include "graph/shape_functions.hpp"

namespace tagflow::graph {
namespace {

using ops::PartialShape;

Status none(InferenceContext&) { return ok_status(); }  // no outputs, or nothing known of them

Status scalars(InferenceContext& c) {
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, shape::scalar());
  return ok_status();
}

Status pass_through(InferenceContext& c) {
  c.pass_through(0);
  return ok_status();
}

// The shape in a `shape` attr (VariableV2).
Status shape_attr(InferenceContext& c) {
  if (const auto* s = c.attr<PartialShape>("shape")) c.set_output(0, *s);
  return ok_status();
}

// Assign: the variable takes the value's shape (validate_shape or not).
Status assign(InferenceContext& c) {
  const bool validate = c.bool_attr("validate_shape", true);
  if (validate) {
    auto m = shape::merge(c.input_shape(0), c.input_shape(1));
    c.set_output(0, m ? *m : c.input_shape(1));
  } else {
    c.set_output(0, c.input_shape(1));
  }
  return ok_status();
}

// A TensorList element_shape input: -1 (a scalar) is unknown rank.
PartialShape element_shape(const InferenceContext& c, int i) {
  if (const ops::Tensor* v = c.input_value(i); v != nullptr && v->rank() == 0) return shape::unknown();
  if (!c.input_shape(i).unknown_rank && c.input_shape(i).dims.empty()) return shape::unknown();
  return c.input_as_shape(i);
}

Status list_item(InferenceContext& c) {
  c.set_output(c.num_outputs() - 1, element_shape(c, c.num_inputs() - 1));
  for (int i = 0; i + 1 < c.num_outputs(); ++i) c.set_output(i, shape::scalar());
  return ok_status();
}

Status list_stack(InferenceContext& c) {
  const PartialShape e = element_shape(c, 1);
  const int64_t n = c.int_attr("num_elements", -1);
  c.set_output(0, shape::concat(shape::vector(n), e));
  return ok_status();
}

Status list_gather(InferenceContext& c) {
  const PartialShape& idx = c.input_shape(1);
  const PartialShape e = element_shape(c, 2);
  c.set_output(0, shape::concat(shape::vector(shape::dim(idx, 0)), e));
  return ok_status();
}

Status list_concat(InferenceContext& c) {
  const PartialShape e = element_shape(c, 1);
  if (!e.unknown_rank && !e.dims.empty()) {
    PartialShape out = e;
    out.dims[0] = -1;
    c.set_output(0, out);
  }
  c.set_output(1, shape::vector(-1));
  return ok_status();
}

Status tensor_array_v3(InferenceContext& c) {
  c.set_output(0, shape::scalar());  // a resource handle
  c.set_output(1, shape::scalar());
  return ok_status();
}

Status tensor_array_gather(InferenceContext& c) {
  const auto* e = c.attr<PartialShape>("element_shape");
  if (e != nullptr && !e->unknown_rank) c.set_output(0, shape::concat(shape::vector(shape::dim(c.input_shape(1), 0)), *e));
  return ok_status();
}

Status tensor_array_concat(InferenceContext& c) {
  const auto* e = c.attr<PartialShape>("element_shape_except0");
  if (e != nullptr && !e->unknown_rank) c.set_output(0, shape::concat(shape::vector(-1), *e));
  c.set_output(1, shape::vector(-1));
  return ok_status();
}

Status optional_get_value(InferenceContext& c) {
  const auto* l = c.attr<ops::AttrList>("output_shapes");
  if (l != nullptr && l->shape.size() == static_cast<size_t>(c.num_outputs()))
    for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, l->shape[static_cast<size_t>(i)]);
  return ok_status();
}

Status switch_n(InferenceContext& c) {
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, c.input_shape(0));
  return ok_status();
}

Status switch_op(InferenceContext& c) {
  for (int i = 0; i < c.num_outputs(); ++i) {
    c.set_output(i, c.input_shape(0));
    if (c.input_value(0) != nullptr) c.set_value(i, *c.input_value(0));
  }
  return ok_status();
}

// The shapes a functional node declares: `_output_shapes`, else a
// non-empty `output_shapes` attr. False if it declares none.
bool declared_shapes(InferenceContext& c) {
  for (const char* key : {"_output_shapes", "output_shapes"}) {
    const auto* l = c.attr<ops::AttrList>(key);
    if (l == nullptr || l->shape.size() != static_cast<size_t>(c.num_outputs()) || l->shape.empty()) continue;
    for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, l->shape[static_cast<size_t>(i)]);
    return true;
  }
  return false;
}

std::vector<OutputInfo> inputs_from(const InferenceContext& c, int first) {
  std::vector<OutputInfo> args;
  for (int i = first; i < c.num_inputs(); ++i) args.push_back(c.input(i));
  return args;
}

// The outputs every one of `functions` gives, generalised over them.
void call_all(InferenceContext& c, const std::vector<const ops::NameAttrList*>& functions, int first_arg) {
  if (c.call() == nullptr || functions.empty()) return;
  const std::vector<OutputInfo> args = inputs_from(c, first_arg);
  std::vector<PartialShape> out;
  for (const ops::NameAttrList* f : functions) {
    if (f == nullptr) return;
    auto r = (*c.call())(*f, args);
    if (!r || r->size() != static_cast<size_t>(c.num_outputs())) return;
    for (size_t i = 0; i < r->size(); ++i)
      out.push_back(out.size() < r->size() ? (*r)[i].shape : shape::unknown());
    if (out.size() > r->size())
      for (size_t i = 0; i < r->size(); ++i) out[i] = generalize(out[i], (*r)[i].shape);
    out.resize(r->size());
  }
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, out[static_cast<size_t>(i)]);
}

// If / StatelessIf / _If, Case / StatelessCase and the partitioned calls:
// every function the node calls, on the inputs after the ones the op reads
// itself. A malformed node gets no shapes here: validation and lowering
// say what is wrong with it.
Status calls_op(InferenceContext& c, FunctionalKind kind) {
  if (declared_shapes(c)) return ok_status();
  auto op = read_functional_op(c.node(), kind);
  if (!op.ok()) return ok_status();
  std::vector<const ops::NameAttrList*> fs;
  for (const FunctionalCallee& callee : op->callees) fs.push_back(&callee.func);
  call_all(c, fs, op->leading_inputs);
  return ok_status();
}

Status if_op(InferenceContext& c) { return calls_op(c, FunctionalKind::if_op); }
Status case_op(InferenceContext& c) { return calls_op(c, FunctionalKind::case_op); }
Status call_op(InferenceContext& c) { return calls_op(c, FunctionalKind::partitioned_call); }

// While: the loop variables generalised with what the body makes of them
// until that changes nothing (a few rounds; then unknown).
Status while_op(InferenceContext& c) {
  if (declared_shapes(c)) return ok_status();
  auto op = read_functional_op(c.node(), FunctionalKind::while_op);
  if (!op.ok() || c.call() == nullptr || c.num_inputs() != c.num_outputs()) return ok_status();
  const ops::NameAttrList* body = &op->callee("body")->func;
  std::vector<OutputInfo> vars = inputs_from(c, 0);
  for (int round = 0; round < 8; ++round) {
    auto r = (*c.call())(*body, vars);
    if (!r || r->size() != vars.size()) return ok_status();
    bool changed = false;
    for (size_t i = 0; i < vars.size(); ++i) {
      PartialShape g = generalize(vars[i].shape, (*r)[i].shape);
      const bool value_kept = vars[i].value && (*r)[i].value && vars[i].value->equals(*(*r)[i].value);
      if (!(g == vars[i].shape) || (vars[i].value && !value_kept)) changed = true;
      vars[i].shape = g;
      if (!value_kept) vars[i].value.reset();
    }
    if (!changed) {
      for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, vars[static_cast<size_t>(i)].shape);
      return ok_status();
    }
  }
  return ok_status();
}

// For: what it declares, else unknown (a conservative rule: its body is
// not followed).
Status for_op(InferenceContext& c) {
  declared_shapes(c);
  return ok_status();
}

Status recv(InferenceContext& c) {
  declared_shapes(c);
  return ok_status();
}

}  // namespace

void add_state_shape_functions(ShapeFunctionMap& m) {
  // Variables and their updates: the variable's shape.
  m["VariableV2"] = shape_attr;
  m["VarHandleOp"] = scalars;
  m["ReadVariableOp"] = none;  // the handle does not carry the shape here
  m["Assign"] = assign;
  for (const char* op : {"AssignAdd", "AssignSub", "ApplyAdagrad", "ApplyAdam", "ApplyGradientDescent",
                         "ApplyMomentum", "ApplyRMSProp", "ScatterAdd", "ScatterSub", "ScatterUpdate"})
    m[op] = shape_of_input(0);
  for (const char* op : {"AssignAddVariableOp", "AssignSubVariableOp", "AssignVariableOp", "ResourceApplyAdagrad",
                         "ResourceApplyAdam", "ResourceApplyGradientDescent", "ResourceApplyMomentum",
                         "ResourceApplyRMSProp", "ResourceScatterAdd", "ResourceScatterSub", "ResourceScatterUpdate",
                         "DisableCopyOnRead"})
    m[op] = none;
  for (const char* op : {"IsVariableInitialized", "VarIsInitializedOp", "ScalarSummary", "ShardedFilename",
                         "ShardedFilespec", "QueueIsClosedV2", "QueueSizeV2", "FIFOQueueV2", "StackV2",
                         "OptionalFromValue", "OptionalHasValue", "OptionalNone", "EmptyTensorList",
                         "TensorListLength", "TensorListReserve", "TensorListFromTensor", "TensorListPushBack",
                         "TensorListResize", "TensorListScatter", "TensorListScatterV2",
                         "TensorListScatterIntoExistingList", "TensorListSetItem", "TensorListSplit",
                         "TensorArraySizeV3", "TensorArrayWriteV3", "TensorArrayScatterV3", "TensorArraySplitV3"})
    m[op] = scalars;
  // No outputs, or outputs whose shapes depend on what runs (queues,
  // checkpoints, parsed examples, stacks): unknown.
  for (const char* op : {"Abort", "Assert", "NoOp", "SaveV2", "RestoreV2", "MergeV2Checkpoints", "QueueCloseV2",
                         "QueueEnqueueV2", "QueueEnqueueManyV2", "QueueDequeueV2", "QueueDequeueManyV2",
                         "StackCloseV2", "StackPopV2", "TensorArrayCloseV3", "TensorArrayReadV3", "ParseExample",
                         "ParseExampleV2", "ParseSingleExample", "ControlTrigger", "_Send", "_HostSend", "_Retval",
                         "_Arg"})
    m[op] = none;
  m["StackPushV2"] = shape_of_input(1);
  m["TensorArrayV3"] = tensor_array_v3;
  m["TensorArrayGradV3"] = tensor_array_v3;
  m["TensorArrayGatherV3"] = tensor_array_gather;
  m["TensorArrayConcatV3"] = tensor_array_concat;
  m["TensorListGetItem"] = list_item;
  m["TensorListPopBack"] = list_item;
  m["TensorListStack"] = list_stack;
  m["TensorListGather"] = list_gather;
  m["TensorListConcatV2"] = list_concat;
  m["TensorListElementShape"] = [](InferenceContext& c) {
    c.set_output(0, shape::vector(-1));
    return ok_status();
  };
  m["TensorListPushBackBatch"] = shape_of_input(0);
  m["OptionalGetValue"] = optional_get_value;
  // Control flow: Merge is the fixed point's rule (shape_inference.cpp).
  for (const char* op : {"Switch", "RefSwitch"}) m[op] = switch_op;
  for (const char* op : {"Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration", "LoopCond"})
    m[op] = pass_through;
  m["_SwitchN"] = switch_n;
  m["RefSelect"] = shape_of_input(1);
  m["_Recv"] = recv;
  m["_HostRecv"] = recv;
  // Functional ops.
  for (const char* op : {"If", "StatelessIf", "_If"}) m[op] = if_op;
  for (const char* op : {"Case", "StatelessCase"}) m[op] = case_op;
  for (const char* op : {"While", "StatelessWhile", "_While"}) m[op] = while_op;
  m["For"] = for_op;
  for (const char* op : {"PartitionedCall", "StatefulPartitionedCall"}) m[op] = call_op;
}

}  // namespace tagflow::graph
