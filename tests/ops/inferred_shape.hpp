// The static output shape an op's shape function gives (OpDef::shape_fn),
// for the shape-function tests of kernel test files.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "ops/op_def.hpp"

namespace tagflow::ops::testing {

inline OutputInfo known_input(DType dtype, PartialShape shape, std::optional<Tensor> value = std::nullopt) {
  OutputInfo info;
  info.dtype = dtype;
  info.shape = std::move(shape);
  info.value = std::move(value);
  return info;
}

// The op's static output shape, or its error.
inline std::string inferred(const std::string& op, std::vector<OutputInfo> inputs, AttrMap attrs = {}) {
  const OpDef* def = OpRegistry::global().find(op);
  BOOST_TEST_REQUIRE(def != nullptr);
  BOOST_TEST_REQUIRE(def->shape_function() != nullptr);
  if (attrs.count("T") == 0 && def->find_attr("T") != nullptr) attrs["T"] = inputs[0].dtype;
  BOOST_TEST_REQUIRE(def->check_and_complete_attrs(attrs).ok());
  std::vector<const OutputInfo*> in;
  for (const OutputInfo& i : inputs) in.push_back(&i);
  std::vector<OutputInfo> out(def->outputs().size());
  InferenceContext c("n", op, attrs, in, &out, nullptr);
  Status s = def->shape_function()(c);
  return s.ok() ? out[0].shape.to_string() : s.to_string();
}

}  // namespace tagflow::ops::testing
