// Unique(x) -> (y, idx): the distinct elements of the vector x in the order
// they first occur, and for each element of x the position of its value in
// y, so that x[i] == y[idx[i]]. Values compare with ==, as in TensorFlow:
// 0.0 and -0.0 are one value, and every NaN is a value of its own. idx has
// the out_idx dtype (int32 or int64); a vector too long for an int32 idx is
// an error. Signature as in TensorFlow's core/ops/array_ops.cc; the kernel
// is stateless.
#include <limits>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "ops/array_ops.hpp"
#include "ops/cwise_kernel.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

// The first-occurrence position in y of every element of x (`n` of them at
// `xp`); fills `firsts` with the position in x of each element of y.
template <class T>
std::vector<int64_t> unique_positions(const T* xp, int64_t n, std::vector<int64_t>& firsts) {
  std::unordered_map<T, int64_t> seen;
  seen.reserve(static_cast<size_t>(n));
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    auto [it, added] = seen.emplace(xp[i], static_cast<int64_t>(firsts.size()));
    if (added) firsts.push_back(i);
    idx[static_cast<size_t>(i)] = it->second;
  }
  return idx;
}

template <class Out>
Tensor index_tensor(const std::vector<int64_t>& idx) {
  Tensor t = Tensor::uninitialized(dtype_v<Out>, Shape{static_cast<int64_t>(idx.size())});
  Out* p = t.mutable_data<Out>();
  for (size_t i = 0; i < idx.size(); ++i) p[i] = static_cast<Out>(idx[i]);
  return t;
}

class UniqueKernel final : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(out_idx_, init.attr<DType>("out_idx"));
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    if (!x.valid() || x.rank() != 1)
      return Status(Error::invalid_argument,
                    "Unique expects a vector, got " +
                        (x.valid() ? "shape " + x.shape().to_string() : std::string("no tensor")));
    const int64_t n = x.num_elements();
    if (out_idx_ == DType::int32 && n > std::numeric_limits<int32_t>::max())
      return Status(Error::invalid_argument, "Unique input of " + std::to_string(n) +
                                                 " elements is too long for an int32 idx");
    std::vector<int64_t> firsts;
    std::vector<int64_t> idx;
    const DType t = base_dtype(x.dtype());
    bool known = false;
    auto run = [&](auto tag) {
      using T = typename decltype(tag)::type;
      known = true;
      idx = unique_positions<T>(x.data<T>(), n, firsts);
    };
    if (t == DType::string) {
      run(type_tag<std::string>{});
    } else {
      dispatch_among<float, double, int32_t, int64_t, bool, int8_t, uint8_t, int16_t, uint16_t,
                     uint32_t, uint64_t>(t, run);
    }
    if (!known)
      return Status(Error::unimplemented, "Unique has no kernel for dtype " + dtype_name(t));
    TF_ASSIGN_OR_RETURN(Tensor y, allocate_uninitialized(
                                      t, Shape{static_cast<int64_t>(firsts.size())}));
    for (size_t j = 0; j < firsts.size(); ++j)
      copy_elements(x, firsts[j], y, static_cast<int64_t>(j), 1);
    ctx.set_output(0, std::move(y));
    ctx.set_output(1, out_idx_ == DType::int32 ? index_tensor<int32_t>(idx)
                                               : index_tensor<int64_t>(idx));
    return ok_status();
  }

 private:
  DType out_idx_ = DType::int32;
};

}  // namespace

void register_unique_op(OpRegistry& r) {
  register_builtin(r, OpDef("Unique").shape_fn(shape_fns::unique)
                          .input("x: T")
                          .output("y: T")
                          .output("idx: out_idx")
                          .type_attr("T")
                          .type_attr("out_idx", index_dtypes(), DType::int32)
                          .kernel(make_kernel_factory<UniqueKernel>()));
}

}  // namespace tagflow::ops
