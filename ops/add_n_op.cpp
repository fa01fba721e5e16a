// AddN: the elementwise sum of N >= 1 tensors of one shape (no
// broadcasting), as TensorFlow's math_ops.cc declares it. Gradient graphs
// use it to add up the contributions a tensor receives from its consumers.
// Integer sums wrap, as in the other math kernels (ops/cwise_kernel.hpp).
#include <vector>

#include "ops/cwise_kernel.hpp"
#include "ops/math_ops.hpp"

namespace tagflow::ops {

namespace {

template <class T>
class AddNKernel final : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const int n = ctx.num_inputs();
    if (n < 1) return Status(Error::invalid_argument, "AddN needs at least one input");
    const Tensor& first = ctx.input(0);
    for (int i = 0; i < n; ++i) {
      const Tensor& x = ctx.input(i);
      if (!holds<T>(x))
        return Status(Error::invalid_argument,
                      "AddN expects " + dtype_name(dtype_v<T>) + " inputs, got " +
                          (x.valid() ? dtype_name(x.dtype()) : std::string("no tensor")) +
                          " for input " + std::to_string(i));
      if (x.shape() != first.shape())
        return Status(Error::invalid_argument,
                      "AddN inputs must have the same shape: input 0 is " +
                          first.shape().to_string() + " but input " + std::to_string(i) +
                          " is " + x.shape().to_string());
    }
    if (n == 1) {
      ctx.set_output(0, first.with_dtype(dtype_v<T>));
      return ok_status();
    }
    using C = wrapping_t<T>;  // integer sums wrap
    std::vector<const C*> in(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i)
      in[static_cast<size_t>(i)] = reinterpret_cast<const C*>(elements<T>(ctx.input(i)));
    const Shape shape = first.shape();
    const int64_t len = shape.num_elements();
    // Writing into input 0's buffer is safe: each element is read before
    // it is written.
    Tensor out = reuse_or_allocate<T>(ctx, {0}, shape);
    if (len > 0) {
      ArrayMap<C> acc(reinterpret_cast<C*>(out.raw_mutable_data()), len);
      acc = ConstArrayMap<C>(in[0], len) + ConstArrayMap<C>(in[1], len);
      for (size_t i = 2; i < in.size(); ++i) acc += ConstArrayMap<C>(in[i], len);
    }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }
};

}  // namespace

void register_add_n_op(OpRegistry& r) {
  register_builtin(r, OpDef("AddN")
                          .input("inputs: N * T")
                          .output("sum: T")
                          .attr("N", "int", std::nullopt, 1)
                          .type_attr("T", real_types())
                          .kernel([](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
                            DType t = init.input_types.empty() ? DType::invalid
                                                               : base_dtype(init.input_types[0]);
                            std::unique_ptr<Kernel> k;
                            dispatch_among<float, double, int32_t, int64_t>(t, [&](auto tag) {
                              k = std::make_unique<AddNKernel<typename decltype(tag)::type>>();
                            });
                            if (!k) return no_kernel_error("AddN", t);
                            return k;
                          }));
}

}  // namespace tagflow::ops
