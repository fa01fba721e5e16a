// Power iteration, built in C++ with tagflow's GraphBuilder and run by a
// tagflow Session: the dominant eigenvalue of a symmetric matrix.
//
//   v = ones; repeat: w = A v / |A v| until sum|w - v| < 1e-6 (at most 200
//   times); eigenvalue = v . (A v)
//
// The loop stops on a value the loop computes, so the number of iterations
// is known only when it runs. Needs no feeds.
//
//   power_iteration [--export FILE.pbtxt] [--devices N]
//
// --export writes the graph it built, which `tagflow run FILE.pbtxt --fetch
// eigenvalue --fetch iterations` (or TensorFlow's GraphDef loaders) runs to
// the same result. --devices N places the graph round-robin on N devices.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "actors/session.hpp"
#include "graph/builder/builder.hpp"
#include "graph/io/export.hpp"

using tagflow::graph::GraphBuilder;
using tagflow::graph::NodeOptions;
using tagflow::graph::Output;
using tagflow::ops::DType;
using tagflow::ops::Tensor;
using Vars = std::vector<Output>;

int main(int argc, char** argv) {
  std::string export_path;
  int devices = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--export") == 0 && i + 1 < argc) {
      export_path = argv[++i];
    } else if (std::strcmp(argv[i], "--devices") == 0 && i + 1 < argc) {
      devices = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--export FILE.pbtxt] [--devices N]\n", argv[0]);
      return 2;
    }
  }

  // A = tridiagonal(1, 2, 1) of size 4: eigenvalues 2 + 2 cos(k pi / 5).
  GraphBuilder b;
  Output a = b.constant(Tensor::from_vector<float>(
      {4, 4}, {2, 1, 0, 0, 1, 2, 1, 0, 0, 1, 2, 1, 0, 0, 1, 2}), "A");
  Output v0 = b.constant(Tensor::from_vector<float>({4, 1}, {1, 1, 1, 1}), "v0");
  Output all_axes = b.vector<int32_t>({0, 1}, "all_axes");

  auto loop = b.while_loop(
      [&](const Vars& s) { return b.logical_and(s[0] < 200.0, s[2] > 1e-6); },
      [&](const Vars& s) {
        Output av = b.matmul(a, s[1]);
        Output w = av / b.sqrt(b.reduce_sum(av * av, all_axes));
        Output change = b.reduce_sum(b.abs(w - s[1]), all_axes);
        return Vars{s[0] + 1.0, w, change};
      },
      {b.scalar<int32_t>(0), v0, b.scalar<float>(1.0f)}, {/*parallel_iterations=*/10, {}, "power"});
  Output v = loop[1];
  b.identity(loop[0], "iterations");
  b.reduce_sum(v * b.matmul(a, v), all_axes, false, "eigenvalue");

  auto graph = b.finish();
  if (!graph.ok()) {
    std::fprintf(stderr, "power_iteration: %s\n", graph.status().to_string().c_str());
    return 1;
  }
  if (!export_path.empty()) {
    tagflow::ops::Status s = tagflow::graph::export_graph_file(*graph, export_path);
    if (!s.ok()) {
      std::fprintf(stderr, "power_iteration: %s\n", s.to_string().c_str());
      return 1;
    }
    std::printf("wrote %s (%d nodes)\n", export_path.c_str(), graph->num_nodes());
  }

  tagflow::actors::SessionOptions options;
  options.num_devices = devices;
  options.placement.strategy = tagflow::graph::PlacementOptions::Strategy::round_robin;
  auto session = tagflow::actors::Session::create(std::move(graph).value(), options);
  if (!session.ok()) {
    std::fprintf(stderr, "power_iteration: %s\n", session.status().to_string().c_str());
    return 1;
  }
  auto out = (*session)->run({}, {"eigenvalue", "iterations"});
  if (!out.ok()) {
    std::fprintf(stderr, "power_iteration: %s\n", out.status().to_string().c_str());
    return 1;
  }
  std::printf("eigenvalue = %.6f after %d iterations on %zu partition(s)\n",
              (*out)[0].scalar_value<float>(), (*out)[1].scalar_value<int32_t>(),
              (*session)->last_partitions().size());
  return 0;
}
