// TensorFlow 2's functional ops run as written against lowered
// (actors/function_runtime.hpp, docs/performance.md "Functional ops run as
// written"), in the same run:
//   - the per-iteration cost of a trivial functional While (i < n: i + 1),
//     run as written and lowered, beside the same loop built TF 1 style;
//   - the per-iteration cost of the 64x64 MatMul While
//     (tests/data/functional/while_matmul.pbtxt), both ways;
//   - forward + backward of a 100-step tanh RNN (hidden 64): TF 2 form
//     (functional While, its gradient a While over TensorLists) run as
//     written and lowered, TF 1 form (stacks), and the forward alone;
//   - a map over 64 slices of [64, 64] with a 64x64 MatMul each (tf2
//     map_fn over TensorLists, parallel_iterations 10): run as written,
//     one iteration after another, against lowered, where the frame lets
//     up to 10 iterations' MatMuls overlap.
//   functional_bench [trivial-iterations] [matmul-iterations]   default 100000 500
// Threads: TAGFLOW_BENCH_THREADS, else one per core.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "actors/session.hpp"
#include "bench/bench_session.hpp"
#include "bench/bench_util.hpp"
#include "graph/autodiff/gradients.hpp"
#include "graph/builder/builder.hpp"
#include "graph/io/import.hpp"

using namespace tagflow;
using graph::GraphBuilder;
using graph::Output;
using ops::DType;
using ops::Tensor;
using Vars = std::vector<Output>;

namespace {

using bench::fail;
using bench::run;

std::unique_ptr<actors::Session> session(graph::Graph g, bool lower) {
  actors::SessionOptions o = bench::session_options();
  o.lower_functional = lower;
  return bench::session(std::move(g), o);
}

graph::Graph counting_loop(GraphBuilder::Style style, std::string* fetch) {
  GraphBuilder b(style);
  Output n = b.placeholder(DType::int32, {false, {}}, "n");
  Output i = b.while_loop([&](const Vars& v) { return b.less(v[0], n); },
                          [&](const Vars& v) { return Vars{b.add(v[0], b.scalar<int32_t>(1))}; },
                          {b.scalar<int32_t>(0)})[0];
  *fetch = i.name();
  auto g = b.finish();
  if (!g.ok()) fail(g.status().to_string());
  return std::move(g).value();
}

// h_{t+1} = tanh(h_t W + x), loss = sum(h_T); x, the input, is [1, 64].
struct Rnn {
  graph::Graph g;
  std::string loss;
  std::string dw;  // empty: forward only
};

Rnn rnn(GraphBuilder::Style style, int steps, bool backward) {
  GraphBuilder b(style);
  Output x = b.placeholder(DType::float32, {true, {}}, "x");
  Output w = b.placeholder(DType::float32, {true, {}}, "w");
  Output h0 = b.placeholder(DType::float32, {true, {}}, "h0");
  graph::Outputs out = b.while_loop(
      [&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(steps)); },
      [&](const Vars& v) {
        Output h = b.op("Tanh", {b.add(b.matmul(v[1], w), x)})[0];
        return Vars{b.add(v[0], b.scalar<int32_t>(1)), h};
      },
      {b.scalar<int32_t>(0), h0});
  Output loss = b.reduce_sum(out[1], b.vector<int32_t>({0, 1}));
  auto g = b.finish();
  if (!g.ok()) fail(g.status().to_string());
  Rnn r{std::move(g).value(), loss.name(), ""};
  if (backward) {
    graph::GradientOptions o;
    o.functional = style == GraphBuilder::Style::tf2;
    auto d = graph::gradients(r.g, {graph::Endpoint{r.g.find(loss.name()), 0}},
                              {graph::Endpoint{r.g.find("w"), 0}}, {}, o);
    if (!d.ok()) fail(d.status().to_string());
    r.dw = r.g.endpoint_name(d->dxs[0]);
  }
  return r;
}

// map_fn(lambda s: s @ w, x) over x of [slices, 64, 64].
graph::Graph map_loop(std::string* fetch) {
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float32, {true, {}}, "x");
  Output w = b.placeholder(DType::float32, {true, {}}, "w");
  Output out = b.map_fn([&](const Vars& s) { return Vars{b.matmul(s[0], w)}; }, {x}, {}, "map", 10)[0];
  *fetch = out.name();
  auto g = b.finish();
  if (!g.ok()) fail(g.status().to_string());
  return std::move(g).value();
}

Tensor filled(const ops::Shape& shape, float v) {
  std::vector<float> values(static_cast<size_t>(shape.num_elements()), v);
  return Tensor::from_vector<float>(shape, values);
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t trivial_n = argc > 1 ? std::atoll(argv[1]) : 100000;
  const int64_t matmul_n = argc > 2 ? std::atoll(argv[2]) : 500;
  const int reps = 7;

  {
    std::string f2, f1;
    auto as_written = session(counting_loop(GraphBuilder::Style::tf2, &f2), false);
    auto lowered = session(counting_loop(GraphBuilder::Style::tf2, &f2), true);
    auto v1 = session(counting_loop(GraphBuilder::Style::tf1, &f1), true);
    const actors::Feeds feeds = {{"n", Tensor::scalar<int32_t>(static_cast<int32_t>(trivial_n))}};
    for (auto* s : {as_written.get(), lowered.get()})
      if (run(*s, feeds, {f2})[0].scalar_value<int32_t>() != trivial_n) fail("the trivial While counted wrong");
    auto t = bench::interleaved_medians(reps, {[&] { run(*as_written, feeds, {f2}); },
                                               [&] { run(*lowered, feeds, {f2}); },
                                               [&] { run(*v1, feeds, {f1}); }});
    const double n = static_cast<double>(trivial_n);
    std::printf("trivial While, %lld iterations: as written %.3f us/iteration, lowered %.3f, "
                "TF 1 loop %.3f; lowered / as written = %.1fx\n",
                static_cast<long long>(trivial_n), t[0] / n * 1e6, t[1] / n * 1e6, t[2] / n * 1e6, t[1] / t[0]);
  }
  {
    auto g = graph::import_graph_file(std::string(TAGFLOW_SOURCE_DIR) + "/tests/data/functional/while_matmul.pbtxt");
    if (!g.ok()) fail(g.status().to_string());
    auto as_written = session(*g, false);
    auto lowered = session(*g, true);
    const actors::Feeds feeds = {{"n", Tensor::scalar<int32_t>(static_cast<int32_t>(matmul_n))},
                                 {"m", filled(ops::Shape{64, 64}, 0.01f)}};
    const float a = run(*as_written, feeds, {"While:3"})[0].scalar_value<float>();
    const float l = run(*lowered, feeds, {"While:3"})[0].scalar_value<float>();
    if (a != l) fail("the MatMul While differs run as written and lowered");
    auto t = bench::interleaved_medians(reps, {[&] { run(*as_written, feeds, {"While:3"}); },
                                               [&] { run(*lowered, feeds, {"While:3"}); }});
    const double n = static_cast<double>(matmul_n);
    std::printf("64x64 MatMul While, %lld iterations: as written %.2f us/iteration, lowered %.2f; "
                "lowered / as written = %.2fx\n",
                static_cast<long long>(matmul_n), t[0] / n * 1e6, t[1] / n * 1e6, t[1] / t[0]);
  }
  {
    const int steps = 100;
    Rnn tf2 = rnn(GraphBuilder::Style::tf2, steps, true);
    Rnn tf1 = rnn(GraphBuilder::Style::tf1, steps, true);
    Rnn fwd = rnn(GraphBuilder::Style::tf2, steps, false);
    auto tf2_written = session(tf2.g, false);
    auto tf2_lowered = session(tf2.g, true);
    auto tf1_session = session(tf1.g, true);
    auto fwd_session = session(fwd.g, false);
    const actors::Feeds feeds = {{"x", filled(ops::Shape{1, 64}, 0.01f)},
                                 {"w", filled(ops::Shape{64, 64}, 0.02f)},
                                 {"h0", filled(ops::Shape{1, 64}, 0.1f)}};
    const Tensor d2 = run(*tf2_written, feeds, {tf2.dw})[0];
    const Tensor d1 = run(*tf1_session, feeds, {tf1.dw})[0];
    double worst = 0;
    for (int64_t k = 0; k < d1.num_elements(); ++k)
      worst = std::max(worst, static_cast<double>(std::abs(d1.data<float>()[k] - d2.data<float>()[k])));
    if (worst > 1e-4) fail("the TF 2 and TF 1 RNN gradients differ by " + std::to_string(worst));
    auto t = bench::interleaved_medians(reps, {[&] { run(*tf2_written, feeds, {tf2.loss, tf2.dw}); },
                                               [&] { run(*tf2_lowered, feeds, {tf2.loss, tf2.dw}); },
                                               [&] { run(*tf1_session, feeds, {tf1.loss, tf1.dw}); },
                                               [&] { run(*fwd_session, feeds, {fwd.loss}); }});
    std::printf("tanh RNN, %d steps, hidden 64, forward+backward: TF 2 as written %.0f us, TF 2 lowered %.0f us, "
                "TF 1 %.0f us, forward alone (as written) %.0f us; TF 1 / TF 2 as written = %.2fx, "
                "forward+backward / forward = %.2fx\n",
                steps, t[0] * 1e6, t[1] * 1e6, t[2] * 1e6, t[3] * 1e6, t[2] / t[0], t[0] / t[3]);
  }
  {
    std::string fetch;
    const graph::Graph g = map_loop(&fetch);
    auto as_written = session(g, false);
    auto lowered = session(g, true);
    const actors::Feeds feeds = {{"x", filled(ops::Shape{64, 64, 64}, 0.01f)}, {"w", filled(ops::Shape{64, 64}, 0.02f)}};
    const Tensor a = run(*as_written, feeds, {fetch})[0], b = run(*lowered, feeds, {fetch})[0];
    for (int64_t k = 0; k < a.num_elements(); ++k)
      if (a.data<float>()[k] != b.data<float>()[k]) fail("the map differs run as written and lowered");
    auto t = bench::interleaved_medians(reps, {[&] { run(*as_written, feeds, {fetch}); },
                                               [&] { run(*lowered, feeds, {fetch}); }});
    std::printf("map of a 64x64 MatMul over 64 slices (parallel_iterations 10): as written %.0f us, "
                "lowered (iterations may overlap) %.0f us; lowered / as written = %.2fx\n",
                t[0] * 1e6, t[1] * 1e6, t[1] / t[0]);
  }
  return 0;
}
