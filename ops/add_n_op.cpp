// AddN: the elementwise sum of N >= 1 tensors of one shape (no
// broadcasting), as TensorFlow's math_ops.cc declares it. Gradient graphs
// use it to add up the contributions a tensor receives from its consumers.
// Integer sums wrap, as in the other math kernels (ops/cwise_kernel.hpp).
#include <vector>

#include "ops/cwise_kernel.hpp"
#include "ops/math_ops.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_copy.hpp"
#include "ops/variant.hpp"

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

// a + b for two tensors of one dtype and shape; TensorLists elementwise
// (an unset element is zero), lists of lists too.
Expected<Tensor> add_two(const Tensor& a, const Tensor& b, int depth) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape())
    return Status(Error::invalid_argument, "AddN inputs differ: " + dtype_name(a.dtype()) + " " +
                                               a.shape().to_string() + " and " + dtype_name(b.dtype()) + " " +
                                               b.shape().to_string());
  if (base_dtype(a.dtype()) == DType::variant) {
    if (depth > 64) return Status(Error::invalid_argument, "AddN: lists nested over 64 deep");
    TF_ASSIGN_OR_RETURN(const TensorList* x, list_of(a, "inputs"));
    TF_ASSIGN_OR_RETURN(const TensorList* y, list_of(b, "inputs"));
    if (x->elements.size() != y->elements.size() || x->element_dtype != y->element_dtype)
      return Status(Error::invalid_argument,
                    "AddN of lists needs lists of one length and element dtype: " + x->debug_string() + " and " +
                        y->debug_string());
    auto sum = std::make_shared<TensorList>(x->element_dtype, x->element_shape, x->max_num_elements);
    sum->elements.resize(x->elements.size());
    for (size_t i = 0; i < x->elements.size(); ++i) {
      const Tensor& u = x->elements[i];
      const Tensor& v = y->elements[i];
      if (!u.valid()) sum->elements[i] = v;
      else if (!v.valid()) sum->elements[i] = u;
      else {
        TF_ASSIGN_OR_RETURN(sum->elements[i], add_two(u, v, depth + 1));
      }
    }
    return variant_scalar(std::move(sum));
  }
  Tensor out;
  Status st = ok_status();
  const bool handled = dispatch_among(NumberTypes{}, base_dtype(a.dtype()), [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto o = allocate_tensor(a.dtype(), a.shape());
    if (!o.ok()) {
      st = o.status();
      return;
    }
    out = std::move(o).value();
    const T* x = a.data<T>();
    const T* y = b.data<T>();
    T* z = out.mutable_data<T>();
    for (int64_t i = 0; i < a.num_elements(); ++i) z[i] = x[i] + y[i];
  });
  if (!handled) return Status(Error::invalid_argument, "AddN of list elements of dtype " + dtype_name(a.dtype()));
  if (!st.ok()) return st;
  return out;
}

// AddN of TensorLists: the gradient of a list read in several places.
class ListAddNKernel final : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const int n = ctx.num_inputs();
    if (n < 1) return Status(Error::invalid_argument, "AddN needs at least one input");
    Tensor sum = ctx.input(0);
    for (int i = 1; i < n; ++i) {
      TF_ASSIGN_OR_RETURN(sum, add_two(sum, ctx.input(i), 0));
    }
    ctx.set_output(0, std::move(sum));
    return ok_status();
  }
};

}  // namespace

namespace {
std::vector<DType> with_variant(std::vector<DType> types) {
  types.push_back(DType::variant);
  return types;
}
}  // namespace

void register_add_n_op(OpRegistry& r) {
  register_builtin(r, OpDef("AddN").shape_fn(shape_fns::add_n)
                          .input("inputs: N * T")
                          .output("sum: T")
                          .attr("N", "int", std::nullopt, 1)
                          .type_attr("T", with_variant(NumberTypes::dtypes()))
                          .kernel([](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
                            DType t = init.input_types.empty() ? DType::invalid
                                                               : base_dtype(init.input_types[0]);
                            if (t == DType::variant) return std::unique_ptr<Kernel>(new ListAddNKernel());
                            std::unique_ptr<Kernel> k;
                            dispatch_among(NumberTypes{}, t, [&](auto tag) {
                              k = std::make_unique<AddNKernel<typename decltype(tag)::type>>();
                            });
                            if (!k) return no_kernel_error("AddN", t);
                            return k;
                          }));
}

}  // namespace tagflow::ops
