// The 2-D convolution ops: Conv2D and its two gradients,
// Conv2DBackpropInput and Conv2DBackpropFilter, and the depthwise
// DepthwiseConv2dNative with its two, with TensorFlow's signatures and attrs
// (core/ops/nn_ops.cc): NHWC or NCHW images (data_format), strides,
// dilations, padding SAME, VALID or EXPLICIT (explicit_paddings). A Conv2D
// filter is [k_h, k_w, in_c, out_c]; a depthwise one [k_h, k_w, in_c,
// multiplier], each input channel c convolved with its own `multiplier`
// filters into output channels c * multiplier ... c * multiplier +
// multiplier - 1.
//
// float runs on oneDNN's direct convolutions in either layout
// (ops/cpu/dnnl_conv.hpp), split across the session's threads by images.
// double is computed here as im2col copies and Eigen matrix products per
// chunk of NHWC images (spatial_window.hpp): one product for Conv2D, one
// per input channel over strided views for the depthwise ops; a 1x1 window
// with stride 1 and no padding uses the input itself as its im2col; NCHW
// images are transposed to NHWC and the result back.
#include <algorithm>
#include <type_traits>

#include <Eigen/Core>

#include "ops/cpu/dnnl_conv.hpp"

#include "ops/cwise_kernel.hpp"
#include "ops/math_ops.hpp"
#include "ops/nn_ops.hpp"
#include "ops/shape_fns.hpp"
#include "ops/spatial_window.hpp"

namespace tagflow::ops {

namespace {

template <class T>
using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The im2col scratch of one chunk of images holds at most about this many
// elements (one image's may hold more).
constexpr int64_t kChunkElements = int64_t{1} << 22;

Status bad(const char* op, const std::string& what) {
  return Status(Error::invalid_argument, std::string(op) + ": " + what);
}

// The geometry of convolving `in` with `filter`: both of rank 4, the
// filter's in_channels equal to the input's depth, no empty filter.
Expected<ConvGeometry> conv_geometry(const char* op, const WindowAttrs& w, const Shape& in,
                                     const Shape& filter, bool depthwise) {
  const char* layout = w.nchw ? "NCHW" : "NHWC";
  if (in.rank() != 4)
    return bad(op, std::string("input must have rank 4 (") + layout + "), got shape " + in.to_string());
  if (filter.rank() != 4)
    return bad(op, std::string("filter must have rank 4 ([height, width, in_channels, ") +
                       (depthwise ? "channel_multiplier" : "out_channels") + "]), got shape " +
                       filter.to_string());
  if (filter.num_elements() == 0)
    return bad(op, "filter must not be empty, got shape " + filter.to_string());
  const int64_t depth = in.dim(w.nchw ? 1 : 3);
  if (depth != filter.dim(2))
    return bad(op, "input depth " + std::to_string(depth) + " (input " + in.to_string() +
                       ") differs from the filter's in_channels " + std::to_string(filter.dim(2)) +
                       " (filter " + filter.to_string() + ")");
  ConvGeometry g;
  g.batch = in.dim(0);
  g.in_h = in.dim(w.nchw ? 2 : 1);
  g.in_w = in.dim(w.nchw ? 3 : 2);
  g.in_c = depth;
  g.k_h = filter.dim(0);
  g.k_w = filter.dim(1);
  g.out_c = depthwise ? filter.dim(2) * filter.dim(3) : filter.dim(3);
  TF_RETURN_IF_ERROR(compute_output_size(op, w, g));
  return g;
}

Status check_out_backprop(const char* op, const ConvGeometry& g, const Tensor& dy) {
  if (dy.shape() != g.out_shape())
    return bad(op, "out_backprop has shape " + dy.shape().to_string() + ", the convolution of input " +
                       g.in_shape().to_string() + " gives " + g.out_shape().to_string());
  return ok_status();
}

// A 1x1 window at stride 1 without padding: the input is its own im2col.
bool is_pointwise(const ConvGeometry& g) {
  return g.k_h == 1 && g.k_w == 1 && g.out_h == g.in_h && g.out_w == g.in_w && g.pad_top == 0 &&
         g.pad_left == 0 && g.stride_h == 1 && g.stride_w == 1;
}

// Calls f(first_image, images, cols) for chunks of the batch, with cols
// the im2col rows of those images ([images * out_pixels, patch_size]) when
// `fill` is set, else uninitialised scratch of that size.
template <class T, class F>
void for_each_chunk(const ConvGeometry& g, const T* input, bool fill, F&& f) {
  const int64_t per_image = g.out_pixels() * g.patch_size();
  const int64_t chunk =
      std::clamp<int64_t>(kChunkElements / std::max<int64_t>(per_image, 1), 1, std::max<int64_t>(g.batch, 1));
  Tensor scratch = Tensor::uninitialized(dtype_v<T>, Shape{chunk * per_image});
  T* cols = scratch.mutable_data<T>();
  for (int64_t b0 = 0; b0 < g.batch; b0 += chunk) {
    const int64_t n = std::min(chunk, g.batch - b0);
    if (fill)
      for (int64_t b = 0; b < n; ++b)
        im2col(g, input + (b0 + b) * g.in_image_size(), cols + b * per_image);
    f(b0, n, cols);
  }
}

// The filter of a call: its data, and whether it is depthwise (each input
// channel with its own `mult` columns) or one [patch_size, out_c] matrix.
template <class T>
struct FilterArg {
  const T* data;
  bool depthwise;
};

template <class T>
using Strided = Eigen::Map<const Matrix<T>, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;
template <class T>
using StridedOut = Eigen::Map<Matrix<T>, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>;
using Stride = Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>;

// Views of the depthwise parts of channel c: the im2col columns of c
// ([rows, taps]), its filter ([taps, mult]) and its output columns
// ([rows, mult]), where taps = k_h * k_w and mult = out_c / in_c.
template <class T>
Strided<T> cols_of(const ConvGeometry& g, const T* cols, int64_t rows, int64_t c) {
  return Strided<T>(cols + c, rows, g.k_h * g.k_w, Stride(g.patch_size(), g.in_c));
}
template <class T>
Strided<T> filter_of(const ConvGeometry& g, const T* filter, int64_t c) {
  const int64_t mult = g.out_c / g.in_c;
  return Strided<T>(filter + c * mult, g.k_h * g.k_w, mult, Stride(g.out_c, 1));
}

// y [rows, out_c] = cols [rows, patch_size] * filter.
template <class T>
void apply_filter(const ConvGeometry& g, const FilterArg<T>& f, const T* cols, int64_t rows, T* y) {
  const int64_t k = g.patch_size();
  if (!f.depthwise) {
    Eigen::Map<Matrix<T>>(y, rows, g.out_c).noalias() =
        Eigen::Map<const Matrix<T>>(cols, rows, k) * Eigen::Map<const Matrix<T>>(f.data, k, g.out_c);
    return;
  }
  const int64_t mult = g.out_c / g.in_c;
  for (int64_t c = 0; c < g.in_c; ++c)
    StridedOut<T>(y + c * mult, rows, mult, Stride(g.out_c, 1)).noalias() =
        cols_of(g, cols, rows, c) * filter_of(g, f.data, c);
}

// dcols [rows, patch_size] = dy [rows, out_c] * filter^T.
template <class T>
void apply_filter_transposed(const ConvGeometry& g, const FilterArg<T>& f, const T* dy, int64_t rows,
                             T* dcols) {
  const int64_t k = g.patch_size();
  if (!f.depthwise) {
    Eigen::Map<Matrix<T>>(dcols, rows, k).noalias() =
        Eigen::Map<const Matrix<T>>(dy, rows, g.out_c) *
        Eigen::Map<const Matrix<T>>(f.data, k, g.out_c).transpose();
    return;
  }
  const int64_t mult = g.out_c / g.in_c;
  for (int64_t c = 0; c < g.in_c; ++c)
    StridedOut<T>(dcols + c, rows, g.k_h * g.k_w, Stride(k, g.in_c)).noalias() =
        Strided<T>(dy + c * mult, rows, mult, Stride(g.out_c, 1)) * filter_of(g, f.data, c).transpose();
}

// dfilter += cols^T [patch_size, rows] * dy [rows, out_c].
template <class T>
void add_filter_gradient(const ConvGeometry& g, bool depthwise, const T* cols, const T* dy, int64_t rows,
                         T* dfilter) {
  const int64_t k = g.patch_size();
  if (!depthwise) {
    Eigen::Map<Matrix<T>>(dfilter, k, g.out_c).noalias() +=
        Eigen::Map<const Matrix<T>>(cols, rows, k).transpose() * Eigen::Map<const Matrix<T>>(dy, rows, g.out_c);
    return;
  }
  const int64_t mult = g.out_c / g.in_c;
  for (int64_t c = 0; c < g.in_c; ++c)
    StridedOut<T>(dfilter + c * mult, g.k_h * g.k_w, mult, Stride(g.out_c, 1)).noalias() +=
        cols_of(g, cols, rows, c).transpose() * Strided<T>(dy + c * mult, rows, mult, Stride(g.out_c, 1));
}

// Eigen's convolutions of NHWC images (double; see the file comment).

// y = conv(x, filter).
template <class T>
void eigen_forward(const ConvGeometry& g, bool depthwise, const T* x, const T* filter, T* y) {
  const int64_t p = g.out_pixels();
  const FilterArg<T> f{filter, depthwise};
  if (is_pointwise(g)) {
    apply_filter(g, f, x, g.batch * p, y);
    return;
  }
  for_each_chunk<T>(g, x, true, [&](int64_t b0, int64_t n, const T* cols) {
    apply_filter(g, f, cols, n * p, y + b0 * p * g.out_c);
  });
}

// dx (zeroed) = col2im(dy * filter^T).
template <class T>
void eigen_backward_data(const ConvGeometry& g, bool depthwise, const T* filter, const T* dy, T* dx) {
  const int64_t k = g.patch_size(), p = g.out_pixels();
  const FilterArg<T> f{filter, depthwise};
  if (is_pointwise(g)) {
    apply_filter_transposed(g, f, dy, g.batch * p, dx);
    return;
  }
  for_each_chunk<T>(g, nullptr, false, [&](int64_t b0, int64_t n, T* cols) {
    apply_filter_transposed(g, f, dy + b0 * p * g.out_c, n * p, cols);
    for (int64_t b = 0; b < n; ++b) col2im(g, cols + b * p * k, dx + (b0 + b) * g.in_image_size());
  });
}

// dfilter (zeroed) = the sum over the batch of im2col(x)^T * dy.
template <class T>
void eigen_backward_filter(const ConvGeometry& g, bool depthwise, const T* x, const T* dy, T* dfilter) {
  const int64_t p = g.out_pixels();
  if (is_pointwise(g)) {
    add_filter_gradient(g, depthwise, x, dy, g.batch * p, dfilter);
    return;
  }
  for_each_chunk<T>(g, x, true, [&](int64_t b0, int64_t n, const T* cols) {
    add_filter_gradient(g, depthwise, cols, dy + b0 * p * g.out_c, n * p, dfilter);
  });
}

cpu::ConvShape conv_shape(const ConvGeometry& g, bool depthwise) {
  cpu::ConvShape s;
  s.batch = g.batch;
  s.in_h = g.in_h;
  s.in_w = g.in_w;
  s.in_c = g.in_c;
  s.out_h = g.out_h;
  s.out_w = g.out_w;
  s.out_c = g.out_c;
  s.k_h = g.k_h;
  s.k_w = g.k_w;
  s.stride_h = g.stride_h;
  s.stride_w = g.stride_w;
  s.dilation_h = g.dilation_h;
  s.dilation_w = g.dilation_w;
  s.pad_top = g.pad_top;
  s.pad_left = g.pad_left;
  s.depthwise = depthwise;
  s.nchw = g.nchw;
  return s;
}

// What the three convolution kernels share: the op's name, its window
// attrs, whether it is depthwise, and the check of their two tensor inputs.
template <class T>
class ConvKernelBase : public Kernel {
 public:
  ConvKernelBase(const char* op, WindowAttrs w, bool depthwise) : op_(op), w_(w), depthwise_(depthwise) {}

 protected:
  static constexpr bool kOneDnn = std::is_same_v<T, float>;

  Status check_dtypes(const Tensor& a, const Tensor& b) const {
    if (holds<T>(a) && holds<T>(b)) return ok_status();
    const Tensor* inputs[] = {&a, &b};
    return input_dtype_error(op_, dtype_v<T>, inputs, 2);
  }

  Expected<ConvGeometry> geometry(const Shape& input, const Shape& filter) const {
    return conv_geometry(op_, w_, input, filter, depthwise_);
  }

  const char* op_;
  WindowAttrs w_;
  bool depthwise_;
};

// Conv2D and DepthwiseConv2dNative.
template <class T>
class ConvKernel final : public ConvKernelBase<T> {
 public:
  using ConvKernelBase<T>::ConvKernelBase;

  Status compute(KernelContext& ctx) const override {
    const Tensor& input = ctx.input(0);
    const Tensor& filter = ctx.input(1);
    TF_RETURN_IF_ERROR(this->check_dtypes(input, filter));
    TF_ASSIGN_OR_RETURN(ConvGeometry g, this->geometry(input.shape(), filter.shape()));
    if (g.out_shape().num_elements() == 0 || input.num_elements() == 0) {
      // Nothing to compute, or windows over padding only (an empty image
      // with explicit padding): zeros.
      ctx.set_output(0, Tensor(dtype_v<T>, g.out_shape()));
      return ok_status();
    }
    Tensor out = Tensor::uninitialized(dtype_v<T>, g.out_shape());
    if constexpr (ConvKernelBase<T>::kOneDnn) {
      cpu::dnnl_conv_forward(conv_shape(g, this->depthwise_), input.data<T>(), filter.data<T>(),
                             out.mutable_data<T>());
    } else {
      const Tensor x = image_as_nhwc(g, input);
      Tensor y = g.nchw ? Tensor::uninitialized(dtype_v<T>, g.as_nhwc().out_shape()) : out;
      eigen_forward(g.as_nhwc(), this->depthwise_, x.data<T>(), filter.data<T>(), y.mutable_data<T>());
      out = image_from_nhwc(g, std::move(y));
    }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }
};

// _FusedConv2D of [BiasAdd] or [BiasAdd, Relu] on float: Conv2D with the
// bias (args[0]) as a oneDNN post-op, then Relu (nn_ops.hpp).
class FusedConvKernel final : public ConvKernelBase<float> {
 public:
  FusedConvKernel(WindowAttrs w, bool relu) : ConvKernelBase<float>("_FusedConv2D", w, false), relu_(relu) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& input = ctx.input(0);
    const Tensor& filter = ctx.input(1);
    const Tensor& bias = ctx.input(2);
    TF_RETURN_IF_ERROR(check_dtypes(input, filter));
    if (!holds<float>(bias)) {
      const Tensor* inputs[] = {&bias};
      return input_dtype_error(op_, DType::float32, inputs, 1);
    }
    TF_ASSIGN_OR_RETURN(ConvGeometry g, geometry(input.shape(), filter.shape()));
    const Shape out_shape = g.out_shape();
    const int channel_dim = g.nchw ? 1 : 3;
    TF_RETURN_IF_ERROR(check_bias(op_, out_shape, channel_dim, bias));
    if (out_shape.num_elements() == 0 || input.num_elements() == 0) {
      // windows over padding only: the bias, through Relu
      Tensor out(DType::float32, out_shape);
      apply_bias_relu(out.mutable_data<float>(), out_shape, channel_dim, bias.data<float>(), relu_);
      ctx.set_output(0, std::move(out));
      return ok_status();
    }
    Tensor out = Tensor::uninitialized(DType::float32, out_shape);
    cpu::Epilogue epilogue;
    epilogue.bias = bias.data<float>();
    cpu::dnnl_conv_forward(conv_shape(g, false), input.data<float>(), filter.data<float>(),
                           out.mutable_data<float>(), epilogue);
    apply_bias_relu(out.mutable_data<float>(), out_shape, channel_dim, nullptr, relu_);
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  bool relu_;
};

// The gradient with respect to the input.
template <class T>
class ConvBackpropInputKernel final : public ConvKernelBase<T> {
 public:
  using ConvKernelBase<T>::ConvKernelBase;

  Status compute(KernelContext& ctx) const override {
    const Tensor& filter = ctx.input(1);
    const Tensor& dy = ctx.input(2);
    TF_RETURN_IF_ERROR(this->check_dtypes(filter, dy));
    TF_ASSIGN_OR_RETURN(Shape in_shape, read_shape4(this->op_, "input_sizes", ctx.input(0)));
    TF_ASSIGN_OR_RETURN(ConvGeometry g, this->geometry(in_shape, filter.shape()));
    TF_RETURN_IF_ERROR(check_out_backprop(this->op_, g, dy));
    Tensor dx(dtype_v<T>, in_shape);  // zeros: col2im adds into it
    if (dx.num_elements() > 0 && dy.num_elements() > 0) {
      if constexpr (ConvKernelBase<T>::kOneDnn) {
        cpu::dnnl_conv_backward_data(conv_shape(g, this->depthwise_), filter.data<T>(), dy.data<T>(),
                                     dx.mutable_data<T>());
      } else {
        const Tensor d = image_as_nhwc(g, dy);
        Tensor x = g.nchw ? Tensor(dtype_v<T>, g.as_nhwc().in_shape()) : dx;
        eigen_backward_data(g.as_nhwc(), this->depthwise_, filter.data<T>(), d.data<T>(), x.mutable_data<T>());
        dx = image_from_nhwc(g, std::move(x));
      }
    }
    ctx.set_output(0, std::move(dx));
    return ok_status();
  }
};

// The gradient with respect to the filter.
template <class T>
class ConvBackpropFilterKernel final : public ConvKernelBase<T> {
 public:
  using ConvKernelBase<T>::ConvKernelBase;

  Status compute(KernelContext& ctx) const override {
    const Tensor& input = ctx.input(0);
    const Tensor& dy = ctx.input(2);
    TF_RETURN_IF_ERROR(this->check_dtypes(input, dy));
    TF_ASSIGN_OR_RETURN(Shape filter_shape, read_shape4(this->op_, "filter_sizes", ctx.input(1)));
    TF_ASSIGN_OR_RETURN(ConvGeometry g, this->geometry(input.shape(), filter_shape));
    TF_RETURN_IF_ERROR(check_out_backprop(this->op_, g, dy));
    Tensor df(dtype_v<T>, filter_shape);  // zeros: the sum of an empty batch
    if (dy.num_elements() > 0 && input.num_elements() > 0) {
      if constexpr (ConvKernelBase<T>::kOneDnn) {
        cpu::dnnl_conv_backward_weights(conv_shape(g, this->depthwise_), input.data<T>(), dy.data<T>(),
                                        df.mutable_data<T>());
      } else {
        const Tensor x = image_as_nhwc(g, input), d = image_as_nhwc(g, dy);
        eigen_backward_filter(g.as_nhwc(), this->depthwise_, x.data<T>(), d.data<T>(), df.mutable_data<T>());
      }
    }
    ctx.set_output(0, std::move(df));
    return ok_status();
  }
};

template <template <class> class Kern>
KernelFactory conv_factory(const char* op, bool depthwise) {
  return [op, depthwise](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    TF_ASSIGN_OR_RETURN(WindowAttrs w, read_conv_attrs(init, op));
    TF_ASSIGN_OR_RETURN(DType t, init.attr<DType>("T"));
    std::unique_ptr<Kernel> k;
    dispatch_among<float, double>(t, [&](auto tag) {
      k = std::make_unique<Kern<typename decltype(tag)::type>>(op, w, depthwise);
    });
    if (!k) return no_kernel_error(op, t);
    return k;
  };
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_fused_conv2d_kernel(const KernelInit& init, bool relu) {
  TF_ASSIGN_OR_RETURN(WindowAttrs w, read_conv_attrs(init, "_FusedConv2D"));
  return std::unique_ptr<Kernel>(std::make_unique<FusedConvKernel>(w, relu));
}

namespace {

// The attrs of the convolution ops; the depthwise ones have no
// use_cudnn_on_gpu.
OpDef conv_def(const char* name, bool depthwise) {
  AttrList unit;
  unit.i = {1, 1, 1, 1};
  OpDef def(name);
  def.type_attr("T", float_types()).attr("strides", "list(int)");
  if (!depthwise) def.attr("use_cudnn_on_gpu", "bool", true);
  def.attr("padding", "string")
      .attr("explicit_paddings", "list(int)", AttrList{})
      .attr("data_format", "string", "NHWC")
      .attr("dilations", "list(int)", unit);
  return def;
}

}  // namespace

void register_conv_ops(OpRegistry& r) {
  struct Family {
    const char* forward;
    const char* backprop_input;
    const char* backprop_filter;
    bool depthwise;
  };
  for (const Family& f : {Family{"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", false},
                          Family{"DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
                                 "DepthwiseConv2dNativeBackpropFilter", true}}) {
    register_builtin(r, conv_def(f.forward, f.depthwise)
                            .shape_fn(shape_fns::conv)
                            .input("input: T")
                            .input("filter: T")
                            .output("output: T")
                            .expensive()
                            .kernel(conv_factory<ConvKernel>(f.forward, f.depthwise)));
    register_builtin(r, conv_def(f.backprop_input, f.depthwise)
                            .shape_fn(shape_fns::from_value<0>)
                            .input("input_sizes: int32")
                            .input("filter: T")
                            .input("out_backprop: T")
                            .output("output: T")
                            .expensive()
                            .kernel(conv_factory<ConvBackpropInputKernel>(f.backprop_input, f.depthwise)));
    register_builtin(r, conv_def(f.backprop_filter, f.depthwise)
                            .shape_fn(shape_fns::from_value<1>)
                            .input("input: T")
                            .input("filter_sizes: int32")
                            .input("out_backprop: T")
                            .output("output: T")
                            .expensive()
                            .kernel(conv_factory<ConvBackpropFilterKernel>(f.backprop_filter, f.depthwise)));
  }
}

}  // namespace tagflow::ops
