#include "ops/cpu/dnnl_batch_norm.hpp"

#include <cstring>

#include "ops/cpu/dnnl.hpp"

namespace tagflow::ops::cpu {

namespace {

using dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using flags = dnnl::normalization_flags;
using dnnl::memory;

// oneDNN's logical dims are N, C, spatial...; the format says where C is.
memory::desc data_md(const BatchNormShape& s) {
  const size_t rank = s.dims.size();
  dims d{s.dims[0], s.channels_first ? s.dims[1] : s.dims[rank - 1]};
  for (size_t i = 1; i + 1 < rank; ++i) d.push_back(s.channels_first ? s.dims[i + 1] : s.dims[i]);
  tag format;
  if (rank == 4) format = s.channels_first ? tag::nchw : tag::nhwc;
  else if (rank == 5) format = s.channels_first ? tag::ncdhw : tag::ndhwc;
  else format = s.channels_first ? tag::ncw : tag::nwc;
  return memory::desc(d, dt::f32, format);
}

int64_t channels(const BatchNormShape& s) { return s.channels_first ? s.dims[1] : s.dims.back(); }

memory::desc vector_md(const BatchNormShape& s) { return memory::desc({channels(s)}, dt::f32, tag::a); }

flags forward_flags(const BatchNormShape& s) {
  flags f = flags::use_scale | flags::use_shift;
  if (!s.training) f = f | flags::use_global_stats;
  return f;
}

dnnl::batch_normalization_forward::primitive_desc forward_pd(const BatchNormShape& s, dnnl::prop_kind prop) {
  dnnl::batch_normalization_forward::desc d(prop, data_md(s), s.epsilon, forward_flags(s));
  return dnnl::batch_normalization_forward::primitive_desc(d, scratchpad_attr(), dnnl_engine());
}

PrimitiveKey key_of(int64_t pass, const BatchNormShape& s) {
  PrimitiveKey key(static_cast<int64_t>(PrimitiveKind::batch_norm));
  float epsilon = s.epsilon;
  int32_t epsilon_bits = 0;
  std::memcpy(&epsilon_bits, &epsilon, sizeof epsilon_bits);
  key.add(pass).add(s.dims).add(int64_t{s.channels_first} | int64_t{s.training} << 1).add(epsilon_bits);
  return key;
}

enum Slot { kData, kScale, kShift, kMean, kVariance, kOut, kDiffDst, kDiffScale, kDiffShift, kSlots };

// A primitive with its memory objects (by Slot; only data handles change).
struct Entry {
  dnnl::primitive prim;
  memory::desc scratchpad;
  memory mem[kSlots];
  std::unordered_map<int, memory> args;
};

Entry& forward_entry(const BatchNormShape& s) {
  return cached_primitive<Entry>(key_of(1, s), [&] {
    auto pd = forward_pd(s, s.training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference);
    Entry e{dnnl::batch_normalization_forward(pd), pd.scratchpad_desc(), {}, {}};
    e.mem[kData] = dnnl_memory(pd.src_desc(), nullptr);
    e.mem[kOut] = dnnl_memory(pd.dst_desc(), nullptr);
    e.mem[kScale] = dnnl_memory(vector_md(s), nullptr);
    e.mem[kShift] = dnnl_memory(vector_md(s), nullptr);
    e.mem[kMean] = dnnl_memory(pd.mean_desc(), nullptr);
    e.mem[kVariance] = dnnl_memory(pd.variance_desc(), nullptr);
    e.args = {{DNNL_ARG_SRC, e.mem[kData]},       {DNNL_ARG_DST, e.mem[kOut]},
              {DNNL_ARG_SCALE, e.mem[kScale]},    {DNNL_ARG_SHIFT, e.mem[kShift]},
              {DNNL_ARG_MEAN, e.mem[kMean]},      {DNNL_ARG_VARIANCE, e.mem[kVariance]}};
    return e;
  });
}

Entry& backward_entry(const BatchNormShape& s) {
  return cached_primitive<Entry>(key_of(2, s), [&] {
    const memory::desc md = data_md(s);
    dnnl::batch_normalization_backward::desc d(dnnl::prop_kind::backward, md, md, s.epsilon, forward_flags(s));
    dnnl::batch_normalization_backward::primitive_desc pd(d, scratchpad_attr(), dnnl_engine(),
                                                          forward_pd(s, dnnl::prop_kind::forward_training));
    Entry e{dnnl::batch_normalization_backward(pd), pd.scratchpad_desc(), {}, {}};
    e.mem[kData] = dnnl_memory(pd.src_desc(), nullptr);
    e.mem[kOut] = dnnl_memory(pd.diff_src_desc(), nullptr);
    e.mem[kScale] = dnnl_memory(vector_md(s), nullptr);
    e.mem[kShift] = dnnl_memory(vector_md(s), nullptr);
    e.mem[kDiffDst] = dnnl_memory(pd.diff_dst_desc(), nullptr);
    e.mem[kMean] = dnnl_memory(pd.mean_desc(), nullptr);
    e.mem[kVariance] = dnnl_memory(pd.variance_desc(), nullptr);
    e.mem[kDiffScale] = dnnl_memory(vector_md(s), nullptr);
    e.mem[kDiffShift] = dnnl_memory(vector_md(s), nullptr);
    e.args = {{DNNL_ARG_SRC, e.mem[kData]},           {DNNL_ARG_DIFF_SRC, e.mem[kOut]},
              {DNNL_ARG_SCALE, e.mem[kScale]},        {DNNL_ARG_SHIFT, e.mem[kShift]},
              {DNNL_ARG_DIFF_DST, e.mem[kDiffDst]},
              {DNNL_ARG_MEAN, e.mem[kMean]},          {DNNL_ARG_VARIANCE, e.mem[kVariance]},
              {DNNL_ARG_DIFF_SCALE, e.mem[kDiffScale]}, {DNNL_ARG_DIFF_SHIFT, e.mem[kDiffShift]}};
    return e;
  });
}

void set(Entry& e, Slot slot, const float* p) { e.mem[slot].set_data_handle(const_cast<float*>(p)); }

}  // namespace

void dnnl_batch_norm_forward(const BatchNormShape& s, const float* x, const float* scale, const float* offset,
                             float* mean, float* variance, float* y) {
  Entry& e = forward_entry(s);
  set(e, kData, x);
  set(e, kScale, scale);
  set(e, kShift, offset);
  set(e, kMean, mean);
  set(e, kVariance, variance);
  set(e, kOut, y);
  dnnl_execute(e.prim, e.scratchpad, e.args);
}

void dnnl_batch_norm_backward(const BatchNormShape& s, const float* dy, const float* x, const float* scale,
                              const float* mean, const float* variance, float* dx, float* dscale,
                              float* doffset) {
  Entry& e = backward_entry(s);
  set(e, kData, x);
  set(e, kDiffDst, dy);
  set(e, kScale, scale);
  // oneDNN 2.6 refuses to run without a shift argument when the forward
  // pass had one, though no gradient depends on it: any vector of the
  // channels' size serves.
  set(e, kShift, scale);
  set(e, kMean, mean);
  set(e, kVariance, variance);
  set(e, kOut, dx);
  set(e, kDiffScale, dscale);
  set(e, kDiffShift, doffset);
  dnnl_execute(e.prim, e.scratchpad, e.args);
}

}  // namespace tagflow::ops::cpu
