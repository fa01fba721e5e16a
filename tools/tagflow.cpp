// tagflow: the command-line program. Thin: parses flags, calls the
// libraries, prints results and errors. Every failure exits non-zero with
// a message that names what is wrong.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "graph/control_flow.hpp"
#include "graph/export.hpp"
#include "graph/import.hpp"
#include "graph/summary.hpp"
#include "graph/validate.hpp"

namespace {

using tagflow::ops::Expected;
using tagflow::ops::Status;
namespace graph = tagflow::graph;

int fail(const Status& s) {
  std::fprintf(stderr, "tagflow: %s\n", s.to_string().c_str());
  return 1;
}

// Imports and checks a graph the way `inspect` and `convert` need it:
// unknown ops are allowed (a graph may use ops tagflow cannot run).
Expected<graph::Graph> load_for_reading(const std::string& path) {
  TF_ASSIGN_OR_RETURN(graph::Graph g, graph::import_graph_file(path));
  graph::ValidateOptions options;
  options.allow_unknown_ops = true;
  TF_RETURN_IF_ERROR(graph::validate(g, options).with_prefix(path + ": "));
  return g;
}

int inspect(const std::string& path) {
  auto g = load_for_reading(path);
  if (!g.ok()) return fail(g.status());
  auto frames = graph::analyze_control_flow(*g);
  if (!frames.ok()) return fail(frames.status().with_prefix(path + ": "));
  std::fputs(graph::to_text(graph::summarize(*g, *frames)).c_str(), stdout);
  return 0;
}

int convert(const std::string& in, const std::string& out) {
  auto g = load_for_reading(in);
  if (!g.ok()) return fail(g.status());
  Status s = graph::export_graph_file(*g, out);
  if (!s.ok()) return fail(s);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tagflow: a dataflow runtime with dynamic control flow"};
  app.require_subcommand(1);

  std::string inspect_path;
  CLI::App* inspect_cmd = app.add_subcommand(
      "inspect", "Print a graph's node count, op histogram, frames (nesting, pivots), "
                 "devices and ops with no kernel");
  inspect_cmd->add_option("GRAPH", inspect_path, "GraphDef file (.pbtxt or .pb)")->required();

  std::string convert_in, convert_out;
  CLI::App* convert_cmd = app.add_subcommand(
      "convert", "Convert a GraphDef between .pbtxt and .pb, or draw it as Graphviz .dot "
                 "(one cluster per frame); the output format follows OUT's extension");
  convert_cmd->add_option("IN", convert_in, "GraphDef file (.pbtxt or .pb)")->required();
  convert_cmd->add_option("OUT", convert_out, "output file: .pbtxt, .pb or .dot")->required();

  CLI11_PARSE(app, argc, argv);
  if (*inspect_cmd) return inspect(inspect_path);
  if (*convert_cmd) return convert(convert_in, convert_out);
  return 2;
}
