// `tagflow inspect` and `tagflow convert`: read a graph, report or rewrite it.
#include <cstdio>
#include <string>

#include "graph/control_flow.hpp"
#include "graph/export.hpp"
#include "graph/import.hpp"
#include "graph/lower_functional.hpp"
#include "graph/summary.hpp"
#include "graph/validate.hpp"
#include "tools/commands.hpp"

namespace tagflow::tools {

int fail(const Status& s) {
  std::fprintf(stderr, "tagflow: %s\n", s.to_string().c_str());
  return 1;
}

namespace {

// Imports and checks a graph the way `inspect` and `convert` need it:
// unknown ops are allowed (a graph may use ops tagflow cannot run).
ops::Expected<graph::Graph> load_for_reading(const std::string& path) {
  TF_ASSIGN_OR_RETURN(graph::Graph g, graph::import_graph_file(path));
  graph::ValidateOptions options;
  options.allow_unknown_ops = true;
  TF_RETURN_IF_ERROR(graph::validate(g, options).with_prefix(path + ": "));
  return g;
}

// The same, with functional ops lowered first (the functional graph need
// not validate as it is: its function calls have no kernels).
ops::Expected<graph::Graph> load_lowered(const std::string& path) {
  TF_ASSIGN_OR_RETURN(graph::Graph g, graph::import_graph_file(path));
  TF_RETURN_IF_ERROR(graph::lower_functional_ops(&g).with_prefix(path + ": "));
  graph::ValidateOptions options;
  options.allow_unknown_ops = true;
  TF_RETURN_IF_ERROR(graph::validate(g, options).with_prefix(path + ": "));
  return g;
}

}  // namespace

int inspect_graph(const std::string& path) {
  auto g = load_for_reading(path);
  if (!g.ok()) return fail(g.status());
  auto frames = graph::analyze_control_flow(*g);
  if (!frames.ok()) return fail(frames.status().with_prefix(path + ": "));
  std::fputs(graph::to_text(graph::summarize(*g, *frames)).c_str(), stdout);
  if (graph::has_functional_ops(*g))
    std::puts("functional ops: lowered to Switch/Merge/Enter/Exit before a run "
              "(tagflow convert --lower shows the result)");
  return 0;
}

int convert_graph(const std::string& in, const std::string& out, bool lower) {
  auto g = lower ? load_lowered(in) : load_for_reading(in);
  if (!g.ok()) return fail(g.status());
  Status s = graph::export_graph_file(*g, out);
  if (!s.ok()) return fail(s);
  return 0;
}

}  // namespace tagflow::tools

