#include "ops/cpu/dnnl_pool.hpp"

#include <algorithm>

#include "ops/cpu/dnnl.hpp"
#include "ops/cpu/parallel.hpp"

namespace tagflow::ops::cpu {

namespace {

using dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using dnnl::memory;

memory::desc image_md(const PoolShape& s, int64_t h, int64_t w) {
  return memory::desc({s.batch, s.channels, h, w}, dt::f32, s.nchw ? tag::nchw : tag::nhwc);
}

dnnl::algorithm algorithm_of(PoolKind kind) {
  return kind == PoolKind::max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
}

// The padding after is what the last window needs (never negative).
dims pad_after(const PoolShape& s) {
  auto after = [](int64_t in, int64_t out, int64_t k, int64_t stride, int64_t before) {
    return std::max<int64_t>(0, (out - 1) * stride + k - in - before);
  };
  return {after(s.in_h, s.out_h, s.k_h, s.stride_h, s.pad_top),
          after(s.in_w, s.out_w, s.k_w, s.stride_w, s.pad_left)};
}

dnnl::pooling_forward::primitive_desc forward_pd(PoolKind kind, const PoolShape& s, dnnl::prop_kind prop) {
  dnnl::pooling_forward::desc d(prop, algorithm_of(kind), image_md(s, s.in_h, s.in_w),
                                image_md(s, s.out_h, s.out_w), {s.stride_h, s.stride_w}, {s.k_h, s.k_w},
                                {s.pad_top, s.pad_left}, pad_after(s));
  return dnnl::pooling_forward::primitive_desc(d, scratchpad_attr(), dnnl_engine());
}

PrimitiveKey key_of(int64_t pass, const PoolShape& s) {
  PrimitiveKey key(static_cast<int64_t>(PrimitiveKind::pooling));
  key.add(pass)
      .add(dims{s.batch, s.in_h, s.in_w, s.channels, s.out_h, s.out_w, s.k_h, s.k_w})
      .add(dims{s.stride_h, s.stride_w, s.pad_top, s.pad_left, int64_t{s.nchw}});
  return key;
}

// A primitive with its two memory objects (input side, output side) and
// arguments; only the data handles change between calls.
struct Entry {
  dnnl::primitive prim;
  memory from, to;
  memory::desc scratchpad;
  std::unordered_map<int, memory> args;
};

Entry& forward_entry(PoolKind kind, const PoolShape& s) {
  return cached_primitive<Entry>(key_of(kind == PoolKind::max ? 1 : 2, s), [&] {
    auto pd = forward_pd(kind, s, dnnl::prop_kind::forward_inference);
    Entry e{dnnl::pooling_forward(pd), dnnl_memory(pd.src_desc(), nullptr), dnnl_memory(pd.dst_desc(), nullptr),
            pd.scratchpad_desc(), {}};
    e.args = {{DNNL_ARG_SRC, e.from}, {DNNL_ARG_DST, e.to}};
    return e;
  });
}

Entry& avg_backward_entry(const PoolShape& s) {
  return cached_primitive<Entry>(key_of(3, s), [&] {
    dnnl::pooling_backward::desc d(algorithm_of(PoolKind::average), image_md(s, s.in_h, s.in_w),
                                   image_md(s, s.out_h, s.out_w), {s.stride_h, s.stride_w}, {s.k_h, s.k_w},
                                   {s.pad_top, s.pad_left}, pad_after(s));
    dnnl::pooling_backward::primitive_desc pd(
        d, scratchpad_attr(), dnnl_engine(), forward_pd(PoolKind::average, s, dnnl::prop_kind::forward_training));
    Entry e{dnnl::pooling_backward(pd), dnnl_memory(pd.diff_dst_desc(), nullptr),
            dnnl_memory(pd.diff_src_desc(), nullptr), pd.scratchpad_desc(), {}};
    e.args = {{DNNL_ARG_DIFF_DST, e.from}, {DNNL_ARG_DIFF_SRC, e.to}};
    return e;
  });
}

// Calls f(share, first_image) for shares of the batch across the
// session's threads.
template <class F>
void for_each_share(const PoolShape& s, F&& f) {
  const int blocks = parallel_blocks(s.batch * s.out_h * s.out_w * s.channels * s.k_h * s.k_w, s.batch);
  parallel_run(blocks, [&](int i) {
    const int64_t b0 = s.batch * i / blocks, b1 = s.batch * (i + 1) / blocks;
    PoolShape share = s;
    share.batch = b1 - b0;
    f(share, b0);
  });
}

void run(Entry& e, const float* from, float* to) {
  e.from.set_data_handle(const_cast<float*>(from));
  e.to.set_data_handle(to);
  dnnl_execute(e.prim, e.scratchpad, e.args);
}

}  // namespace

void dnnl_pool_forward(PoolKind kind, const PoolShape& s, const float* x, float* y) {
  const int64_t in_image = s.in_h * s.in_w * s.channels, out_image = s.out_h * s.out_w * s.channels;
  for_each_share(s, [&](const PoolShape& share, int64_t b0) {
    run(forward_entry(kind, share), x + b0 * in_image, y + b0 * out_image);
  });
}

void dnnl_avg_pool_backward(const PoolShape& s, const float* dy, float* dx) {
  const int64_t in_image = s.in_h * s.in_w * s.channels, out_image = s.out_h * s.out_w * s.channels;
  for_each_share(s, [&](const PoolShape& share, int64_t b0) {
    run(avg_backward_entry(share), dy + b0 * out_image, dx + b0 * in_image);
  });
}

}  // namespace tagflow::ops::cpu
