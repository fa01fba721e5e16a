// Kernels against the libraries underneath them, in one run: tagflow's
// MatMul kernel (oneDNN through tagflow's primitive cache, tagflow's
// tensors) against oneDNN called directly (one primitive, built once) and
// against Eigen compiled for this machine (-march=native) and for the
// portable baseline; the convolution, pooling and transcendental kernels
// against the paths they replaced (Conv2D as im2col copies and one oneDNN
// product, Tanh/Exp on Eigen built for the portable baseline); then whole
// steps with one large MatMul at 1 and 2
// scheduler threads (intra-op parallelism on CAF's workers), with the
// process's thread count and the threads running while it computes.
//
//   build/bench/kernels_bench            (TAGFLOW_BENCH_REPS=N for more rounds)
#include <Eigen/Core>
#include <oneapi/dnnl/dnnl.hpp>

#include <dirent.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "actors/session.hpp"
#include "bench_session.hpp"
#include "bench_util.hpp"
#include "eigen_native.hpp"
#include "graph/io/import.hpp"
#include "ops/cpu/dnnl_matmul.hpp"
#include "ops/cpu/kernel_info.hpp"
#include "ops/spatial_window.hpp"
#include "ops/kernel.hpp"
#include "ops/op_def.hpp"

using namespace tagflow;
using ops::Tensor;

namespace {

extern "C" void omp_set_num_threads(int);

Tensor random_matrix(int64_t rows, int64_t cols, uint32_t seed) {
  Tensor t(ops::DType::float32, ops::Shape{rows, cols});
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_data<float>()[i] = d(gen);
  return t;
}

// Calls to f that take about `budget` seconds in all (at least 3).
template <class F>
int calls_for(double budget, F&& f) {
  const double once = bench::time_once(f);
  return std::max(3, static_cast<int>(budget / std::max(once, 1e-7)));
}

// Median over rounds of the time of one call (each round `calls` calls).
std::vector<double> per_call_medians(const std::vector<std::function<void()>>& fs, double budget) {
  std::vector<std::function<void()>> rounds;
  std::vector<int> calls;
  for (const auto& f : fs) {
    f();  // warm: caches, primitives
    calls.push_back(calls_for(budget, f));
    rounds.push_back([f, n = calls.back()] {
      for (int i = 0; i < n; ++i) f();
    });
  }
  std::vector<double> m = bench::interleaved_medians(7, rounds);
  for (size_t i = 0; i < fs.size(); ++i) m[i] /= calls[i];
  return m;
}

std::unique_ptr<ops::Kernel> matmul_kernel() {
  const ops::OpDef* def = ops::OpRegistry::global().find("MatMul");
  ops::AttrMap attrs{{"T", ops::DType::float32}, {"transpose_a", false}, {"transpose_b", false}};
  ops::DTypes in, out;
  in.push_back(ops::DType::float32);
  in.push_back(ops::DType::float32);
  out.push_back(ops::DType::float32);
  auto k = def->make_kernel(ops::KernelInit{"mm", attrs, in, out});
  if (!k.ok()) bench::fail(k.status().to_string());
  return std::move(k).value();
}

void kernel_table() {
  std::printf("MatMul kernels, one thread: µs a call (GFLOP/s), medians of 7 interleaved rounds\n");
  std::printf("%16s %16s %16s %16s %16s %10s %10s\n", "m x k x n", "tagflow", "oneDNN direct", "Eigen native",
              "Eigen portable", "tf/oneDNN", "tf/Eigen-n");
  omp_set_num_threads(1);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  struct Size {
    int64_t m, k, n;
  };
  for (Size sz : {Size{1, 64, 64}, Size{1, 256, 256}, Size{32, 256, 256}, Size{64, 64, 64}, Size{256, 256, 256},
                  Size{1024, 1024, 1024}}) {
    const int64_t m = sz.m, k = sz.k, n = sz.n;
    Tensor a = random_matrix(m, k, 1), b = random_matrix(k, n, 2);
    Tensor c(ops::DType::float32, ops::Shape{m, n});
    auto kernel = matmul_kernel();
    Tensor inputs[2] = {a, b};
    Tensor outputs[1];
    auto tagflow_call = [&] {
      ops::KernelContext ctx(inputs, 2, outputs, 1);
      if (!kernel->compute(ctx).ok()) bench::fail("MatMul failed");
    };
    using dims = dnnl::memory::dims;
    const auto f32 = dnnl::memory::data_type::f32;
    const auto ab = dnnl::memory::format_tag::ab;
    dnnl::memory::desc amd(dims{m, k}, f32, ab), bmd(dims{k, n}, f32, ab), cmd(dims{m, n}, f32, ab);
    dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(amd, bmd, cmd), eng);
    dnnl::matmul prim(pd);
    dnnl::memory am(amd, eng, const_cast<float*>(a.data<float>())), bm(bmd, eng, const_cast<float*>(b.data<float>())),
        cm(cmd, eng, c.mutable_data<float>());
    auto onednn_call = [&] {
      prim.execute(strm, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
      strm.wait();
    };
    auto eigen_native_call = [&] {
      bench::eigen_native_matmul(a.data<float>(), b.data<float>(), c.mutable_data<float>(), m, k, n);
    };
    using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<const Matrix> A(a.data<float>(), m, k), B(b.data<float>(), k, n);
    Eigen::Map<Matrix> C(c.mutable_data<float>(), m, n);
    auto eigen_portable_call = [&] { C.noalias() = A * B; };
    const double budget = m >= 1024 ? 0.5 : 0.15;
    std::vector<double> t = per_call_medians({tagflow_call, onednn_call, eigen_native_call, eigen_portable_call}, budget);
    const double flop = 2.0 * m * k * n;
    auto cell = [&](double s) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.2f (%.1f)", s * 1e6, flop / s / 1e9);
      return std::string(buf);
    };
    const std::string size = std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
    std::printf("%16s %16s %16s %16s %16s %10.2f %10.2f\n", size.c_str(), cell(t[0]).c_str(),
                cell(t[1]).c_str(), cell(t[2]).c_str(), cell(t[3]).c_str(), t[0] / t[1], t[0] / t[2]);
  }
  std::printf("Eigen native: %s; portable: %s\n", bench::eigen_native_simd(), Eigen::SimdInstructionSetsInUse());
}

Tensor random_tensor(const ops::Shape& shape, uint32_t seed) {
  Tensor t(ops::DType::float32, shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_data<float>()[i] = d(gen);
  return t;
}

std::unique_ptr<ops::Kernel> make_kernel(const char* op, ops::AttrMap attrs, int inputs) {
  const ops::OpDef* def = ops::OpRegistry::global().find(op);
  if (def == nullptr) bench::fail(std::string("no op ") + op);
  attrs["T"] = ops::DType::float32;
  if (!def->check_and_complete_attrs(attrs).ok()) bench::fail(std::string("attrs of ") + op);
  auto in = def->input_types(attrs);
  auto out = def->output_types(attrs);
  if (!in.ok() || !out.ok() || static_cast<int>(in->size()) != inputs) bench::fail(std::string("types of ") + op);
  auto k = def->make_kernel(ops::KernelInit{op, attrs, *in, *out});
  if (!k.ok()) bench::fail(k.status().to_string());
  return std::move(k).value();
}

std::function<void()> kernel_call(std::shared_ptr<ops::Kernel> kernel, std::vector<Tensor> inputs) {
  return [kernel, inputs]() mutable {
    Tensor out[8];  // the most outputs of a kernel here (LSTMBlockCell: 7)
    ops::KernelContext ctx(inputs.data(), static_cast<int>(inputs.size()), out, 8);
    if (!kernel->compute(ctx).ok()) bench::fail("kernel failed");
  };
}

ops::AttrList int_list(std::vector<int64_t> v) {
  ops::AttrList l;
  l.i = std::move(v);
  return l;
}

// The Conv2D path before oneDNN's convolutions: im2col copies of each
// image and one oneDNN product of the columns with the filter.
void im2col_conv(const ops::ConvGeometry& g, const float* x, const float* f, float* y, Tensor& cols) {
  const int64_t per_image = g.out_pixels() * g.patch_size();
  float* c = cols.mutable_data<float>();
  for (int64_t b = 0; b < g.batch; ++b) ops::im2col(g, x + b * g.in_image_size(), c + b * per_image);
  ops::cpu::MatMulShape s;
  s.m = g.batch * g.out_pixels();
  s.k = g.patch_size();
  s.n = g.out_c;
  ops::cpu::dnnl_matmul(s, c, f, y);
}

void conv_table() {
  std::printf("\nConvolutions, one thread: µs a call (GFLOP/s), medians of 7 interleaved rounds\n");
  std::printf("%34s %16s %18s %10s\n", "NHWC input, filter, padding", "tagflow", "im2col + oneDNN", "ratio");
  struct Case {
    ops::Shape in, filter;
    int64_t stride;
    const char* padding;
  };
  for (const Case& c : {Case{{1, 32, 32, 3}, {3, 3, 3, 32}, 1, "SAME"}, Case{{32, 32, 32, 3}, {3, 3, 3, 32}, 1, "SAME"},
                        Case{{32, 16, 16, 32}, {3, 3, 32, 64}, 1, "SAME"}, Case{{1, 56, 56, 64}, {3, 3, 64, 64}, 1, "SAME"},
                        Case{{8, 56, 56, 64}, {3, 3, 64, 64}, 1, "SAME"}, Case{{1, 28, 28, 128}, {1, 1, 128, 256}, 1, "VALID"},
                        Case{{8, 56, 56, 64}, {3, 3, 64, 128}, 2, "SAME"}}) {
    ops::AttrMap attrs{{"strides", int_list({1, c.stride, c.stride, 1})}, {"padding", std::string(c.padding)}};
    const Tensor x = random_tensor(c.in, 5), f = random_tensor(c.filter, 6);
    ops::ConvGeometry g;
    g.batch = c.in.dim(0);
    g.in_h = c.in.dim(1);
    g.in_w = c.in.dim(2);
    g.in_c = c.in.dim(3);
    g.k_h = c.filter.dim(0);
    g.k_w = c.filter.dim(1);
    g.out_c = c.filter.dim(3);
    ops::WindowAttrs w;
    w.stride_h = w.stride_w = c.stride;
    w.padding = std::string(c.padding) == "SAME" ? ops::Padding::same : ops::Padding::valid;
    if (!ops::compute_output_size("bench", w, g).ok()) bench::fail("geometry");
    Tensor cols = Tensor::uninitialized(ops::DType::float32, ops::Shape{g.batch * g.out_pixels() * g.patch_size()});
    Tensor y = Tensor::uninitialized(ops::DType::float32, g.out_shape());
    auto old_call = [&] { im2col_conv(g, x.data<float>(), f.data<float>(), y.mutable_data<float>(), cols); };
    std::vector<double> t = per_call_medians({kernel_call(make_kernel("Conv2D", attrs, 2), {x, f}), old_call}, 0.2);
    const double flop = 2.0 * g.batch * g.out_pixels() * g.patch_size() * g.out_c;
    auto cell = [&](double sec) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.1f (%.1f)", sec * 1e6, flop / sec / 1e9);
      return std::string(buf);
    };
    const std::string what = c.in.to_string() + " " + c.filter.to_string() + " " + c.padding +
                             (c.stride > 1 ? "/" + std::to_string(c.stride) : "");
    std::printf("%34s %16s %18s %10.2f\n", what.c_str(), cell(t[0]).c_str(), cell(t[1]).c_str(), t[0] / t[1]);
  }

  std::printf("\nOther float kernels, one thread: µs a call, medians\n");
  std::printf("%52s %12s\n", "kernel", "µs");
  const Tensor img = random_tensor({8, 56, 56, 64}, 7);
  const Tensor dy3 = random_tensor({8, 56, 56, 64}, 8);
  const Tensor filt = random_tensor({3, 3, 64, 64}, 9);
  const Tensor dw = random_tensor({3, 3, 64, 1}, 10);
  ops::AttrMap same{{"strides", int_list({1, 1, 1, 1})}, {"padding", std::string("SAME")}};
  ops::AttrMap pool{{"ksize", int_list({1, 2, 2, 1})}, {"strides", int_list({1, 2, 2, 1})},
                    {"padding", std::string("VALID")}};
  const Tensor in_sizes = Tensor::vector<int32_t>({8, 56, 56, 64});
  const Tensor f_sizes = Tensor::vector<int32_t>({3, 3, 64, 64});
  const Tensor big = random_tensor({1 << 20}, 11);
  const Tensor ch = random_tensor({64}, 12), ch_var = ops::Tensor::from_vector<float>(ops::Shape{64}, std::vector<float>(64, 1.f));
  ops::AttrMap fused = same;
  {
    ops::AttrList names;
    names.s = {"BiasAdd", "Relu"};
    fused["fused_ops"] = names;
    fused["num_args"] = int64_t{1};
  }
  ops::AttrMap bn_train{{"U", ops::DType::float32}, {"is_training", true}};
  ops::AttrMap bn_infer{{"U", ops::DType::float32}, {"is_training", false}};
  auto lstm_inputs = [](int64_t batch, int64_t cell) {
    return std::vector<Tensor>{random_tensor({batch, cell}, 20), random_tensor({batch, cell}, 21),
                               random_tensor({batch, cell}, 22), random_tensor({2 * cell, 4 * cell}, 23),
                               random_tensor({cell}, 24),         random_tensor({cell}, 25),
                               random_tensor({cell}, 26),         random_tensor({4 * cell}, 27)};
  };
  struct Row {
    const char* name;
    std::function<void()> call;
  };
  std::vector<Row> rows = {
      {"Conv2DBackpropInput [8,56,56,64] 3x3x64x64", kernel_call(make_kernel("Conv2DBackpropInput", same, 3), {in_sizes, filt, dy3})},
      {"Conv2DBackpropFilter [8,56,56,64] 3x3x64x64", kernel_call(make_kernel("Conv2DBackpropFilter", same, 3), {img, f_sizes, dy3})},
      {"DepthwiseConv2dNative [8,56,56,64] 3x3x64x1", kernel_call(make_kernel("DepthwiseConv2dNative", same, 2), {img, dw})},
      {"MaxPool [8,56,56,64] 2x2/2", kernel_call(make_kernel("MaxPool", pool, 1), {img})},
      {"AvgPool [8,56,56,64] 2x2/2", kernel_call(make_kernel("AvgPool", pool, 1), {img})},
      {"FusedBatchNormV3 training [8,56,56,64]", kernel_call(make_kernel("FusedBatchNormV3", bn_train, 5), {img, ch, ch, ch, ch_var})},
      {"FusedBatchNormV3 inference [8,56,56,64]", kernel_call(make_kernel("FusedBatchNormV3", bn_infer, 5), {img, ch, ch, ch, ch_var})},
      {"FusedBatchNormGradV3 training [8,56,56,64]", kernel_call(make_kernel("FusedBatchNormGradV3", bn_train, 6), {dy3, img, ch, ch, ch_var, ch})},
      {"LSTMBlockCell batch 1, input 256, cell 256", kernel_call(make_kernel("LSTMBlockCell", {}, 8), lstm_inputs(1, 256))},
      {"LSTMBlockCell batch 32, input 256, cell 256", kernel_call(make_kernel("LSTMBlockCell", {}, 8), lstm_inputs(32, 256))},
      {"_FusedConv2D BiasAdd+Relu [8,56,56,64] 3x3x64x64", kernel_call(make_kernel("_FusedConv2D", fused, 3), {img, filt, ch})},
      {"Conv2D, BiasAdd, Relu kernels one after another", [conv = std::shared_ptr<ops::Kernel>(make_kernel("Conv2D", same, 2)),
                                                           bias = std::shared_ptr<ops::Kernel>(make_kernel("BiasAdd", {}, 2)),
                                                           relu = std::shared_ptr<ops::Kernel>(make_kernel("Relu", {}, 1)), &img,
                                                           &filt, &ch] {
         Tensor in[2] = {img, filt}, out[1];
         ops::KernelContext c1(in, 2, out, 1);
         if (!conv->compute(c1).ok()) bench::fail("Conv2D");
         Tensor in2[2] = {std::move(out[0]), ch}, out2[1];
         ops::KernelContext c2(in2, 2, out2, 1);
         if (!bias->compute(c2).ok()) bench::fail("BiasAdd");
         Tensor in3[1] = {std::move(out2[0])}, out3[1];
         ops::KernelContext c3(in3, 1, out3, 1);
         if (!relu->compute(c3).ok()) bench::fail("Relu");
       }},
      {"Tanh 2^20 floats", kernel_call(make_kernel("Tanh", {}, 1), {big})},
      {"Exp 2^20 floats", kernel_call(make_kernel("Exp", {}, 1), {big})},
      {"Eigen portable tanh 2^20 floats (the old Tanh)", [&big] {
         static Tensor out = Tensor::uninitialized(ops::DType::float32, big.shape());
         Eigen::Map<Eigen::ArrayXf>(out.mutable_data<float>(), big.num_elements()) =
             Eigen::Map<const Eigen::ArrayXf>(big.data<float>(), big.num_elements()).tanh();
       }},
  };
  std::vector<std::function<void()>> fs;
  for (const Row& r : rows) fs.push_back(r.call);
  std::vector<double> t = per_call_medians(fs, 0.2);
  for (size_t i = 0; i < rows.size(); ++i) std::printf("%52s %12.1f\n", rows[i].name, t[i] * 1e6);
}

// Threads of this process, and how many are running ('R') right now.
std::pair<int, int> thread_counts() {
  int all = 0, running = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      ++all;
      std::ifstream stat(std::string("/proc/self/task/") + e->d_name + "/stat");
      std::string s;
      std::getline(stat, s);
      const size_t close = s.rfind(')');
      if (close != std::string::npos && close + 2 < s.size() && s[close + 2] == 'R') ++running;
    }
    closedir(d);
  }
  return {all, running};
}

std::string matmul_step_graph() {
  return R"(node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
node { name: "mm" op: "MatMul" input: "a" input: "b" attr { key: "T" value { type: DT_FLOAT } } })";
}

void step_table() {
  std::printf("\nA step of one n x n MatMul (fed), by scheduler threads: ms a step, medians\n");
  std::printf("%6s %12s %12s %10s %22s\n", "n", "1 thread", "2 threads", "speed-up", "threads (all/running)");
  for (int64_t n : {256, 512, 1024}) {
    Tensor a = random_matrix(n, n, 3), b = random_matrix(n, n, 4);
    actors::Feeds feeds{{"a", a}, {"b", b}};
    std::vector<std::unique_ptr<actors::Session>> sessions;
    for (int threads : {1, 2}) {
      actors::SessionOptions o;
      o.threads = threads;
      auto g = graph::import_graph_text(matmul_step_graph());
      if (!g.ok()) bench::fail(g.status().to_string());
      sessions.push_back(bench::session(std::move(g).value(), o));
    }
    std::vector<std::function<void()>> fs;
    for (auto& s : sessions) fs.push_back([&s, &feeds] { bench::run(*s, feeds, {"mm"}); });
    std::vector<double> t = per_call_medians(fs, n >= 1024 ? 0.6 : 0.2);
    // sample the thread states while the 2-thread session computes
    std::atomic<bool> stop{false};
    std::pair<int, int> seen{0, 0};
    std::thread sampler([&] {
      while (!stop.load()) {
        auto c = thread_counts();
        seen.first = std::max(seen.first, c.first);
        seen.second = std::max(seen.second, c.second);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    for (int i = 0; i < 20; ++i) fs[1]();
    stop = true;
    sampler.join();
    std::printf("%6lld %12.3f %12.3f %10.2f %15d/%d max\n", static_cast<long long>(n), t[0] * 1e3, t[1] * 1e3,
                t[0] / t[1], seen.first, seen.second - 1 /* the sampler itself */);
  }
}

}  // namespace

int main() {
  std::printf("%s\n\n", ops::cpu::kernel_info_text().c_str());
  kernel_table();
  conv_table();
  step_table();
  return 0;
}
