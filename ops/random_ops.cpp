// The random tensor ops, with TensorFlow's signatures (random_ops.cc):
// RandomUniform ([0, 1)), RandomStandardNormal (mean 0, stddev 1) and
// TruncatedNormal (the standard normal with values beyond 2 stddevs drawn
// again), each (shape: T int32/int64; seed, seed2, dtype float32/float64).
//
// The values are NOT TensorFlow's: TensorFlow uses Philox, tagflow the
// standard's std::mt19937_64 (whose output the C++ standard fixes, so values
// are the same with every standard library), uniform floats from its top 24
// (float32) or 53 (float64) bits, and normals by Box-Muller.
//
// Determinism: a kernel's generator is seeded with (seed, seed2, n) for its
// n-th call, so a graph run twice with the same seeds draws the same values,
// and each call draws new ones, as TensorFlow's stateful random ops do.
// With seed = seed2 = 0 (TensorFlow: "seed randomly") the node's name is
// the seed, so such nodes are deterministic too, node by node. The call
// count is the only state; it is atomic, so calls may run concurrently, and
// which call draws which values then follows the order they started.
#include <atomic>
#include <cmath>
#include <random>
#include <string>
#include <type_traits>

#include "ops/cwise_kernel.hpp"
#include "ops/index_args.hpp"
#include "ops/math_ops.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

enum class Distribution { uniform, normal, truncated_normal };

// FNV-1a: a hash fixed by its definition (std::hash is not).
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Uniform in [0, 1) from the top bits of one draw.
template <class T>
T uniform(std::mt19937_64& gen) {
  if constexpr (std::is_same_v<T, float>) return static_cast<float>(gen() >> 40) * 0x1.0p-24f;
  else return static_cast<double>(gen() >> 11) * 0x1.0p-53;
}

constexpr double kTwoPi = 6.283185307179586;

// A standard normal by Box-Muller (one of the pair; simple over fast).
template <class T>
T normal(std::mt19937_64& gen) {
  const double u1 = 1.0 - uniform<double>(gen);  // (0, 1]: log is finite
  const double u2 = uniform<double>(gen);
  return static_cast<T>(std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2));
}

template <Distribution D>
class RandomKernel final : public Kernel {
 public:
  explicit RandomKernel(const char* op) : op_(op) {}

  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(int64_t seed, init.attr<int64_t>("seed"));
    TF_ASSIGN_OR_RETURN(int64_t seed2, init.attr<int64_t>("seed2"));
    TF_ASSIGN_OR_RETURN(dtype_, init.attr<DType>("dtype"));
    if (dtype_ != DType::float32 && dtype_ != DType::float64)
      return no_kernel_error(op_, dtype_);
    seed_[0] = static_cast<uint64_t>(seed);
    seed_[1] = static_cast<uint64_t>(seed2);
    if (seed == 0 && seed2 == 0) seed_[0] = fnv1a(init.node_name);
    return ok_status();
  }

  Status compute(KernelContext& ctx) const override {
    const std::string what = std::string(op_) + " shape";
    TF_ASSIGN_OR_RETURN(Shape shape, shape_from_tensor(ctx.input(0), what.c_str()));
    TF_ASSIGN_OR_RETURN(Tensor out, allocate_uninitialized(dtype_, shape));
    const uint64_t call = calls_.fetch_add(1, std::memory_order_relaxed);
    std::seed_seq seq{lo(seed_[0]), hi(seed_[0]), lo(seed_[1]), hi(seed_[1]), lo(call), hi(call)};
    std::mt19937_64 gen(seq);
    if (dtype_ == DType::float32) fill(out.mutable_data<float>(), out.num_elements(), gen);
    else fill(out.mutable_data<double>(), out.num_elements(), gen);
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  static uint32_t lo(uint64_t v) { return static_cast<uint32_t>(v); }
  static uint32_t hi(uint64_t v) { return static_cast<uint32_t>(v >> 32); }

  template <class T>
  static void fill(T* p, int64_t n, std::mt19937_64& gen) {
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (D == Distribution::uniform) {
        p[i] = uniform<T>(gen);
      } else if constexpr (D == Distribution::normal) {
        p[i] = normal<T>(gen);
      } else {
        T x;
        do x = normal<T>(gen);
        while (std::abs(x) > T(2));
        p[i] = x;
      }
    }
  }

  const char* op_;
  DType dtype_ = DType::float32;
  uint64_t seed_[2] = {0, 0};
  mutable std::atomic<uint64_t> calls_{0};
};

template <Distribution D>
KernelFactory random_factory(const char* op) {
  return [op](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    auto k = std::make_unique<RandomKernel<D>>(op);
    TF_RETURN_IF_ERROR(k->init(init));
    return std::unique_ptr<Kernel>(std::move(k));
  };
}

void random_op(OpRegistry& r, const char* name, KernelFactory kernel) {
  register_builtin(r, OpDef(name)
                          .input("shape: T")
                          .output("output: dtype")
                          .attr("seed", "int", int64_t{0})
                          .attr("seed2", "int", int64_t{0})
                          .type_attr("dtype", float_types())
                          .type_attr("T", {DType::int32, DType::int64})
                          .stateful()
                          .kernel(std::move(kernel)));
}

}  // namespace

void register_random_ops(OpRegistry& r) {
  random_op(r, "RandomUniform", random_factory<Distribution::uniform>("RandomUniform"));
  random_op(r, "RandomStandardNormal",
            random_factory<Distribution::normal>("RandomStandardNormal"));
  random_op(r, "TruncatedNormal",
            random_factory<Distribution::truncated_normal>("TruncatedNormal"));
}

}  // namespace tagflow::ops
