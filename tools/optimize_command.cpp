// `tagflow optimize IN OUT`: the optimiser's passes run on a file
// (graph/optimize/, docs/optimizer.md), with a line per pass: nodes before
// and after, changes, and the time it took.
#include <cstdio>

#include <fmt/format.h>

#include "graph/functions/lower_functional.hpp"
#include "graph/io/export.hpp"
#include "graph/io/import.hpp"
#include "graph/optimize/optimizer.hpp"
#include "graph/validate.hpp"
#include "tools/commands.hpp"

namespace tagflow::tools {

int optimize_graph(const OptimizeArgs& args) {
  auto passes = graph::optimize::parse_pass_list(args.passes);
  if (!passes.ok()) return fail(passes.status().with_prefix("--passes: "));
  auto read = graph::import_graph_file(args.in);
  if (!read.ok()) return fail(read.status());
  graph::Graph g = std::move(read).value();
  Status s = args.lower ? graph::lower_functional_ops(&g) : ops::ok_status();
  graph::ValidateOptions v;
  v.allow_unknown_ops = true;
  if (s.ok()) s = graph::validate(g, v);
  if (!s.ok()) return fail(s.with_prefix(args.in + ": "));
  graph::optimize::OptimizeOptions o;
  for (const std::string& k : args.keep) {
    if (g.find(k) == graph::kNoNode) return fail(Status(ops::Error::not_found, fmt::format("--keep {}: no node of that name in {}", k, args.in)));
    o.keep.insert(k);
  }
  std::vector<graph::optimize::Change> changes;
  o.changes = &changes;
  std::vector<graph::optimize::PassReport> reports;
  auto out = graph::optimize::run_passes(g, *passes, o, &reports);
  if (!out.ok()) return fail(out.status().with_prefix(args.in + ": "));
  std::printf("%-26s %10s %10s %8s %10s\n", "pass", "before", "after", "changes", "ms");
  double total = 0;
  for (const auto& r : reports) {
    std::printf("%-26s %10d %10d %8d %10.3f\n", r.pass.c_str(), r.nodes_before, r.nodes_after, r.changes,
                r.milliseconds);
    total += r.milliseconds;
  }
  std::printf("%-26s %10d %10d %8zu %10.3f\n", "total", g.num_nodes(), out->num_nodes(), changes.size(), total);
  if (args.verbose)
    for (const auto& c : changes)
      std::printf("  %s: %s '%s'%s%s\n", c.pass.c_str(), c.action.c_str(), c.node.c_str(), c.detail.empty() ? "" : " ",
                  c.detail.c_str());
  s = graph::export_graph_file(*out, args.out);
  if (!s.ok()) return fail(s);
  return 0;
}

}  // namespace tagflow::tools
