// Every op is differentiable or says it is not: an op with a kernel that
// may take a floating-point input has a gradient function or is declared
// not differentiable (TensorFlow's NotDifferentiable), so that
// `gradients` never meets an op it knows nothing about.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "graph/autodiff/gradients.hpp"
#include "ops/op_def.hpp"

using namespace tagflow;

namespace {

bool is_float(ops::DType t) {
  return t == ops::DType::float32 || t == ops::DType::float64 || t == ops::DType::half || t == ops::DType::bfloat16;
}

// Whether some input of the op may be a floating-point tensor.
bool may_take_floats(const ops::OpDef& def) {
  for (const ops::ArgSpec& a : def.inputs()) {
    if (a.is_ref) continue;  // a variable's ref: assigned to, not differentiated
    if (a.fixed_type != ops::DType::invalid) {
      if (is_float(a.fixed_type)) return true;
      continue;
    }
    const std::string& attr = !a.type_attr.empty() ? a.type_attr : a.type_list_attr;
    const ops::AttrSpec* spec = def.find_attr(attr);
    if (spec == nullptr) continue;
    if (spec->allowed_types.empty() ||
        std::any_of(spec->allowed_types.begin(), spec->allowed_types.end(), is_float))
      return true;
  }
  return false;
}

}  // namespace

// Ops TensorFlow differentiates whose gradient tagflow does not build yet
// (second-order gradients of the nn kernels' own gradients, fused kernels,
// a few array ops): `gradients` reports them by name. An op leaves this
// list when its gradient is added (the test says so).
const std::vector<std::string> kGradientNotBuilt = {
    "AvgPoolGrad", "BiasAddGrad", "Conv2DBackpropFilter", "Conv2DBackpropInput",
    "DepthwiseConv2dNativeBackpropFilter", "DepthwiseConv2dNativeBackpropInput", "DynamicStitch", "EluGrad",
    "FusedBatchNormGrad", "FusedBatchNormGradV2", "FusedBatchNormGradV3", "GRUBlockCellGrad", "LSTMBlockCellGrad",
    "MaxPoolGrad", "Prod", "ReciprocalGrad", "Relu6Grad", "ReluGrad", "RsqrtGrad", "SoftsignGrad", "SqrtGrad",
    "StridedSliceGrad", "TensorArrayConcatV3", "TensorArraySplitV3", "TensorListPushBackBatch", "TopKV2",
    "UnsortedSegmentSum", "_FusedConv2D", "_FusedMatMul",
};

BOOST_AUTO_TEST_SUITE(gradient_registry)

BOOST_AUTO_TEST_CASE(every_op_with_a_float_input_is_differentiable_or_says_it_is_not) {
  const graph::GradientRegistry& grads = graph::GradientRegistry::global();
  std::vector<std::string> unknown;
  int checked = 0;
  for (const ops::OpDef* def : ops::OpRegistry::global().all()) {
    if (!def->has_kernel() || def->role() != ops::OpRole::ordinary || !may_take_floats(*def)) continue;
    ++checked;
    const bool listed = std::count(kGradientNotBuilt.begin(), kGradientNotBuilt.end(), def->name()) > 0;
    const bool declared = grads.find(def->name()) != nullptr || grads.is_not_differentiable(def->name());
    if (!declared && !listed) unknown.push_back(def->name());
    BOOST_TEST(!(declared && listed), def->name() << " has a gradient or says it has none: take it off the list");
  }
  std::string list;
  for (const std::string& op : unknown) list += " " + op;
  BOOST_TEST(unknown.empty(), unknown.size() << " of " << checked << " ops neither:" << list);
  BOOST_TEST(checked > 100);
}

BOOST_AUTO_TEST_SUITE_END()
