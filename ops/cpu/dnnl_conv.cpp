#include "ops/cpu/dnnl_conv.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "ops/cpu/dnnl.hpp"
#include "ops/cpu/parallel.hpp"
#include "ops/tensor.hpp"

namespace tagflow::ops::cpu {

namespace {

using dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using dnnl::memory;

enum class Pass : int64_t { forward = 1, backward_data = 2, backward_weights = 3 };

memory::desc image_md(const ConvShape& s, int64_t c, int64_t h, int64_t w) {
  return memory::desc({s.batch, c, h, w}, dt::f32, s.nchw ? tag::nchw : tag::nhwc);
}
memory::desc src_md(const ConvShape& s) { return image_md(s, s.in_c, s.in_h, s.in_w); }
memory::desc dst_md(const ConvShape& s) { return image_md(s, s.out_c, s.out_h, s.out_w); }

// TensorFlow's filter layout: [h][w][in][out] is oneDNN's hwio; a
// depthwise [h][w][in][mult] is hwigo with groups = in and one input
// channel a group.
memory::desc user_filter_md(const ConvShape& s) {
  if (s.depthwise) return memory::desc({s.in_c, s.out_c / s.in_c, 1, s.k_h, s.k_w}, dt::f32, tag::hwigo);
  return memory::desc({s.out_c, s.in_c, s.k_h, s.k_w}, dt::f32, tag::hwio);
}
memory::desc any_filter_md(const ConvShape& s) {
  return memory::desc(user_filter_md(s).dims(), dt::f32, tag::any);
}

// The window of s as oneDNN takes it: dilation 0 is none, and the padding
// after is what the last window needs (never negative: TensorFlow's output
// size never uses padding beyond it).
struct Window {
  dims strides, dilates, pad_l, pad_r;
};
Window window_of(const ConvShape& s) {
  auto after = [](int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation, int64_t before) {
    return std::max<int64_t>(0, (out - 1) * stride + (k - 1) * dilation + 1 - in - before);
  };
  return Window{{s.stride_h, s.stride_w},
                {s.dilation_h - 1, s.dilation_w - 1},
                {s.pad_top, s.pad_left},
                {after(s.in_h, s.out_h, s.k_h, s.stride_h, s.dilation_h, s.pad_top),
                 after(s.in_w, s.out_w, s.k_w, s.stride_w, s.dilation_w, s.pad_left)}};
}

PrimitiveKey key_of(Pass pass, const ConvShape& s, const Epilogue& epilogue = Epilogue()) {
  PrimitiveKey key(static_cast<int64_t>(PrimitiveKind::convolution));
  key.add(static_cast<int64_t>(pass) | epilogue.key() << 8)
      .add(dims{s.batch, s.in_h, s.in_w, s.in_c, s.out_h, s.out_w, s.out_c, s.k_h, s.k_w})
      .add(dims{s.stride_h, s.stride_w, s.dilation_h, s.dilation_w, s.pad_top, s.pad_left})
      .add(int64_t{s.depthwise} | int64_t{s.nchw} << 1);
  return key;
}

// A reorder between TensorFlow's filter layout and a primitive's, when
// they differ, with its memory objects (data handles set per call).
struct FilterReorder {
  bool needed = false;
  dnnl::reorder prim;
  memory from, to;
  memory::desc scratchpad;
  std::unordered_map<int, memory> args;

  FilterReorder() = default;
  FilterReorder(const memory::desc& from_md, const memory::desc& to_md) {
    if (from_md == to_md) return;
    needed = true;
    dnnl::reorder::primitive_desc pd(dnnl_engine(), from_md, dnnl_engine(), to_md, scratchpad_attr());
    prim = dnnl::reorder(pd);
    from = dnnl_memory(from_md, nullptr);
    to = dnnl_memory(to_md, nullptr);
    scratchpad = pd.scratchpad_desc();
    args = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  }
  void run(const void* src, void* dst) {
    from.set_data_handle(const_cast<void*>(src));
    to.set_data_handle(dst);
    dnnl_execute(prim, scratchpad, args);
  }
};

// Scratch for a filter in a primitive's layout: a tensor, so that the
// step's memory budget is charged for it.
Tensor filter_scratch(const memory::desc& md) {
  return Tensor::uninitialized(DType::float32, Shape{static_cast<int64_t>((md.get_size() + 3) / 4)});
}

// A primitive with its memory objects and arguments. `filter` is the
// primitive's weights (or diff_weights) memory; `reorder` converts
// between it and TensorFlow's layout.
template <class PrimitiveDesc, class Primitive>
struct Entry {
  PrimitiveDesc pd;
  Primitive prim;
  memory image, filter, other;  // src/diff_src, weights/diff_weights, dst/diff_dst
  memory bias;                  // the epilogue's, if any
  memory::desc scratchpad;
  std::unordered_map<int, memory> args;
  FilterReorder reorder;
};

using ForwardEntry = Entry<dnnl::convolution_forward::primitive_desc, dnnl::convolution_forward>;
using DataEntry = Entry<dnnl::convolution_backward_data::primitive_desc, dnnl::convolution_backward_data>;
using WeightsEntry = Entry<dnnl::convolution_backward_weights::primitive_desc, dnnl::convolution_backward_weights>;

// The bias of an epilogue as a binary post-op's operand: one value per
// output channel, broadcast over batch and pixels.
memory::desc bias_md(const ConvShape& s) { return memory::desc({1, s.out_c, 1, 1}, dt::f32, tag::nchw); }

dnnl::convolution_forward::primitive_desc forward_pd(const ConvShape& s, dnnl::prop_kind kind,
                                                     const Epilogue& epilogue = Epilogue()) {
  const Window w = window_of(s);
  dnnl::convolution_forward::desc d(kind, dnnl::algorithm::convolution_direct, src_md(s), any_filter_md(s),
                                    dst_md(s), w.strides, w.dilates, w.pad_l, w.pad_r);
  return dnnl::convolution_forward::primitive_desc(d, epilogue_attr(epilogue, bias_md(s)), dnnl_engine());
}

ForwardEntry& forward_entry(const ConvShape& s, const Epilogue& epilogue) {
  return cached_primitive<ForwardEntry>(key_of(Pass::forward, s, epilogue), [&] {
    auto pd = forward_pd(s, dnnl::prop_kind::forward_inference, epilogue);
    ForwardEntry e{pd, dnnl::convolution_forward(pd), dnnl_memory(pd.src_desc(), nullptr),
                   dnnl_memory(pd.weights_desc(), nullptr), dnnl_memory(pd.dst_desc(), nullptr),
                   dnnl_memory(bias_md(s), nullptr), pd.scratchpad_desc(), {},
                   FilterReorder(user_filter_md(s), pd.weights_desc())};
    e.args = {{DNNL_ARG_SRC, e.image}, {DNNL_ARG_WEIGHTS, e.filter}, {DNNL_ARG_DST, e.other}};
    if (epilogue.bias != nullptr) e.args[epilogue_bias_arg()] = e.bias;
    return e;
  });
}

DataEntry& data_entry(const ConvShape& s) {
  return cached_primitive<DataEntry>(key_of(Pass::backward_data, s), [&] {
    const Window w = window_of(s);
    dnnl::convolution_backward_data::desc d(dnnl::algorithm::convolution_direct, src_md(s), any_filter_md(s),
                                            dst_md(s), w.strides, w.dilates, w.pad_l, w.pad_r);
    dnnl::convolution_backward_data::primitive_desc pd(d, scratchpad_attr(), dnnl_engine(),
                                                       forward_pd(s, dnnl::prop_kind::forward_training));
    DataEntry e{pd, dnnl::convolution_backward_data(pd), dnnl_memory(pd.diff_src_desc(), nullptr),
                dnnl_memory(pd.weights_desc(), nullptr), dnnl_memory(pd.diff_dst_desc(), nullptr), {},
                pd.scratchpad_desc(), {}, FilterReorder(user_filter_md(s), pd.weights_desc())};
    e.args = {{DNNL_ARG_DIFF_SRC, e.image}, {DNNL_ARG_WEIGHTS, e.filter}, {DNNL_ARG_DIFF_DST, e.other}};
    return e;
  });
}

WeightsEntry& weights_entry(const ConvShape& s) {
  return cached_primitive<WeightsEntry>(key_of(Pass::backward_weights, s), [&] {
    const Window w = window_of(s);
    dnnl::convolution_backward_weights::desc d(dnnl::algorithm::convolution_direct, src_md(s),
                                               any_filter_md(s), dst_md(s), w.strides, w.dilates, w.pad_l,
                                               w.pad_r);
    dnnl::convolution_backward_weights::primitive_desc pd(d, scratchpad_attr(), dnnl_engine(),
                                                          forward_pd(s, dnnl::prop_kind::forward_training));
    WeightsEntry e{pd, dnnl::convolution_backward_weights(pd), dnnl_memory(pd.src_desc(), nullptr),
                   dnnl_memory(pd.diff_weights_desc(), nullptr), dnnl_memory(pd.diff_dst_desc(), nullptr), {},
                   pd.scratchpad_desc(), {}, FilterReorder(pd.diff_weights_desc(), user_filter_md(s))};
    e.args = {{DNNL_ARG_SRC, e.image}, {DNNL_ARG_DIFF_WEIGHTS, e.filter}, {DNNL_ARG_DIFF_DST, e.other}};
    return e;
  });
}

// The filter in the primitive's layout: TensorFlow's buffer itself, or a
// reordered copy kept alive by `scratch`.
template <class E>
const void* filter_for(E& e, const float* filter, Tensor& scratch) {
  if (!e.reorder.needed) return filter;
  scratch = filter_scratch(e.reorder.to.get_desc());
  e.reorder.run(filter, scratch.mutable_data<float>());
  return scratch.data<float>();
}

// How many shares of the batch the session's threads take.
int share_count(const ConvShape& s) {
  const int64_t taps = s.k_h * s.k_w * (s.depthwise ? 1 : s.in_c);
  return parallel_blocks(s.batch * s.out_h * s.out_w * s.out_c * taps / 8, s.batch);
}

// Calls f(i, share, first_image) for each of `shares` shares of the batch,
// with `share` s for its images, across the session's threads.
template <class F>
void for_each_share(const ConvShape& s, int shares, F&& f) {
  parallel_run(shares, [&](int i) {
    const int64_t b0 = s.batch * i / shares, b1 = s.batch * (i + 1) / shares;
    ConvShape share = s;
    share.batch = b1 - b0;
    f(i, share, b0);
  });
}

int64_t in_image(const ConvShape& s) { return s.in_h * s.in_w * s.in_c; }
int64_t out_image(const ConvShape& s) { return s.out_h * s.out_w * s.out_c; }
int64_t filter_elements(const ConvShape& s) {
  return s.k_h * s.k_w * (s.depthwise ? s.out_c : s.in_c * s.out_c);
}

}  // namespace

void dnnl_conv_forward(const ConvShape& s, const float* x, const float* filter, float* y,
                       const Epilogue& epilogue) {
  for_each_share(s, share_count(s), [&](int, const ConvShape& share, int64_t b0) {
    ForwardEntry& e = forward_entry(share, epilogue);
    if (epilogue.bias != nullptr) e.bias.set_data_handle(const_cast<float*>(epilogue.bias));
    Tensor scratch;
    e.filter.set_data_handle(const_cast<void*>(filter_for(e, filter, scratch)));
    e.image.set_data_handle(const_cast<float*>(x + b0 * in_image(s)));
    e.other.set_data_handle(y + b0 * out_image(s));
    dnnl_execute(e.prim, e.scratchpad, e.args);
  });
}

void dnnl_conv_backward_data(const ConvShape& s, const float* filter, const float* dy, float* dx) {
  for_each_share(s, share_count(s), [&](int, const ConvShape& share, int64_t b0) {
    DataEntry& e = data_entry(share);
    Tensor scratch;
    e.filter.set_data_handle(const_cast<void*>(filter_for(e, filter, scratch)));
    e.image.set_data_handle(dx + b0 * in_image(s));
    e.other.set_data_handle(const_cast<float*>(dy + b0 * out_image(s)));
    dnnl_execute(e.prim, e.scratchpad, e.args);
  });
}

void dnnl_conv_backward_weights(const ConvShape& s, const float* x, const float* dy, float* dfilter) {
  // Share 0 writes dfilter; each other share its own part, summed after.
  const int64_t n = filter_elements(s);
  const int shares = share_count(s);
  std::vector<Tensor> parts(static_cast<size_t>(shares));
  for (int i = 1; i < shares; ++i) parts[i] = Tensor::uninitialized(DType::float32, Shape{n});
  for_each_share(s, shares, [&](int i, const ConvShape& share, int64_t b0) {
    WeightsEntry& e = weights_entry(share);
    float* out = i == 0 ? dfilter : parts[i].mutable_data<float>();
    Tensor scratch;
    if (e.reorder.needed) {
      scratch = filter_scratch(e.reorder.from.get_desc());
      e.filter.set_data_handle(scratch.mutable_data<float>());
    } else {
      e.filter.set_data_handle(out);
    }
    e.image.set_data_handle(const_cast<float*>(x + b0 * in_image(s)));
    e.other.set_data_handle(const_cast<float*>(dy + b0 * out_image(s)));
    dnnl_execute(e.prim, e.scratchpad, e.args);
    if (e.reorder.needed) e.reorder.run(scratch.data<float>(), out);
  });
  for (int i = 1; i < shares; ++i) {
    const float* part = parts[i].data<float>();
    for (int64_t j = 0; j < n; ++j) dfilter[j] += part[j];
  }
}

}  // namespace tagflow::ops::cpu
