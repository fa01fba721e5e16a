// Shape functions of the neural-network ops: Conv2D and depthwise
// convolution with their gradients, pooling, BiasAdd, FusedBatchNorm,
// softmax cross entropy, the LSTM and GRU block cells, NearestNeighbors.
#include "ops/shape_fns.hpp"

namespace tagflow::ops::shape_fns {


namespace {

// Where N, H, W and C are in a rank-4 tensor of the node's data_format.
struct Layout {
  int n = 0, h = 1, w = 2, c = 3;
};

}  // namespace

static Layout layout_of(const InferenceContext& c) {
  if (c.string_attr("data_format") == "NCHW") return {0, 2, 3, 1};
  return {};
}

// A list(int) attr's element at the H / W position, 1 when absent.
static int64_t list_at(const InferenceContext& c, std::string_view key, int i) {
  const auto* l = c.attr<AttrList>(key);
  return l != nullptr && static_cast<size_t>(i) < l->i.size() ? l->i[static_cast<size_t>(i)] : 1;
}

// One spatial output size: VALID, SAME or EXPLICIT padding.
static int64_t window_out(const InferenceContext& c, int64_t in, int64_t k, int spatial, int index) {
  const int64_t stride = list_at(c, "strides", index);
  const int64_t dilation = list_at(c, "dilations", index);
  if (in < 0 || k < 0 || stride <= 0 || dilation <= 0) return -1;
  const int64_t eff = (k - 1) * dilation + 1;
  const std::string padding = c.string_attr("padding");
  if (padding == "SAME") return (in + stride - 1) / stride;
  if (padding == "VALID") return in >= eff ? (in - eff) / stride + 1 : -1;
  if (padding == "EXPLICIT") {
    const auto* p = c.attr<AttrList>("explicit_paddings");
    if (p == nullptr || p->i.size() != 8) return -1;
    const int64_t padded = in + p->i[static_cast<size_t>(2 * index)] + p->i[static_cast<size_t>(2 * index + 1)];
    return padded >= eff ? (padded - eff) / stride + 1 : -1;
  }
  (void)spatial;
  return -1;
}

static PartialShape rank4(const Layout& l, int64_t n, int64_t h, int64_t w, int64_t ch) {
  PartialShape s = shape::of_rank(4);
  s.dims[static_cast<size_t>(l.n)] = n;
  s.dims[static_cast<size_t>(l.h)] = h;
  s.dims[static_cast<size_t>(l.w)] = w;
  s.dims[static_cast<size_t>(l.c)] = ch;
  return s;
}

static Status need_rank(const InferenceContext& c, int input, int r, const char* what) {
  const PartialShape& s = c.input_shape(input);
  if (!s.unknown_rank && shape::rank(s) != r)
    return c.error(std::string(what) + " must have rank " + std::to_string(r) + ", not " + s.to_string());
  return ok_status();
}

// Conv2D and DepthwiseConv2dNative: filter [h, w, in, out] (depthwise:
// [h, w, in, multiplier], out = in * multiplier).
Status conv(InferenceContext& c) {
  TF_RETURN_IF_ERROR(need_rank(c, 0, 4, "the input"));
  TF_RETURN_IF_ERROR(need_rank(c, 1, 4, "the filter"));
  const Layout l = layout_of(c);
  const PartialShape& in = c.input_shape(0);
  const PartialShape& f = c.input_shape(1);
  const int64_t in_c = shape::dim(in, l.c), f_in = shape::dim(f, 2);
  const bool depthwise = c.op() == "DepthwiseConv2dNative";
  if (in_c >= 0 && f_in > 0 && (depthwise ? in_c != f_in : in_c % f_in != 0))
    return c.error("input channels " + std::to_string(in_c) + " do not fit the filter's " + std::to_string(f_in) +
                   ": input " + in.to_string() + ", filter " + f.to_string());
  const int64_t out_c = depthwise ? shape::mul_dims(shape::merge_dim(in_c, f_in), shape::dim(f, 3)) : shape::dim(f, 3);
  c.set_output(0, rank4(l, shape::dim(in, l.n), window_out(c, shape::dim(in, l.h), shape::dim(f, 0), 0, l.h),
                        window_out(c, shape::dim(in, l.w), shape::dim(f, 1), 1, l.w), out_c));
  return ok_status();
}

// MaxPool / AvgPool: ksize and strides in the data format's order.
Status pool(InferenceContext& c) {
  TF_RETURN_IF_ERROR(need_rank(c, 0, 4, "the input"));
  const Layout l = layout_of(c);
  const PartialShape& in = c.input_shape(0);
  c.set_output(0, rank4(l, shape::dim(in, l.n), window_out(c, shape::dim(in, l.h), list_at(c, "ksize", l.h), 0, l.h),
                        window_out(c, shape::dim(in, l.w), list_at(c, "ksize", l.w), 1, l.w), shape::dim(in, l.c)));
  return ok_status();
}

Status bias_add(InferenceContext& c) {
  const PartialShape& v = c.input_shape(0);
  const PartialShape& b = c.input_shape(1);
  if (!b.unknown_rank && b.dims.size() != 1) return c.error("bias must be a vector, not " + b.to_string());
  if (!v.unknown_rank && v.dims.size() < 2) return c.error("value must have rank 2 or more, not " + v.to_string());
  if (v.unknown_rank) return ok_status();
  PartialShape out = v;
  const bool nchw = c.string_attr("data_format") == "NCHW";
  const size_t ci = nchw ? 1 : out.dims.size() - 1;
  const int64_t bd = shape::dim(b, 0);
  if (!shape::dims_compatible(out.dims[ci], bd))
    return c.error("bias of shape " + b.to_string() + " does not match the channels of value " + v.to_string());
  out.dims[ci] = shape::merge_dim(out.dims[ci], bd);
  c.set_output(0, out);
  return ok_status();
}

Status bias_add_grad(InferenceContext& c) {
  const PartialShape& g = c.input_shape(0);
  if (g.unknown_rank || g.dims.empty()) {
    c.set_output(0, shape::vector(-1));
    return ok_status();
  }
  const bool nchw = c.string_attr("data_format") == "NCHW";
  c.set_output(0, shape::vector(nchw && g.dims.size() > 1 ? g.dims[1] : g.dims.back()));
  return ok_status();
}

// FusedBatchNorm(V2, V3): y as x, the statistics [C]; reserve spaces
// other than the statistics unknown. The grads: x_backprop as x, the rest [C].
Status fused_batch_norm(InferenceContext& c) {
  const Layout l = layout_of(c);
  const bool grad = c.op().find("Grad") != std::string_view::npos;
  const PartialShape& x = c.input_shape(grad ? 1 : 0);
  int64_t ch = shape::dim(x, l.c);
  if (x.unknown_rank || x.dims.size() != 4) ch = -1;
  ch = shape::merge_dim(ch, shape::dim(c.input_shape(grad ? 2 : 1), 0));
  c.set_output(0, x);
  const int stats = grad ? 3 : 5;
  for (int i = 1; i < c.num_outputs() && i < stats; ++i) c.set_output(i, shape::vector(ch));
  return ok_status();
}

Status softmax_xent(InferenceContext& c) {
  const PartialShape& f = c.input_shape(0);
  const bool sparse = c.op() == "SparseSoftmaxCrossEntropyWithLogits";
  PartialShape logits = f;
  if (!sparse) {
    auto b = shape::broadcast(f, c.input_shape(1));
    if (!b)
      return c.error("features " + f.to_string() + " and labels " + c.input_shape(1).to_string() +
                     " cannot broadcast");
    logits = *b;
  }
  if (logits.unknown_rank) return ok_status();
  if (logits.dims.size() != 2) return c.error("logits must be a matrix, not " + logits.to_string());
  c.set_output(0, shape::vector(logits.dims[0]));
  c.set_output(1, logits);
  return ok_status();
}

// LSTMBlockCell: every output [batch, cell]; cell from cs_prev.
Status lstm_block_cell(InferenceContext& c) {
  const int64_t batch = shape::merge_dim(shape::dim(c.input_shape(0), 0), shape::dim(c.input_shape(1), 0));
  const int64_t cell = shape::dim(c.input_shape(1), 1);
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, shape::known({batch, cell}));
  return ok_status();
}

Status lstm_block_cell_grad(InferenceContext& c) {
  const int64_t batch = shape::dim(c.input_shape(0), 0);
  const int64_t cell = shape::dim(c.input_shape(1), 1);
  c.set_output(0, shape::known({batch, cell}));
  c.set_output(1, shape::known({batch, shape::mul_dims(cell, 4)}));
  for (int i = 2; i < 5; ++i) c.set_output(i, shape::vector(cell));
  return ok_status();
}

Status gru_block_cell(InferenceContext& c) {
  const int64_t batch = shape::dim(c.input_shape(0), 0);
  const int64_t cell = shape::dim(c.input_shape(1), 1);
  for (int i = 0; i < c.num_outputs(); ++i) c.set_output(i, shape::known({batch, cell}));
  return ok_status();
}

Status gru_block_cell_grad(InferenceContext& c) {
  const int64_t batch = shape::dim(c.input_shape(0), 0);
  const int64_t cell = shape::dim(c.input_shape(1), 1);
  c.set_output(0, c.input_shape(0));
  c.set_output(1, shape::known({batch, cell}));
  c.set_output(2, shape::known({batch, cell}));
  c.set_output(3, shape::known({batch, shape::mul_dims(cell, 2)}));
  return ok_status();
}

Status nearest_neighbors(InferenceContext& c) {
  auto k = c.input_ints(2);
  const int64_t n = shape::dim(c.input_shape(0), 0);
  const int64_t kk = k && k->size() == 1 ? (*k)[0] : -1;
  // At most the number of centers: k is clamped by the kernel.
  const int64_t m = shape::dim(c.input_shape(1), 0);
  const int64_t out_k = kk >= 0 && m >= 0 ? std::min(kk, m) : -1;
  c.set_output(0, shape::known({n, out_k}));
  c.set_output(1, shape::known({n, out_k}));
  return ok_status();
}

}  // namespace tagflow::ops::shape_fns
