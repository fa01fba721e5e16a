// What gradients through a while loop cost at run time (graph/autodiff/gradients.hpp,
// docs/performance.md "Gradients"). Each figure is printed beside the
// forward pass measured in the same run, the timings of the variants
// interleaved repetition by repetition so that a noisy machine slows them
// alike:
//   gradient_bench rnn  [T] [BATCH]   tanh RNN, hidden size 64, T steps:
//                                     forward vs forward + backward, per step
//   gradient_bench loop [N...]        while i < n: v = v * x: µs per iteration
//                                     forward vs forward + gradient loop
//   gradient_bench all                rnn 100 1, loop 1000 10000
// The forward is timed twice: in a graph without gradients, and by fetching
// only the loss from the graph with them (the session prunes the gradient
// loop and the stack pushes away).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "actors/session.hpp"
#include "bench/bench_session.hpp"
#include "bench/bench_util.hpp"
#include "graph/builder/builder.hpp"

using namespace tagflow;
using graph::GraphBuilder;
using graph::Output;
using ops::DType;
using ops::Tensor;
using Vars = std::vector<Output>;

namespace {

std::unique_ptr<actors::Session> session_for(graph::GraphBuilder& b) {
  auto g = b.finish();
  if (!g.ok()) bench::fail(g.status().to_string());
  return bench::session(std::move(g).value());
}

Tensor pattern(std::vector<int64_t> shape, float scale) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + 0.1f);
  return Tensor::from_vector<float>(ops::Shape::make(shape).value(), v);
}

// ---------------------------------------------------------------- rnn
// h_{t+1} = tanh(x_t W + h_t U + b) over T steps, loss = sum(h_T); input
// and hidden size 64. Returns the loss; *grads gets dW, dU, db if asked.
Output build_rnn(GraphBuilder& b, int steps, int batch, Vars* grads) {
  const int hidden = 64;
  Output seq = b.constant(pattern({steps, batch, hidden}, 1.0f), "sequence");
  Output w = b.constant(pattern({hidden, hidden}, 0.1f), "W");
  Output u = b.constant(pattern({hidden, hidden}, 0.1f), "U");
  Output bias = b.constant(pattern({hidden}, 0.1f), "b");
  Output h0 = b.constant(pattern({batch, hidden}, 0.0f), "h0");
  auto rnn = b.while_loop(
      [&](const Vars& s) { return s[0] < double(steps); },
      [&](const Vars& s) {
        Output x_t = b.gather(seq, s[0], b.scalar<int32_t>(0));
        return Vars{s[0] + 1.0, b.op1("Tanh", {b.matmul(x_t, w) + b.matmul(s[1], u) + bias})};
      },
      {b.scalar<int32_t>(0), h0}, {/*parallel_iterations=*/10, {}, "rnn"});
  Output loss = b.reduce_sum(rnn[1], b.vector<int32_t>({0, 1}), false, "loss");
  if (grads != nullptr) *grads = b.gradients({loss}, {w, u, bias});
  return loss;
}

void rnn(int steps, int batch) {
  GraphBuilder plain_builder;
  const std::string plain_loss = build_rnn(plain_builder, steps, batch, nullptr).name();
  auto plain = session_for(plain_builder);

  GraphBuilder b;
  Vars grads;
  const std::string loss = build_rnn(b, steps, batch, &grads).name();
  std::vector<std::string> all{loss};
  for (const Output& g : grads) all.push_back(g.name());
  auto s = session_for(b);

  auto t = bench::interleaved_medians(9, {
      [&] { bench::keep(bench::run(*plain, {}, {plain_loss})); },
      [&] { bench::keep(bench::run(*s, {}, {loss})); },
      [&] { bench::keep(bench::run(*s, {}, all)); },
  });
  const double per = 1e6 / steps;
  std::printf("tanh RNN, hidden 64, batch %d, %d steps: forward + backward %.1f µs/step  | "
              "baseline forward %.1f µs/step (graph without gradients), %.1f µs/step (loss only "
              "from the same graph); ratio %.2fx\n",
              batch, steps, t[2] * per, t[0] * per, t[1] * per, t[2] / t[0]);
}

// ---------------------------------------------------------------- loop
// while i < n: v = v * x, n fed; y = v. Returns y; *dx gets dy/dx if asked.
Output build_loop(GraphBuilder& b, Output* dx) {
  Output n = b.placeholder(DType::int32, {false, {}}, "n");
  Output x = b.placeholder(DType::float32, {false, {}}, "x");
  auto loop = b.while_loop([&](const Vars& s) { return s[0] < n; },
                           [&](const Vars& s) { return Vars{s[0] + 1.0, s[1] * x}; },
                           {b.scalar<int32_t>(0), b.scalar<float>(1.0f)}, {10, {}, "w"});
  Output y = b.identity(loop[1], "y");
  if (dx != nullptr) *dx = b.gradients({y}, {x})[0];
  return y;
}

void loop(const std::vector<int>& sizes) {
  GraphBuilder plain_builder;
  const std::string plain_y = build_loop(plain_builder, nullptr).name();
  auto plain = session_for(plain_builder);
  GraphBuilder b;
  Output dx;
  const std::string y = build_loop(b, &dx).name();
  auto s = session_for(b);

  for (int n : sizes) {
    actors::Feeds feeds{{"n", Tensor::scalar<int32_t>(n)}, {"x", Tensor::scalar<float>(1.0f)}};
    const int reps = n >= 100000 ? 5 : 9;
    auto t = bench::interleaved_medians(reps, {
        [&] { bench::keep(bench::run(*plain, feeds, {plain_y})); },
        [&] { bench::keep(bench::run(*s, feeds, {y})); },
        [&] { bench::keep(bench::run(*s, feeds, {y, dx.name()})); },
    });
    const double per = 1e6 / n;
    std::printf("while i < n: v = v * x, n = %6d: forward + gradient %.2f µs/iteration "
                "(what the gradient adds: %.2f)  | baseline forward %.2f µs/iteration (graph "
                "without gradients), %.2f (y only from the same graph); ratio %.2fx\n",
                n, t[2] * per, (t[2] - t[1]) * per, t[0] * per, t[1] * per, t[2] / t[0]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string what = argc > 1 ? argv[1] : "all";
  auto arg = [&](int i, int def) { return argc > i ? std::atoi(argv[i]) : def; };
  if (what == "rnn") {
    rnn(arg(2, 100), arg(3, 1));
  } else if (what == "loop") {
    std::vector<int> sizes;
    for (int i = 2; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
    if (sizes.empty()) sizes = {1000, 10000};
    loop(sizes);
  } else if (what == "all") {
    rnn(100, 1);
    loop({1000, 10000});
  } else {
    std::fprintf(stderr, "usage: gradient_bench [rnn [T] [BATCH] | loop [N...] | all]\n");
    return 2;
  }
  return 0;
}
