// Executor benchmarks (DESIGN.md §4, docs/performance.md). Each prints its
// figure beside a baseline measured in the same run:
//   executor_bench chain    [N]        10^5 chained scalar Adds: ns per node
//   executor_bench loop     [N...]     while i < n: i += 1: µs per iteration
//   executor_bench matmul   [N]        loop with a 64x64 MatMul body vs Eigen
//   executor_bench split    [N [WHAT]] loops with the body on another device vs one partition
//                                      (WHAT: only the loops whose description has it, e.g. MatMul)
//   executor_bench parallel [N]        ~20 µs independent body, P = 1 vs 10
//   executor_bench wide     [N]        N independent MatMuls, 1 vs 2 threads
//   executor_bench step     [N]        Session::run of a one-node graph
//   executor_bench rss      [N]        peak RSS around a 10^6-iteration loop
//   executor_bench instances [N]       N frame instances of a one-iteration loop vs N iterations
//   executor_bench nested   [DEPTH]    DEPTH nested loops, with and without live invariants
//   executor_bench tracing  [N]        the counting loop recorded into each sink: ns per event
//   executor_bench all                 everything with default sizes
#include <Eigen/Core>

#include <cstdlib>
#include <cstring>
#include <thread>

#include "actors/executor_graphs.hpp"
#include "actors/session.hpp"
#include "bench/bench_util.hpp"
#include "bench/loop_graphs.hpp"
#include "graph/validate.hpp"
#include "ops/op_def.hpp"
#include "trace/sink.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using tagflow::bench::counting_text;
using tagflow::bench::fill;
using tagflow::bench::matmul_loop_text;
using ops::Tensor;

namespace {

// Threads default to TAGFLOW_BENCH_THREADS, else one per core;
// TAGFLOW_BENCH_CONFIG names a CAF INI file for the session (to compare
// scheduler settings without rebuilding).
std::unique_ptr<actors::Session> session_for(const std::string& text, int threads = 0) {
  actors::SessionOptions o;
  const char* env = std::getenv("TAGFLOW_BENCH_THREADS");
  o.threads = threads > 0 ? threads : env != nullptr ? std::atoi(env) : 0;
  if (const char* config = std::getenv("TAGFLOW_BENCH_CONFIG")) o.config_file = config;
  auto s = actors::Session::create(parse(text), o);
  if (!s.ok()) {
    std::fprintf(stderr, "executor_bench: %s\n", s.status().to_string().c_str());
    std::exit(1);
  }
  return std::move(s).value();
}

std::vector<Tensor> run_or_die(actors::Session& s, const actors::Feeds& feeds,
                               const std::vector<std::string>& fetches) {
  auto r = s.run(feeds, fetches);
  if (!r.ok()) {
    std::fprintf(stderr, "executor_bench: %s\n", r.status().to_string().c_str());
    std::exit(1);
  }
  return std::move(r).value();
}

// ---------------------------------------------------------------- chain
void chain(int n) {
  std::string text = int_const("x0", 0) + int_const("one", 1);
  for (int i = 1; i <= n; ++i)
    text += binary("x" + std::to_string(i), "Add", "x" + std::to_string(i - 1), "one");
  auto s = session_for(text);
  const std::string fetch = "x" + std::to_string(n);
  run_or_die(*s, {}, {fetch});  // prepares the step graph once
  double t = bench::median_seconds(9, [&] { bench::keep(run_or_die(*s, {}, {fetch})); });

  // Baselines: the same adds in a plain C++ loop, and the Add kernel called
  // directly on scalar tensors (what the executor cannot avoid).
  double plain = bench::median_seconds(9, [&] {
    volatile int32_t x = 0;
    for (int i = 0; i < n; ++i) x = x + 1;
  });
  const ops::OpDef* add = ops::OpRegistry::global().find("Add");
  ops::AttrMap attrs{{"T", ops::DType::int32}};
  std::vector<ops::DType> in_types{ops::DType::int32, ops::DType::int32}, out_types{ops::DType::int32};
  std::string name = "add";
  auto kernel = add->make_kernel({name, attrs, in_types, out_types});
  double kernel_only = bench::median_seconds(9, [&] {
    Tensor x = Tensor::scalar<int32_t>(0), one = Tensor::scalar<int32_t>(1);
    for (int i = 0; i < n; ++i) {
      Tensor in[2] = {x, one};
      Tensor out;
      ops::KernelContext ctx(in, 2, &out, 1);
      (void)(*kernel)->compute(ctx);
      x = std::move(out);
    }
    bench::keep(x);
  });
  std::printf("chain of %d Adds: %.1f ns/node  | baseline plain C++ add %.2f ns, Add kernel alone %.1f ns  (target <= 50 ns/node)\n",
              n, t / n * 1e9, plain / n * 1e9, kernel_only / n * 1e9);
}

// ---------------------------------------------------------------- loop
void loop(const std::vector<int>& sizes) {
  auto s = session_for(counting_text());
  for (int n : sizes) {
    actors::Feeds feeds{{"n", Tensor::scalar<int32_t>(n)}};
    run_or_die(*s, feeds, {"w/Exit"});
    int reps = n >= 1000000 ? 3 : n >= 100000 ? 5 : 9;
    double t = bench::median_seconds(reps, [&] { bench::keep(run_or_die(*s, feeds, {"w/Exit"})); });
    double plain = bench::median_seconds(reps, [&] {
      volatile int32_t i = 0;
      while (i < n) i = i + 1;
    });
    std::printf("while i < n: i += 1, n = %7d: %.3f µs/iteration  | baseline plain C++ %.4f µs  (target <= 1 µs; TensorFlow ~18 µs)\n",
                n, t / n * 1e6, plain / n * 1e6);
  }
}

// ---------------------------------------------------------------- tracing
// What recording costs: the counting loop with no sink, and with every
// event going to a sink that drops it, to memory, to a JSONL file and to
// a binary file; per event, over the run without a sink.
class DropSink final : public trace::Sink {
 protected:
  void write(trace::Event&&) override {}
  void write_names(uint64_t, const std::shared_ptr<const trace::PartitionNames>&) override {}
};

void tracing(int n) {
  actors::Feeds feeds{{"n", Tensor::scalar<int32_t>(n)}};
  const auto time = [&](trace::Sink* sink, size_t* events) {
    actors::SessionOptions o;
    const char* env = std::getenv("TAGFLOW_BENCH_THREADS");
    o.threads = env != nullptr ? std::atoi(env) : 0;
    o.events = sink;
    auto s = actors::Session::create(parse(counting_text()), o);
    if (!s.ok()) std::exit(1);
    run_or_die(**s, feeds, {"w/Exit"});
    if (auto* memory = dynamic_cast<trace::MemorySink*>(sink)) memory->clear();
    const double t = bench::median_seconds(5, [&] { bench::keep(run_or_die(**s, feeds, {"w/Exit"})); });
    if (auto* memory = dynamic_cast<trace::MemorySink*>(sink)) {
      *events = memory->events().size() / 5;
      memory->clear();
    }
    return t;
  };
  size_t events = 0;
  trace::MemorySink memory;
  const double off = time(nullptr, &events);
  const double in_memory = time(&memory, &events);
  DropSink drop;
  const double dropped = time(&drop, &events);
  std::string error;
  auto jsonl = trace::open_sink("/tmp/tagflow_bench_trace.jsonl", &error);
  auto binary = trace::open_sink("/tmp/tagflow_bench_trace.tft", &error);
  const double to_jsonl = time(jsonl.get(), &events);
  const double to_binary = time(binary.get(), &events);
  jsonl.reset();
  binary.reset();
  std::remove("/tmp/tagflow_bench_trace.jsonl");
  std::remove("/tmp/tagflow_bench_trace.tft");
  const double e = static_cast<double>(events);
  std::printf("while i < n: i += 1, n = %d, %zu events a step: no sink %.3f µs/iteration  | per event: dropped %.0f ns, "
              "memory %.0f ns, JSONL %.0f ns, binary %.0f ns\n",
              n, events, off / n * 1e6, (dropped - off) / e * 1e9, (in_memory - off) / e * 1e9,
              (to_jsonl - off) / e * 1e9, (to_binary - off) / e * 1e9);
}

// ---------------------------------------------------------------- matmul
void matmul(int n) {
  const int size = 64;
  auto s = session_for(matmul_loop_text(size, 10));
  actors::Feeds feeds{{"n", Tensor::scalar<int32_t>(n)}};
  run_or_die(*s, feeds, {"w/m_exit"});
  double t = bench::median_seconds(7, [&] { bench::keep(run_or_die(*s, feeds, {"w/m_exit"})); });
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  double plain = bench::median_seconds(7, [&] {
    Matrix m = Matrix::Ones(size, size), k = Matrix::Constant(size, size, 1.0f / size);
    for (int i = 0; i < n; ++i) {
      Matrix next = m * k;  // a fresh result each iteration, as the graph has
      m = std::move(next);
    }
    bench::keep(m);
  });
  std::printf("loop of %d iterations with a %dx%d MatMul body: %.2f µs/iteration  | baseline plain Eigen %.2f µs  (%.0f%% over; target <= 5%%)\n",
              n, size, size, t / n * 1e6, plain / n * 1e6, (t / plain - 1) * 100);
}

// ---------------------------------------------------------------- split
// The loop's body on another device than its pivot (two partitions, a
// control loop on the body's device, three transfers per iteration) against
// the same graph on one partition, in the same process.
std::unique_ptr<actors::Session> placed_session(const std::string& text,
                                                const std::vector<std::string>& on_second) {
  actors::SessionOptions o;
  o.num_devices = 2;
  if (const char* env = std::getenv("TAGFLOW_BENCH_THREADS")) o.threads = std::atoi(env);
  if (const char* config = std::getenv("TAGFLOW_BENCH_CONFIG")) o.config_file = config;
  auto s = actors::Session::create(
      tagflow::bench::with_body_on(text, on_second, "/job:localhost/replica:0/task:0/device:CPU:1"), o);
  if (!s.ok()) {
    std::fprintf(stderr, "executor_bench: %s\n", s.status().to_string().c_str());
    std::exit(1);
  }
  return std::move(s).value();
}

void split(int n, const std::string& only) {
  for (const tagflow::bench::SplitLoop& k : tagflow::bench::split_loops(n)) {
    if (!only.empty() && std::string(k.what).find(only) == std::string::npos) continue;
    actors::Feeds feeds{{"n", Tensor::scalar<int32_t>(k.n)}};
    auto one = placed_session(k.text, {});
    auto two = placed_session(k.text, k.body);
    run_or_die(*one, feeds, {k.fetch});
    run_or_die(*two, feeds, {k.fetch});
    if (two->last_partitions().size() != 2) {
      std::fprintf(stderr, "executor_bench: the split graph has %zu partitions\n", two->last_partitions().size());
      std::exit(1);
    }
    double t1 = bench::median_seconds(7, [&] { bench::keep(run_or_die(*one, feeds, {k.fetch})); });
    double t2 = bench::median_seconds(7, [&] { bench::keep(run_or_die(*two, feeds, {k.fetch})); });
    std::printf("%s, n = %d, body on another device than the pivot: %.2f µs/iteration  | same graph on one partition %.2f µs  (%.2fx; target <= 2x)\n",
                k.what, k.n, t2 / k.n * 1e6, t1 / k.n * 1e6, t2 / t1);
  }
}

// ---------------------------------------------------------------- parallel
std::string independent_body_text(int size, int parallel_iterations) {
  std::string body =
      enter("w/acc_enter", "acc0", "w", false, parallel_iterations, "DT_FLOAT") +
      enter("w/m", "m", "w", true, parallel_iterations, "DT_FLOAT") +
      merge("w/acc_merge", {"w/acc_enter", "w/acc_next"}, "DT_FLOAT") +
      binary("w/acc_switch", "Switch", "w/acc_merge", "w/LoopCond", "DT_FLOAT") +
      unary("w/acc_identity", "Identity", "w/acc_switch:1", "DT_FLOAT") +
      node("w/mm", "MatMul", {"w/m", "w/m"}, type_attr("T", "DT_FLOAT")) +
      int_const("w/axis", 0, {"^w/Identity"}) +
      node("w/col", "Sum", {"w/mm", "w/axis"}, type_attr("T", "DT_FLOAT") + " " + type_attr("Tidx", "DT_INT32")) +
      node("w/total", "Sum", {"w/col", "w/axis"}, type_attr("T", "DT_FLOAT") + " " + type_attr("Tidx", "DT_INT32")) +
      binary("w/acc_add", "Add", "w/acc_identity", "w/total", "DT_FLOAT") +
      unary("w/acc_next", "NextIteration", "w/acc_add", "DT_FLOAT") +
      unary("w/acc_exit", "Exit", "w/acc_switch", "DT_FLOAT");
  return int_const("start", 0) + node("n", "Placeholder", {}, type_attr("dtype", "DT_INT32")) +
         fill("m", size, size, 0.01f) + float_const("acc0", 0) +
         counting_loop("w", "start", "n", 1, parallel_iterations, body);
}

void parallel(int n) {
  const int size = 80;  // one 80x80 MatMul: about 20 µs here
  double t[2];
  int ps[2] = {1, 10};
  for (int i = 0; i < 2; ++i) {
    auto s = session_for(independent_body_text(size, ps[i]), 2);
    actors::Feeds feeds{{"n", Tensor::scalar<int32_t>(n)}};
    run_or_die(*s, feeds, {"w/acc_exit"});
    t[i] = bench::median_seconds(7, [&] { bench::keep(run_or_die(*s, feeds, {"w/acc_exit"})); });
  }
  std::printf("%d iterations of an independent %dx%d MatMul body, 2 threads: parallel_iterations 1: %.1f µs/iteration, 10: %.1f µs/iteration  -> %.2fx  (target >= 1.9x)\n",
              n, size, size, t[0] / n * 1e6, t[1] / n * 1e6, t[0] / t[1]);
}

// ---------------------------------------------------------------- wide
void wide(int n) {
  const int size = 64;
  std::string text = fill("a", size, size, 0.5f);
  std::string pack;
  for (int i = 0; i < n; ++i) {
    std::string mm = "mm" + std::to_string(i);
    text += fill("b" + std::to_string(i), size, size, 0.001f * static_cast<float>(i % 7));
    text += node(mm, "MatMul", {"a", "b" + std::to_string(i)}, type_attr("T", "DT_FLOAT"));
    pack += " input: \"" + mm + "\"";
  }
  text += "node { name: \"stack\" op: \"Pack\"" + pack + " " + type_attr("T", "DT_FLOAT") +
          " attr { key: \"N\" value { i: " + std::to_string(n) + " } } attr { key: \"axis\" value { i: 0 } } }\n";
  text += node("axes", "Const", {}, type_attr("dtype", "DT_INT32") +
               " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 3 } } int_val: 0 int_val: 1 int_val: 2 } } }");
  text += node("sum", "Sum", {"stack", "axes"}, type_attr("T", "DT_FLOAT") + " " + type_attr("Tidx", "DT_INT32"));
  double t[2];
  for (int threads = 1; threads <= 2; ++threads) {
    auto s = session_for(text, threads);
    // The allocator settles after a few steps of 48 MB of tensors (until
    // then a step may fault the 16 MB Pack output in afresh).
    for (int warm = 0; warm < 4; ++warm) run_or_die(*s, {}, {"sum"});
    t[threads - 1] = bench::median_seconds(7, [&] { bench::keep(run_or_die(*s, {}, {"sum"})); });
  }
  // Baseline: the same work in plain C++ — fill, multiply (split over the
  // threads), pack, sum — to show what a second core can give here.
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  double plain[2];
  for (int threads = 1; threads <= 2; ++threads) {
    plain[threads - 1] = bench::median_seconds(7, [&] {
      Matrix a = Matrix::Constant(size, size, 0.5f);
      std::vector<Matrix> b(static_cast<size_t>(n)), products(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) b[static_cast<size_t>(i)] = Matrix::Constant(size, size, 0.001f * static_cast<float>(i % 7));
      auto multiply = [&](int first, int step) {
        for (int i = first; i < n; i += step) products[static_cast<size_t>(i)] = a * b[static_cast<size_t>(i)];
      };
      std::thread helper;
      if (threads == 2) helper = std::thread(multiply, 1, 2);
      multiply(0, threads);
      if (helper.joinable()) helper.join();
      std::vector<float> stack(static_cast<size_t>(n) * size * size);
      for (int i = 0; i < n; ++i)
        std::memcpy(stack.data() + static_cast<size_t>(i) * size * size, products[static_cast<size_t>(i)].data(),
                    sizeof(float) * size * size);
      bench::keep(Eigen::Map<Eigen::ArrayXf>(stack.data(), static_cast<Eigen::Index>(stack.size())).sum());
    });
  }
  std::printf("wide graph of %d independent %dx%d MatMuls into one Sum: 1 thread %.2f ms, 2 threads %.2f ms  -> %.2fx  | baseline plain C++ 1 thread %.2f ms, 2 threads %.2f ms -> %.2fx  (target: >= the plain speedup)\n",
              n, size, size, t[0] * 1e3, t[1] * 1e3, t[0] / t[1], plain[0] * 1e3, plain[1] * 1e3, plain[0] / plain[1]);
}

// ---------------------------------------------------------------- step
void step(int n) {
  auto s = session_for(int_const("c", 42));
  run_or_die(*s, {}, {"c"});
  double t = bench::median_seconds(5, [&] {
    for (int i = 0; i < n; ++i) bench::keep(run_or_die(*s, {}, {"c"}));
  });
  const ops::OpDef* c = ops::OpRegistry::global().find("Const");
  ops::AttrMap attrs{{"dtype", ops::DType::int32}, {"value", Tensor::scalar<int32_t>(42)}};
  std::vector<ops::DType> in_types, out_types{ops::DType::int32};
  std::string name = "c";
  auto kernel = c->make_kernel({name, attrs, in_types, out_types});
  double direct = bench::median_seconds(5, [&] {
    for (int i = 0; i < n; ++i) {
      Tensor out;
      ops::KernelContext ctx(nullptr, 0, &out, 1);
      (void)(*kernel)->compute(ctx);
      bench::keep(out);
    }
  });
  std::printf("step overhead, one-node graph through Session::run: %.2f µs/step  | baseline Const kernel called directly %.3f µs  (target <= 2 µs; TensorFlow ~89 µs)\n",
              t / n * 1e6, direct / n * 1e6);
}

// ---------------------------------------------------------------- rss
// ---------------------------------------------------------------- instances
// A loop of n iterations that each run an inner loop of one iteration (n
// frame instances) against the plain counting loop of n iterations.
void instances(int n) {
  actors::Feeds feeds{{"n", Tensor::scalar<int32_t>(n)}};
  auto inner = session_for(loop_of_inner_loops());
  auto flat = session_for(counting_text());
  run_or_die(*inner, feeds, {"w/Exit"});
  run_or_die(*flat, feeds, {"w/Exit"});
  double t_flat = bench::median_seconds(5, [&] { bench::keep(run_or_die(*flat, feeds, {"w/Exit"})); });
  double t_inner = bench::median_seconds(5, [&] { bench::keep(run_or_die(*inner, feeds, {"w/Exit"})); });
  std::printf("%d iterations each entering a loop of one iteration: %.2f µs/iteration  | plain loop %.2f µs/iteration  "
              "(a frame instance costs %.2f µs)\n",
              n, t_inner / n * 1e6, t_flat / n * 1e6, (t_inner - t_flat) / n * 1e6);
}

// ---------------------------------------------------------------- nested
// `depth` nested loops of one iteration each (tests/actors/executor_graphs.hpp
// nested_chain): the last iteration of every loop enters the loops inside
// it dead (depth^2/2 dead instances, none started); with a live invariant
// per level those instances run.
void nested(int depth) {
  auto dead = session_for(nested_chain(depth));
  double t_dead = bench::median_seconds(5, [&] { bench::keep(run_or_die(*dead, {}, {"L0/exit"})); });
  const int live_depth = std::max(1, depth / 4);
  auto live = session_for(nested_chain(live_depth, true));
  double t_live = bench::median_seconds(3, [&] { bench::keep(run_or_die(*live, {}, {"L0/exit", "L0/v_exit"})); });
  const double instances = live_depth * (live_depth + 1) / 2.0;
  std::printf("%d nested loops (%d frame instances, %.0f dead ones not started): %.3f s  | "
              "%d nested loops with a live invariant (%.0f frame instances, all run): %.3f s, %.2f µs/instance\n",
              depth, depth, depth * (depth - 1) / 2.0, t_dead, live_depth, instances, t_live, t_live / instances * 1e6);
}

void rss(int n) {
  auto s = session_for(counting_text());
  run_or_die(*s, {{"n", Tensor::scalar<int32_t>(1000)}}, {"w/Exit"});
  double before = bench::current_rss_mib();
  double peak_before = bench::peak_rss_mib();
  auto out = run_or_die(*s, {{"n", Tensor::scalar<int32_t>(n)}}, {"w/Exit"});
  double after = bench::current_rss_mib();
  double peak_after = bench::peak_rss_mib();
  std::printf("RSS around a %d-iteration loop (result %d): before %.1f MiB (peak %.1f), after %.1f MiB (peak %.1f)  -> growth %.1f MiB  (target: a few MB)\n",
              n, out[0].scalar_value<int32_t>(), before, peak_before, after, peak_after, peak_after - peak_before);
}

}  // namespace

int main(int argc, char** argv) {
  std::string what = argc > 1 ? argv[1] : "all";
  auto arg = [&](int def) { return argc > 2 ? std::atoi(argv[2]) : def; };
  if (what == "chain") chain(arg(100000));
  else if (what == "loop") {
    std::vector<int> sizes;
    for (int i = 2; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
    if (sizes.empty()) sizes = {1000, 10000, 100000, 1000000};
    loop(sizes);
  } else if (what == "matmul") matmul(arg(1000));
  else if (what == "split") split(arg(20000), argc > 3 ? argv[3] : "");
  else if (what == "parallel") parallel(arg(1000));
  else if (what == "wide") wide(arg(1000));
  else if (what == "step") step(arg(10000));
  else if (what == "rss") rss(arg(1000000));
  else if (what == "instances") instances(arg(20000));
  else if (what == "nested") nested(arg(1000));
  else if (what == "tracing") tracing(arg(20000));
  else if (what == "all") {
    chain(100000);
    loop({1000, 10000, 100000, 1000000});
    matmul(1000);
    split(20000, "");
    parallel(1000);
    wide(1000);
    step(10000);
    rss(1000000);
    instances(20000);
    nested(1000);
  } else {
    std::fprintf(stderr, "usage: executor_bench [chain|loop|matmul|split|parallel|wide|step|rss|instances|nested|tracing|all] [N...]\n");
    return 2;
  }
  return 0;
}
