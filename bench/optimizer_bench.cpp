// What the optimiser (graph/optimize/, docs/optimizer.md) buys, each figure
// beside its baseline in the same run (docs/performance.md, "The graph
// optimiser"):
//   - a loop whose body computes a loop-invariant 64x64 MatMul — of
//     constants (constant folding), and of fed matrices that enter the loop
//     (loop-invariant motion) — per iteration with no pass and with the
//     default pipeline, against the same loop without the MatMul;
//   - the corpus LSTM training graph (tfnet_lstm_crf_ner_train.pbtxt):
//     nodes of its training step's graph before and after, the step's time
//     with no pass and with the pipeline, and the pipeline's own time
//     against the time to import the 2 MB file;
//   - a TF 1 RNN (100 steps of tanh(h W + x)) with its gradient through
//     the loop: nodes and step time, no pass and the pipeline;
//   - the Keras SavedModels of the corpus (MLP, LSTM): nodes of the
//     serving signature's step graph before and after, and its time, with
//     the functions run as written and lowered.
//   optimizer_bench [iterations]   default 2000
// Threads: TAGFLOW_BENCH_THREADS, else one per core.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "actors/saved_model.hpp"
#include "actors/session.hpp"
#include "bench/bench_session.hpp"
#include "bench/bench_util.hpp"
#include "graph/builder/builder.hpp"
#include "graph/functions/lower_functional.hpp"
#include "graph/io/import.hpp"
#include "graph/io/variables.hpp"
#include "graph/optimize/optimizer.hpp"
#include "graph/step_graph.hpp"
#include "graph/validate.hpp"

using namespace tagflow;
using graph::GraphBuilder;
using graph::Output;
using ops::DType;
using ops::Tensor;
using Vars = std::vector<Output>;

namespace {

using bench::fail;
using bench::run;

actors::SessionOptions options(const std::string& passes) {
  actors::SessionOptions o = bench::session_options();
  o.optimize = passes;
  return o;
}

std::unique_ptr<actors::Session> session(const graph::Graph& g, const std::string& passes) {
  return bench::session(g, options(passes));
}

Tensor matrix(uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Tensor t(DType::float32, ops::Shape({64, 64}));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_data<float>()[i] = u(rng);
  return t;
}

enum class Invariant { none, constants, fed };

// acc = 0; i < n: acc += sum(A B) (or += 1 with no MatMul).
graph::Graph invariant_loop(Invariant kind) {
  GraphBuilder b;
  Output n = b.placeholder(DType::int32, {false, {}}, "n");
  Output a = kind == Invariant::fed ? b.placeholder(DType::float32, {false, {64, 64}}, "a") : Output();
  Output c = kind == Invariant::fed ? b.placeholder(DType::float32, {false, {64, 64}}, "b") : Output();
  auto out = b.while_loop(
      [&](const Vars& v) { return b.less(v[0], n); },
      [&](const Vars& v) {
        Output add = b.scalar<float>(1.0f);
        if (kind == Invariant::constants)
          add = b.reduce_sum(b.matmul(b.constant(matrix(1)), b.constant(matrix(2))), b.vector<int32_t>({0, 1}));
        if (kind == Invariant::fed) add = b.reduce_sum(b.matmul(a, c), b.vector<int32_t>({0, 1}));
        return Vars{b.add(v[0], b.scalar<int32_t>(1)), b.add(v[1], add)};
      },
      {b.scalar<int32_t>(0), b.scalar<float>(0.0f)});
  b.identity(out[1], "acc");
  auto g = b.finish();
  if (!g.ok()) fail(g.status().to_string());
  return std::move(g).value();
}

void loops(int iterations) {
  std::printf("loop-invariant 64x64 MatMul, %d iterations (us per iteration, median of 7):\n", iterations);
  const actors::Feeds base = {{"n", Tensor::scalar<int32_t>(iterations)}};
  actors::Feeds fed = base;
  fed.push_back({"a", matrix(1)});
  fed.push_back({"b", matrix(2)});
  const graph::Graph plain = invariant_loop(Invariant::none);
  const graph::Graph consts = invariant_loop(Invariant::constants);
  const graph::Graph feeds = invariant_loop(Invariant::fed);
  auto s_plain = session(plain, "none");
  auto s_const_none = session(consts, "none");
  auto s_const_opt = session(consts, "default");
  auto s_fed_none = session(feeds, "none");
  auto s_fed_opt = session(feeds, "default");
  auto s_plain_opt = session(plain, "default");
  auto m = bench::interleaved_medians(
      7, {[&] { run(*s_plain, base, {"acc"}); }, [&] { run(*s_plain_opt, base, {"acc"}); }, [&] { run(*s_const_none, base, {"acc"}); },
          [&] { run(*s_const_opt, base, {"acc"}); }, [&] { run(*s_fed_none, fed, {"acc"}); },
          [&] { run(*s_fed_opt, fed, {"acc"}); }});
  const double us = 1e6 / iterations;
  std::printf("  loop without the MatMul, no pass (baseline)   %8.2f\n", m[0] * us);
  std::printf("  loop without the MatMul, default pipeline     %8.2f\n", m[1] * us);
  std::printf("  MatMul of constants, no pass                  %8.2f\n", m[2] * us);
  std::printf("  MatMul of constants, default pipeline         %8.2f   (%.2fx the baseline)\n", m[3] * us, m[3] / m[0]);
  std::printf("  MatMul of fed matrices, no pass               %8.2f\n", m[4] * us);
  std::printf("  MatMul of fed matrices, default pipeline      %8.2f   (%.2fx the baseline)\n", m[5] * us, m[5] / m[0]);
}

// Nodes of the step graph of (feeds, fetches, targets) before and after
// the default pipeline, and the pipeline's time.
void step_graph_nodes(const char* what, const graph::Graph& g, const std::vector<std::string>& feeds,
                      const std::vector<std::string>& fetches, const std::vector<std::string>& targets) {
  auto sg = graph::make_step_graph(g, feeds, fetches, targets);
  if (!sg.ok()) fail(sg.status().to_string());
  graph::optimize::OptimizeOptions o;
  o.keep.insert(targets.begin(), targets.end());
  o.keep_sinks = false;
  std::vector<graph::optimize::PassReport> reports;
  graph::Graph out;
  const double seconds = bench::median_seconds(5, [&] {
    reports.clear();
    auto r = graph::optimize::run_passes(sg->graph, *graph::optimize::parse_pass_list("default"), o, &reports);
    if (!r.ok()) fail(r.status().to_string());
    out = std::move(r).value();
  });
  std::printf("  %s: step graph %d nodes -> %d after the pipeline (%.1f ms):", what, sg->graph.num_nodes(),
              out.num_nodes(), seconds * 1e3);
  for (const auto& r : reports)
    if (r.nodes_before != r.nodes_after || r.changes > 0)
      std::printf(" %s %d", r.pass.c_str(), r.nodes_after - r.nodes_before);
  std::printf("\n");
}

Tensor ids(const std::vector<int64_t>& shape, int bound, std::mt19937& rng) {
  const ops::Shape s = ops::Shape::make(shape).value();
  std::uniform_int_distribution<int32_t> d(0, bound - 1);
  std::vector<int32_t> v(static_cast<size_t>(s.num_elements()));
  for (int32_t& e : v) e = d(rng);
  return Tensor::from_vector<int32_t>(s, v);
}

void lstm() {
  const std::string path = std::string(TAGFLOW_SOURCE_DIR) + "/tests/data/corpus/tfnet_lstm_crf_ner_train.pbtxt";
  graph::Graph g;
  const double import_s = bench::median_seconds(5, [&] {
    auto r = graph::import_graph_file(path);
    if (!r.ok()) fail(r.status().to_string());
    g = std::move(r).value();
  });
  if (!graph::validate(g).ok()) fail("the LSTM graph does not validate");
  std::printf("corpus LSTM training graph (%d nodes; import %.1f ms, median of 5):\n", g.num_nodes(), import_s * 1e3);
  std::mt19937 rng(5);
  const actors::Feeds feeds = {
      {"word_ids", ids({3, 4}, 23, rng)},
      {"sequence_lengths", Tensor::vector<int32_t>({4, 2, 3})},
      {"char_ids", ids({3, 4, 5}, 28, rng)},
      {"word_lengths", Tensor::from_vector<int32_t>(ops::Shape({3, 4}), {5, 3, 1, 4, 2, 5, 0, 0, 3, 3, 4, 0})},
      {"labels", ids({3, 4}, 9, rng)},
      {"dropout", Tensor::scalar<float>(1.0f)},
      {"lr", Tensor::scalar<float>(0.01f)}};
  std::vector<std::string> feed_names;
  for (const auto& f : feeds) feed_names.push_back(f.first);
  step_graph_nodes("training step (Mean, train_step/Adam)", g, feed_names, {"Mean"}, {"train_step/Adam"});
  step_graph_nodes("forward (Mean)", g, feed_names, {"Mean"}, {});
  std::vector<std::unique_ptr<actors::Session>> s;
  for (const char* passes : {"none", "default"}) {
    s.push_back(session(g, passes));
    const std::vector<std::string> inits = graph::variable_initializers(g);
    run(*s.back(), {}, {}, inits);
  }
  auto m = bench::interleaved_medians(
      9, {[&] { run(*s[0], feeds, {"Mean"}, {"train_step/Adam"}); },
          [&] { run(*s[1], feeds, {"Mean"}, {"train_step/Adam"}); }, [&] { run(*s[0], feeds, {"Mean"}); },
          [&] { run(*s[1], feeds, {"Mean"}); }});
  std::printf("  training step: %.2f ms with no pass, %.2f ms optimised (%.2fx)\n", m[0] * 1e3, m[1] * 1e3,
              m[1] / m[0]);
  std::printf("  forward:       %.2f ms with no pass, %.2f ms optimised (%.2fx)\n", m[2] * 1e3, m[3] * 1e3,
              m[3] / m[2]);
}

void keras(const char* name, const std::string& input, const Tensor& x) {
  const std::string dir = std::string(TAGFLOW_SOURCE_DIR) + "/tests/data/savedmodels/" + name;
  graph::Graph meta;
  // As written (functions run by their kernels, bodies not optimised) and
  // lowered (the bodies' nodes in the step graph, optimised with it); one
  // pair of sessions at a time (every session has its actor system).
  auto load = [&](bool lower, const char* passes) {
    actors::SavedModelOptions o;
    o.session = options(passes);
    o.session.lower_functional = lower;
    o.transform = [&](graph::Graph* g, const graph::MetaGraphInfo&) {
      meta = *g;
      return ops::ok_status();
    };
    auto m = actors::SavedModelSession::load(dir, o);
    if (!m.ok()) fail(m.status().to_string());
    return std::move(m).value();
  };
  auto measure = [&](bool lower) {
    auto none = load(lower, "none");
    auto opt = load(lower, "default");
    auto call = [&](actors::SavedModelSession& m) {
      return [&] {
        if (!m.run_signature("serving_default", {{input, x}}).ok()) fail("serving_default failed");
      };
    };
    return bench::interleaved_medians(21, {call(*none), call(*opt)});
  };
  const std::vector<double> written = measure(false);
  const std::vector<double> lowered_t = measure(true);
  auto info = load(false, "none");
  auto sig = actors::find_signature(info->info(), "serving_default");
  if (!sig.ok()) fail(sig.status().to_string());
  std::vector<std::string> feeds, fetches;
  for (const auto& t : (*sig)->inputs) feeds.push_back(t.tensor);
  for (const auto& t : (*sig)->outputs) fetches.push_back(t.tensor);
  if (!graph::validate(meta, {true}).ok()) fail("the meta graph does not validate");
  std::printf("Keras %s:\n", name);
  step_graph_nodes("serving_default, as written", meta, feeds, fetches, {});
  graph::Graph lowered = meta;
  if (!graph::lower_functional_ops(&lowered).ok() || !graph::validate(lowered, {true}).ok())
    fail("the meta graph does not lower");
  step_graph_nodes("serving_default, lowered", lowered, feeds, fetches, {});
  std::printf("  serving_default as written: %.1f us with no pass, %.1f us optimised (%.2fx)\n", written[0] * 1e6,
              written[1] * 1e6, written[1] / written[0]);
  std::printf("  serving_default lowered:    %.1f us with no pass, %.1f us optimised (%.2fx)\n", lowered_t[0] * 1e6,
              lowered_t[1] * 1e6, lowered_t[1] / lowered_t[0]);
}

// A TF 1 RNN and its gradient: h <- tanh(h W + x) for `steps` steps, the
// loss sum(h), d loss / d W through the loop (gradient loop and stacks).
void rnn(int steps) {
  GraphBuilder b;
  Output x = b.placeholder(DType::float32, {false, {1, 64}}, "x");
  Output w = b.placeholder(DType::float32, {false, {64, 64}}, "w");
  Output h0 = b.placeholder(DType::float32, {false, {1, 64}}, "h0");
  auto out = b.while_loop([&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(steps)); },
                          [&](const Vars& v) {
                            Output h = b.op1("Tanh", {b.add(b.matmul(v[1], w), x)});
                            return Vars{b.add(v[0], b.scalar<int32_t>(1)), h};
                          },
                          {b.scalar<int32_t>(0), h0});
  Output loss = b.reduce_sum(out[1], b.vector<int32_t>({0, 1}));
  Output dw = b.gradients({loss}, {w})[0];
  auto g = b.finish();
  if (!g.ok()) fail(g.status().to_string());
  const std::vector<std::string> fetches = {loss.name(), dw.name()};
  std::printf("TF 1 RNN, %d steps, forward and gradient:\n", steps);
  step_graph_nodes("loss and dW", *g, {"x", "w", "h0"}, fetches, {});
  Tensor xs(DType::float32, ops::Shape({1, 64})), h(DType::float32, ops::Shape({1, 64}));
  for (int i = 0; i < 64; ++i) {
    xs.mutable_data<float>()[i] = 0.01f * static_cast<float>(i % 7);
    h.mutable_data<float>()[i] = 0.0f;
  }
  Tensor wm = matrix(3);
  for (int64_t i = 0; i < wm.num_elements(); ++i) wm.mutable_data<float>()[i] *= 0.1f;
  const actors::Feeds feeds = {{"x", xs}, {"w", wm}, {"h0", h}};
  auto none = session(*g, "none");
  auto opt = session(*g, "default");
  auto m = bench::interleaved_medians(9, {[&] { run(*none, feeds, fetches); }, [&] { run(*opt, feeds, fetches); }});
  std::printf("  step: %.0f us with no pass, %.0f us optimised (%.2fx)\n", m[0] * 1e6, m[1] * 1e6, m[1] / m[0]);
}

Tensor uniform(const ops::Shape& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  Tensor t(DType::float32, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.mutable_data<float>()[i] = u(rng);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 2000;
  loops(iterations);
  lstm();
  rnn(100);
  keras("keras_simple_model_from_auto_compile", "input_1", uniform(ops::Shape({2, 28, 28, 1}), 7));
  keras("keras_lstm_from_sequential", "input_1", uniform(ops::Shape({3, 5, 3}), 11));
  return 0;
}
