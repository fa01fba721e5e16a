// The neural-network ops: Relu and ReluGrad, Relu6 and Relu6Grad, Elu and
// EluGrad, Softsign and
// SoftsignGrad, Softmax and LogSoftmax (over
// the last axis), BiasAdd (NHWC: the bias runs along the last dimension;
// NCHW: along dimension 1) and BiasAddGrad; register_nn_ops also registers
// the softmax cross-entropy losses (softmax_xent_ops.cpp), the k-best
// selections TopKV2 and NearestNeighbors (topk_ops.cpp) and the parts
// declared in nn_ops.hpp (convolutions, pooling, ...). Signatures follow
// TensorFlow's core/ops/nn_ops.cc.
#include <Eigen/Core>

#include "ops/cwise_kernel.hpp"
#include "ops/math_ops.hpp"
#include "ops/nn_ops.hpp"
#include "ops/shape_fns.hpp"

namespace tagflow::ops {

namespace {

template <class T>
struct ReluOp : CwiseOp {
  using In = T;
  using Out = T;
  template <class X>
  static auto eval(const X& x) { return x.max(T(0)); }
};

// gradients where features > 0, else 0 (a NaN gradient stays NaN, as
// TensorFlow multiplies by the mask).
template <class T>
struct ReluGradOp : CwiseGradOp<T> {
  static constexpr bool kSameShape = true;
  template <class G, class F>
  static auto eval(const G& gradients, const F& features) {
    return gradients * (features > T(0)).template cast<T>();
  }
};

// min(max(x, 0), 6).
template <class T>
struct Relu6Op : CwiseOp {
  using In = T;
  using Out = T;
  template <class X>
  static auto eval(const X& x) { return x.max(T(0)).min(T(6)); }
};

// gradients where 0 < features < 6, else 0.
template <class T>
struct Relu6GradOp : CwiseGradOp<T> {
  static constexpr bool kSameShape = true;
  template <class G, class F>
  static auto eval(const G& gradients, const F& features) {
    return gradients * ((features > T(0)) && (features < T(6))).template cast<T>();
  }
};

// exp(x) - 1 where x < 0, else x.
template <class T>
struct EluOp : SameTypeOp<T> {
  template <class X>
  static auto eval(const X& x) { return (x < T(0)).select(x.exp() - T(1), x); }
};

// Through the output y of Elu: gradients * (y + 1) where y < 0, else
// gradients (y + 1 = exp(x) there).
template <class T>
struct EluGradOp : CwiseGradOp<T> {
  static constexpr bool kSameShape = true;
  template <class G, class Y>
  static auto eval(const G& gradients, const Y& outputs) {
    return (outputs < T(0)).select(gradients * (outputs + T(1)), gradients);
  }
};

// x / (1 + |x|).
template <class T>
struct SoftsignOp : SameTypeOp<T> {
  template <class X>
  static auto eval(const X& x) { return x / (x.abs() + T(1)); }
};

// gradients / (1 + |features|)^2.
template <class T>
struct SoftsignGradOp : CwiseGradOp<T> {
  static constexpr bool kSameShape = true;
  template <class G, class F>
  static auto eval(const G& gradients, const F& features) {
    return gradients / (features.abs() + T(1)).square();
  }
};

// Softmax, or LogSoftmax when kLog: x - max - log(sum(exp(x - max))).
template <class T, bool kLog>
class SoftmaxKernel final : public Kernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const char* op = kLog ? "LogSoftmax" : "Softmax";
    const Tensor& logits = ctx.input(0);
    if (!holds<T>(logits)) {
      const Tensor* inputs[] = {&logits};
      return input_dtype_error(op, dtype_v<T>, inputs, 1);
    }
    if (logits.rank() < 1)
      return Status(Error::invalid_argument, std::string(op) +
                                                 ": logits must have rank >= 1, got shape " +
                                                 logits.shape().to_string());
    const int64_t cols = logits.dim(logits.rank() - 1);
    const int64_t n = logits.num_elements();
    const T* xp = logits.data<T>();
    const Shape shape = logits.shape();
    Tensor out = reuse_or_allocate<T>(ctx, {0}, shape);
    if (n > 0) {
      using Rows = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      Eigen::Map<const Rows> x(xp, n / cols, cols);
      Eigen::Map<Rows> y(out.mutable_data<T>(), n / cols, cols);
      // Shifting each row by its maximum keeps exp() from overflowing.
      const Eigen::Array<T, Eigen::Dynamic, 1> row_max = x.rowwise().maxCoeff();
      if constexpr (kLog) {
        y = x.colwise() - row_max;
        const Eigen::Array<T, Eigen::Dynamic, 1> log_sum = y.exp().rowwise().sum().log();
        y.colwise() -= log_sum;
      } else {
        y = (x.colwise() - row_max).exp();
        const Eigen::Array<T, Eigen::Dynamic, 1> row_sum = y.rowwise().sum();
        y.colwise() /= row_sum;
      }
    }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }
};

// y = v + bias for v seen as [outer, channels, inner] (inner is 1 for
// channels last): the bias repeats over outer and inner. y may be v.
template <class T>
void add_bias(const T* vp, const T* bp, T* yp, int64_t outer, int64_t channels, int64_t inner) {
  using C = wrapping_t<T>;  // integer sums wrap
  using Rows = Eigen::Array<C, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const auto b = Eigen::Map<const Eigen::Array<C, 1, Eigen::Dynamic>>(reinterpret_cast<const C*>(bp), channels);
  const C* v = reinterpret_cast<const C*>(vp);
  C* y = reinterpret_cast<C*>(yp);
  if (inner == 1) {  // rows of channels: a plain loop the compiler vectorises
    // (Eigen's rowwise broadcast of a short row ran ~5x slower)
    const C* bc = reinterpret_cast<const C*>(bp);
    for (int64_t o = 0; o < outer; ++o) {
      const C* vr = v + o * channels;
      C* yr = y + o * channels;
      for (int64_t c = 0; c < channels; ++c) yr[c] = vr[c] + bc[c];
    }
  } else {  // per outer index a channels x inner slab
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t offset = o * channels * inner;
      Eigen::Map<Rows>(y + offset, channels, inner) =
          Eigen::Map<const Rows>(v + offset, channels, inner).colwise() + b.transpose();
    }
  }
}

template <class T>
class BiasAddKernel final : public Kernel {
 public:
  BiasAddKernel(const char* op, bool nchw) : op_(op), nchw_(nchw) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& value = ctx.input(0);
    const Tensor& bias = ctx.input(1);
    if (!holds<T>(value) || !holds<T>(bias)) {
      const Tensor* inputs[] = {&value, &bias};
      return input_dtype_error(op_, dtype_v<T>, inputs, 2);
    }
    if (value.rank() < 2)
      return Status(Error::invalid_argument, std::string(op_) +
                                                 ": value must have rank >= 2, got shape " +
                                                 value.shape().to_string());
    const int channel_dim = nchw_ ? 1 : value.rank() - 1;
    const int64_t channels = value.dim(channel_dim);
    TF_RETURN_IF_ERROR(check_bias(op_, value.shape(), channel_dim, bias));
    // value seen as [outer, channels, inner]; the bias repeats over outer
    // and inner (inner is 1 for NHWC).
    int64_t inner = 1;
    for (int d = channel_dim + 1; d < value.rank(); ++d) inner *= value.dim(d);
    const int64_t n = value.num_elements();
    const T* vp = value.data<T>();
    const T* bp = bias.data<T>();
    const Shape shape = value.shape();
    Tensor out = reuse_or_allocate<T>(ctx, {0}, shape);
    T* op = out.mutable_data<T>();
    if (n > 0) add_bias(vp, bp, op, n / (channels * inner), channels, inner);
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  const char* op_;
  bool nchw_;
};

}  // namespace

void apply_bias_relu(float* y, const Shape& shape, int channel_dim, const float* bias, bool relu) {
  const int64_t n = shape.num_elements();
  if (n == 0) return;
  int64_t inner = 1;
  for (int d = channel_dim + 1; d < shape.rank(); ++d) inner *= shape.dim(d);
  const int64_t channels = shape.dim(channel_dim);
  if (bias != nullptr) add_bias(y, bias, y, n / (channels * inner), channels, inner);
  if (relu)  // as UnaryKernel<ReluOp> evaluates it
    for_element_ranges<float>(n, [&](int64_t b, int64_t len) {
      ArrayMap<float>(y + b, len) = ReluOp<float>::eval(ConstArrayMap<float>(y + b, len));
    });
}

Status check_bias(const char* op, const Shape& shape, int channel_dim, const Tensor& bias) {
  const int64_t channels = shape.dim(channel_dim);
  if (bias.rank() != 1 || bias.dim(0) != channels)
    return Status(Error::invalid_argument,
                  std::string(op) + ": bias must be a vector of " + std::to_string(channels) + " elements (dimension " +
                      std::to_string(channel_dim) + " of value " + shape.to_string() + "), got shape " +
                      bias.shape().to_string());
  return ok_status();
}

namespace {

// The gradient of BiasAdd's bias: out_backprop summed over every dimension
// but the channel one.
template <class T>
class BiasAddGradKernel final : public Kernel {
 public:
  BiasAddGradKernel(const char* op, bool nchw) : op_(op), nchw_(nchw) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& dy = ctx.input(0);
    if (!holds<T>(dy)) {
      const Tensor* inputs[] = {&dy};
      return input_dtype_error(op_, dtype_v<T>, inputs, 1);
    }
    if (dy.rank() < 2)
      return Status(Error::invalid_argument, std::string(op_) +
                                                 ": out_backprop must have rank >= 2, got shape " +
                                                 dy.shape().to_string());
    const int channel_dim = nchw_ ? 1 : dy.rank() - 1;
    const int64_t channels = dy.dim(channel_dim);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < dy.rank(); ++d) {
      if (d < channel_dim) outer *= dy.dim(d);
      if (d > channel_dim) inner *= dy.dim(d);
    }
    Tensor out(dtype_v<T>, Shape{channels});  // zeros: the sum of nothing
    if (dy.num_elements() > 0) {
      using C = wrapping_t<T>;  // integer sums wrap
      using Rows = Eigen::Array<C, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      const C* v = reinterpret_cast<const C*>(dy.data<T>());
      Eigen::Map<Eigen::Array<C, 1, Eigen::Dynamic>> acc(reinterpret_cast<C*>(out.mutable_data<T>()),
                                                         channels);
      if (inner == 1) {  // rows of channels
        acc = Eigen::Map<const Rows>(v, outer, channels).colwise().sum();
      } else {  // per outer index a channels x inner slab
        for (int64_t o = 0; o < outer; ++o)
          acc += Eigen::Map<const Rows>(v + o * channels * inner, channels, inner)
                     .rowwise()
                     .sum()
                     .transpose();
      }
    }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  const char* op_;
  bool nchw_;
};

template <template <class> class Kern, class... Args>
Expected<std::unique_ptr<Kernel>> make_typed(const char* op, DType t, Args... args) {
  std::unique_ptr<Kernel> k;
  dispatch_among<float, double, int32_t, int64_t>(base_dtype(t), [&](auto tag) {
    k = std::make_unique<Kern<typename decltype(tag)::type>>(args...);
  });
  if (!k) return no_kernel_error(op, t);
  return k;
}

// BiasAdd and BiasAddGrad: a kernel Kern<T>(op, nchw).
template <template <class> class Kern>
KernelFactory bias_factory(const char* op) {
  return [op](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    bool nchw = false;
    if (init.attrs.count("data_format") != 0) {
      TF_ASSIGN_OR_RETURN(std::string format, init.attr<std::string>("data_format"));
      if (format != "NHWC" && format != "NCHW")
        return Status(Error::invalid_argument,
                      std::string(op) + ": data_format must be NHWC or NCHW, got '" + format + "'");
      nchw = format == "NCHW";
    }
    DType t = init.input_types.empty() ? DType::invalid : init.input_types[0];
    return make_typed<Kern>(op, t, op, nchw);
  };
}

template <bool kLog>
KernelFactory softmax_factory() {
  return [](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    std::unique_ptr<Kernel> k;
    DType t = init.input_types.empty() ? DType::invalid : init.input_types[0];
    dispatch_among<float, double>(base_dtype(t), [&](auto tag) {
      k = std::make_unique<SoftmaxKernel<typename decltype(tag)::type, kLog>>();
    });
    if (!k) return no_kernel_error(kLog ? "LogSoftmax" : "Softmax", t);
    return k;
  };
}

}  // namespace

void register_nn_ops(OpRegistry& r) {
  register_builtin(r, OpDef("Relu").shape_fn(shape_fns::unary)
                          .input("features: T")
                          .output("activations: T")
                          .type_attr("T", RealTypes::dtypes())
                          .kernel(cwise_factory<UnaryKernel, ReluOp>(RealTypes{}, "Relu")));
  register_builtin(r, OpDef("ReluGrad").shape_fn(shape_fns::same_shape_pair)
                          .input("gradients: T")
                          .input("features: T")
                          .output("backprops: T")
                          .type_attr("T", RealTypes::dtypes())
                          .kernel(cwise_factory<CwiseGradKernel, ReluGradOp>(RealTypes{}, "ReluGrad")));
  register_builtin(r, OpDef("Relu6").shape_fn(shape_fns::unary)
                          .input("features: T")
                          .output("activations: T")
                          .type_attr("T", RealTypes::dtypes())
                          .kernel(cwise_factory<UnaryKernel, Relu6Op>(RealTypes{}, "Relu6")));
  register_builtin(r, OpDef("Relu6Grad").shape_fn(shape_fns::same_shape_pair)
                          .input("gradients: T")
                          .input("features: T")
                          .output("backprops: T")
                          .type_attr("T", RealTypes::dtypes())
                          .kernel(cwise_factory<CwiseGradKernel, Relu6GradOp>(RealTypes{}, "Relu6Grad")));
  register_builtin(r, OpDef("Elu").shape_fn(shape_fns::unary)
                          .input("features: T")
                          .output("activations: T")
                          .type_attr("T", FloatTypes::dtypes())
                          .kernel(cwise_factory<UnaryKernel, EluOp>(FloatTypes{}, "Elu")));
  register_builtin(r, OpDef("EluGrad").shape_fn(shape_fns::same_shape_pair)
                          .input("gradients: T")
                          .input("outputs: T")
                          .output("backprops: T")
                          .type_attr("T", FloatTypes::dtypes())
                          .kernel(cwise_factory<CwiseGradKernel, EluGradOp>(FloatTypes{}, "EluGrad")));
  register_builtin(r, OpDef("Softsign").shape_fn(shape_fns::unary)
                          .input("features: T")
                          .output("activations: T")
                          .type_attr("T", FloatTypes::dtypes())
                          .kernel(cwise_factory<UnaryKernel, SoftsignOp>(FloatTypes{}, "Softsign")));
  register_builtin(r, OpDef("SoftsignGrad").shape_fn(shape_fns::same_shape_pair)
                          .input("gradients: T")
                          .input("features: T")
                          .output("backprops: T")
                          .type_attr("T", FloatTypes::dtypes())
                          .kernel(cwise_factory<CwiseGradKernel, SoftsignGradOp>(FloatTypes{}, "SoftsignGrad")));
  register_builtin(r, OpDef("Softmax").shape_fn(shape_fns::unary)
                          .input("logits: T")
                          .output("softmax: T")
                          .type_attr("T", float_types())
                          .kernel(softmax_factory<false>()));
  register_builtin(r, OpDef("LogSoftmax").shape_fn(shape_fns::unary)
                          .input("logits: T")
                          .output("logsoftmax: T")
                          .type_attr("T", float_types())
                          .kernel(softmax_factory<true>()));
  register_builtin(r, OpDef("BiasAdd").shape_fn(shape_fns::bias_add)
                          .input("value: T")
                          .input("bias: T")
                          .output("output: T")
                          .type_attr("T", real_types())
                          .attr("data_format", "string", "NHWC")
                          .kernel(bias_factory<BiasAddKernel>("BiasAdd")));
  register_builtin(r, OpDef("BiasAddV1").shape_fn(shape_fns::bias_add)
                          .input("value: T")
                          .input("bias: T")
                          .output("output: T")
                          .type_attr("T", real_types())
                          .kernel(bias_factory<BiasAddKernel>("BiasAddV1")));
  register_builtin(r, OpDef("BiasAddGrad").shape_fn(shape_fns::bias_add_grad)
                          .input("out_backprop: T")
                          .output("output: T")
                          .type_attr("T", real_types())
                          .attr("data_format", "string", "NHWC")
                          .kernel(bias_factory<BiasAddGradKernel>("BiasAddGrad")));
  register_softmax_xent_ops(r);
  register_conv_ops(r);
  register_fused_ops(r);
  register_pooling_ops(r);
  register_batch_norm_ops(r);
  register_rnn_cell_ops(r);
  register_topk_ops(r);
}

}  // namespace tagflow::ops
