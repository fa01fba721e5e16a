// GradientRegistry::global(): one gradient function per differentiable
// op, in the form TensorFlow's Python gradients take, written against a
// GradContext and kept by family as ops/ keeps its kernels:
// math_gradient_functions.cpp (math_grad.py), array_gradient_functions.cpp
// (array_grad.py), nn_gradient_functions.cpp (nn_grad.py),
// tensor_array_gradient_functions.cpp (tensor_array_grad.py) and
// list_gradient_functions.cpp (list_grad.py); here the identities, the
// optionals and the ops declared not differentiable.
#include <cstdio>
#include <cstdlib>

#include "graph/autodiff/gradient_util.hpp"

namespace tagflow::graph {
inline namespace autodiff {

void add_math_gradients(GradientRegistry& r);
void add_array_gradients(GradientRegistry& r);
// The convolution, pooling, batch norm, activation and softmax gradients.
void add_nn_gradients(GradientRegistry& r);
void add_tensor_array_gradients(GradientRegistry& r);
// The TensorList ops' gradients.
void add_list_gradients(GradientRegistry& r);

void gradient_util::add(GradientRegistry& r, const char* op, GradientFunction fn) {
  if (Status s = r.add(op, std::move(fn)); !s.ok()) {
    std::fprintf(stderr, "tagflow: the gradient of %s: %s\n", op, s.to_string().c_str());
    std::abort();
  }
}

namespace {

using namespace gradient_util;

GradientRegistry make_global() {
  GradientRegistry r;

  for (const char* op : {"Identity", "Snapshot", "ReadVariableOp", "StopGradientIdentity", "PlaceholderWithDefault"})
    add(r, op, identity_grad);
  add(r, "IdentityN", [](C& c) -> Status {
    for (int i = 0; i < c.num_outputs(); ++i)
      if (auto d = c.dy(i)) c.set(i, *d);
    return ok_status();
  });
  add(r, "PreventGradient", [](C& c) -> Status {
    const std::string* m = c.node().attr<std::string>("message");
    return Status(Error::invalid_argument,
                  "gradient explicitly prevented on node '" + c.node().name + "'" +
                      (m && !m->empty() ? ": " + *m : std::string()));
  });
  // Optionals (TensorFlow's optional_grad.py): the gradient of wrapping is
  // unwrapping, and back. They carry an If's intermediates to its
  // functional gradient, so a gradient of that gradient passes them.
  add(r, "OptionalFromValue", [](C& c) -> Status {
    std::optional<Endpoint> d = c.dy(0);
    if (!d) return ok_status();
    std::vector<DType> types;
    ops::AttrList shapes;
    for (int i = 0; i < c.num_inputs(); ++i) {
      types.push_back(c.input_type(i));
      shapes.shape.push_back(ops::PartialShape{true, {}});
    }
    ops::AttrList type_list;
    type_list.type = types;
    TRY(std::vector<Endpoint> values,
        c.op("OptionalGetValue", {*d}, {{"output_types", type_list}, {"output_shapes", shapes}}));
    // Lists among the components (a nested loop's accumulators) take
    // gradients too.
    for (int i = 0; i < c.num_inputs(); ++i)
      if (is_differentiable(types[static_cast<size_t>(i)]) || types[static_cast<size_t>(i)] == DType::variant)
        c.set(i, values[static_cast<size_t>(i)]);
    return ok_status();
  });
  add(r, "OptionalGetValue", [](C& c) -> Status {
    std::vector<Endpoint> components;
    for (int i = 0; i < c.num_outputs(); ++i) {
      TRY(Endpoint d, c.dy_or_zeros(i));
      components.push_back(d);
    }
    TRY(Endpoint wrapped, c.op1("OptionalFromValue", components));
    c.set(0, wrapped);
    return ok_status();
  });
  for (const char* op :
       {"StopGradient", "Shape", "ShapeN", "Size", "Rank", "ZerosLike", "OnesLike", "Range",
        "OneHot", "ArgMax", "ArgMin", "Equal", "NotEqual", "Less", "LessEqual", "Greater",
        "GreaterEqual", "LogicalAnd", "LogicalOr", "LogicalNot", "FloorDiv", "Sign", "Floor",
        "RandomUniform", "RandomStandardNormal", "TruncatedNormal", "BroadcastGradientArgs",
        "TensorArrayV3", "TensorArraySizeV3", "TensorArrayGradV3", "TensorArrayCloseV3",
        "StackV2", "StackPushV2", "StackPopV2", "StackCloseV2", "Assert", "NoOp",
        "InvertPermutation", "ConcatOffset", "ToBool", "IsVariableInitialized",
        "VarIsInitializedOp", "IsFinite", "LinSpace", "Empty", "NearestNeighbors",
        "ScalarSummary"})
    r.add_not_differentiable(op);
  // Ops that change state or leave the graph, as TensorFlow declares them
  // (state_grad.py, resource_variable_ops.py, training ops, io, parsing,
  // queues), and the random and set ops it declares so too.
  for (const char* op :
       {"Assign", "AssignAdd", "AssignSub", "AssignVariableOp", "AssignAddVariableOp", "AssignSubVariableOp",
        "ScatterAdd", "ScatterSub", "ScatterUpdate", "ResourceScatterAdd", "ResourceScatterSub",
        "ResourceScatterUpdate", "ApplyGradientDescent", "ApplyMomentum", "ApplyAdagrad", "ApplyAdam",
        "ApplyRMSProp", "ResourceApplyGradientDescent", "ResourceApplyMomentum", "ResourceApplyAdagrad",
        "ResourceApplyAdam", "ResourceApplyRMSProp", "SaveV2", "QueueEnqueueV2", "QueueEnqueueManyV2",
        "ParseExample", "ParseExampleV2", "ParseSingleExample", "RandomShuffle", "Unique"})
    r.add_not_differentiable(op);
  // Lookup tables (lookup_ops.py declares them not differentiable), the
  // string ops, the audio front end and the resizes' gradient ops, which
  // TensorFlow gives no gradient: a gradient through them is zero here
  // rather than TF's LookupError.
  for (const char* op :
       {"HashTableV2", "MutableHashTableV2", "MutableHashTableOfTensorsV2", "LookupTableFindV2",
        "LookupTableInsertV2", "LookupTableRemoveV2", "LookupTableSizeV2", "LookupTableExportV2",
        "LookupTableImportV2", "InitializeTableV2", "InitializeTableFromTextFileV2", "DecodeWav",
        "EncodeWav", "AudioSpectrogram", "Mfcc", "ResizeBilinearGrad", "ResizeNearestNeighborGrad",
        "AsString", "ReduceJoin", "RegexFullMatch", "RegexReplace", "StaticRegexFullMatch", "StaticRegexReplace",
        "StringJoin", "StringLength", "StringLower", "StringSplit", "StringSplitV2", "StringStrip",
        "StringToNumber", "StringUpper", "Substr"})
    r.add_not_differentiable(op);
  add_math_gradients(r);
  add_array_gradients(r);
  add_nn_gradients(r);
  add_tensor_array_gradients(r);
  add_list_gradients(r);
  return r;
}

#undef TRY

}  // namespace

const GradientRegistry& GradientRegistry::global() {
  static const GradientRegistry registry = make_global();
  return registry;
}

}  // namespace autodiff
}  // namespace tagflow::graph
