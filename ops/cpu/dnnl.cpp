#include "ops/cpu/dnnl.hpp"

#include <cstdlib>
#include <list>
#include <new>
#include <mutex>
#include <utility>

#include "ops/cpu/isa.hpp"
#include "ops/memory_budget.hpp"

extern "C" void omp_set_num_threads(int);  // libgomp, which oneDNN runs on

namespace tagflow::ops::cpu {

namespace {

dnnl::cpu_isa dnnl_cap(Isa isa) {
  switch (isa) {
    case Isa::baseline: return dnnl::cpu_isa::sse41;
    case Isa::avx2: return dnnl::cpu_isa::avx2;
    case Isa::avx512: return dnnl::cpu_isa::avx512_core;
  }
  return dnnl::cpu_isa::sse41;
}

// A least-recently-used map of the thread's primitives.
class PrimitiveCache {
 public:
  std::shared_ptr<void>* find(const PrimitiveKey& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }
  void insert(const PrimitiveKey& key, std::shared_ptr<void> entry) {
    if (index_.size() >= kPrimitiveCacheCapacity) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    order_.emplace_front(key, std::move(entry));
    index_.emplace(key, order_.begin());
  }

 private:
  using Item = std::pair<PrimitiveKey, std::shared_ptr<void>>;
  std::list<Item> order_;
  std::unordered_map<PrimitiveKey, std::list<Item>::iterator, PrimitiveKeyHash> index_;
};

thread_local PrimitiveCache cache;

// A thread's scratchpad memory, grown to the largest asked for.
class ScratchBuffer {
 public:
  ~ScratchBuffer() { std::free(data_); }
  void* at_least(size_t bytes) {
    if (bytes > size_) {
      const size_t rounded = (bytes + 4095) / 4096 * 4096;
      void* p = std::aligned_alloc(4096, rounded);
      if (p == nullptr) throw std::bad_alloc();
      std::free(data_);
      data_ = p;
      size_ = rounded;
    }
    return data_;
  }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

size_t PrimitiveKey::hash() const {
  uint64_t h = 1469598103934665603ull;
  for (int64_t w : words_) h = (h ^ static_cast<uint64_t>(w)) * 1099511628211ull;
  return static_cast<size_t>(h);
}

namespace detail {
std::shared_ptr<void>* cache_find(const PrimitiveKey& key) { return cache.find(key); }
void cache_insert(const PrimitiveKey& key, std::shared_ptr<void> entry) { cache.insert(key, std::move(entry)); }
}  // namespace detail

dnnl::engine& dnnl_engine() {
  // Every thread's oneDNN work stays on it — set before the thread builds
  // its first primitive, since some (batch norm) fix their thread count
  // when built: with OpenMP's default they would run a team of threads
  // beside the scheduler's.
  thread_local const bool single_threaded = [] {
    omp_set_num_threads(1);
    return true;
  }();
  (void)single_threaded;
  static dnnl::engine engine = [] {
    // Before the first primitive: oneDNN reads its cap once.
    dnnl::set_max_cpu_isa(dnnl_cap(active_isa()));
    // Primitives are cached per thread here (their memory objects with
    // them); oneDNN's own process-wide cache would hand one thread's
    // primitive to another.
    dnnl::set_primitive_cache_capacity(0);
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return engine;
}

dnnl::stream& dnnl_stream() {
  thread_local dnnl::stream stream(dnnl_engine());
  return stream;
}

std::string dnnl_isa_name() {
  dnnl_engine();
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

dnnl::primitive_attr scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

dnnl::primitive_attr epilogue_attr(const Epilogue& e, const dnnl::memory::desc& bias_md) {
  dnnl::primitive_attr attr = scratchpad_attr();
  dnnl::post_ops ops;
  if (e.bias != nullptr) ops.append_binary(dnnl::algorithm::binary_add, bias_md);
  attr.set_post_ops(ops);
  return attr;
}

int epilogue_bias_arg() { return DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1; }

dnnl::memory dnnl_memory(const dnnl::memory::desc& md, const void* data) {
  return dnnl::memory(md, dnnl_engine(), const_cast<void*>(data));
}

namespace {

// Runs p with `args` through oneDNN's C interface from an array on the
// stack: the C++ wrapper copies the arguments into a vector on every call.
void execute(const dnnl::primitive& p, dnnl::stream& s, const std::unordered_map<int, dnnl::memory>& args) {
  constexpr size_t kMaxArgs = 16;
  dnnl_exec_arg_t c_args[kMaxArgs];
  if (args.size() > kMaxArgs) {
    p.execute(s, args);
  } else {
    int n = 0;
    for (const auto& [arg, memory] : args) c_args[n++] = {arg, memory.get()};
    dnnl::error::wrap_c_api(dnnl_primitive_execute(p.get(), s.get(), n, c_args),
                            "could not execute a primitive");
  }
  s.wait();
}

}  // namespace

void dnnl_execute(const dnnl::primitive& p, const dnnl::memory::desc& scratch,
                  std::unordered_map<int, dnnl::memory>& args) {
  dnnl::stream& s = dnnl_stream();
  const size_t bytes = scratch.get_size();
  if (bytes == 0) {
    execute(p, s, args);
    return;
  }
  // The thread keeps its largest scratchpad rather than allocating one a
  // call; the step's budget is charged for it while the primitive runs.
  thread_local ScratchBuffer buffer;
  void* data = buffer.at_least(bytes);
  MemoryBudget* budget = current_memory_budget();
  if (budget) budget->charge(static_cast<int64_t>(bytes));  // MemoryLimitExceeded: nothing charged
  struct Release {
    MemoryBudget* budget;
    size_t bytes;
    ~Release() {
      if (budget) budget->release(static_cast<int64_t>(bytes));
    }
  } release{budget, bytes};
  dnnl::memory& pad = args[DNNL_ARG_SCRATCHPAD];
  if (!pad || pad.get_data_handle() != data) pad = dnnl_memory(scratch, data);
  execute(p, s, args);
}


}  // namespace tagflow::ops::cpu
