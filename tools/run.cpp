// `tagflow run`: runs a graph once and prints the fetched tensors.
#include "tools/commands.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "actors/saved_model.hpp"
#include "actors/session.hpp"
#include "graph/io/import.hpp"
#include "graph/io/saved_model.hpp"
#include "graph/io/variables.hpp"
#include "graph/placement.hpp"
#include "graph/step_graph.hpp"
#include "net/cluster_hosts.hpp"
#include "ops/memory_budget.hpp"
#include "ops/tensor_literal.hpp"
#include "trace/explain.hpp"
#include "trace/progress.hpp"

namespace tagflow::tools {

namespace {

// What a feed must be: what the graph declares at that endpoint.
ops::Expected<graph::DeclaredOutput> feed_declared(const graph::Graph& g, const std::string& name) {
  TF_ASSIGN_OR_RETURN(graph::Endpoint e, graph::parse_endpoint(g, name));
  return graph::feed_declaration(g, name, e);
}

}  // namespace

ops::Expected<int> num_devices(const std::optional<int>& devices) {
  if (!devices) return 0;
  if (*devices < 1 || *devices > actors::limits::kMaxDevices)
    return Status(ops::Error::invalid_argument,
                  fmt::format("--devices {} is outside the allowed range (1 to {})", *devices,
                              actors::limits::kMaxDevices));
  return *devices;
}

// The session options the flags give; the limits the flags leave unset
// come from the configuration or the defaults (Session::resolve_options).
ops::Expected<actors::SessionOptions> session_options(const RunArgs& args) {
  actors::SessionOptions o;
  o.threads = args.threads;
  o.max_iterations = args.max_iterations;
  o.max_nodes = args.max_nodes;
  o.max_frame_depth = args.max_frame_depth;
  o.strict_merge = args.strict_merge;
  o.check_feed_shapes = !args.no_feed_shape_check;
  o.strict_shapes = args.strict_shapes;
  o.lower_functional = args.lower_functional;
  o.optimize = args.optimize;
  if (!args.memory_limit.empty()) {
    auto bytes = ops::parse_byte_size(args.memory_limit);
    if (!bytes.ok()) return bytes.status().with_prefix("--memory-limit: ");
    o.memory_limit = *bytes;
  }
  TF_ASSIGN_OR_RETURN(o.timeout, actors::timeout_from_ms(args.timeout_ms));
  o.config_file = args.config;
  // Partitions of the cluster's tasks run on its workers (and only then
  // does the session load CAF's networking).
  o.cluster = args.cluster;
  TF_ASSIGN_OR_RETURN(bool cluster, actors::Session::names_cluster(o));
  if (cluster) o.hosts = std::make_shared<net::ClusterHosts>();
  TF_ASSIGN_OR_RETURN(o.num_devices, num_devices(args.devices));
  auto placement = graph::parse_place_option(args.place);
  if (!placement.ok()) return placement.status().with_prefix("--place: ");
  o.placement = *placement;
  return actors::Session::resolve_options(std::move(o));
}

ops::Expected<graph::Graph> import_graph(const std::string& path, const actors::SessionOptions& o) {
  graph::ImportOptions limits;
  limits.max_nodes = *o.max_nodes;
  limits.max_constant_bytes = *o.memory_limit;
  return graph::import_graph_file(path, limits);
}

ops::Expected<OpenedGraph> open_graph(const RunArgs& args, const actors::SessionOptions& options) {
  OpenedGraph o;
  TF_ASSIGN_OR_RETURN(o.graph, import_graph(args.graph, options));
  auto session = actors::Session::create(o.graph, options);
  if (!session.ok()) return session.status().with_prefix(args.graph + ": ");
  o.session = std::move(session).value();
  TF_ASSIGN_OR_RETURN(o.feeds, parse_feeds(o.session->graph(), args.feeds));
  return o;
}

// NAME=VALUE, VALUE a literal of the dtype the graph gives NAME, or @FILE.
ops::Expected<actors::Feeds> parse_feeds(const graph::Graph& g, const std::vector<std::string>& texts) {
  actors::Feeds feeds;
  for (const std::string& f : texts) {
    size_t eq = f.find('=');
    if (eq == std::string::npos || eq == 0)
      return Status(ops::Error::invalid_argument, "--feed '" + ops::abbreviate(f) + "' is not NAME=VALUE");
    std::string name = f.substr(0, eq);
    const std::string prefix = "--feed " + ops::abbreviate(name) + ": ";
    auto declared = feed_declared(g, name);
    if (!declared.ok()) return declared.status().with_prefix(prefix);
    // A literal is read as the dtype the graph declares: one that is not
    // of it contradicts the graph, and the error says what it declares.
    const std::string text = f.substr(eq + 1);
    auto value = !text.empty() && text[0] == '@'
                     ? tensor_from_file(text.substr(1), declared->dtype, declared->shape)
                     : ops::parse_tensor_literal(text, declared->dtype);
    if (!value.ok())
      return value.status().with_prefix(fmt::format("{}{} declares {} {}: ", prefix, declared->declared_by,
                                                    ops::dtype_name(declared->dtype),
                                                    declared->shape.to_string()));
    feeds.emplace_back(std::move(name), std::move(value).value());
  }
  return feeds;
}

namespace {

// Prints a progress line a second on stderr while it lives (a null sink:
// nothing).
class ProgressPrinter {
 public:
  explicit ProgressPrinter(trace::ProgressSink* sink) : sink_(sink) {
    if (sink_ != nullptr) thread_ = std::thread([this] { loop(); });
  }
  ~ProgressPrinter() { stop(); }
  void stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, std::chrono::seconds(1), [this] { return done_; }))
      std::fprintf(stderr, "tagflow: %s\n", trace::ProgressSink::format(sink_->snapshot()).c_str());
  }

  trace::ProgressSink* sink_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

void explain_dead(const trace::Trace& t, const std::vector<std::string>& nodes) {
  for (const std::string& name : nodes) {
    trace::ExplainQuery q;
    q.node = name.substr(0, name.find(':'));
    std::printf("--explain %s: %s", name.c_str(), trace::format_explanation(trace::explain(t, q)).c_str());
  }
}

}  // namespace

void print_tensor(const std::string& name, const ops::Tensor& t, int64_t max_print) {
  std::printf("%s = %s  (%s, shape %s)\n", name.c_str(), t.values_string(max_print).c_str(),
              ops::dtype_name(t.dtype()).c_str(), t.shape().to_string().c_str());
}

int run_graph(const RunArgs& args) {
  if (graph::is_saved_model_dir(args.graph)) return run_saved_model(args);
  if (args.fetches.empty() && args.targets.empty())
    return fail(Status(ops::Error::invalid_argument, "run: give --fetch or --target (what the step computes)"));
  const std::pair<const char*, bool> saved_model_flags[] = {
      {"--input", !args.inputs.empty()}, {"--example", !args.examples.empty()},
      {"--checkpoint", !args.checkpoint.empty()}};
  for (const auto& [flag, given] : saved_model_flags)
    if (given)
      return fail(Status(ops::Error::invalid_argument,
                         fmt::format("run: {} is for a SavedModel directory, and {} is a GraphDef file", flag,
                                     args.graph)));
  // The configuration first: its errors name its file, and it sets the
  // limits the graph is read within.
  auto options = session_options(args);
  if (!options.ok()) return fail(options.status());
  // Events go to the trace file, to memory for --explain, and to the
  // progress counter, as asked.
  std::unique_ptr<trace::Sink> file;
  trace::MemorySink memory;
  trace::ProgressSink progress;
  std::vector<trace::Sink*> sinks;
  if (!args.trace.empty()) {
    std::string error;
    file = trace::open_sink(args.trace, &error);
    if (!file) return fail(Status(ops::Error::not_found, error));
    sinks.push_back(file.get());
  }
  if (!args.explain.empty()) sinks.push_back(&memory);
  const bool show_progress = args.progress == 1 || (args.progress == -1 && ::isatty(STDERR_FILENO));
  if (show_progress) sinks.push_back(&progress);
  trace::TeeSink tee(sinks);
  if (sinks.size() == 1) options->events = sinks.front();
  else if (sinks.size() > 1) options->events = &tee;
  ProgressPrinter printer(show_progress ? &progress : nullptr);
  auto opened = open_graph(args, *options);
  if (!opened.ok()) return fail(opened.status());
  actors::Session& session = *opened->session;
  const actors::Feeds& feeds = opened->feeds;
  // Initialisation steps (variables) run first, in order, in the same
  // session, so that the state they make is there for the fetches.
  if (args.init_variables) {
    std::vector<std::string> inits = graph::variable_initializers(session.graph());
    if (inits.empty())
      return fail(Status(ops::Error::invalid_argument,
                         "--init-variables: the graph has no variable with a `V/Assign` initialiser"));
    auto done = session.run(feeds, {}, inits);
    if (!done.ok()) return fail(done.status().with_prefix("--init-variables: "));
  }
  for (const std::string& init : args.inits) {
    auto done = session.run(feeds, {}, {init});
    if (!done.ok()) return fail(done.status().with_prefix("--init " + ops::abbreviate(init) + ": "));
  }
  for (int64_t step = 1; step <= args.steps; ++step) {
    auto result = session.run(feeds, args.fetches, args.targets);
    if (step == args.steps) {
      printer.stop();
      if (!args.explain.empty()) explain_dead(memory.trace(), args.explain);
    }
    if (!result.ok()) {
      Status s = result.status();
      if (args.steps > 1) s = s.with_prefix(fmt::format("step {}: ", step));
      fail(s);
      if (result.status().code() == ops::Error::dead_value && args.explain.empty())
        std::fprintf(stderr, "tagflow: run again with --explain NAME to see why the value is dead\n");
      return 1;
    }
    if (args.steps > 1 && !args.fetches.empty()) std::printf("step %lld:\n", static_cast<long long>(step));
    for (size_t i = 0; i < args.fetches.size(); ++i) print_tensor(args.fetches[i], (*result)[i], args.max_print);
    if (step == args.steps && !args.output_dir.empty()) {
      Status s = write_fetches(args.output_dir, args.fetches, *result);
      if (!s.ok()) return fail(s);
    }
  }
  if (!args.save.empty()) {
    auto saved = actors::save_variables(session, args.save);
    if (!saved.ok()) return fail(saved.status());
    std::printf("saved %d variables to %s\n", *saved, args.save.c_str());
  }
  return 0;
}

}  // namespace tagflow::tools
