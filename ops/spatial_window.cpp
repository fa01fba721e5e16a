// Window attrs and output sizes of the convolution and pooling kernels.
#include "ops/spatial_window.hpp"

#include <vector>

#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

// Window sizes, strides, dilations and paddings above this are refused, so
// that output sizes are computed without overflow.
constexpr int64_t kMaxWindowValue = int64_t{1} << 31;

Status bad(const char* op, const std::string& what) {
  return Status(Error::invalid_argument, std::string(op) + ": " + what);
}

std::string list_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// Where height and width are in a rank-4 list of the node's data_format.
struct Layout {
  bool nchw = false;
  int h() const { return nchw ? 2 : 1; }
  int w() const { return nchw ? 3 : 2; }
  int c() const { return nchw ? 1 : 3; }
  const char* name() const { return nchw ? "NCHW" : "NHWC"; }
};

// A list(int) attr of 4 entries in the node's layout whose N and C entries
// are 1 and whose H and W entries are >= 1.
Expected<std::vector<int64_t>> read_window_list(const KernelInit& init, const char* op, const char* name,
                                                Layout layout) {
  TF_ASSIGN_OR_RETURN(AttrList list, init.attr<AttrList>(name));
  const std::vector<int64_t>& v = list.i;
  if (v.size() != 4)
    return bad(op, std::string(name) + " must have 4 entries (" + layout.name() + "), got " + list_string(v));
  const int64_t h = v[layout.h()], w = v[layout.w()];
  if (v[0] != 1 || v[layout.c()] != 1)
    return bad(op, std::string(name) + " " + list_string(v) +
                       " must be 1 in the batch and depth dimensions");
  if (h < 1 || w < 1)
    return bad(op, std::string(name) + " " + list_string(v) +
                       " must be >= 1 in the height and width dimensions");
  if (h > kMaxWindowValue || w > kMaxWindowValue)
    return bad(op, std::string(name) + " " + list_string(v) + " exceeds " + std::to_string(kMaxWindowValue));
  return std::vector<int64_t>{h, w};
}

// The node's data_format: NHWC, or NCHW where `allow_nchw`.
Expected<Layout> read_layout(const KernelInit& init, const char* op, bool allow_nchw) {
  if (init.attrs.count("data_format") == 0) return Layout{};
  TF_ASSIGN_OR_RETURN(std::string format, init.attr<std::string>("data_format"));
  if (format == "NHWC") return Layout{};
  if (format == "NCHW" && allow_nchw) return Layout{true};
  if (format == "NCHW" || format == "NCHW_VECT_C")
    return Status(Error::unimplemented, std::string(op) + " '" + init.node_name +
                                            "': data_format " + format + " is not implemented (only NHWC" +
                                            (allow_nchw ? " and NCHW)" : ")"));
  return bad(op, "data_format must be NHWC or NCHW, got '" + format + "'");
}

Expected<Padding> read_padding(const KernelInit& init, const char* op, bool allow_explicit) {
  TF_ASSIGN_OR_RETURN(std::string p, init.attr<std::string>("padding"));
  if (p == "VALID") return Padding::valid;
  if (p == "SAME") return Padding::same;
  if (p == "EXPLICIT" && allow_explicit) return Padding::explicit_pads;
  if (p == "EXPLICIT")
    return Status(Error::unimplemented, std::string(op) + " '" + init.node_name +
                                            "': padding EXPLICIT is not implemented");
  return bad(op, std::string("padding must be SAME, VALID") + (allow_explicit ? " or EXPLICIT" : "") +
                     ", got '" + p + "'");
}

// explicit_paddings: empty unless padding is EXPLICIT; then 8 entries,
// (before, after) per dimension of the layout, >= 0 and zero for N and C.
Status read_explicit_paddings(const KernelInit& init, const char* op, Layout layout, WindowAttrs& w) {
  std::vector<int64_t> p;
  if (init.attrs.count("explicit_paddings") != 0) {
    TF_ASSIGN_OR_RETURN(AttrList list, init.attr<AttrList>("explicit_paddings"));
    p = list.i;
  }
  if (w.padding != Padding::explicit_pads) {
    if (!p.empty())
      return bad(op, "explicit_paddings " + list_string(p) + " given with padding other than EXPLICIT");
    return ok_status();
  }
  if (p.size() != 8)
    return bad(op, "explicit_paddings must have 8 entries with padding EXPLICIT, got " + list_string(p));
  for (int64_t v : p)
    if (v < 0 || v > kMaxWindowValue)
      return bad(op, "explicit_paddings " + list_string(p) + " must be >= 0 and <= " +
                         std::to_string(kMaxWindowValue));
  if (p[0] != 0 || p[1] != 0 || p[2 * layout.c()] != 0 || p[2 * layout.c() + 1] != 0)
    return bad(op, "explicit_paddings " + list_string(p) +
                       " must be 0 in the batch and depth dimensions");
  w.pad_top = p[2 * layout.h()];
  w.pad_bottom = p[2 * layout.h() + 1];
  w.pad_left = p[2 * layout.w()];
  w.pad_right = p[2 * layout.w() + 1];
  return ok_status();
}

// The output size along one dimension and the padding before it.
Status output_dim(const char* op, const char* dim, int64_t in, int64_t k, int64_t dilation,
                  int64_t stride, Padding p, int64_t before, int64_t after, int64_t* out,
                  int64_t* pad_before) {
  const int64_t effective = (k - 1) * dilation + 1;
  switch (p) {
    case Padding::valid:
      *out = (in - effective + stride) / stride;
      *pad_before = 0;
      if (in < effective) *out = -1;
      break;
    case Padding::same: {
      *out = (in + stride - 1) / stride;
      const int64_t needed = std::max<int64_t>((*out - 1) * stride + effective - in, 0);
      *pad_before = needed / 2;
      break;
    }
    case Padding::explicit_pads:
      *pad_before = before;
      *out = in + before + after < effective ? -1 : (in + before + after - effective + stride) / stride;
      break;
  }
  if (*out < 0)
    return bad(op, std::string("the window does not fit in the ") + dim + ": input size " +
                       std::to_string(in) + ", effective window size " + std::to_string(effective) +
                       " (with padding " + std::to_string(before) + "+" + std::to_string(after) +
                       ") gives a negative output size");
  return ok_status();
}

}  // namespace

Expected<WindowAttrs> read_conv_attrs(const KernelInit& init, const char* op) {
  TF_ASSIGN_OR_RETURN(Layout layout, read_layout(init, op, true));
  WindowAttrs w;
  w.nchw = layout.nchw;
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> strides, read_window_list(init, op, "strides", layout));
  w.stride_h = strides[0];
  w.stride_w = strides[1];
  if (init.attrs.count("dilations") != 0) {
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> dilations, read_window_list(init, op, "dilations", layout));
    w.dilation_h = dilations[0];
    w.dilation_w = dilations[1];
  }
  TF_ASSIGN_OR_RETURN(w.padding, read_padding(init, op, true));
  TF_RETURN_IF_ERROR(read_explicit_paddings(init, op, layout, w));
  return w;
}

Expected<WindowAttrs> read_pool_attrs(const KernelInit& init, const char* op) {
  TF_ASSIGN_OR_RETURN(Layout layout, read_layout(init, op, true));
  WindowAttrs w;
  w.nchw = layout.nchw;
  TF_ASSIGN_OR_RETURN(AttrList ksize, init.attr<AttrList>("ksize"));
  TF_ASSIGN_OR_RETURN(AttrList strides, init.attr<AttrList>("strides"));
  const bool depth_window = ksize.i.size() == 4 && strides.i.size() == 4 &&
                            (ksize.i[layout.c()] != 1 || strides.i[layout.c()] != 1) && ksize.i[0] == 1;
  if (depth_window)
    return Status(Error::unimplemented, std::string(op) + " '" + init.node_name +
                                            "': pooling over the depth dimension (ksize " +
                                            list_string(ksize.i) + ", strides " +
                                            list_string(strides.i) + ") is not implemented");
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> k, read_window_list(init, op, "ksize", layout));
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> s, read_window_list(init, op, "strides", layout));
  w.ksize_h = k[0];
  w.ksize_w = k[1];
  w.stride_h = s[0];
  w.stride_w = s[1];
  TF_ASSIGN_OR_RETURN(w.padding, read_padding(init, op, false));
  return w;
}

Status compute_output_size(const char* op, const WindowAttrs& w, ConvGeometry& g) {
  g.stride_h = w.stride_h;
  g.stride_w = w.stride_w;
  g.dilation_h = w.dilation_h;
  g.dilation_w = w.dilation_w;
  if (g.k_h > kMaxWindowValue || g.k_w > kMaxWindowValue)
    return bad(op, "the window " + std::to_string(g.k_h) + "x" + std::to_string(g.k_w) + " exceeds " +
                       std::to_string(kMaxWindowValue));
  TF_RETURN_IF_ERROR(output_dim(op, "height", g.in_h, g.k_h, g.dilation_h, g.stride_h, w.padding,
                                w.pad_top, w.pad_bottom, &g.out_h, &g.pad_top));
  TF_RETURN_IF_ERROR(output_dim(op, "width", g.in_w, g.k_w, g.dilation_w, g.stride_w, w.padding,
                                w.pad_left, w.pad_right, &g.out_w, &g.pad_left));
  g.nchw = w.nchw;
  Expected<Shape> out = Shape::make({g.batch, g.out_h, g.out_w, g.out_c});
  if (!out.ok()) return out.status().with_prefix(std::string(op) + ": the output ");
  return ok_status();
}

Tensor image_as_nhwc(const ConvGeometry& g, const Tensor& t) { return g.nchw ? channels_last(t) : t; }
Tensor image_from_nhwc(const ConvGeometry& g, Tensor t) { return g.nchw ? channels_first(t) : t; }

Expected<Shape> read_shape4(const char* op, const char* what, const Tensor& t) {
  const bool i32 = t.dtype() == DType::int32, i64 = t.dtype() == DType::int64;
  if ((!i32 && !i64) || t.rank() != 1 || t.dim(0) != 4)
    return bad(op, std::string(what) + " must be an int32 vector of 4 elements, got " +
                       dtype_name(t.dtype()) + t.shape().to_string());
  std::vector<int64_t> dims(4);
  for (int i = 0; i < 4; ++i) {
    dims[i] = i32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
    if (dims[i] < 0) return bad(op, std::string(what) + " has a negative size: " + list_string(dims));
  }
  Expected<Shape> s = Shape::make(dims);
  if (!s.ok()) return s.status().with_prefix(std::string(op) + ": " + what + ": ");
  return s;
}

}  // namespace tagflow::ops
