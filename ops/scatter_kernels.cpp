// Kernels of the ops that change rows of a variable in place: ScatterAdd,
// ScatterSub, ScatterUpdate on ref variables (they output the ref they were
// given) and ResourceScatterAdd, ResourceScatterSub, ResourceScatterUpdate
// on resource variables. Row indices[i] of the variable receives updates[i]
// (added, subtracted or written); updates has shape indices.shape +
// params.shape[1:], or is a scalar applied to every named row. Repeated
// indices add up; for ScatterUpdate the last one wins, as in TensorFlow's
// serial CPU kernel. The whole update happens under the variable's lock
// (ResourceManager::modify_variable), into its buffer when no reader holds
// it, else into a copy; a bad index or shape leaves the variable unchanged.
#include <string>
#include <type_traits>

#include "ops/cwise_kernel.hpp"
#include "ops/index_args.hpp"
#include "ops/resource.hpp"
#include "ops/state_kernels.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops::state_kernels {

namespace {

enum class ScatterMode { add, sub, update };

template <class T>
T combine(T a, T b, ScatterMode mode) {
  if constexpr (is_signed_int_v<T>) {  // wraps instead of overflowing
    using U = wrapping_t<T>;
    return static_cast<T>(mode == ScatterMode::add ? U(a) + U(b) : U(a) - U(b));
  } else {
    return static_cast<T>(mode == ScatterMode::add ? a + b : a - b);
  }
}

// updates.shape must be indices.shape + params.shape[1:], or [].
Status check_shapes(const std::string& op, const Tensor& params, const Tensor& indices,
                    const Tensor& updates) {
  if (params.rank() < 1)
    return Status(Error::invalid_argument,
                  op + " needs a variable of rank >= 1, got shape " + params.shape().to_string());
  if (updates.dtype() != params.dtype())
    return Status(Error::invalid_argument, op + " updates are " + dtype_name(updates.dtype()) +
                                               ", the variable holds " +
                                               dtype_name(params.dtype()));
  if (updates.rank() == 0) return ok_status();
  std::vector<int64_t> expected = indices.shape().dims();
  for (int i = 1; i < params.rank(); ++i) expected.push_back(params.dim(i));
  if (updates.shape().dims() == expected) return ok_status();
  return Status(Error::invalid_argument,
                op + " updates must have shape indices.shape + params.shape[1:] = " +
                    ints_to_string(expected) + " or be a scalar, got " +
                    updates.shape().to_string() + " (indices " + indices.shape().to_string() +
                    ", params " + params.shape().to_string() + ")");
}

Status scatter_into(const std::string& op, ScatterMode mode, Tensor& params,
                    const Tensor& indices, const std::vector<int64_t>& index,
                    const Tensor& updates) {
  TF_RETURN_IF_ERROR(check_shapes(op, params, indices, updates));
  const int64_t limit = params.dim(0);
  for (size_t i = 0; i < index.size(); ++i)
    if (index[i] < 0 || index[i] >= limit)
      return Status(Error::invalid_argument,
                    op + " indices" + element_index(indices.shape(), static_cast<int64_t>(i)) +
                        " = " + std::to_string(index[i]) + " is not in [0, " +
                        std::to_string(limit) + ")");
  if (mode != ScatterMode::update && (!dtype_is_numeric(params.dtype()) ||
                                      params.dtype() == DType::boolean))
    return Status(Error::unimplemented, op + " has no kernel for dtype " +
                                            dtype_name(params.dtype()));
  if (!params.is_unique()) {  // readers hold the value: change a copy
    TF_ASSIGN_OR_RETURN(Tensor copy, allocate_uninitialized(params.dtype(), params.shape()));
    copy_elements(params, 0, copy, 0, params.num_elements());
    params = std::move(copy);
  }
  const int64_t row = limit == 0 ? 0 : params.num_elements() / limit;
  const bool scalar = updates.rank() == 0;
  if (mode == ScatterMode::update) {
    for (size_t i = 0; i < index.size(); ++i) {
      if (scalar)
        fill_elements(updates, 0, params, index[i] * row, row);
      else
        copy_elements(updates, static_cast<int64_t>(i) * row, params, index[i] * row, row);
    }
    return ok_status();
  }
  bool computed = false;
  dispatch_pod(params.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      computed = true;
      const T* src = updates.data<T>();
      T* dst = params.mutable_data<T>();
      for (size_t i = 0; i < index.size(); ++i) {
        T* to = dst + index[i] * row;
        for (int64_t j = 0; j < row; ++j)
          to[j] = combine(to[j], scalar ? src[0] : src[static_cast<int64_t>(i) * row + j], mode);
      }
    }
  });
  if (!computed)
    return Status(Error::unimplemented, op + " has no kernel for dtype " +
                                            dtype_name(params.dtype()));
  return ok_status();
}

// Input 0 names the variable (a ref or a resource handle); a ref op outputs
// it again.
Status scatter(KernelContext& ctx, const char* op, ScatterMode mode, int num_outputs) {
  TF_ASSIGN_OR_RETURN(ResourceManager * rm, session_state(ctx, 3, num_outputs));
  TF_ASSIGN_OR_RETURN(std::string name, handle_name(ctx.input(0), num_outputs ? "ref" : "resource"));
  const Tensor& indices = ctx.input(1);
  const Tensor& updates = ctx.input(2);
  if (!updates.valid())
    return Status(Error::invalid_argument, std::string(op) + " updates are missing");
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> index,
                      read_int_values(indices, (std::string(op) + " indices").c_str()));
  TF_RETURN_IF_ERROR(rm->modify_variable(name, [&](Tensor& params) {
    return scatter_into(op, mode, params, indices, index, updates);
  }));
  if (num_outputs == 1) ctx.set_output(0, ctx.input(0));
  return ok_status();
}

}  // namespace

Status scatter_add(KernelContext& ctx) { return scatter(ctx, "ScatterAdd", ScatterMode::add, 1); }
Status scatter_sub(KernelContext& ctx) { return scatter(ctx, "ScatterSub", ScatterMode::sub, 1); }
Status scatter_update(KernelContext& ctx) {
  return scatter(ctx, "ScatterUpdate", ScatterMode::update, 1);
}
Status resource_scatter_add(KernelContext& ctx) {
  return scatter(ctx, "ResourceScatterAdd", ScatterMode::add, 0);
}
Status resource_scatter_sub(KernelContext& ctx) {
  return scatter(ctx, "ResourceScatterSub", ScatterMode::sub, 0);
}
Status resource_scatter_update(KernelContext& ctx) {
  return scatter(ctx, "ResourceScatterUpdate", ScatterMode::update, 0);
}

}  // namespace tagflow::ops::state_kernels
