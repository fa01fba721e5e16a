#include "ops/cpu/dnnl_matmul.hpp"

#include <algorithm>
#include <cstring>

#include "ops/cpu/dnnl.hpp"
#include "ops/cpu/isa_kernels.hpp"
#include "ops/cpu/parallel.hpp"

namespace tagflow::ops::cpu {

namespace {

using dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;

// A primitive with its memory objects and arguments, which only change
// their data handles between calls: the cache is the thread's own, so no
// other thread touches them.
struct MatMulEntry {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  dnnl::memory src, weights, dst;
  dnnl::memory bias;  // the epilogue's, if any
  dnnl::memory::desc scratchpad;
  std::unordered_map<int, dnnl::memory> args;
};

// One block: batch x (m x k) * (k x n) with explicit strides (elements).
struct Block {
  dims a_dims, a_strides, b_dims, b_strides, c_dims, c_strides;
};

// The epilogue's bias over a block's columns: [1, n] (or [1, 1, n]).
dnnl::memory::desc bias_md(const Block& b) {
  dnnl::memory::dims d(b.c_dims.size(), 1);
  d.back() = b.c_dims.back();
  return dnnl::memory::desc(d, dt::f32, d.size() == 3 ? dnnl::memory::format_tag::abc : dnnl::memory::format_tag::ab);
}

MatMulEntry& primitive_for(const Block& b, const Epilogue& epilogue) {
  PrimitiveKey key(static_cast<int64_t>(PrimitiveKind::matmul));
  key.add(b.a_dims).add(b.a_strides).add(b.b_dims).add(b.b_strides).add(b.c_dims).add(b.c_strides);
  key.add(epilogue.key());
  return cached_primitive<MatMulEntry>(key, [&] {
    dnnl::memory::desc a(b.a_dims, dt::f32, b.a_strides);
    dnnl::memory::desc w(b.b_dims, dt::f32, b.b_strides);
    dnnl::memory::desc c(b.c_dims, dt::f32, b.c_strides);
    auto pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, w, c), epilogue_attr(epilogue, bias_md(b)),
                                           dnnl_engine());
    MatMulEntry e{pd,
                  dnnl::matmul(pd),
                  dnnl_memory(a, nullptr),
                  dnnl_memory(w, nullptr),
                  dnnl_memory(c, nullptr),
                  dnnl_memory(bias_md(b), nullptr),
                  pd.scratchpad_desc(),
                  {}};
    e.args = {{DNNL_ARG_SRC, e.src}, {DNNL_ARG_WEIGHTS, e.weights}, {DNNL_ARG_DST, e.dst}};
    if (epilogue.bias != nullptr) e.args[epilogue_bias_arg()] = e.bias;
    return e;
  });
}

// `bias`: the epilogue's bias at the block's first column.
void run_block(const Block& b, const float* a, const float* w, float* c, const Epilogue& epilogue,
               const float* bias) {
  MatMulEntry& e = primitive_for(b, epilogue);
  e.src.set_data_handle(const_cast<float*>(a));
  e.weights.set_data_handle(const_cast<float*>(w));
  e.dst.set_data_handle(c);
  if (bias != nullptr) e.bias.set_data_handle(const_cast<float*>(bias));
  dnnl_execute(e.prim, e.scratchpad, e.args);
}

}  // namespace

bool dnnl_matmul(const MatMulShape& s, const float* a, const float* b, float* out, const Epilogue& epilogue) {
  const int64_t m = s.m, k = s.k, n = s.n, batch = s.batch;
  if (batch == 0 || m == 0 || n == 0) return true;
  if (k == 0) {
    std::memset(out, 0, sizeof(float) * batch * m * n);
    return false;
  }
  // Strides of one matrix of each operand (row-major storage, op applied).
  const int64_t a_rs = s.transpose_a ? 1 : k, a_cs = s.transpose_a ? m : 1;
  const int64_t b_rs = s.transpose_b ? 1 : n, b_cs = s.transpose_b ? k : 1;
  const int64_t a_size = m * k, b_size = k * n, c_size = m * n;
  // A multiply-add is an eighth of parallel_blocks' unit of cost (an
  // element visit): a 64x64x64 product (~5 µs) stays whole, 128^3 splits.
  const int blocks = parallel_blocks(batch * m * k * n / 8, std::max({batch, m, n}));
  if (batch > 1 && (blocks == 1 || batch >= blocks)) {
    // One primitive over the whole batch, or over a share of it per thread.
    parallel_run(blocks, [&](int i) {
      const int64_t b0 = batch * i / blocks, b1 = batch * (i + 1) / blocks;
      Block blk{{b1 - b0, m, k}, {a_size, a_rs, a_cs}, {b1 - b0, k, n}, {b_size, b_rs, b_cs},
                {b1 - b0, m, n}, {c_size, n, 1}};
      run_block(blk, a + b0 * a_size, b + b0 * b_size, out + b0 * c_size, epilogue, epilogue.bias);
    });
    return true;
  }
  bool applied = true;
  for (int64_t p = 0; p < batch; ++p) {
    const float* ap = a + p * a_size;
    const float* bp = b + p * b_size;
    float* cp = out + p * c_size;
    if (blocks > 1 && m >= n) {
      // Row blocks: rows r0..r1 of op(a) and of out.
      parallel_run(blocks, [&](int i) {
        const int64_t r0 = m * i / blocks, r1 = m * (i + 1) / blocks;
        Block blk{{r1 - r0, k}, {a_rs, a_cs}, {k, n}, {b_rs, b_cs}, {r1 - r0, n}, {n, 1}};
        run_block(blk, ap + r0 * a_rs, bp, cp + r0 * n, epilogue, epilogue.bias);
      });
    } else if (blocks > 1) {
      // Column blocks: columns c0..c1 of op(b) and of out; no epilogue.
      parallel_run(blocks, [&](int i) {
        const int64_t c0 = n * i / blocks, c1 = n * (i + 1) / blocks;
        Block blk{{m, k}, {a_rs, a_cs}, {k, c1 - c0}, {b_rs, b_cs}, {m, c1 - c0}, {n, 1}};
        run_block(blk, ap, bp + c0 * b_cs, cp + c0, Epilogue(), nullptr);
      });
      applied = false;
    } else {
      Block blk{{m, k}, {a_rs, a_cs}, {k, n}, {b_rs, b_cs}, {m, n}, {n, 1}};
      run_block(blk, ap, bp, cp, epilogue, epilogue.bias);
    }
  }
  return applied;
}

bool on_dnnl(const MatMulShape& s) { return !(s.m == 1 || s.n == 1 || s.m * s.k * s.n < kMinDnnlProduct); }

void matmul_f32(const MatMulShape& s, const float* a, const float* b, float* out) {
  if (on_dnnl(s)) dnnl_matmul(s, a, b, out);
  else isa_kernels().matmul(s, a, b, out);
}

}  // namespace tagflow::ops::cpu
