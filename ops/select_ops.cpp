// Select and SelectV2: pick elements from t where the condition is true
// and from e where it is false.
//
// Select (TensorFlow v1) takes a condition of t's shape, a scalar, or a
// vector that picks whole rows along t's first dimension; t and e must have
// one shape. SelectV2 broadcasts all three operands NumPy-style.
#include "ops/cwise_kernel.hpp"
#include "ops/math_ops.hpp"
#include "ops/shape_fns.hpp"

#include <algorithm>
#include <string>
#include <type_traits>

namespace tagflow::ops {

namespace {

template <class T>
Status check_select_dtypes(const char* op, const Tensor& cond, const Tensor& t, const Tensor& e) {
  if (!holds<bool>(cond))
    return Status(Error::invalid_argument,
                  std::string(op) + ": condition must be bool, got " + dtype_name(cond.dtype()));
  if (!holds<T>(t) || !holds<T>(e)) {
    const Tensor* inputs[] = {&t, &e};
    return input_dtype_error(op, dtype_v<T>, inputs, 2);
  }
  return ok_status();
}

// out = cond ? t : e over n elements of equal shape. Numbers go through
// Eigen; strings are copied one by one.
template <class T>
void select_same_shape(const bool* c, const T* t, const T* e, T* out, int64_t n) {
  if constexpr (std::is_arithmetic_v<T>) {
    if (n > 0)
      ArrayMap<T>(out, n) = ConstArrayMap<bool>(c, n).select(ConstArrayMap<T>(t, n), ConstArrayMap<T>(e, n));
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? t[i] : e[i];
  }
}

template <class T>
class SelectKernel final : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& cond = ctx.input(0);
    const Tensor& t = ctx.input(1);
    const Tensor& e = ctx.input(2);
    TF_RETURN_IF_ERROR(check_select_dtypes<T>("Select", cond, t, e));
    if (t.shape() != e.shape())
      return Status(Error::invalid_argument, "Select: t and e must have the same shape, got " +
                                                 t.shape().to_string() + " and " +
                                                 e.shape().to_string());
    if (cond.rank() == 0) {
      const Tensor& chosen = cond.scalar_value<bool>() ? t : e;
      ctx.set_output(0, chosen.with_dtype(dtype_v<T>));  // a ref input yields a value
      return ok_status();
    }
    const bool* c = cond.data<bool>();
    const T* tp = t.data<T>();
    const T* ep = e.data<T>();
    const Shape shape = t.shape();
    if (cond.shape() == shape) {
      Tensor out = reuse_or_allocate<T>(ctx, {1, 2}, shape);
      select_same_shape(c, tp, ep, out.mutable_data<T>(), shape.num_elements());
      ctx.set_output(0, std::move(out));
      return ok_status();
    }
    if (cond.rank() != 1 || shape.rank() < 1 || cond.dim(0) != shape.dim(0))
      return Status(Error::invalid_argument,
                    "Select: condition must be a scalar, have t's shape or be a vector as long "
                    "as t's first dimension; condition is " + cond.shape().to_string() +
                        ", t is " + shape.to_string());
    // A vector condition picks whole rows of t or e.
    Tensor out(dtype_v<T>, shape);
    T* op = out.mutable_data<T>();
    const int64_t rows = shape.dim(0);
    const int64_t row_size = rows == 0 ? 0 : shape.num_elements() / rows;
    for (int64_t i = 0; i < rows; ++i) {
      const T* from = (c[i] ? tp : ep) + i * row_size;
      std::copy(from, from + row_size, op + i * row_size);
    }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }
};

template <class T>
class SelectV2Kernel final : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& cond = ctx.input(0);
    const Tensor& t = ctx.input(1);
    const Tensor& e = ctx.input(2);
    TF_RETURN_IF_ERROR(check_select_dtypes<T>("SelectV2", cond, t, e));
    const bool* c = cond.data<bool>();
    const T* tp = t.data<T>();
    const T* ep = e.data<T>();
    if (cond.shape() == t.shape() && t.shape() == e.shape()) {
      const Shape shape = t.shape();
      Tensor out = reuse_or_allocate<T>(ctx, {1, 2}, shape);
      select_same_shape(c, tp, ep, out.mutable_data<T>(), shape.num_elements());
      ctx.set_output(0, std::move(out));
      return ok_status();
    }
    Expected<Broadcast> b = Broadcast::make(cond.shape(), t.shape(), e.shape());
    if (!b.ok()) return b.status().with_prefix("SelectV2: ");
    Tensor out(dtype_v<T>, b->output_shape());
    T* op = out.mutable_data<T>();
    const int last = b->rank() - 1;
    const int64_t len = b->dim(last);
    const int64_t sc = b->stride(0, last);
    const int64_t st = b->stride(1, last);
    const int64_t se = b->stride(2, last);
    b->for_each_row([&](int64_t o, const int64_t* in) {
      for (int64_t j = 0; j < len; ++j)
        op[o + j] = c[in[0] + j * sc] ? tp[in[1] + j * st] : ep[in[2] + j * se];
    });
    ctx.set_output(0, std::move(out));
    return ok_status();
  }
};

// TensorFlow's Select takes any type; tagflow's kernels cover every number,
// bools and strings (a TF 2 saver picks a file name with a string Select).
using SelectTypes = decltype(NumberTypes{} + TypeList<bool, std::string>{});

// The kernel for T, the dtype of input 1 (t).
template <template <class> class Kern>
KernelFactory select_factory(const char* op) {
  return [op](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    DType t = init.input_types.size() < 2 ? DType::invalid : base_dtype(init.input_types[1]);
    std::unique_ptr<Kernel> k;
    dispatch_among(SelectTypes{}, t, [&](auto tag) {
      k = std::make_unique<Kern<typename decltype(tag)::type>>();
    });
    if (!k) return no_kernel_error(op, t);
    return k;
  };
}


}  // namespace

void register_select_ops(OpRegistry& r) {
  register_builtin(r, OpDef("Select").shape_fn(shape_fns::select)
                          .input("condition: bool")
                          .input("t: T")
                          .input("e: T")
                          .output("output: T")
                          .type_attr("T", SelectTypes::dtypes())
                          .kernel(select_factory<SelectKernel>("Select")));
  register_builtin(r, OpDef("SelectV2").shape_fn(shape_fns::select)
                          .input("condition: bool")
                          .input("t: T")
                          .input("e: T")
                          .output("output: T")
                          .type_attr("T", SelectTypes::dtypes())
                          .kernel(select_factory<SelectV2Kernel>("SelectV2")));
}

}  // namespace tagflow::ops
