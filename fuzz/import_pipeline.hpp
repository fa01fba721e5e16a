// What the import fuzzers drive, after their own parse: everything tagflow
// does with a graph file before a step runs, none of it in actors —
// export and re-import, functional lowering, validation, frame analysis, a
// step planned by the step compiler over three devices (placement and
// partitioning). An input may
// fail at any stage with an error (most do); a crash, a sanitizer report, a
// hang, or a broken documented invariant is a finding:
//   - import(export(g)) equals g (graph/io/export.hpp), as text and as binary;
//   - the partitions of a placed step graph are valid graphs whose frames
//     analyse (graph/partition.hpp).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "graph/analysis/control_flow.hpp"
#include "graph/device.hpp"
#include "graph/functions/lower_functional.hpp"
#include "graph/io/export.hpp"
#include "graph/io/import.hpp"
#include "graph/partition.hpp"
#include "graph/placement.hpp"
#include "graph/step_plan.hpp"
#include "graph/validate.hpp"

namespace tagflow::fuzz {

[[noreturn]] inline void broken(const std::string& what) {
  std::fprintf(stderr, "tagflow fuzz: invariant broken: %s\n", what.c_str());
  std::abort();
}

inline void check_round_trip(const graph::Graph& g) {
  std::string diff;
  auto text = graph::import_graph_text(graph::graph_to_text(g), "<exported text>");
  if (!text.ok()) broken("the exported text does not import: " + text.status().to_string());
  if (!text->equals(g, &diff)) broken("import(export_text(g)) != g: " + diff);
  auto binary = graph::import_graph_binary(graph::graph_to_binary(g), "<exported binary>");
  // A graph with no nodes and no functions is refused as binary by design.
  if (!binary.ok() && g.num_nodes() > 0)
    broken("the exported binary does not import: " + binary.status().to_string());
  if (binary.ok() && !binary->equals(g, &diff)) broken("import(export_binary(g)) != g: " + diff);
}

// The graph-side work of a step: every Placeholder fed, every node without
// consumers a target, placed at random over three devices and partitioned.
inline void check_partitions(const graph::Graph& g, uint64_t seed) {
  std::vector<std::string> feeds, targets;
  for (graph::NodeId id = 0; id < g.num_nodes(); ++id) {
    const graph::Node& n = g.node(id);
    if (n.op == "Placeholder") feeds.push_back(n.name);
    if (g.out_edges(id).empty()) targets.push_back(n.name);
  }
  // The step compiler a session runs (graph::plan_step), at random over
  // three devices.
  graph::StepSignature step;
  step.feeds = feeds;
  step.targets = targets;
  graph::StepPlanOptions options;
  options.devices = graph::local_devices(3);
  options.placement.strategy = graph::PlacementOptions::Strategy::random;
  options.placement.seed = seed;
  auto plan = graph::plan_step(g, step, options);
  if (!plan.ok()) return;
  for (const graph::Partition& p : plan->partitions) {
    auto frames = graph::analyze_control_flow(p.graph);
    if (!frames.ok())
      broken("partition " + p.device + " does not analyse: " + frames.status().to_string());
  }
}

inline void check_imported(ops::Expected<graph::Graph> imported, uint64_t seed) {
  if (!imported.ok()) return;
  graph::Graph g = std::move(imported).value();
  check_round_trip(g);
  {
    // As a step that needs every op would check it (`tagflow inspect` and
    // Session::create allow unknown ops).
    graph::Graph strict = g;
    if (graph::validate(strict).ok()) (void)graph::analyze_control_flow(strict);
  }
  if (!graph::lower_functional_ops(&g).ok()) return;
  graph::ValidateOptions options;
  options.allow_unknown_ops = true;
  if (!graph::validate(g, options).ok()) return;
  auto frames = graph::analyze_control_flow(g);
  if (!frames.ok()) return;
  (void)graph::graph_to_dot(g, *frames);
  // Partitioning copies and walks the graph a few times: big inputs only
  // slow the fuzzer down without reaching new code.
  if (g.num_nodes() <= 256) check_partitions(g, seed);
}

// FNV-1a of the input: the placement seed, so that a crash reproduces.
inline uint64_t input_hash(const uint8_t* data, size_t size) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

}  // namespace tagflow::fuzz
