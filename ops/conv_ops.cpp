// The 2-D convolution ops: Conv2D and its two gradients,
// Conv2DBackpropInput and Conv2DBackpropFilter, with TensorFlow's
// signatures and attrs (core/ops/nn_ops.cc): NHWC input, filter
// [k_h, k_w, in_c, out_c], strides, dilations, padding SAME, VALID or
// EXPLICIT (explicit_paddings). Each is computed as im2col copies and one
// Eigen matrix product per chunk of images (spatial_window.hpp); a 1x1
// window with stride 1 and no padding multiplies the input directly.
#include <algorithm>

#include <Eigen/Core>

#include "ops/cwise_kernel.hpp"
#include "ops/math_ops.hpp"
#include "ops/nn_ops.hpp"
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
                                     const Shape& filter) {
  if (in.rank() != 4)
    return bad(op, "input must have rank 4 (NHWC), got shape " + in.to_string());
  if (filter.rank() != 4)
    return bad(op, "filter must have rank 4 ([height, width, in_channels, out_channels]), got shape " +
                       filter.to_string());
  if (filter.num_elements() == 0)
    return bad(op, "filter must not be empty, got shape " + filter.to_string());
  if (in.dim(3) != filter.dim(2))
    return bad(op, "input depth " + std::to_string(in.dim(3)) + " (input " + in.to_string() +
                       ") differs from the filter's in_channels " + std::to_string(filter.dim(2)) +
                       " (filter " + filter.to_string() + ")");
  ConvGeometry g;
  g.batch = in.dim(0);
  g.in_h = in.dim(1);
  g.in_w = in.dim(2);
  g.in_c = in.dim(3);
  g.k_h = filter.dim(0);
  g.k_w = filter.dim(1);
  g.out_c = filter.dim(3);
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
  const int64_t chunk = std::clamp<int64_t>(kChunkElements / std::max<int64_t>(per_image, 1), 1, g.batch);
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

template <class T>
class Conv2DKernel final : public Kernel {
 public:
  explicit Conv2DKernel(WindowAttrs w) : w_(w) {}

  Status compute(KernelContext& ctx) const override {
    const Tensor& input = ctx.input(0);
    const Tensor& filter = ctx.input(1);
    if (!holds<T>(input) || !holds<T>(filter)) {
      const Tensor* inputs[] = {&input, &filter};
      return input_dtype_error("Conv2D", dtype_v<T>, inputs, 2);
    }
    TF_ASSIGN_OR_RETURN(ConvGeometry g, conv_geometry("Conv2D", w_, input.shape(), filter.shape()));
    Tensor out = Tensor::uninitialized(dtype_v<T>, g.out_shape());
    if (out.num_elements() > 0) {
      const int64_t k = g.patch_size(), p = g.out_pixels();
      Eigen::Map<const Matrix<T>> f(filter.data<T>(), k, g.out_c);
      T* y = out.mutable_data<T>();
      if (is_pointwise(g)) {
        Eigen::Map<Matrix<T>>(y, g.batch * p, g.out_c).noalias() =
            Eigen::Map<const Matrix<T>>(input.data<T>(), g.batch * p, k) * f;
      } else {
        for_each_chunk<T>(g, input.data<T>(), true, [&](int64_t b0, int64_t n, const T* cols) {
          Eigen::Map<Matrix<T>>(y + b0 * p * g.out_c, n * p, g.out_c).noalias() =
              Eigen::Map<const Matrix<T>>(cols, n * p, k) * f;
        });
      }
    }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  WindowAttrs w_;
};

// dx = col2im(dy * filter^T).
template <class T>
class Conv2DBackpropInputKernel final : public Kernel {
 public:
  explicit Conv2DBackpropInputKernel(WindowAttrs w) : w_(w) {}

  Status compute(KernelContext& ctx) const override {
    const char* op = "Conv2DBackpropInput";
    const Tensor& filter = ctx.input(1);
    const Tensor& dy = ctx.input(2);
    if (!holds<T>(filter) || !holds<T>(dy)) {
      const Tensor* inputs[] = {&filter, &dy};
      return input_dtype_error(op, dtype_v<T>, inputs, 2);
    }
    TF_ASSIGN_OR_RETURN(Shape in_shape, read_shape4(op, "input_sizes", ctx.input(0)));
    TF_ASSIGN_OR_RETURN(ConvGeometry g, conv_geometry(op, w_, in_shape, filter.shape()));
    TF_RETURN_IF_ERROR(check_out_backprop(op, g, dy));
    Tensor dx(dtype_v<T>, in_shape);  // zeros: col2im adds into it
    if (dx.num_elements() > 0 && dy.num_elements() > 0) {
      const int64_t k = g.patch_size(), p = g.out_pixels();
      Eigen::Map<const Matrix<T>> f(filter.data<T>(), k, g.out_c);
      T* x = dx.mutable_data<T>();
      const T* d = dy.data<T>();
      if (is_pointwise(g)) {
        Eigen::Map<Matrix<T>>(x, g.batch * p, k).noalias() =
            Eigen::Map<const Matrix<T>>(d, g.batch * p, g.out_c) * f.transpose();
      } else {
        for_each_chunk<T>(g, nullptr, false, [&](int64_t b0, int64_t n, T* cols) {
          Eigen::Map<Matrix<T>>(cols, n * p, k).noalias() =
              Eigen::Map<const Matrix<T>>(d + b0 * p * g.out_c, n * p, g.out_c) * f.transpose();
          for (int64_t b = 0; b < n; ++b)
            col2im(g, cols + b * p * k, x + (b0 + b) * g.in_image_size());
        });
      }
    }
    ctx.set_output(0, std::move(dx));
    return ok_status();
  }

 private:
  WindowAttrs w_;
};

// dfilter = sum over the batch of im2col(input)^T * dy.
template <class T>
class Conv2DBackpropFilterKernel final : public Kernel {
 public:
  explicit Conv2DBackpropFilterKernel(WindowAttrs w) : w_(w) {}

  Status compute(KernelContext& ctx) const override {
    const char* op = "Conv2DBackpropFilter";
    const Tensor& input = ctx.input(0);
    const Tensor& dy = ctx.input(2);
    if (!holds<T>(input) || !holds<T>(dy)) {
      const Tensor* inputs[] = {&input, &dy};
      return input_dtype_error(op, dtype_v<T>, inputs, 2);
    }
    TF_ASSIGN_OR_RETURN(Shape filter_shape, read_shape4(op, "filter_sizes", ctx.input(1)));
    TF_ASSIGN_OR_RETURN(ConvGeometry g, conv_geometry(op, w_, input.shape(), filter_shape));
    TF_RETURN_IF_ERROR(check_out_backprop(op, g, dy));
    Tensor df(dtype_v<T>, filter_shape);  // zeros: the sum of an empty batch
    if (dy.num_elements() > 0) {
      const int64_t k = g.patch_size(), p = g.out_pixels();
      Eigen::Map<Matrix<T>> f(df.mutable_data<T>(), k, g.out_c);
      const T* d = dy.data<T>();
      if (is_pointwise(g)) {
        f.noalias() = Eigen::Map<const Matrix<T>>(input.data<T>(), g.batch * p, k).transpose() *
                      Eigen::Map<const Matrix<T>>(d, g.batch * p, g.out_c);
      } else {
        for_each_chunk<T>(g, input.data<T>(), true, [&](int64_t b0, int64_t n, const T* cols) {
          f.noalias() += Eigen::Map<const Matrix<T>>(cols, n * p, k).transpose() *
                         Eigen::Map<const Matrix<T>>(d + b0 * p * g.out_c, n * p, g.out_c);
        });
      }
    }
    ctx.set_output(0, std::move(df));
    return ok_status();
  }

 private:
  WindowAttrs w_;
};

template <template <class> class Kern>
KernelFactory conv_factory(const char* op) {
  return [op](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    TF_ASSIGN_OR_RETURN(WindowAttrs w, read_conv_attrs(init, op));
    TF_ASSIGN_OR_RETURN(DType t, init.attr<DType>("T"));
    std::unique_ptr<Kernel> k;
    dispatch_among<float, double>(t, [&](auto tag) {
      k = std::make_unique<Kern<typename decltype(tag)::type>>(w);
    });
    if (!k) return no_kernel_error(op, t);
    return k;
  };
}

OpDef conv_def(const char* name) {
  AttrList unit;
  unit.i = {1, 1, 1, 1};
  OpDef def(name);
  def.type_attr("T", float_types())
      .attr("strides", "list(int)")
      .attr("use_cudnn_on_gpu", "bool", true)
      .attr("padding", "string")
      .attr("explicit_paddings", "list(int)", AttrList{})
      .attr("data_format", "string", "NHWC")
      .attr("dilations", "list(int)", unit);
  return def;
}

}  // namespace

void register_conv_ops(OpRegistry& r) {
  register_builtin(r, conv_def("Conv2D")
                          .input("input: T")
                          .input("filter: T")
                          .output("output: T")
                          .kernel(conv_factory<Conv2DKernel>("Conv2D")));
  register_builtin(r, conv_def("Conv2DBackpropInput")
                          .input("input_sizes: int32")
                          .input("filter: T")
                          .input("out_backprop: T")
                          .output("output: T")
                          .kernel(conv_factory<Conv2DBackpropInputKernel>("Conv2DBackpropInput")));
  register_builtin(r, conv_def("Conv2DBackpropFilter")
                          .input("input: T")
                          .input("filter_sizes: int32")
                          .input("out_backprop: T")
                          .output("output: T")
                          .kernel(conv_factory<Conv2DBackpropFilterKernel>("Conv2DBackpropFilter")));
}

}  // namespace tagflow::ops
