// Builds a small graph with a cond on a constant, a loop that recomputes an
// invariant every iteration and a dense layer, runs it with and without the
// optimiser (docs/optimizer.md), and shows what each pass changed.
//
//   optimize_graph [OUT.pbtxt]   also writes the graph (before optimising)
#include <cstdio>

#include "actors/session.hpp"
#include "graph/builder/builder.hpp"
#include "graph/io/export.hpp"
#include "graph/optimize/optimizer.hpp"

using namespace tagflow;
using graph::Output;
using Vars = std::vector<Output>;

int main(int argc, char** argv) {
  graph::GraphBuilder b;
  Output x = b.placeholder(ops::DType::int32, {false, {}}, "x");
  Output w = b.placeholder(ops::DType::int32, {false, {}}, "w");
  // debug is a constant: the cond's else branch can never run.
  Output debug = b.scalar<bool>(false, "debug");
  Output y = b.cond(debug, [&] { return Vars{b.neg(x)}; }, [&] { return Vars{b.mul(x, b.scalar<int32_t>(1))}; },
                    "check")[0];
  // Each iteration adds w*w + (2 + 3): loop invariants.
  Output sum = b.while_loop([&](const Vars& v) { return b.less(v[0], b.scalar<int32_t>(4)); },
                            [&](const Vars& v) {
                              Output inv = b.add(b.mul(w, w), b.add(b.scalar<int32_t>(2), b.scalar<int32_t>(3)));
                              return Vars{b.add(v[0], b.scalar<int32_t>(1)), b.add(v[1], inv)};
                            },
                            {b.scalar<int32_t>(0), y}, {10, std::nullopt, "loop"})[1];
  // x*w - w*x is 0: the same product twice (common subexpressions).
  b.identity(b.add(sum, b.sub(b.mul(x, w), b.mul(w, x))), "result");
  // A dense layer: MatMul + BiasAdd + Relu, one fused node after the
  // optimiser.
  Output row = b.reshape(b.cast(x, ops::DType::float32), b.vector<int32_t>({1, 1}));
  Output dense = b.op1("Relu", {b.op1("BiasAdd", {b.matmul(row, b.constant(ops::Tensor::from_vector<float>(
                                                                   ops::Shape({1, 2}), {0.5f, -1.0f}))),
                                                  b.constant(ops::Tensor::vector<float>({1.0f, 2.0f}))})},
                       {}, "dense");
  b.identity(dense, "features");
  auto g = b.finish();
  if (!g.ok()) {
    std::fprintf(stderr, "%s\n", g.status().to_string().c_str());
    return 1;
  }
  if (argc > 1) {
    ops::Status s = graph::export_graph_file(*g, argv[1]);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.to_string().c_str());
      return 1;
    }
  }

  graph::optimize::OptimizeOptions o;
  o.keep = {"x", "w", "result", "features"};
  std::vector<graph::optimize::Change> changes;
  o.changes = &changes;
  auto optimized = graph::optimize::run_passes(*g, *graph::optimize::parse_pass_list("default"), o);
  if (!optimized.ok()) {
    std::fprintf(stderr, "%s\n", optimized.status().to_string().c_str());
    return 1;
  }
  std::printf("%d nodes, %d after the optimiser:\n", g->num_nodes(), optimized->num_nodes());
  for (const auto& c : changes)
    std::printf("  %-22s %-9s %s %s\n", c.pass.c_str(), c.action.c_str(), c.node.c_str(), c.detail.c_str());

  const actors::Feeds feeds = {{"x", ops::Tensor::scalar<int32_t>(7)}, {"w", ops::Tensor::scalar<int32_t>(3)}};
  for (const char* passes : {"none", "default"}) {
    actors::SessionOptions so;
    so.optimize = passes;
    auto session = actors::Session::create(*g, so);
    if (!session.ok()) return 1;
    auto r = (*session)->run(feeds, {"result"});
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", r.status().to_string().c_str());
      return 1;
    }
    std::printf("result with --optimize %-7s = %d\n", passes, (*r)[0].scalar_value<int32_t>());
  }
  return 0;
}
