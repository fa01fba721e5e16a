// _FusedMatMul and _FusedConv2D, as TensorFlow's remapper writes them: a
// MatMul or Conv2D followed by the ops listed in `fused_ops` — "BiasAdd"
// (the bias is args[0]), optionally then an activation ("Relu", "Relu6",
// "Elu", "Tanh", "Sigmoid") — in one node. The kernel runs the same
// kernels as the separate nodes, in the same order, on one thread without
// a dispatch between them, and lets each later one write into its
// predecessor's buffer: the values are bitwise those of the unfused graph
// (graph/optimize/fusion.cpp makes these nodes). Float [BiasAdd] and
// [BiasAdd, Relu] are one kernel instead, the bias added by the product or
// convolution itself (a oneDNN post-op: the addition rounds once), then
// Relu: the same numbers as the unfused graph, bitwise; NaN where it gives
// NaN, its sign bit not promised (nn_ops.hpp).
#include "ops/fused_ops.hpp"

#include <memory>
#include <string>
#include <vector>

#include "ops/math_ops.hpp"
#include "ops/nn_ops.hpp"
#include "ops/op_def.hpp"
#include "ops/shape_fns.hpp"

namespace tagflow::ops {

bool is_fusable_activation(const std::string& op) {
  return op == "Relu" || op == "Relu6" || op == "Elu" || op == "Tanh" || op == "Sigmoid";
}

namespace {

class FusedKernel final : public Kernel {
 public:
  FusedKernel(std::unique_ptr<Kernel> first, std::vector<std::unique_ptr<Kernel>> then, int first_inputs)
      : first_(std::move(first)), then_(std::move(then)), first_inputs_(first_inputs) {}

  Status compute(KernelContext& ctx) const override {
    std::vector<Tensor> in;
    for (int i = 0; i < first_inputs_; ++i) in.push_back(ctx.input(i));
    Tensor value;
    {
      KernelContext c(in.data(), first_inputs_, &value, 1, ctx.resources(), ctx.step_id(), ctx.memory());
      TF_RETURN_IF_ERROR(first_->compute(c));
    }
    in.clear();
    int next_arg = first_inputs_;
    for (size_t k = 0; k < then_.size(); ++k) {
      // BiasAdd reads the next argument; an activation only the value.
      std::vector<Tensor> args;
      args.push_back(std::move(value));
      if (k == 0) args.push_back(ctx.input(next_arg++));
      Tensor out;
      KernelContext c(args.data(), static_cast<int>(args.size()), &out, 1, ctx.resources(), ctx.step_id(),
                      ctx.memory());
      TF_RETURN_IF_ERROR(then_[k]->compute(c));
      value = std::move(out);
    }
    ctx.set_output(0, std::move(value));
    return ok_status();
  }

 private:
  std::unique_ptr<Kernel> first_;
  std::vector<std::unique_ptr<Kernel>> then_;
  int first_inputs_;
};

// The kernel of `op` over the fused node's attrs (it reads those it knows).
Expected<std::unique_ptr<Kernel>> part(const std::string& fused, const std::string& op, const KernelInit& init,
                                       const AttrMap& attrs, const DTypes& inputs) {
  const OpDef* def = OpRegistry::global().find(op);
  if (def == nullptr || !def->has_kernel())
    return Status(Error::unimplemented, fused + " '" + init.node_name + "': no kernel for fused op " + op);
  DTypes outputs;
  outputs.push_back(inputs.empty() ? DType::invalid : inputs[0]);
  KernelInit sub{init.node_name, attrs, inputs, outputs};
  return def->make_kernel(sub);
}

KernelFactory fused_factory(std::string fused, std::string first) {
  return [fused, first](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    TF_ASSIGN_OR_RETURN(AttrList ops, init.attr<AttrList>("fused_ops"));
    TF_ASSIGN_OR_RETURN(int64_t num_args, init.attr<int64_t>("num_args"));
    const DType t = init.input_types.empty() ? DType::invalid : init.input_types[0];
    const std::vector<std::string>& list = ops.s;
    const bool bias = !list.empty() && list[0] == "BiasAdd";
    if (!bias || list.size() > 2 || (list.size() == 2 && !is_fusable_activation(list[1])) || num_args != 1)
      return Status(Error::unimplemented,
                    fused + " '" + init.node_name +
                        "': fused_ops must be [BiasAdd] or [BiasAdd, Relu|Relu6|Elu|Tanh|Sigmoid] with num_args 1");
    if (t == DType::float32 && (list.size() == 1 || list[1] == "Relu")) {
      const bool relu = list.size() == 2;
      return first == "Conv2D" ? make_fused_conv2d_kernel(init, relu) : make_fused_matmul_kernel(init, relu);
    }
    DTypes two;
    two.push_back(t);
    two.push_back(t);
    TF_ASSIGN_OR_RETURN(auto head, part(fused, first, init, init.attrs, two));
    std::vector<std::unique_ptr<Kernel>> then;
    AttrMap bias_attrs{{"T", t}, {"data_format", AttrValue(std::string("NHWC"))}};
    if (auto it = init.attrs.find("data_format"); it != init.attrs.end()) bias_attrs["data_format"] = it->second;
    TF_ASSIGN_OR_RETURN(auto b, part(fused, "BiasAdd", init, bias_attrs, two));
    then.push_back(std::move(b));
    if (list.size() == 2) {
      DTypes one;
      one.push_back(t);
      TF_ASSIGN_OR_RETURN(auto act, part(fused, list[1], init, AttrMap{{"T", t}}, one));
      then.push_back(std::move(act));
    }
    return std::unique_ptr<Kernel>(std::make_unique<FusedKernel>(std::move(head), std::move(then), 2));
  };
}

AttrList unit_dilations() {
  AttrList unit;
  unit.i = {1, 1, 1, 1};
  return unit;
}

}  // namespace

void register_fused_ops(OpRegistry& r) {
  register_builtin(r, OpDef("_FusedMatMul").shape_fn(shape_fns::matmul)
                          .input("a: T")
                          .input("b: T")
                          .input("args: num_args * T")
                          .output("product: T")
                          .type_attr("T", float_types())
                          .attr("transpose_a", "bool", false)
                          .attr("transpose_b", "bool", false)
                          .attr("num_args", "int", int64_t{0}, 0)
                          .attr("fused_ops", "list(string)", AttrList{})
                          .attr("epsilon", "float", 0.0001f)
                          .attr("leakyrelu_alpha", "float", 0.2f)
                          .expensive()
                          .kernel(fused_factory("_FusedMatMul", "MatMul")));
  register_builtin(r, OpDef("_FusedConv2D").shape_fn(shape_fns::conv)
                          .input("input: T")
                          .input("filter: T")
                          .input("args: num_args * T")
                          .output("output: T")
                          .type_attr("T", float_types())
                          .attr("num_args", "int", int64_t{0}, 0)
                          .attr("strides", "list(int)")
                          .attr("padding", "string")
                          .attr("explicit_paddings", "list(int)", AttrList{})
                          .attr("data_format", "string", "NHWC")
                          .attr("dilations", "list(int)", unit_dilations())
                          .attr("use_cudnn_on_gpu", "bool", true)
                          .attr("fused_ops", "list(string)", AttrList{})
                          .attr("epsilon", "float", 0.0001f)
                          .attr("leakyrelu_alpha", "float", 0.2f)
                          .expensive()
                          .kernel(fused_factory("_FusedConv2D", "Conv2D")));
}

}  // namespace tagflow::ops
