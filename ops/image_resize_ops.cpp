// The resize ops with TensorFlow's signatures (core/ops/image_ops.cc) and
// arithmetic (core/kernels/image/resize_bilinear_op.cc,
// resize_nearest_neighbor_op.cc, core/util/image_resizer_state.h):
// ResizeBilinear, ResizeNearestNeighbor, and ResizeBilinearGrad and
// ResizeNearestNeighborGrad, of which their gradients are made.
//
// An output pixel i samples the input at a float position: i * scale
// (legacy), or (i + 0.5) * scale - 0.5 with half_pixel_centers, scale
// being in / out, or (in - 1) / (out - 1) with align_corners. Bilinear
// interpolates between the floor and ceiling of the position, both clamped
// into the image, in float whatever T is; nearest neighbour takes the
// floor, or the rounding with align_corners (its half-pixel position omits
// the - 0.5, which the floor makes up for). Each Grad op sends every
// incoming gradient back along the same weights, so it is the adjoint of
// its forward op: TensorFlow accumulates ResizeBilinearGrad in float for
// half and bfloat16 and in T otherwise, ResizeNearestNeighborGrad in T
// (integers wrap).
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <type_traits>
#include <vector>

#include "ops/image_ops.hpp"
#include "ops/kernel_factory.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

// TensorFlow's CalculateResizeScale: the input distance one output step
// covers.
float resize_scale(int64_t in, int64_t out, bool align_corners) {
  return align_corners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                  : static_cast<float>(in) / static_cast<float>(out);
}

// Where output index i samples the input, for bilinear interpolation.
float bilinear_position(int64_t i, float scale, bool half_pixel_centers) {
  return half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale - 0.5f : static_cast<float>(i) * scale;
}

// The input index output index i takes for nearest neighbour.
int64_t nearest_index(int64_t i, float scale, int64_t in_size, bool align_corners, bool half_pixel_centers) {
  const float position = half_pixel_centers ? (static_cast<float>(i) + 0.5f) * scale : static_cast<float>(i) * scale;
  int64_t index = std::min(static_cast<int64_t>(align_corners ? std::round(position) : std::floor(position)),
                           in_size - 1);
  return half_pixel_centers ? std::max<int64_t>(0, index) : index;
}

// The two input indices an output index interpolates between and the
// weight of the upper one.
struct Interpolation {
  int64_t lower, upper;
  float lerp;
};

Interpolation interpolation_at(int64_t i, float scale, int64_t in_size, bool half_pixel_centers) {
  const float position = bilinear_position(i, scale, half_pixel_centers);
  const float below = std::floor(position);
  return {std::max<int64_t>(static_cast<int64_t>(below), 0),
          std::min<int64_t>(static_cast<int64_t>(std::ceil(position)), in_size - 1), position - below};
}

std::vector<Interpolation> interpolations(int64_t out_size, int64_t in_size, float scale, bool half_pixel_centers) {
  std::vector<Interpolation> w(static_cast<size_t>(out_size));
  for (int64_t i = 0; i < out_size; ++i) w[i] = interpolation_at(i, scale, in_size, half_pixel_centers);
  return w;
}

// Calls f(T{}) for the dtypes TensorFlow's resize kernels take.
template <class F>
bool dispatch_image_dtype(DType t, F&& f) {
  switch (t) {
    case DType::int8: f(int8_t{}); return true;
    case DType::uint8: f(uint8_t{}); return true;
    case DType::int16: f(int16_t{}); return true;
    case DType::uint16: f(uint16_t{}); return true;
    case DType::int32: f(int32_t{}); return true;
    case DType::int64: f(int64_t{}); return true;
    case DType::bfloat16: f(Eigen::bfloat16{}); return true;
    case DType::half: f(Eigen::half{}); return true;
    case DType::float32: f(float{}); return true;
    case DType::float64: f(double{}); return true;
    default: return false;
  }
}

Status unsupported_dtype(const char* what, DType t) {
  return Status(Error::unimplemented, fmt::format("{} of dtype {} cannot be resized", what, dtype_name(t)));
}

// a + b, wrapping for integers as TensorFlow's accumulation does (no
// signed overflow).
template <class T>
T add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

// The 1-D int32 `size` of [height, width], each positive.
Status read_size(const Tensor& size, int64_t* height, int64_t* width) {
  if (size.dtype() != DType::int32)
    return Status(Error::invalid_argument, "size must be int32, got " + dtype_name(size.dtype()));
  if (size.rank() != 1 || size.dim(0) != 2)
    return Status(Error::invalid_argument,
                  "size must be a 1-D tensor of 2 elements [height, width], got shape " + size.shape().to_string());
  *height = size.data<int32_t>()[0];
  *width = size.data<int32_t>()[1];
  if (*height <= 0 || *width <= 0)
    return Status(Error::invalid_argument, fmt::format("size must be positive, got [{}, {}]", *height, *width));
  return ok_status();
}

Status need_rank4(const Tensor& t, const char* what) {
  if (t.rank() != 4)
    return Status(Error::invalid_argument, fmt::format("{} must be 4-dimensional [batch, height, width, channels], "
                                                       "got shape {}",
                                                       what, t.shape().to_string()));
  return ok_status();
}

// What one resize (or its gradient) maps: `in` images to `out` ones, both
// [batch, height, width, channels].
struct ResizeGeometry {
  int64_t batch = 0, in_height = 0, in_width = 0, out_height = 0, out_width = 0, channels = 0;
  float height_scale = 0, width_scale = 0;
};

class ResizeKernel : public Kernel {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(align_corners_, init.attr<bool>("align_corners"));
    TF_ASSIGN_OR_RETURN(half_pixel_centers_, init.attr<bool>("half_pixel_centers"));
    return ok_status();
  }

 protected:
  // TensorFlow's ImageResizerState: the forward resize of `images` to `size`.
  Expected<ResizeGeometry> forward_geometry(const Tensor& images, const Tensor& size) const {
    if (half_pixel_centers_ && align_corners_)
      return Status(Error::invalid_argument, "If half_pixel_centers is True, align_corners must be False.");
    TF_RETURN_IF_ERROR(need_rank4(images, "images"));
    ResizeGeometry g;
    g.batch = images.dim(0);
    g.in_height = images.dim(1);
    g.in_width = images.dim(2);
    g.channels = images.dim(3);
    if (g.channels == 0) return Status(Error::invalid_argument, "image must have at least one channel");
    if (g.in_height == 0 || g.in_width == 0)
      return Status(Error::invalid_argument,
                    "input image must be of non-zero size, got shape " + images.shape().to_string());
    if (g.in_height >= INT32_MAX || g.in_width >= INT32_MAX)
      return Status(Error::invalid_argument, "input sizes must be between 0 and max int32, got shape " +
                                                 images.shape().to_string());
    TF_RETURN_IF_ERROR(read_size(size, &g.out_height, &g.out_width));
    g.height_scale = resize_scale(g.in_height, g.out_height, align_corners_);
    g.width_scale = resize_scale(g.in_width, g.out_width, align_corners_);
    if (std::ceil(static_cast<float>(g.out_height - 1) * g.height_scale) > static_cast<float>(INT64_MAX))
      return Status(Error::invalid_argument, "input image height scale would cause an overflow");
    if (std::ceil(static_cast<float>(g.out_width - 1) * g.width_scale) > static_cast<float>(INT_MAX))
      return Status(Error::invalid_argument, "input image width scale would cause an overflow");
    return g;
  }

  static Expected<Tensor> allocate(DType dtype, const ResizeGeometry& g) {
    TF_ASSIGN_OR_RETURN(Shape shape, Shape::make({g.batch, g.out_height, g.out_width, g.channels}));
    return allocate_tensor(dtype, shape);  // a size the inputs ask for is bounded first
  }

  bool align_corners_ = false;
  bool half_pixel_centers_ = false;
};

template <class T>
void resize_bilinear(const T* in, float* out, const ResizeGeometry& g, bool half_pixel_centers) {
  const int64_t c = g.channels;
  if (g.out_height == g.in_height && g.out_width == g.in_width) {  // as TensorFlow: a copy, even of inf and NaN
    const int64_t n = g.batch * g.in_height * g.in_width * c;
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
    return;
  }
  const std::vector<Interpolation> ys = interpolations(g.out_height, g.in_height, g.height_scale, half_pixel_centers);
  const std::vector<Interpolation> xs = interpolations(g.out_width, g.in_width, g.width_scale, half_pixel_centers);
  const int64_t in_row = g.in_width * c;
  for (int64_t b = 0; b < g.batch; ++b) {
    const T* image = in + b * g.in_height * in_row;
    for (const Interpolation& y : ys) {
      const T* top = image + y.lower * in_row;
      const T* bottom = image + y.upper * in_row;
      for (const Interpolation& x : xs) {
        for (int64_t k = 0; k < c; ++k) {
          const float top_left = static_cast<float>(top[x.lower * c + k]);
          const float top_right = static_cast<float>(top[x.upper * c + k]);
          const float bottom_left = static_cast<float>(bottom[x.lower * c + k]);
          const float bottom_right = static_cast<float>(bottom[x.upper * c + k]);
          const float upper = top_left + (top_right - top_left) * x.lerp;
          const float lower = bottom_left + (bottom_right - bottom_left) * x.lerp;
          *out++ = upper + (lower - upper) * y.lerp;
        }
      }
    }
  }
}

class ResizeBilinearKernel final : public ResizeKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& images = ctx.input(0);
    TF_ASSIGN_OR_RETURN(ResizeGeometry g, forward_geometry(images, ctx.input(1)));
    TF_ASSIGN_OR_RETURN(Tensor out, allocate(DType::float32, g));
    const bool half_pixel = half_pixel_centers_;
    if (!dispatch_image_dtype(images.dtype(), [&](auto t) {
          resize_bilinear(images.data<decltype(t)>(), out.mutable_data<float>(), g, half_pixel);
        }))
      return unsupported_dtype("images", images.dtype());
    ctx.set_output(0, std::move(out));
    return ok_status();
  }
};

template <class T>
void resize_nearest(const T* in, T* out, const ResizeGeometry& g, bool align_corners, bool half_pixel_centers) {
  std::vector<int64_t> xs(static_cast<size_t>(g.out_width));
  for (int64_t x = 0; x < g.out_width; ++x)
    xs[x] = nearest_index(x, g.width_scale, g.in_width, align_corners, half_pixel_centers);
  const int64_t c = g.channels;
  for (int64_t b = 0; b < g.batch; ++b) {
    for (int64_t y = 0; y < g.out_height; ++y) {
      const int64_t in_y = nearest_index(y, g.height_scale, g.in_height, align_corners, half_pixel_centers);
      const T* row = in + ((b * g.in_height + in_y) * g.in_width) * c;
      for (int64_t x = 0; x < g.out_width; ++x, out += c) std::copy_n(row + xs[x] * c, c, out);
    }
  }
}

class ResizeNearestNeighborKernel final : public ResizeKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& images = ctx.input(0);
    TF_ASSIGN_OR_RETURN(ResizeGeometry g, forward_geometry(images, ctx.input(1)));
    if (g.in_height >= (1 << 24) || g.in_width >= (1 << 24))
      return Status(Error::invalid_argument, "nearest neighbor requires max height & width of 2^24, got shape " +
                                                 images.shape().to_string());
    TF_ASSIGN_OR_RETURN(Tensor out, allocate(images.dtype(), g));
    const bool align = align_corners_, half_pixel = half_pixel_centers_;
    if (!dispatch_image_dtype(images.dtype(), [&](auto t) {
          using T = decltype(t);
          resize_nearest(images.data<T>(), out.mutable_data<T>(), g, align, half_pixel);
        }))
      return unsupported_dtype("images", images.dtype());
    ctx.set_output(0, std::move(out));
    return ok_status();
  }
};

// ResizeBilinearGrad: g.in_* is the resized (the gradient's) size, g.out_*
// the original image's; each gradient is shared out to the four pixels
// the forward op read, in the forward op's proportions.
template <class Acc>
void resize_bilinear_grad(const float* grads, Acc* out, const ResizeGeometry& g, bool half_pixel_centers) {
  const int64_t c = g.channels;
  std::fill_n(out, g.batch * g.out_height * g.out_width * c, Acc(0));
  for (int64_t b = 0; b < g.batch; ++b) {
    Acc* image = out + b * g.out_height * g.out_width * c;
    for (int64_t y = 0; y < g.in_height; ++y) {
      const Interpolation iy = interpolation_at(y, g.height_scale, g.out_height, half_pixel_centers);
      Acc* top = image + iy.lower * g.out_width * c;
      Acc* bottom = image + iy.upper * g.out_width * c;
      for (int64_t x = 0; x < g.in_width; ++x) {
        const Interpolation ix = interpolation_at(x, g.width_scale, g.out_width, half_pixel_centers);
        for (int64_t k = 0; k < c; ++k, ++grads) {
          const float d = *grads;
          top[ix.lower * c + k] += Acc(d * (1.0f - iy.lerp) * (1.0f - ix.lerp));
          top[ix.upper * c + k] += Acc(d * (1.0f - iy.lerp) * ix.lerp);
          bottom[ix.lower * c + k] += Acc(d * iy.lerp * (1.0f - ix.lerp));
          bottom[ix.upper * c + k] += Acc(d * iy.lerp * ix.lerp);
        }
      }
    }
  }
}

class ResizeBilinearGradKernel final : public ResizeKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& grads = ctx.input(0);
    const Tensor& original = ctx.input(1);
    TF_ASSIGN_OR_RETURN(ResizeGeometry g, geometry(grads, original));
    TF_ASSIGN_OR_RETURN(Tensor out, allocate(original.dtype(), g));
    const bool half_pixel = half_pixel_centers_;
    const float* d = grads.data<float>();
    switch (original.dtype()) {
      case DType::float32: resize_bilinear_grad(d, out.mutable_data<float>(), g, half_pixel); break;
      case DType::float64: resize_bilinear_grad(d, out.mutable_data<double>(), g, half_pixel); break;
      case DType::half: accumulate_in_float<Eigen::half>(d, out, g); break;
      case DType::bfloat16: accumulate_in_float<Eigen::bfloat16>(d, out, g); break;
      default: return unsupported_dtype("original_image", original.dtype());
    }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  // TensorFlow's ImageResizerGradientState; the output takes the batch and
  // channels of `grads` and the height and width of `original`.
  Expected<ResizeGeometry> geometry(const Tensor& grads, const Tensor& original) const {
    if (half_pixel_centers_ && align_corners_)
      return Status(Error::invalid_argument, "If half_pixel_centers is True, align_corners must be False.");
    TF_RETURN_IF_ERROR(need_rank4(grads, "grads"));
    if (grads.dtype() != DType::float32)
      return Status(Error::invalid_argument, "grads must be float32, got " + dtype_name(grads.dtype()));
    TF_RETURN_IF_ERROR(need_rank4(original, "original_image"));
    ResizeGeometry g;
    g.batch = grads.dim(0);
    g.in_height = grads.dim(1);
    g.in_width = grads.dim(2);
    g.channels = grads.dim(3);
    g.out_height = original.dim(1);
    g.out_width = original.dim(2);
    if (g.in_height == 0 || g.in_width == 0)
      return Status(Error::invalid_argument, "resized dimensions must be positive, grads have shape " +
                                                 grads.shape().to_string());
    if (g.out_height == 0 || g.out_width == 0)
      return Status(Error::invalid_argument, "original dimensions must be positive, original_image has shape " +
                                                 original.shape().to_string());
    if (g.out_height >= INT32_MAX || g.out_width >= INT32_MAX)
      return Status(Error::invalid_argument, "original sizes must be between 0 and max int32, got shape " +
                                                 original.shape().to_string());
    g.height_scale = resize_scale(g.out_height, g.in_height, align_corners_);
    g.width_scale = resize_scale(g.out_width, g.in_width, align_corners_);
    return g;
  }

  template <class T>
  void accumulate_in_float(const float* grads, Tensor& out, const ResizeGeometry& g) const {
    std::vector<float> sums(static_cast<size_t>(out.num_elements()));
    resize_bilinear_grad(grads, sums.data(), g, half_pixel_centers_);
    T* o = out.mutable_data<T>();
    for (size_t i = 0; i < sums.size(); ++i) o[i] = static_cast<T>(sums[i]);
  }
};

// ResizeNearestNeighborGrad: g.in_* is the gradient's size, g.out_* the
// original's; each gradient goes to the one pixel the forward op copied.
template <class T>
void resize_nearest_grad(const T* grads, T* out, const ResizeGeometry& g, bool align_corners,
                         bool half_pixel_centers) {
  const int64_t c = g.channels;
  std::vector<int64_t> xs(static_cast<size_t>(g.in_width));
  for (int64_t x = 0; x < g.in_width; ++x)
    xs[x] = nearest_index(x, g.width_scale, g.out_width, align_corners, half_pixel_centers);
  for (int64_t b = 0; b < g.batch; ++b) {
    for (int64_t y = 0; y < g.in_height; ++y) {
      const int64_t out_y = nearest_index(y, g.height_scale, g.out_height, align_corners, half_pixel_centers);
      T* row = out + ((b * g.out_height + out_y) * g.out_width) * c;
      for (int64_t x = 0; x < g.in_width; ++x)
        for (int64_t k = 0; k < c; ++k, ++grads) row[xs[x] * c + k] = add(row[xs[x] * c + k], *grads);
    }
  }
}

class ResizeNearestNeighborGradKernel final : public ResizeKernel {
 public:
  Status compute(KernelContext& ctx) const override {
    const Tensor& grads = ctx.input(0);
    TF_RETURN_IF_ERROR(need_rank4(grads, "grads"));
    ResizeGeometry g;
    g.batch = grads.dim(0);
    g.in_height = grads.dim(1);
    g.in_width = grads.dim(2);
    g.channels = grads.dim(3);
    TF_RETURN_IF_ERROR(read_size(ctx.input(1), &g.out_height, &g.out_width));
    TF_ASSIGN_OR_RETURN(Tensor out, allocate(grads.dtype(), g));  // zeros
    if (g.in_height > 0 && g.in_width > 0) {
      g.height_scale = resize_scale(g.out_height, g.in_height, align_corners_);
      g.width_scale = resize_scale(g.out_width, g.in_width, align_corners_);
      const bool align = align_corners_, half_pixel = half_pixel_centers_;
      if (!dispatch_image_dtype(grads.dtype(), [&](auto t) {
            using T = decltype(t);
            resize_nearest_grad(grads.data<T>(), out.mutable_data<T>(), g, align, half_pixel);
          }))
        return unsupported_dtype("grads", grads.dtype());
    }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }
};

// ResizeBilinear, ResizeNearestNeighbor and ResizeNearestNeighborGrad:
// input 0's batch and channels, the height and width `size` gives.
Status resize_shape(InferenceContext& c) {
  const PartialShape& images = c.input_shape(0);
  if (shape::known_rank(images) && shape::rank(images) != 4)
    return c.error("input 0 must have rank 4 [batch, height, width, channels], not " + images.to_string());
  const PartialShape& size = c.input_shape(1);
  if (shape::known_rank(size) && (shape::rank(size) != 1 || !shape::dims_compatible(size.dims[0], 2)))
    return c.error("size must be a vector of 2 elements, not " + size.to_string());
  int64_t height = -1, width = -1;
  if (std::optional<std::vector<int64_t>> v = c.input_ints(1); v && v->size() == 2) {
    height = std::max<int64_t>((*v)[0], -1);
    width = std::max<int64_t>((*v)[1], -1);
  }
  c.set_output(0, shape::known({shape::dim(images, 0), height, width, shape::dim(images, 3)}));
  return ok_status();
}

const std::vector<DType>& resize_dtypes() {
  static const std::vector<DType> kTypes = {DType::int8,     DType::uint8, DType::int16,   DType::uint16,
                                            DType::int32,    DType::int64, DType::bfloat16, DType::half,
                                            DType::float32, DType::float64};
  return kTypes;
}

}  // namespace

void register_image_resize_ops(OpRegistry& r) {
  register_builtin(r, OpDef("ResizeBilinear").shape_fn(resize_shape)
                          .input("images: T")
                          .input("size: int32")
                          .output("resized_images: float")
                          .type_attr("T", resize_dtypes())
                          .attr("align_corners", "bool", false)
                          .attr("half_pixel_centers", "bool", false)
                          .kernel(make_kernel_factory<ResizeBilinearKernel>()));
  register_builtin(r, OpDef("ResizeNearestNeighbor").shape_fn(resize_shape)
                          .input("images: T")
                          .input("size: int32")
                          .output("resized_images: T")
                          .type_attr("T", resize_dtypes())
                          .attr("align_corners", "bool", false)
                          .attr("half_pixel_centers", "bool", false)
                          .kernel(make_kernel_factory<ResizeNearestNeighborKernel>()));
  register_builtin(r, OpDef("ResizeBilinearGrad").shape_fn(shape_fns::of_input<1>)
                          .input("grads: float")
                          .input("original_image: T")
                          .output("output: T")
                          .type_attr("T", {DType::float32, DType::bfloat16, DType::half, DType::float64})
                          .attr("align_corners", "bool", false)
                          .attr("half_pixel_centers", "bool", false)
                          .kernel(make_kernel_factory<ResizeBilinearGradKernel>()));
  register_builtin(r, OpDef("ResizeNearestNeighborGrad").shape_fn(resize_shape)
                          .input("grads: T")
                          .input("size: int32")
                          .output("output: T")
                          .type_attr("T", {DType::uint8, DType::int8, DType::int32, DType::half, DType::float32,
                                           DType::float64, DType::bfloat16})
                          .attr("align_corners", "bool", false)
                          .attr("half_pixel_centers", "bool", false)
                          .kernel(make_kernel_factory<ResizeNearestNeighborGradKernel>()));
}

}  // namespace tagflow::ops
