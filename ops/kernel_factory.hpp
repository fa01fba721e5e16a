// What defining an op's kernel takes beyond op_def.hpp: a factory for a
// kernel class that reads its node's attrs once, and the dtypes TensorFlow
// allows for shape, axis and perm arguments. Kernels are immutable after
// creation; compute() is const and reentrant.
#pragma once

#include <memory>
#include <vector>

#include "ops/op_def.hpp"

namespace tagflow::ops {

// The dtypes TensorFlow allows for shape, axis and perm arguments.
inline const std::vector<DType>& index_dtypes() {
  static const std::vector<DType> kTypes = {DType::int32, DType::int64};
  return kTypes;
}

// A factory for a kernel class K with `Status init(const KernelInit&)`,
// which reads the node's attrs once.
template <class K>
KernelFactory make_kernel_factory() {
  return [](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    auto k = std::make_unique<K>();
    TF_RETURN_IF_ERROR(k->init(init));
    return std::unique_ptr<Kernel>(std::move(k));
  };
}

}  // namespace tagflow::ops
