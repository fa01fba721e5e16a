// The 2-D sliding window shared by the convolution and pooling kernels
// (conv_ops.cpp, pooling_ops.cpp): the window attrs of a node (strides,
// padding, explicit_paddings, dilations, ksize, data_format) read once when
// its kernel is made, the output size and padding offsets of one call
// computed as TensorFlow's GetWindowedOutputSize does, and the im2col /
// col2im copies that turn a convolution into one Eigen matrix product.
// The convolutions and pooling take NHWC and NCHW (data_format); a
// node asking for another data_format gets an unimplemented error naming
// it. Plain values; internal to ops/.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include <Eigen/Core>

#include "ops/kernel.hpp"

namespace tagflow::ops {

enum class Padding { valid, same, explicit_pads };

// A node's window attrs along height and width. `pad_*` are the
// explicit_paddings of an EXPLICIT node, zero otherwise.
struct WindowAttrs {
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
  int64_t ksize_h = 1, ksize_w = 1;  // pooling only
  Padding padding = Padding::valid;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  bool nchw = false;  // data_format NCHW: images [batch, channels, height, width]
};

// Conv2D and its backprops: strides, padding (SAME, VALID or EXPLICIT with
// explicit_paddings), dilations, data_format (NHWC or NCHW; the lists are
// in its order).
Expected<WindowAttrs> read_conv_attrs(const KernelInit& init, const char* op);
// MaxPool, AvgPool and their gradients: ksize, strides, padding (SAME or
// VALID), data_format.
Expected<WindowAttrs> read_pool_attrs(const KernelInit& init, const char* op);

// One call's geometry: an input of batch images of in_h x in_w pixels of
// in_c channels seen through a k_h x k_w window, giving batch images of
// out_h x out_w pixels of out_c channels; NHWC ([batch, h, w, c]) unless
// `nchw`. im2col and col2im take NHWC images.
struct ConvGeometry {
  int64_t batch = 0, in_h = 0, in_w = 0, in_c = 0;
  int64_t k_h = 0, k_w = 0, out_c = 0;
  int64_t out_h = 0, out_w = 0;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_left = 0;
  bool nchw = false;

  int64_t patch_size() const { return k_h * k_w * in_c; }    // one im2col row
  int64_t out_pixels() const { return out_h * out_w; }        // per image
  int64_t in_image_size() const { return in_h * in_w * in_c; }
  Shape out_shape() const { return image_shape(out_h, out_w, out_c); }
  Shape in_shape() const { return image_shape(in_h, in_w, in_c); }
  Shape image_shape(int64_t h, int64_t w, int64_t c) const {
    return nchw ? Shape{batch, c, h, w} : Shape{batch, h, w, c};
  }
  ConvGeometry as_nhwc() const {
    ConvGeometry g = *this;
    g.nchw = false;
    return g;
  }
};

// An image tensor of g's layout as NHWC (itself when g is NHWC), and an
// NHWC image back in g's layout: for kernels that compute NHWC only.
Tensor image_as_nhwc(const ConvGeometry& g, const Tensor& t);
Tensor image_from_nhwc(const ConvGeometry& g, Tensor t);

// Fills out_h, out_w, pad_top and pad_left of `g` (whose input and window
// sizes are set) from `w`; an error (prefixed by `op`) if the output size
// would be negative.
Status compute_output_size(const char* op, const WindowAttrs& w, ConvGeometry& g);

// Reads an int32/int64 vector of 4 sizes (Conv2DBackpropInput's
// input_sizes, AvgPoolGrad's orig_input_shape), each >= 0.
Expected<Shape> read_shape4(const char* op, const char* what, const Tensor& t);

// Calls f(row, ky, kx, iy, ix) for every patch position of output pixel
// (oy, ox) of `g`, with `row` the (ky, kx) slot of the pixel's im2col row;
// positions that fall in the padding have iy or ix out of range.
template <class F>
void for_each_tap(const ConvGeometry& g, int64_t oy, int64_t ox, F&& f) {
  const int64_t y0 = oy * g.stride_h - g.pad_top;
  const int64_t x0 = ox * g.stride_w - g.pad_left;
  for (int64_t ky = 0; ky < g.k_h; ++ky)
    for (int64_t kx = 0; kx < g.k_w; ++kx)
      f((ky * g.k_w + kx) * g.in_c, y0 + ky * g.dilation_h, x0 + kx * g.dilation_w);
}

inline bool inside(const ConvGeometry& g, int64_t iy, int64_t ix) {
  return iy >= 0 && iy < g.in_h && ix >= 0 && ix < g.in_w;
}

// cols [out_pixels, patch_size] of one image [in_h, in_w, in_c]: each row
// the window of one output pixel, in (ky, kx, channel) order — the row
// order of a [k_h, k_w, in_c, out_c] filter seen as a matrix; zeros where
// the window covers padding.
template <class T>
void im2col(const ConvGeometry& g, const T* image, T* cols) {
  const int64_t k = g.patch_size();
  for (int64_t oy = 0; oy < g.out_h; ++oy)
    for (int64_t ox = 0; ox < g.out_w; ++ox) {
      T* row = cols + (oy * g.out_w + ox) * k;
      for_each_tap(g, oy, ox, [&](int64_t slot, int64_t iy, int64_t ix) {
        if (inside(g, iy, ix)) std::copy_n(image + (iy * g.in_w + ix) * g.in_c, g.in_c, row + slot);
        else std::fill_n(row + slot, g.in_c, T(0));
      });
    }
}

// The adjoint of im2col: adds each slot of cols back onto the image pixel it
// was copied from (image must be zeroed or hold a partial sum).
template <class T>
void col2im(const ConvGeometry& g, const T* cols, T* image) {
  using Vec = Eigen::Array<T, Eigen::Dynamic, 1>;
  const int64_t k = g.patch_size();
  for (int64_t oy = 0; oy < g.out_h; ++oy)
    for (int64_t ox = 0; ox < g.out_w; ++ox) {
      const T* row = cols + (oy * g.out_w + ox) * k;
      for_each_tap(g, oy, ox, [&](int64_t slot, int64_t iy, int64_t ix) {
        if (!inside(g, iy, ix)) return;
        Eigen::Map<Vec>(image + (iy * g.in_w + ix) * g.in_c, g.in_c) +=
            Eigen::Map<const Vec>(row + slot, g.in_c);
      });
    }
}

}  // namespace tagflow::ops
