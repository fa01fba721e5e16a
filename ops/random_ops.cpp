// The stateful random ops with TensorFlow's signatures and TensorFlow's
// numbers (random_ops.cc, random_op.cc, random_shuffle_op.cc):
// RandomUniform ([0, 1)), RandomStandardNormal, TruncatedNormal (normals
// beyond 2 drawn again), each (shape: T int32/int64; seed, seed2; dtype
// half/float32/float64); RandomUniformInt (shape, minval, maxval: Tout
// int32/int64) and RandomShuffle (along dimension 0).
//
// Generator. Each kernel owns a Philox4x32-10 seeded from (seed, seed2) as
// TensorFlow seeds it; seed = seed2 = 0 seeds it randomly (ops/philox.hpp).
// (A graph-level seed is folded into seed and seed2 by the Python front
// end; the op sees only the two attrs.) Each call reserves 256 blocks per
// output element — TensorFlow's conservative reservation, kept so that the
// n-th call of a kernel draws what TensorFlow's n-th call draws — and the
// next call starts past them. Calls may run concurrently; which call gets
// which blocks then follows the order they reserved.
//
// Distributions, as TensorFlow's: the output is filled group by group, a
// group from one block — 4 floats or halfs, 2 doubles, 4 int32, 2 int64.
// Uniform floats are 1.m - 1 with 23 (float), 52 (double) or 10 (half)
// random mantissa bits; normals are Box-Muller pairs, computed in float for
// float and half; integers are lo + bits % (hi - lo). A TruncatedNormal
// group of 4 (float, half) or 2 (double) outputs draws words one at a time
// from its own stretch of the reservation, 256 words per output, keeping
// normals with |x| < 2. RandomShuffle draws one word per swap.
#include <cmath>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/cwise_kernel.hpp"
#include "ops/index_args.hpp"
#include "ops/math_ops.hpp"
#include "ops/philox.hpp"
#include "ops/shape_fns.hpp"
#include "ops/tensor_copy.hpp"

namespace tagflow::ops {

namespace {

using philox::Block;
using philox::Philox;

enum class Distribution { uniform, normal, truncated_normal };

// Blocks reserved per output element by every call (TensorFlow's multiplier).
constexpr uint64_t kBlocksPerOutput = 256;

// Fills out[0, n) group by group: `group(gen, buf)` writes kGroup values
// from the blocks it draws; the last group may be cut short.
template <int kGroup, class T, class Group>
void fill_groups(Philox gen, T* out, int64_t n, Group group) {
  T buf[kGroup];
  for (int64_t i = 0; i < n; i += kGroup) {
    group(gen, buf);
    for (int64_t j = 0; j < kGroup && i + j < n; ++j) out[i + j] = buf[j];
  }
}

template <class T>
void fill_uniform(Philox gen, T* out, int64_t n) {
  if constexpr (std::is_same_v<T, double>) {
    fill_groups<2>(gen, out, n, [](Philox& g, double* buf) {
      const Block b = g();
      for (int j = 0; j < 2; ++j) buf[j] = philox::uint64_to_double(b[2 * j], b[2 * j + 1]);
    });
  } else {
    fill_groups<4>(gen, out, n, [](Philox& g, T* buf) {
      const Block b = g();
      for (int j = 0; j < 4; ++j) {
        if constexpr (std::is_same_v<T, float>) buf[j] = philox::uint32_to_float(b[j]);
        else buf[j] = philox::uint16_to_half(static_cast<uint16_t>(b[j]));
      }
    });
  }
}

template <class T>
void fill_normal(Philox gen, T* out, int64_t n) {
  if constexpr (std::is_same_v<T, double>) {
    fill_groups<2>(gen, out, n, [](Philox& g, double* buf) {
      const Block b = g();
      philox::box_muller(b[0], b[1], b[2], b[3], &buf[0], &buf[1]);
    });
  } else {
    fill_groups<4>(gen, out, n, [](Philox& g, T* buf) {
      const Block b = g();
      for (int j = 0; j < 4; j += 2) {
        float f[2];
        philox::box_muller(b[j], b[j + 1], &f[0], &f[1]);
        buf[j] = static_cast<T>(f[0]);
        buf[j + 1] = static_cast<T>(f[1]);
      }
    });
  }
}

template <class T>
void fill_truncated_normal(const Philox& base, T* out, int64_t n) {
  constexpr int kGroup = std::is_same_v<T, double> ? 2 : 4;
  constexpr uint64_t kSkipPerGroup = kGroup * kBlocksPerOutput / 4;
  for (int64_t i = 0, group = 0; i < n; i += kGroup, ++group) {
    Philox gen = base;
    gen.skip(static_cast<uint64_t>(group) * kSkipPerGroup);
    philox::WordStream words(gen);
    for (int64_t filled = 0; filled < kGroup && i + filled < n;) {
      if constexpr (std::is_same_v<T, double>) {
        const uint32_t x0 = words(), x1 = words(), x2 = words(), x3 = words();
        double d[2];
        philox::box_muller(x0, x1, x2, x3, &d[0], &d[1]);
        for (double x : d)
          if (std::abs(x) < 2.0 && filled < kGroup && i + filled < n) out[i + filled++] = x;
      } else {
        const uint32_t x0 = words(), x1 = words();
        float f[2];
        philox::box_muller(x0, x1, &f[0], &f[1]);
        for (float x : f)
          if (std::abs(x) < 2.0f && filled < kGroup && i + filled < n)
            out[i + filled++] = static_cast<T>(x);
      }
    }
  }
}

template <Distribution D, class T>
void fill(const Philox& gen, T* out, int64_t n) {
  if constexpr (D == Distribution::uniform) fill_uniform(gen, out, n);
  else if constexpr (D == Distribution::normal) fill_normal(gen, out, n);
  else fill_truncated_normal(gen, out, n);
}

// lo + bits % range, with range = hi - lo taken unsigned (it may not fit
// the signed type) and the sum wrapping as two's complement.
template <class Int>
void fill_uniform_int(Philox gen, Int* out, int64_t n, Int lo, Int hi) {
  using U = std::make_unsigned_t<Int>;
  const U range = static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo));
  auto at = [lo, range](U bits) { return static_cast<Int>(static_cast<U>(lo) + bits % range); };
  if constexpr (sizeof(Int) == 4) {
    fill_groups<4>(gen, out, n, [&](Philox& g, Int* buf) {
      const Block b = g();
      for (int j = 0; j < 4; ++j) buf[j] = at(b[j]);
    });
  } else {
    fill_groups<2>(gen, out, n, [&](Philox& g, Int* buf) {
      const Block b = g();
      for (int j = 0; j < 2; ++j) buf[j] = at(b[2 * j] | (uint64_t{b[2 * j + 1]} << 32));
    });
  }
}

// The state all random kernels share: the seeded generator. Reserving is
// thread-safe, so compute() stays const.
class RandomKernelBase : public Kernel {
 protected:
  Status init_generator(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(int64_t seed, init.attr<int64_t>("seed"));
    TF_ASSIGN_OR_RETURN(int64_t seed2, init.attr<int64_t>("seed2"));
    gen_.init(seed, seed2);
    return ok_status();
  }
  Philox reserve(uint64_t blocks) const { return gen_.reserve(blocks); }

 private:
  mutable philox::GuardedPhilox gen_;
};

template <Distribution D>
class RandomKernel final : public RandomKernelBase {
 public:
  explicit RandomKernel(const char* op) : op_(op) {}

  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(dtype_, init.attr<DType>("dtype"));
    if (dtype_ != DType::float32 && dtype_ != DType::float64 && dtype_ != DType::half)
      return no_kernel_error(op_, dtype_);
    return init_generator(init);
  }

  Status compute(KernelContext& ctx) const override {
    const std::string what = std::string(op_) + " shape";
    TF_ASSIGN_OR_RETURN(Shape shape, shape_from_tensor(ctx.input(0), what.c_str()));
    TF_ASSIGN_OR_RETURN(Tensor out, allocate_uninitialized(dtype_, shape));
    const int64_t n = out.num_elements();
    const Philox gen = reserve(static_cast<uint64_t>(n) * kBlocksPerOutput);
    switch (dtype_) {
      case DType::float32: fill<D>(gen, out.mutable_data<float>(), n); break;
      case DType::float64: fill<D>(gen, out.mutable_data<double>(), n); break;
      default: fill<D>(gen, out.mutable_data<Eigen::half>(), n); break;
    }
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

 private:
  const char* op_;
  DType dtype_ = DType::float32;
};

class RandomUniformIntKernel final : public RandomKernelBase {
 public:
  Status init(const KernelInit& init) {
    TF_ASSIGN_OR_RETURN(dtype_, init.attr<DType>("Tout"));
    return init_generator(init);
  }

  Status compute(KernelContext& ctx) const override {
    TF_ASSIGN_OR_RETURN(Shape shape, shape_from_tensor(ctx.input(0), "RandomUniformInt shape"));
    const char* names[] = {"minval", "maxval"};
    for (int i = 1; i <= 2; ++i) {
      const Tensor& t = ctx.input(i);
      if (!t.valid() || t.dtype() != dtype_)
        return Status(Error::invalid_argument,
                      std::string("RandomUniformInt ") + names[i - 1] + " must be " +
                          dtype_name(dtype_) + ", got " +
                          (t.valid() ? dtype_name(t.dtype()) : std::string("no tensor")));
      if (!t.shape().is_scalar())
        return Status(Error::invalid_argument, std::string("RandomUniformInt ") + names[i - 1] +
                                                   " must be 0-D, got shape " +
                                                   t.shape().to_string());
    }
    if (dtype_ == DType::int32) return draw<int32_t>(ctx, shape);
    return draw<int64_t>(ctx, shape);
  }

 private:
  template <class Int>
  Status draw(KernelContext& ctx, const Shape& shape) const {
    const Int lo = ctx.input(1).scalar_value<Int>(), hi = ctx.input(2).scalar_value<Int>();
    if (!(lo < hi))
      return Status(Error::invalid_argument, "RandomUniformInt needs minval < maxval, got " +
                                                 std::to_string(lo) + " >= " +
                                                 std::to_string(hi));
    TF_ASSIGN_OR_RETURN(Tensor out, allocate_uninitialized(dtype_, shape));
    const int64_t n = out.num_elements();
    fill_uniform_int(reserve(static_cast<uint64_t>(n) * kBlocksPerOutput),
                     out.mutable_data<Int>(), n, lo, hi);
    ctx.set_output(0, std::move(out));
    return ok_status();
  }

  DType dtype_ = DType::int32;
};

// Permutes dimension 0 as TensorFlow does: Fisher-Yates from the front,
// element i swapped with i + (word % (size - i)), one word per swap.
class RandomShuffleKernel final : public RandomKernelBase {
 public:
  Status init(const KernelInit& init) { return init_generator(init); }

  Status compute(KernelContext& ctx) const override {
    const Tensor& in = ctx.input(0);
    if (in.rank() == 0 || in.num_elements() <= 1 || in.dim(0) <= 1) {
      ctx.set_output(0, in);
      return ok_status();
    }
    const int64_t size = in.dim(0);
    if (size > int64_t{0xffffffff})
      return Status(Error::unimplemented,
                    "RandomShuffle of more than 2^32 - 1 rows, got " + std::to_string(size));
    const auto swaps = static_cast<uint64_t>(size - 1);
    philox::WordStream words(reserve((swaps + 3) / 4));
    std::vector<int64_t> perm(static_cast<size_t>(size));
    std::iota(perm.begin(), perm.end(), 0);
    for (int64_t i = 0; i + 1 < size; ++i)
      std::swap(perm[static_cast<size_t>(i)],
                perm[static_cast<size_t>(i + words() % static_cast<uint32_t>(size - i))]);
    TF_ASSIGN_OR_RETURN(Tensor out, allocate_uninitialized(in.dtype(), in.shape()));
    const int64_t row = in.num_elements() / size;
    for (int64_t i = 0; i < size; ++i)
      copy_elements(in, perm[static_cast<size_t>(i)] * row, out, i * row, row);
    ctx.set_output(0, std::move(out));
    return ok_status();
  }
};

template <class K, class... Args>
KernelFactory factory(Args... args) {
  return [args...](const KernelInit& init) -> Expected<std::unique_ptr<Kernel>> {
    auto k = std::make_unique<K>(args...);
    TF_RETURN_IF_ERROR(k->init(init));
    return std::unique_ptr<Kernel>(std::move(k));
  };
}

OpDef& seeded(OpDef& d) {
  return d.attr("seed", "int", int64_t{0}).attr("seed2", "int", int64_t{0}).stateful();
}

void random_op(OpRegistry& r, const char* name, KernelFactory kernel) {
  OpDef d(name);
  d.shape_fn(shape_fns::from_input<0>)
      .input("shape: T")
      .output("output: dtype")
      .type_attr("dtype", {DType::half, DType::float32, DType::float64})
      .type_attr("T", {DType::int32, DType::int64});
  register_builtin(r, std::move(seeded(d).kernel(std::move(kernel))));
}

}  // namespace

void register_random_ops(OpRegistry& r) {
  random_op(r, "RandomUniform", factory<RandomKernel<Distribution::uniform>>("RandomUniform"));
  random_op(r, "RandomStandardNormal",
            factory<RandomKernel<Distribution::normal>>("RandomStandardNormal"));
  random_op(r, "TruncatedNormal",
            factory<RandomKernel<Distribution::truncated_normal>>("TruncatedNormal"));
  OpDef uniform_int("RandomUniformInt");
  uniform_int.shape_fn(shape_fns::from_input<0>).input("shape: T")
      .input("minval: Tout")
      .input("maxval: Tout")
      .output("output: Tout")
      .type_attr("Tout", {DType::int32, DType::int64})
      .type_attr("T", {DType::int32, DType::int64});
  register_builtin(r, std::move(seeded(uniform_int).kernel(factory<RandomUniformIntKernel>())));
  OpDef shuffle("RandomShuffle");
  shuffle.shape_fn(shape_fns::unary).input("value: T").output("output: T").type_attr("T");
  register_builtin(r, std::move(seeded(shuffle).kernel(factory<RandomShuffleKernel>())));
}

}  // namespace tagflow::ops
