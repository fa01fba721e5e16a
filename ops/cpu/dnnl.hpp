// oneDNN (libdnnl) as tagflow's kernels use it: one CPU engine for the
// process, a stream per thread, primitives cached by what they were built
// for, and scratchpads from a per-thread buffer charged to the step.
//
// The first engine() call caps oneDNN's generated code at active_isa()
// (ops/cpu/isa.hpp) and makes oneDNN single-threaded on every thread that
// calls it: Debian's oneDNN is built on OpenMP, and a team of OpenMP
// threads per scheduler thread would outnumber the cores. Kernels split
// large work themselves with parallel_for (ops/cpu/parallel.hpp), onto the
// session's threads.
//
// Primitives are cached per thread (TensorFlow's primitive-reuse design:
// building one costs 2-6 µs, a 64x64 product 5): a least-recently-used
// cache of kPrimitiveCacheCapacity entries keyed by a PrimitiveKey that
// holds everything the primitive depends on (operation, shapes, strides,
// dtypes, attributes). Primitives are built with a user scratchpad: each
// thread keeps its own scratchpad memory (concurrent executions never
// share one), and the step's memory budget is charged for its size while
// a primitive runs.
//
// Everything here is called from kernels on any thread; engine() is
// thread-safe, stream() and the cache are the calling thread's own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "ops/small_vector.hpp"
#include "ops/status.hpp"

namespace tagflow::ops::cpu {

inline constexpr size_t kPrimitiveCacheCapacity = 1024;

dnnl::engine& dnnl_engine();
dnnl::stream& dnnl_stream();

// oneDNN's name for the code it generates at the current cap ("avx2").
std::string dnnl_isa_name();

class PrimitiveKey {
 public:
  explicit PrimitiveKey(int64_t kind) { words_.push_back(kind); }
  PrimitiveKey& add(int64_t w) {
    words_.push_back(w);
    return *this;
  }
  PrimitiveKey& add(const dnnl::memory::dims& dims) {
    words_.push_back(static_cast<int64_t>(dims.size()));
    for (int64_t d : dims) words_.push_back(d);
    return *this;
  }
  bool operator==(const PrimitiveKey& o) const { return words_ == o.words_; }
  size_t hash() const;

 private:
  SmallVector<int64_t, 32> words_;  // a key is built per call: no allocation
};

struct PrimitiveKeyHash {
  size_t operator()(const PrimitiveKey& k) const { return k.hash(); }
};

// The kinds of primitive keys, so that two operations never share one.
enum class PrimitiveKind : int64_t {
  matmul = 1,
  convolution = 2,
  pooling = 3,
  batch_norm = 4,
};

namespace detail {
std::shared_ptr<void>* cache_find(const PrimitiveKey& key);
void cache_insert(const PrimitiveKey& key, std::shared_ptr<void> entry);
}  // namespace detail

// The calling thread's cached Entry for `key`, built by make() (which
// returns an Entry) on a miss. The reference stays valid until the cache
// evicts it: use it before building another. Only this thread sees the
// entry, so the caller may change it (a memory object's data handle).
template <class Entry, class Make>
Entry& cached_primitive(const PrimitiveKey& key, Make&& make) {
  if (std::shared_ptr<void>* hit = detail::cache_find(key)) return *static_cast<Entry*>(hit->get());
  auto entry = std::make_shared<Entry>(make());
  Entry& ref = *entry;
  detail::cache_insert(key, std::move(entry));
  return ref;
}

// Primitive attributes with a user scratchpad.
dnnl::primitive_attr scratchpad_attr();

// What a product or convolution does to its result before storing it
// (_FusedMatMul, _FusedConv2D): add a bias per output channel, as a oneDNN
// binary post-op, which applies to the finished sum (one rounding, as the
// separate BiasAdd). Relu is not one: oneDNN's maps NaN to 0 and negative
// numbers to -0, TensorFlow's keeps NaN and gives +0.
struct Epilogue {
  const float* bias = nullptr;  // out_channels values, or none
  int64_t key() const { return bias != nullptr ? 1 : 0; }
};

// scratchpad_attr() with e's post-ops; `bias_md` describes the bias as the
// binary post-op's second source (broadcast over the result).
dnnl::primitive_attr epilogue_attr(const Epilogue& e, const dnnl::memory::desc& bias_md);
// The execution argument of the bias of epilogue_attr's post-ops.
int epilogue_bias_arg();

// Executes `p` on the thread's stream and waits; adds a scratchpad of the
// size `scratchpad` (the primitive descriptor's, kept with the cached
// primitive) from the thread's own memory, charged to the calling
// thread's memory budget while it runs (MemoryLimitExceeded propagates).
void dnnl_execute(const dnnl::primitive& p, const dnnl::memory::desc& scratchpad,
                  std::unordered_map<int, dnnl::memory>& args);

// A memory object over tagflow's buffer at `data` (no copy).
dnnl::memory dnnl_memory(const dnnl::memory::desc& md, const void* data);


}  // namespace tagflow::ops::cpu
