// The 2-D pooling ops with TensorFlow's signatures (core/ops/nn_ops.cc):
// MaxPool and MaxPoolGrad, AvgPool and AvgPoolGrad, NHWC or NCHW images
// (data_format), ksize and strides of 4 entries (1 for batch and depth),
// padding SAME or VALID. Padding never takes part: a max is over the
// window's positions inside the image, an average divides by their number.
// MaxPoolGrad routes each gradient to the first maximum of its window in
// row-major order, as TensorFlow's CPU kernel does.
//
// Float MaxPool, AvgPool and AvgPoolGrad run on oneDNN in either layout
// (ops/cpu/dnnl_pool.hpp); the other dtypes and MaxPoolGrad are computed
// here on NHWC images, NCHW ones transposed to NHWC and back.
#include <type_traits>

#include <Eigen/Core>

#include "ops/cpu/dnnl_pool.hpp"
#include "ops/cwise_kernel.hpp"
#include "ops/math_ops.hpp"
#include "ops/nn_ops.hpp"
#include "ops/shape_fns.hpp"
#include "ops/spatial_window.hpp"

namespace tagflow::ops {

namespace {

template <class T>
using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;

Status bad(const char* op, const std::string& what) {
  return Status(Error::invalid_argument, std::string(op) + ": " + what);
}

Expected<ConvGeometry> pool_geometry(const char* op, const WindowAttrs& w, const Shape& in) {
  if (in.rank() != 4)
    return bad(op, std::string("input must have rank 4 (") + (w.nchw ? "NCHW" : "NHWC") + "), got shape " +
                       in.to_string());
  ConvGeometry g;
  g.batch = in.dim(0);
  g.in_h = in.dim(w.nchw ? 2 : 1);
  g.in_w = in.dim(w.nchw ? 3 : 2);
  g.in_c = g.out_c = in.dim(w.nchw ? 1 : 3);
  g.k_h = w.ksize_h;
  g.k_w = w.ksize_w;
  TF_RETURN_IF_ERROR(compute_output_size(op, w, g));
  return g;
}

Status check_grad_shape(const char* op, const char* what, const ConvGeometry& g, const Tensor& t) {
  if (t.shape() != g.out_shape())
    return bad(op, std::string(what) + " has shape " + t.shape().to_string() + ", pooling input " +
                       g.in_shape().to_string() + " gives " + g.out_shape().to_string());
  return ok_status();
}

// Calls f(b, pixel, taps) for every output pixel, with taps the in-image
// pixel indices (iy * in_w + ix) of its window in row-major order.
template <class F>
void for_each_window(const ConvGeometry& g, F&& f) {
  std::vector<int64_t> taps;
  taps.reserve(g.k_h * g.k_w);
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t oy = 0; oy < g.out_h; ++oy)
      for (int64_t ox = 0; ox < g.out_w; ++ox) {
        taps.clear();
        for_each_tap(g, oy, ox, [&](int64_t, int64_t iy, int64_t ix) {
          if (inside(g, iy, ix)) taps.push_back(iy * g.in_w + ix);
        });
        f(b, oy * g.out_w + ox, taps);
      }
}

cpu::PoolShape pool_shape(const ConvGeometry& g) {
  cpu::PoolShape s;
  s.batch = g.batch;
  s.in_h = g.in_h;
  s.in_w = g.in_w;
  s.channels = g.in_c;
  s.out_h = g.out_h;
  s.out_w = g.out_w;
  s.k_h = g.k_h;
  s.k_w = g.k_w;
  s.stride_h = g.stride_h;
  s.stride_w = g.stride_w;
  s.pad_top = g.pad_top;
  s.pad_left = g.pad_left;
  s.nchw = g.nchw;
  return s;
}

// MaxPool and AvgPool: one output pixel per window, each channel the
// window's maximum or mean.
struct MaxOfWindow {
  static constexpr const char* kName = "MaxPool";
  static constexpr cpu::PoolKind kKind = cpu::PoolKind::max;
  template <class Out, class T>
  static void reduce(Out& o, const T* image, const std::vector<int64_t>& taps, int64_t c) {
    o = Eigen::Map<const Vec<T>>(image + taps[0] * c, c);
    for (size_t t = 1; t < taps.size(); ++t) o = o.max(Eigen::Map<const Vec<T>>(image + taps[t] * c, c));
  }
};

struct MeanOfWindow {
  static constexpr const char* kName = "AvgPool";
  static constexpr cpu::PoolKind kKind = cpu::PoolKind::average;
  template <class Out, class T>
  static void reduce(Out& o, const T* image, const std::vector<int64_t>& taps, int64_t c) {
    o.setZero();
    for (int64_t t : taps) o += Eigen::Map<const Vec<T>>(image + t * c, c);
    o /= static_cast<T>(taps.size());
  }
};

template <class Window>
struct PoolOf {
  template <class T>
  class Kernel final : public ops::Kernel {
   public:
    explicit Kernel(WindowAttrs w) : w_(w) {}

    Status compute(KernelContext& ctx) const override {
      const Tensor& x = ctx.input(0);
      if (!holds<T>(x)) {
        const Tensor* inputs[] = {&x};
        return input_dtype_error(Window::kName, dtype_v<T>, inputs, 1);
      }
      TF_ASSIGN_OR_RETURN(ConvGeometry g, pool_geometry(Window::kName, w_, x.shape()));
      Tensor out = Tensor::uninitialized(dtype_v<T>, g.out_shape());
      if constexpr (std::is_same_v<T, float>) {
        if (out.num_elements() > 0)
          cpu::dnnl_pool_forward(Window::kKind, pool_shape(g), x.data<T>(), out.mutable_data<T>());
      } else {
        const Tensor image = image_as_nhwc(g, x);
        Tensor pooled = g.nchw ? Tensor::uninitialized(dtype_v<T>, g.as_nhwc().out_shape()) : out;
        const int64_t c = g.in_c;
        const T* in = image.data<T>();
        T* y = pooled.mutable_data<T>();
        for_each_window(g, [&](int64_t b, int64_t pixel, const std::vector<int64_t>& taps) {
          Eigen::Map<Vec<T>> o(y + (b * g.out_pixels() + pixel) * c, c);
          Window::reduce(o, in + b * g.in_image_size(), taps, c);
        });
        out = image_from_nhwc(g, std::move(pooled));
      }
      ctx.set_output(0, std::move(out));
      return ok_status();
    }

   private:
    WindowAttrs w_;
  };
};

template <class T>
class MaxPoolGradKernel final : public Kernel {
 public:
  explicit MaxPoolGradKernel(WindowAttrs w) : w_(w) {}

  Status compute(KernelContext& ctx) const override {
    const char* op = "MaxPoolGrad";
    const Tensor& x = ctx.input(0);
    const Tensor& y = ctx.input(1);
    const Tensor& dy = ctx.input(2);
    if (!holds<T>(x) || !holds<T>(y) || !holds<T>(dy)) {
      const Tensor* inputs[] = {&x, &y, &dy};
      return input_dtype_error(op, dtype_v<T>, inputs, 3);
    }
    TF_ASSIGN_OR_RETURN(ConvGeometry g, pool_geometry(op, w_, x.shape()));
    TF_RETURN_IF_ERROR(check_grad_shape(op, "orig_output", g, y));
    TF_RETURN_IF_ERROR(check_grad_shape(op, "grad", g, dy));
    const Tensor image = image_as_nhwc(g, x), grad = image_as_nhwc(g, dy);
    Tensor dx(dtype_v<T>, g.as_nhwc().in_shape());
    const int64_t c = g.in_c;
    const T* in = image.data<T>();
    const T* d = grad.data<T>();
    T* out = dx.mutable_data<T>();
    Vec<T> best(c);
    Eigen::Array<int64_t, Eigen::Dynamic, 1> arg(c);
    for_each_window(g, [&](int64_t b, int64_t pixel, const std::vector<int64_t>& taps) {
      const T* image = in + b * g.in_image_size();
      best = Eigen::Map<const Vec<T>>(image + taps[0] * c, c);
      arg.setConstant(taps[0]);
      for (size_t t = 1; t < taps.size(); ++t) {
        const Eigen::Map<const Vec<T>> v(image + taps[t] * c, c);
        const Eigen::Array<bool, Eigen::Dynamic, 1> wins = v > best;
        arg = wins.select(taps[t], arg);
        best = wins.select(v, best);
      }
      const T* g_row = d + (b * g.out_pixels() + pixel) * c;
      T* dx_image = out + b * g.in_image_size();
      for (int64_t ch = 0; ch < c; ++ch) dx_image[arg[ch] * c + ch] += g_row[ch];
    });
    ctx.set_output(0, image_from_nhwc(g, std::move(dx)));
    return ok_status();
  }

 private:
  WindowAttrs w_;
};

template <class T>
class AvgPoolGradKernel final : public Kernel {
 public:
  explicit AvgPoolGradKernel(WindowAttrs w) : w_(w) {}

  Status compute(KernelContext& ctx) const override {
    const char* op = "AvgPoolGrad";
    const Tensor& dy = ctx.input(1);
    if (!holds<T>(dy)) {
      const Tensor* inputs[] = {&dy};
      return input_dtype_error(op, dtype_v<T>, inputs, 1);
    }
    TF_ASSIGN_OR_RETURN(Shape in_shape, read_shape4(op, "orig_input_shape", ctx.input(0)));
    TF_ASSIGN_OR_RETURN(ConvGeometry g, pool_geometry(op, w_, in_shape));
    TF_RETURN_IF_ERROR(check_grad_shape(op, "grad", g, dy));
    if constexpr (std::is_same_v<T, float>) {
      Tensor dx = Tensor::uninitialized(dtype_v<T>, in_shape);
      if (dx.num_elements() > 0) {
        if (dy.num_elements() > 0) cpu::dnnl_avg_pool_backward(pool_shape(g), dy.data<T>(), dx.mutable_data<T>());
        else dx = Tensor(dtype_v<T>, in_shape);
      }
      ctx.set_output(0, std::move(dx));
      return ok_status();
    }
    const Tensor grad = image_as_nhwc(g, dy);
    Tensor dx(dtype_v<T>, g.as_nhwc().in_shape());
    const int64_t c = g.in_c;
    const T* d = grad.data<T>();
    T* out = dx.mutable_data<T>();
    for_each_window(g, [&](int64_t b, int64_t pixel, const std::vector<int64_t>& taps) {
      const Vec<T> share =
          Eigen::Map<const Vec<T>>(d + (b * g.out_pixels() + pixel) * c, c) / static_cast<T>(taps.size());
      T* image = out + b * g.in_image_size();
      for (int64_t t : taps) Eigen::Map<Vec<T>>(image + t * c, c) += share;
    });
    ctx.set_output(0, image_from_nhwc(g, std::move(dx)));
    return ok_status();
  }

 private:
  WindowAttrs w_;
};

template <template <class> class Kern, class... Ts>
KernelFactory pool_factory(const char* op) {
  return [op](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    TF_ASSIGN_OR_RETURN(WindowAttrs w, read_pool_attrs(init, op));
    TF_ASSIGN_OR_RETURN(DType t, init.attr<DType>("T"));
    std::unique_ptr<Kernel> k;
    dispatch_among<Ts...>(t, [&](auto tag) {
      k = std::make_unique<Kern<typename decltype(tag)::type>>(w);
    });
    if (!k) return no_kernel_error(op, t);
    return k;
  };
}

OpDef pool_def(const char* name, std::vector<DType> types) {
  OpDef def(name);
  def.type_attr("T", std::move(types), DType::float32)
      .attr("ksize", "list(int)", std::nullopt, 4)
      .attr("strides", "list(int)", std::nullopt, 4)
      .attr("padding", "string")
      .attr("data_format", "string", "NHWC");
  return def;
}

}  // namespace

void register_pooling_ops(OpRegistry& r) {
  register_builtin(r, pool_def("MaxPool", real_types()).shape_fn(shape_fns::pool)
                          .attr("explicit_paddings", "list(int)", AttrList{})
                          .input("input: T")
                          .output("output: T")
                          .kernel(pool_factory<PoolOf<MaxOfWindow>::Kernel, float, double, int32_t, int64_t>(
                              "MaxPool")));
  register_builtin(r, pool_def("MaxPoolGrad", real_types()).shape_fn(shape_fns::of_input<0>)
                          .attr("explicit_paddings", "list(int)", AttrList{})
                          .input("orig_input: T")
                          .input("orig_output: T")
                          .input("grad: T")
                          .output("output: T")
                          .kernel(pool_factory<MaxPoolGradKernel, float, double, int32_t, int64_t>(
                              "MaxPoolGrad")));
  register_builtin(r, pool_def("AvgPool", float_types()).shape_fn(shape_fns::pool)
                          .input("value: T")
                          .output("output: T")
                          .kernel(pool_factory<PoolOf<MeanOfWindow>::Kernel, float, double>("AvgPool")));
  register_builtin(r, pool_def("AvgPoolGrad", float_types()).shape_fn(shape_fns::from_value<0>)
                          .input("orig_input_shape: int32")
                          .input("grad: T")
                          .output("output: T")
                          .kernel(pool_factory<AvgPoolGradKernel, float, double>("AvgPoolGrad")));
}

}  // namespace tagflow::ops
