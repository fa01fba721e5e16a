// Helpers for kernel tests: run one op (op_test_util.hpp) and get its single
// output as a printed string, "float32[2] [1,2]", or its error as
// "error: invalid_argument: ...", so that tests compare whole values.
#pragma once

#include <string>
#include <vector>

#include "op_test_util.hpp"

namespace tagflow::ops::testing {

inline std::string result(const std::string& op, std::vector<Tensor> inputs, AttrMap attrs = {}) {
  Expected<Tensor> out = run_op1(op, std::move(inputs), std::move(attrs));
  if (!out.ok()) return "error: " + out.status().to_string();
  return out->debug_string();
}

// The error message of running op, or "" if it succeeded.
inline std::string error_of(const std::string& op, std::vector<Tensor> inputs, AttrMap attrs = {}) {
  Expected<Tensor> out = run_op1(op, std::move(inputs), std::move(attrs));
  return out.ok() ? std::string() : out.status().to_string();
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

template <class T>
Tensor tensor(const Shape& shape, const std::vector<T>& values) {
  return Tensor::from_vector<T>(shape, values);
}

// Element i of a float or double tensor.
inline double at(const Tensor& t, int64_t i) { return element_as_double(t, i); }

}  // namespace tagflow::ops::testing
