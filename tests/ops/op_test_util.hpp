// Runs one op's kernel the way the executor does: look the op up in the
// global registry, complete its attrs, resolve dtypes, make the kernel and
// call it. For kernel tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/op_def.hpp"

namespace tagflow::ops::testing {

// What a stateful kernel sees besides its inputs: the session state, the
// step, and the node's name (by default "test_" + op).
struct RunOptions {
  ResourceManager* resources = nullptr;
  uint64_t step_id = 0;
  std::string node_name;
};

// If `attrs` has no "T" and the op has a type attr "T", it is taken from the
// first input's dtype (most tests need nothing else).
inline Expected<std::vector<Tensor>> run_op(const std::string& op, std::vector<Tensor> inputs,
                                            AttrMap attrs = {},
                                            const RunOptions& options = RunOptions()) {
  const OpDef* def = OpRegistry::global().find(op);
  if (def == nullptr) return Status(Error::not_found, "no op " + op);
  if (attrs.count("T") == 0 && def->find_attr("T") != nullptr && !inputs.empty() &&
      def->find_attr("T")->type == "type")
    attrs["T"] = base_dtype(inputs[0].dtype());
  TF_RETURN_IF_ERROR(def->check_and_complete_attrs(attrs));
  TF_ASSIGN_OR_RETURN(std::vector<DType> in_types, def->input_types(attrs));
  TF_ASSIGN_OR_RETURN(std::vector<DType> out_types, def->output_types(attrs));
  if (in_types.size() != inputs.size())
    return Status(Error::invalid_argument, op + " takes " + std::to_string(in_types.size()) +
                                               " inputs, got " + std::to_string(inputs.size()));
  const std::string name = options.node_name.empty() ? "test_" + op : options.node_name;
  KernelInit init{name, attrs, in_types, out_types};
  TF_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, def->make_kernel(init));
  std::vector<Tensor> outputs(out_types.size());
  KernelContext ctx(inputs.data(), static_cast<int>(inputs.size()), outputs.data(),
                    static_cast<int>(outputs.size()), options.resources, options.step_id);
  TF_RETURN_IF_ERROR(kernel->compute(ctx));
  return outputs;
}

// The single output of run_op, or the error.
inline Expected<Tensor> run_op1(const std::string& op, std::vector<Tensor> inputs,
                                AttrMap attrs = {}, const RunOptions& options = RunOptions()) {
  TF_ASSIGN_OR_RETURN(std::vector<Tensor> out,
                      run_op(op, std::move(inputs), std::move(attrs), options));
  if (out.empty()) return Status(Error::internal, op + " has no output");
  return out[0];
}

}  // namespace tagflow::ops::testing
