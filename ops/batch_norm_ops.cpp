// The fused batch normalisations FusedBatchNorm, FusedBatchNormV2 and
// FusedBatchNormV3 and their gradients FusedBatchNormGrad(V2, V3), with
// TensorFlow's signatures (core/ops/nn_ops.cc) and its CPU kernels'
// conventions, channels last (NHWC; NDHWC for V3) or first (NCHW; NCDHW for
// V3):
//
// - training: y normalises x by the batch mean and the biased batch
//   variance; the batch_variance output is the Bessel-corrected one
//   (n / (n - 1), none for n = 1), blended into the running variance input
//   when exponential_avg_factor f != 1 ((1 - f) * old + f * new, the mean
//   likewise); reserve_space_1/2 keep the batch mean and the biased
//   variance, which the gradient reads back;
// - inference: y normalises by the mean and variance inputs, which pass
//   through to batch_mean/batch_variance and the reserve spaces.
//
// V3's reserve_space_3 is a scalar placeholder; the gradients' trailing
// reserve outputs are empty vectors. TensorFlow computes in float only;
// here T is float or double (U must equal T), so gradients can be checked
// in double. Float runs on oneDNN in either layout
// (ops/cpu/dnnl_batch_norm.hpp); double on Eigen, channels last, a
// channels-first tensor transposed in and out.
#include <cmath>
#include <type_traits>

#include <Eigen/Core>

#include "ops/cpu/dnnl_batch_norm.hpp"
#include "ops/tensor_copy.hpp"

#include "ops/cwise_kernel.hpp"
#include "ops/math_ops.hpp"
#include "ops/nn_ops.hpp"
#include "ops/shape_fns.hpp"

namespace tagflow::ops {

namespace {

template <class T>
using Rows = Eigen::Array<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using Row = Eigen::Array<T, 1, Eigen::Dynamic>;

struct BatchNormAttrs {
  const char* op;
  int version;  // 1, 2 or 3
  double epsilon = 1e-4;
  double exponential_avg_factor = 1;
  bool is_training = true;
  int rank = 4;  // 5 for NDHWC / NCDHW
  bool channels_first = false;  // NCHW / NCDHW
};

const char* layout_name(const BatchNormAttrs& a) {
  if (a.rank == 4) return a.channels_first ? "NCHW" : "NHWC";
  return a.channels_first ? "NCDHW" : "NDHWC";
}

int64_t channels_of(const BatchNormAttrs& a, const Tensor& x) {
  return a.channels_first ? x.dim(1) : x.dim(x.rank() - 1);
}

cpu::BatchNormShape dnnl_shape(const BatchNormAttrs& a, const Tensor& x, bool training) {
  cpu::BatchNormShape s;
  s.dims = x.shape().dims();
  s.channels_first = a.channels_first;
  s.epsilon = static_cast<float>(a.epsilon);
  s.training = training;
  return s;
}

// Float on oneDNN when there is something to normalise: an empty batch
// keeps Eigen's NaN statistics, as TensorFlow's.
template <class T>
bool on_dnnl(int64_t n, int64_t c) {
  return std::is_same_v<T, float> && n > 0 && c > 0;
}

Tensor as_channels_last(const BatchNormAttrs& a, const Tensor& t) { return a.channels_first ? channels_last(t) : t; }
Tensor from_channels_last(const BatchNormAttrs& a, Tensor t) { return a.channels_first ? channels_first(t) : t; }

Status bad(const char* op, const std::string& what) {
  return Status(Error::invalid_argument, std::string(op) + ": " + what);
}

Status check_vector(const char* op, const char* name, const Tensor& t, int64_t channels) {
  if (t.rank() != 1 || t.dim(0) != channels)
    return bad(op, std::string(name) + " must be a vector of " + std::to_string(channels) +
                       " elements (the channels of x), got shape " + t.shape().to_string());
  return ok_status();
}

Status check_x(const BatchNormAttrs& a, const char* name, const Tensor& x) {
  if (x.rank() != a.rank)
    return bad(a.op, std::string(name) + " must have rank " + std::to_string(a.rank) + " (" + layout_name(a) +
                         "), got shape " + x.shape().to_string());
  return ok_status();
}

template <class T>
Row<T> row_of(const Tensor& t) {
  return Eigen::Map<const Row<T>>(t.data<T>(), t.num_elements());
}

template <class T>
Tensor tensor_of(const Row<T>& r) {
  Tensor t = Tensor::uninitialized(dtype_v<T>, Shape{r.size()});
  Eigen::Map<Row<T>>(t.mutable_data<T>(), r.size()) = r;
  return t;
}

template <class T>
class FusedBatchNormKernel final : public Kernel {
 public:
  explicit FusedBatchNormKernel(BatchNormAttrs a) : a_(a) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    for (int i = 0; i < 5; ++i)
      if (!holds<T>(ctx.input(i))) {
        const Tensor* inputs[] = {&ctx.input(0), &ctx.input(1), &ctx.input(2), &ctx.input(3), &ctx.input(4)};
        return input_dtype_error(a_.op, dtype_v<T>, inputs, 5);
      }
    TF_RETURN_IF_ERROR(check_x(a_, "x", x));
    const int64_t c = channels_of(a_, x);
    const int64_t n = c == 0 ? 0 : x.num_elements() / c;
    TF_RETURN_IF_ERROR(check_vector(a_.op, "scale", ctx.input(1), c));
    TF_RETURN_IF_ERROR(check_vector(a_.op, "offset", ctx.input(2), c));
    // Training with f = 1 reads no running statistics: they may be empty.
    const bool reads_stats = !a_.is_training || a_.exponential_avg_factor != 1;
    if (reads_stats) {
      TF_RETURN_IF_ERROR(check_vector(a_.op, "mean", ctx.input(3), c));
      TF_RETURN_IF_ERROR(check_vector(a_.op, "variance", ctx.input(4), c));
    }
    Row<T> mean, var;  // what y is normalised with
    if (!a_.is_training) {
      mean = row_of<T>(ctx.input(3));
      var = row_of<T>(ctx.input(4));
    }
    Tensor y = Tensor::uninitialized(dtype_v<T>, x.shape());
    if constexpr (std::is_same_v<T, float>) {
      if (on_dnnl<T>(n, c)) {
        if (a_.is_training) {
          mean.resize(c);
          var.resize(c);
        }
        cpu::dnnl_batch_norm_forward(dnnl_shape(a_, x, a_.is_training), x.data<T>(), ctx.input(1).data<T>(),
                                     ctx.input(2).data<T>(), mean.data(), var.data(), y.mutable_data<T>());
      }
    }
    if (!on_dnnl<T>(n, c)) {
      const Tensor xl = as_channels_last(a_, x);
      const Eigen::Map<const Rows<T>> xs(xl.data<T>(), n, c);
      const Row<T> scale = row_of<T>(ctx.input(1)), offset = row_of<T>(ctx.input(2));
      if (a_.is_training) {
        mean = xs.colwise().sum() / T(n);  // NaN for an empty batch, as TensorFlow's
        var = (xs.rowwise() - mean).square().colwise().sum() / T(n);
      }
      const Row<T> gain = (var + T(a_.epsilon)).rsqrt() * scale;
      Tensor yl = a_.channels_first ? Tensor::uninitialized(dtype_v<T>, xl.shape()) : y;
      Eigen::Map<Rows<T>>(yl.mutable_data<T>(), n, c) = ((xs.rowwise() - mean).rowwise() * gain).rowwise() + offset;
      y = from_channels_last(a_, std::move(yl));
    }
    ctx.set_output(0, std::move(y));
    if (a_.is_training) {
      const T bessel = n > 1 ? T(n) / T(n - 1) : T(1);
      const T f = T(a_.exponential_avg_factor);
      if (f == T(1)) {
        ctx.set_output(1, tensor_of<T>(mean));
        ctx.set_output(2, tensor_of<T>(var * bessel));
      } else {
        ctx.set_output(1, tensor_of<T>((T(1) - f) * row_of<T>(ctx.input(3)) + f * mean));
        ctx.set_output(2, tensor_of<T>((T(1) - f) * row_of<T>(ctx.input(4)) + f * bessel * var));
      }
      ctx.set_output(3, tensor_of<T>(mean));
      ctx.set_output(4, tensor_of<T>(var));
    } else {
      ctx.set_output(1, ctx.input(3));
      ctx.set_output(2, ctx.input(4));
      ctx.set_output(3, ctx.input(3));
      ctx.set_output(4, ctx.input(4));
    }
    if (a_.version == 3) ctx.set_output(5, Tensor(dtype_v<T>, Shape{}));
    return ok_status();
  }

 private:
  BatchNormAttrs a_;
};

// Inputs y_backprop, x, scale, reserve_space_1 (the mean y was normalised
// with), reserve_space_2 (the variance), and for V3 reserve_space_3 (unread).
template <class T>
class FusedBatchNormGradKernel final : public Kernel {
 public:
  explicit FusedBatchNormGradKernel(BatchNormAttrs a) : a_(a) {}

  Status compute(KernelContext& ctx) const override {
    for (int i = 0; i < 5; ++i)
      if (!holds<T>(ctx.input(i))) {
        const Tensor* inputs[] = {&ctx.input(0), &ctx.input(1), &ctx.input(2), &ctx.input(3), &ctx.input(4)};
        return input_dtype_error(a_.op, dtype_v<T>, inputs, 5);
      }
    const Tensor& dy = ctx.input(0);
    const Tensor& x = ctx.input(1);
    TF_RETURN_IF_ERROR(check_x(a_, "x", x));
    if (dy.shape() != x.shape())
      return bad(a_.op, "y_backprop has shape " + dy.shape().to_string() + ", x has shape " +
                            x.shape().to_string());
    const int64_t c = channels_of(a_, x);
    const int64_t n = c == 0 ? 0 : x.num_elements() / c;
    TF_RETURN_IF_ERROR(check_vector(a_.op, "scale", ctx.input(2), c));
    TF_RETURN_IF_ERROR(check_vector(a_.op, "reserve_space_1", ctx.input(3), c));
    TF_RETURN_IF_ERROR(check_vector(a_.op, "reserve_space_2", ctx.input(4), c));
    Tensor dx = Tensor::uninitialized(dtype_v<T>, x.shape());
    Row<T> scale_bp(c), offset_bp(c);
    if constexpr (std::is_same_v<T, float>) {
      if (on_dnnl<T>(n, c))
        cpu::dnnl_batch_norm_backward(dnnl_shape(a_, x, a_.is_training), dy.data<T>(), x.data<T>(),
                                      ctx.input(2).data<T>(), ctx.input(3).data<T>(), ctx.input(4).data<T>(),
                                      dx.mutable_data<T>(), scale_bp.data(), offset_bp.data());
    }
    if (!on_dnnl<T>(n, c)) {
      const Tensor xl = as_channels_last(a_, x), gl = as_channels_last(a_, dy);
      const Eigen::Map<const Rows<T>> xs(xl.data<T>(), n, c), g(gl.data<T>(), n, c);
      const Row<T> scale = row_of<T>(ctx.input(2)), mean = row_of<T>(ctx.input(3));
      const Row<T> inv = (row_of<T>(ctx.input(4)) + T(a_.epsilon)).rsqrt();
      const Rows<T> x_hat = (xs.rowwise() - mean).rowwise() * inv;
      offset_bp = g.colwise().sum();
      scale_bp = (g * x_hat).colwise().sum();
      Tensor dxl = a_.channels_first ? Tensor::uninitialized(dtype_v<T>, xl.shape()) : dx;
      Eigen::Map<Rows<T>> d(dxl.mutable_data<T>(), n, c);
      const Row<T> gain = scale * inv;
      if (a_.is_training && n > 0) {
        // The batch statistics depend on x too: remove the gradient's mean
        // and its projection on x_hat.
        d = ((g.rowwise() - offset_bp / T(n)) - x_hat.rowwise() * (scale_bp / T(n))).rowwise() * gain;
      } else {
        d = g.rowwise() * gain;
      }
      dx = from_channels_last(a_, std::move(dxl));
    }
    ctx.set_output(0, std::move(dx));
    ctx.set_output(1, tensor_of<T>(scale_bp));
    ctx.set_output(2, tensor_of<T>(offset_bp));
    ctx.set_output(3, Tensor(dtype_v<T>, Shape{0}));
    ctx.set_output(4, Tensor(dtype_v<T>, Shape{0}));
    return ok_status();
  }

 private:
  BatchNormAttrs a_;
};

template <template <class> class Kern>
KernelFactory batch_norm_factory(const char* op, int version) {
  return [op, version](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    BatchNormAttrs a{op, version};
    TF_ASSIGN_OR_RETURN(float epsilon, init.attr<float>("epsilon"));
    a.epsilon = epsilon;
    if (init.attrs.count("exponential_avg_factor") != 0) {
      TF_ASSIGN_OR_RETURN(float f, init.attr<float>("exponential_avg_factor"));
      a.exponential_avg_factor = f;
    }
    TF_ASSIGN_OR_RETURN(a.is_training, init.attr<bool>("is_training"));
    TF_ASSIGN_OR_RETURN(std::string format, init.attr<std::string>("data_format"));
    if ((format == "NDHWC" || format == "NCDHW") && version == 3) {
      a.rank = 5;
      a.channels_first = format == "NCDHW";
    } else if (format == "NCHW") {
      a.channels_first = true;
    } else if (format != "NHWC") {
      return bad(op, "data_format must be NHWC or NCHW" +
                         std::string(version == 3 ? ", NDHWC or NCDHW" : "") + ", got '" + format + "'");
    }
    TF_ASSIGN_OR_RETURN(DType t, init.attr<DType>("T"));
    if (version > 1) {
      TF_ASSIGN_OR_RETURN(DType u, init.attr<DType>("U"));
      if (u != t)
        return Status(Error::unimplemented, std::string(op) + " '" + init.node_name +
                                                "': computes only with U equal to T, got T=" +
                                                dtype_name(t) + ", U=" + dtype_name(u));
    }
    std::unique_ptr<Kernel> k;
    dispatch_among<float, double>(t, [&](auto tag) {
      k = std::make_unique<Kern<typename decltype(tag)::type>>(a);
    });
    if (!k) return no_kernel_error(op, t);
    return k;
  };
}

// The attrs of every fused batch norm op; versions 2 and 3 type their
// statistics by U, version 1 by T.
OpDef batch_norm_def(const char* name, bool with_u) {
  OpDef def(name);
  def.shape_fn(shape_fns::fused_batch_norm).type_attr("T", float_types());
  if (with_u) def.type_attr("U", float_types());
  def.attr("epsilon", "float", 0.0001f).attr("data_format", "string", "NHWC").attr("is_training", "bool", true);
  return def;
}

void forward_op(OpRegistry& r, const char* name, int version) {
  const char* u = version == 1 ? "T" : "U";
  OpDef def = batch_norm_def(name, version > 1);
  def.attr("exponential_avg_factor", "float", 1.0f)
      .input("x: T")
      .input(std::string("scale: ") + u)
      .input(std::string("offset: ") + u)
      .input(std::string("mean: ") + u)
      .input(std::string("variance: ") + u)
      .output("y: T");
  for (const char* out : {"batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"})
    def.output(std::string(out) + ": " + u);
  if (version == 3) def.output("reserve_space_3: U");
  register_builtin(r, def.kernel(batch_norm_factory<FusedBatchNormKernel>(name, version)));
}

void grad_op(OpRegistry& r, const char* name, int version) {
  const char* u = version == 1 ? "T" : "U";
  OpDef def = batch_norm_def(name, version > 1);
  def.input("y_backprop: T")
      .input("x: T")
      .input(std::string("scale: ") + u)
      .input(std::string("reserve_space_1: ") + u)
      .input(std::string("reserve_space_2: ") + u);
  if (version == 3) def.input("reserve_space_3: U");
  def.output("x_backprop: T");
  for (const char* out : {"scale_backprop", "offset_backprop"}) def.output(std::string(out) + ": " + u);
  const bool v3 = version == 3;
  def.output(std::string(v3 ? "reserve_space_4: " : "reserve_space_3: ") + u)
      .output(std::string(v3 ? "reserve_space_5: " : "reserve_space_4: ") + u);
  register_builtin(r, def.kernel(batch_norm_factory<FusedBatchNormGradKernel>(name, version)));
}

}  // namespace

void register_batch_norm_ops(OpRegistry& r) {
  forward_op(r, "FusedBatchNorm", 1);
  forward_op(r, "FusedBatchNormV2", 2);
  forward_op(r, "FusedBatchNormV3", 3);
  grad_op(r, "FusedBatchNormGrad", 1);
  grad_op(r, "FusedBatchNormGradV2", 2);
  grad_op(r, "FusedBatchNormGradV3", 3);
}

}  // namespace tagflow::ops
