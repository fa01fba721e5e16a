// `tagflow inspect` and `tagflow convert`: read a graph, report or rewrite it.
#include <cstdio>
#include <string>

#include "graph/analysis/control_flow.hpp"
#include "graph/autodiff/gradients.hpp"
#include "graph/functions/function_library.hpp"
#include "graph/functions/functional_op.hpp"
#include "graph/functions/lower_functional.hpp"
#include "graph/functions/run_as_written.hpp"
#include "graph/io/export.hpp"
#include "graph/io/import.hpp"
#include "graph/shapes/shape_inference.hpp"
#include "graph/step_graph.hpp"
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

int inspect_graph(const std::string& path, const std::vector<std::string>& fetches) {
  auto g = load_for_reading(path);
  if (!g.ok()) return fail(g.status());
  auto frames = graph::analyze_control_flow(*g);
  if (!frames.ok()) return fail(frames.status().with_prefix(path + ": "));
  auto summary = graph::summarize(*g, *frames, fetches);
  if (!summary.ok()) return fail(summary.status().with_prefix(path + ": "));
  std::fputs(graph::to_text(*summary).c_str(), stdout);
  if (graph::has_functional_ops(*g)) {
    // What a session of one device decides (Session::create, the
    // run-as-written pass): the others are lowered when a step needs them.
    graph::Graph marked = *g;
    const graph::FunctionLibrary lib(marked.library());
    int functional = 0;
    for (const graph::Node& n : marked.nodes()) functional += graph::is_functional(n, lib) ? 1 : 0;
    const int as_written = graph::mark_run_as_written(&marked, graph::RunAsWrittenOptions{});
    std::printf("functional ops: %d of %d run as written (a kernel runs their bodies, docs/tf2.md), the others "
                "lowered to Switch/Merge/Enter/Exit when a step needs them; --lower lowers them all (tagflow "
                "convert --lower shows the whole graph lowered)\n",
                as_written, functional);
  }
  return 0;
}

int inspect_shapes(const std::string& path) {
  auto g = load_for_reading(path);
  if (!g.ok()) return fail(g.status());
  auto shapes = graph::infer_shapes(*g);
  if (!shapes.ok()) return fail(shapes.status().with_prefix(path + ": "));
  for (graph::NodeId id = 0; id < g->num_nodes(); ++id) {
    const auto& outputs = shapes->nodes[static_cast<size_t>(id)];
    for (size_t p = 0; p < outputs.size(); ++p)
      std::printf("%s:%zu %s %s\n", g->node(id).name.c_str(), p, ops::dtype_name(outputs[p].dtype).c_str(),
                  outputs[p].shape.to_string().c_str());
  }
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


namespace tagflow::tools {

int gradient_graph(const GradArgs& args) {
  // Functional control flow is differentiated as TensorFlow 2 does,
  // functional op by functional op (an If's gradient is an If, a While's a
  // While), unless --lower asks for the gradient of its Switch/Merge/Enter/
  // Exit form.
  if (args.functional && args.lower)
    return fail(Status(ops::Error::invalid_argument, "--functional and --lower exclude each other"));
  auto read = graph::import_graph_file(args.graph);
  if (!read.ok()) return fail(read.status());
  graph::Graph g = std::move(read).value();
  Status s = args.lower ? graph::lower_functional_ops(&g) : ops::ok_status();
  if (s.ok()) s = graph::validate(g);
  if (!s.ok()) return fail(s.with_prefix(args.graph + ": "));
  auto endpoints = [&](const std::vector<std::string>& names, const char* what)
      -> ops::Expected<std::vector<graph::Endpoint>> {
    std::vector<graph::Endpoint> out;
    for (const std::string& n : names) {
      auto e = graph::parse_endpoint(g, n);
      if (!e.ok()) return e.status().with_prefix(std::string("--") + what + " " + n + ": ");
      out.push_back(*e);
    }
    return out;
  };
  auto ys = endpoints(args.ys, "y");
  if (!ys.ok()) return fail(ys.status());
  auto xs = endpoints(args.xs, "x");
  if (!xs.ok()) return fail(xs.status());
  auto grad_ys = endpoints(args.grad_ys, "grad-y");
  if (!grad_ys.ok()) return fail(grad_ys.status());
  auto stops = endpoints(args.stops, "stop");
  if (!stops.ok()) return fail(stops.status());
  graph::GradientOptions options;
  options.stop_gradients = *stops;
  options.functional = !args.lower && (args.functional || graph::has_functional_ops(g));
  if (args.unconnected == "zeros") {
    options.unconnected = graph::GradientOptions::Unconnected::zeros;
  } else if (args.unconnected != "none") {
    return fail(Status(ops::Error::invalid_argument,
                       "--unconnected must be none or zeros, not '" + args.unconnected + "'"));
  }
  auto r = graph::gradients(g, *ys, *xs, *grad_ys, options);
  if (!r.ok()) return fail(r.status().with_prefix(args.graph + ": "));
  s = graph::export_graph_file(g, args.out);
  if (!s.ok()) return fail(s);
  for (size_t i = 0; i < args.xs.size(); ++i) {
    const graph::Endpoint d = r->dxs[i];
    std::printf("%s -> %s\n", args.xs[i].c_str(),
                d.node == graph::kNoNode ? "none (no y depends on it)" : g.endpoint_name(d).c_str());
  }
  return 0;
}

}  // namespace tagflow::tools
