// Large graphs end to end: a chain `x0 = Const; x_i = Add(x_{i-1}, c)` and
// a wide graph (one Const feeding N/2 Adds, summed by a binary tree of
// Adds) of N nodes are generated in memory, written as .pb and .pbtxt to a
// temporary directory, and each file is imported, given to a Session and
// run twice, in a child process of its own so that every peak RSS (VmHWM,
// reset between phases) belongs to that file alone. The baseline, measured
// in the same run and in its own child, is protobuf's parse of the same file
// into a GraphDef. Bytes per node: heap in use (mallinfo2) held by the graph
// IR after import, by the step graph (make_step_graph + place) and by the
// Executable built from it, next to Graph::memory_bytes()'s accounting.
//   scale_bench [chain|wide|all] [N...]       default: all 200000 1000000
//   scale_bench write DIR N                    writes chain_N / wide_N .pb and .pbtxt
#include <google/protobuf/text_format.h>
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "actors/executable.hpp"
#include "actors/session.hpp"
#include "bench/bench_util.hpp"
#include "graph/device.hpp"
#include "graph/io/import.hpp"
#include "graph/placement.hpp"
#include "graph/proto/graph_def.pb.h"
#include "graph/step_graph.hpp"
#include "graph/validate.hpp"

using namespace tagflow;
namespace fs = std::filesystem;

namespace {

// ------------------------------------------------------------ generation

void set_type(tensorflow::NodeDef* n, const char* key) {
  (*n->mutable_attr())[key].set_type(tensorflow::DT_FLOAT);
}

void add_const(tensorflow::GraphDef& def, const std::string& name, float v) {
  tensorflow::NodeDef* n = def.add_node();
  n->set_name(name);
  n->set_op("Const");
  set_type(n, "dtype");
  tensorflow::TensorProto* t = (*n->mutable_attr())["value"].mutable_tensor();
  t->set_dtype(tensorflow::DT_FLOAT);
  t->mutable_tensor_shape();
  t->add_float_val(v);
}

void add_binary(tensorflow::GraphDef& def, const std::string& name, const std::string& a,
                const std::string& b) {
  tensorflow::NodeDef* n = def.add_node();
  n->set_name(name);
  n->set_op("Add");
  n->add_input(a);
  n->add_input(b);
  set_type(n, "T");
}

struct Generated {
  tensorflow::GraphDef def;
  std::string fetch;
  double expected = 0;
};

// c, x0 and x1..x(n-2): n nodes; x(n-2) = n - 2.
Generated chain_graph(int n) {
  Generated g;
  g.def.mutable_node()->Reserve(n);
  add_const(g.def, "c", 1);
  add_const(g.def, "x0", 0);
  for (int i = 1; i <= n - 2; ++i)
    add_binary(g.def, "x" + std::to_string(i), "x" + std::to_string(i - 1), "c");
  g.fetch = "x" + std::to_string(n - 2);
  g.expected = n - 2;
  return g;
}

// c, y0..y(k-1) = c + c, then a tree of Adds down to one root `sum`: ~n nodes.
Generated wide_graph(int n) {
  Generated g;
  const int k = std::max(1, n / 2);
  add_const(g.def, "c", 1);
  std::vector<std::string> level;
  for (int i = 0; i < k; ++i) {
    level.push_back("y" + std::to_string(i));
    add_binary(g.def, level.back(), "c", "c");
  }
  int next = 0;
  while (level.size() > 1) {
    std::vector<std::string> up;
    for (size_t i = 0; i + 1 < level.size(); i += 2) {
      up.push_back("s" + std::to_string(next++));
      add_binary(g.def, up.back(), level[i], level[i + 1]);
    }
    if (level.size() % 2 == 1) up.push_back(level.back());
    level = std::move(up);
  }
  tensorflow::NodeDef* sum = g.def.add_node();
  sum->set_name("sum");
  sum->set_op("Identity");
  sum->add_input(level.front());
  set_type(sum, "T");
  g.fetch = "sum";
  g.expected = 2.0 * k;
  return g;
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

struct Files {
  fs::path pb, pbtxt;
  std::string fetch;
  double expected = 0;
  int nodes = 0;
};

// The files of a graph, what to fetch and what the fetch must be.
Files describe(const fs::path& dir, const std::string& kind, int n) {
  Files f;
  f.pb = dir / (kind + "_" + std::to_string(n) + ".pb");
  f.pbtxt = dir / (kind + "_" + std::to_string(n) + ".pbtxt");
  if (kind == "chain") {
    f.nodes = n;
    f.fetch = "x" + std::to_string(n - 2);
    f.expected = n - 2;
  } else {
    const int k = std::max(1, n / 2);
    f.nodes = 2 * k + 1;
    f.fetch = "sum";
    f.expected = 2.0 * k;
  }
  return f;
}

void write_graph(const Files& f, const std::string& kind, int n) {
  Generated g = kind == "chain" ? chain_graph(n) : wide_graph(n);
  write_file(f.pb, g.def.SerializeAsString());
  std::string text;
  google::protobuf::TextFormat::PrintToString(g.def, &text);
  write_file(f.pbtxt, text);
}

// ------------------------------------------------------------ measuring

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Heap bytes in use (small and mmapped blocks).
size_t heap_bytes() {
  struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

// Resets VmHWM to the current RSS (Linux >= 4.0); false if not allowed.
bool reset_peak() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

template <class F>
void in_child(F&& f) {
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    f();
    std::fflush(stdout);
    std::_Exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    std::printf("    (child failed: status %d)\n", status);
}

[[noreturn]] void die(const char* what, const ops::Status& s) {
  std::printf("    %s: %s\n", what, s.to_string().c_str());
  std::fflush(stdout);
  std::_Exit(1);
}

void baseline(const fs::path& path, bool text) {
  in_child([&] {
    std::string bytes = read_file(path);
    reset_peak();
    const double before = bench::current_rss_mib();
    tensorflow::GraphDef def;
    double t = bench::time_once([&] {
      if (text) google::protobuf::TextFormat::ParseFromString(bytes, &def);
      else def.ParseFromString(bytes);
    });
    std::printf("  %-28s %7.2f s  peak %7.0f MiB (+%.0f MiB over the file's bytes)\n",
                "baseline: protobuf parse", t, bench::peak_rss_mib(),
                bench::peak_rss_mib() - before);
  });
}

void phase(const char* name, double seconds, double start_rss, bool resettable) {
  std::printf("  %-28s %7.2f s  peak %7.0f MiB  (+%.0f MiB)\n", name, seconds,
              bench::peak_rss_mib(), bench::peak_rss_mib() - start_rss);
  if (resettable) reset_peak();
}

// Import, Session::create, first and second run, as `tagflow run` does them.
void end_to_end(const Files& f, const fs::path& path) {
  in_child([&] {
    const bool resettable = reset_peak();
    double start = bench::current_rss_mib();
    double t_read = 0, t_import = 0;
    ops::Expected<graph::Graph> g = ops::Status(ops::Error::internal, "not imported");
    {
      std::string bytes;
      t_read = bench::time_once([&] { bytes = read_file(path); });
      t_import = bench::time_once([&] { g = graph::import_graph_bytes(bytes, path.string()); });
    }
    if (!g.ok()) die("import", g.status());
    phase("read + import", t_read + t_import, start, resettable);
    std::unique_ptr<actors::Session> session;
    double t_create = bench::time_once([&] {
      auto s = actors::Session::create(std::move(g).value());
      if (!s.ok()) die("Session::create", s.status());
      session = std::move(s).value();
    });
    phase("Session::create", t_create, start, resettable);
    ops::Expected<std::vector<ops::Tensor>> r = ops::Status(ops::Error::internal, "not run");
    double t_first = bench::time_once([&] { r = session->run({}, {f.fetch}); });
    if (!r.ok()) die("first run", r.status());
    phase("first run", t_first, start, resettable);
    double t_second = bench::time_once([&] { r = session->run({}, {f.fetch}); });
    if (!r.ok()) die("second run", r.status());
    phase("second run", t_second, start, resettable);
    double got = ops::element_as_double((*r)[0], 0);
    std::printf("  %-28s %7.2f s  %s = %.0f%s\n", "total", t_read + t_import + t_create + t_first,
                f.fetch.c_str(), got, got == f.expected ? "" : "  (WRONG)");
  });
}

// Heap bytes per node held by each structure, built one after the other.
void bytes_per_node(const Files& f) {
  in_child([&] {
    const double n = f.nodes;
    size_t h0 = heap_bytes();
    ops::Expected<graph::Graph> g = graph::import_graph_file(f.pb.string());
    if (!g.ok()) die("import", g.status());
    size_t h1 = heap_bytes();
    graph::ValidateOptions o;
    o.allow_unknown_ops = true;
    if (auto s = graph::validate(*g, o); !s.ok()) die("validate", s);
    size_t h2 = heap_bytes();
    // As Session::prepare does it: placed on one device, the step graph is
    // the partition and keeps sharing the nodes it does not change.
    auto sg = graph::make_step_graph(*g, {}, {f.fetch}, {});
    if (!sg.ok()) die("make_step_graph", sg.status());
    auto placed = graph::assign_devices(sg->graph, graph::local_devices(1), {});
    if (!placed.ok()) die("assign_devices", placed.status());
    size_t h3 = heap_bytes();
    const double ir_accounted = static_cast<double>(g->memory_bytes()) / n;
    const double step_accounted =
        static_cast<double>(sg->graph.memory_bytes() - sg->graph.shared_memory_bytes()) / n;
    auto exec = actors::Executable::build(std::move(sg->graph));
    if (!exec.ok()) die("Executable::build", exec.status());
    size_t h4 = heap_bytes();
    std::printf("  bytes/node: IR %.0f after import, %.0f validated (memory_bytes() %.0f); "
                "step graph %.0f (unshared memory_bytes() %.0f); Executable %.0f\n",
                (h1 - h0) / n, (h2 - h0) / n, ir_accounted, (h3 - h2) / n, step_accounted,
                (h4 - h3) / n);
  });
}

void measure(const fs::path& dir, const std::string& kind, int n) {
  // Generated in a child: the parent's heap stays small, so that no child
  // measured later inherits it.
  Files f = describe(dir, kind, n);
  in_child([&] { write_graph(f, kind, n); });
  std::printf("%s of %d nodes: %.1f MB .pb, %.1f MB .pbtxt\n", kind.c_str(), f.nodes,
              fs::file_size(f.pb) / 1e6, fs::file_size(f.pbtxt) / 1e6);
  for (bool text : {false, true}) {
    const fs::path& path = text ? f.pbtxt : f.pb;
    std::printf(" %s\n", text ? ".pbtxt" : ".pb");
    baseline(path, text);
    end_to_end(f, path);
  }
  bytes_per_node(f);
  fs::remove(f.pb);
  fs::remove(f.pbtxt);
}

}  // namespace

int main(int argc, char** argv) {
  std::string what = argc > 1 ? argv[1] : "all";
  if (what == "write") {
    if (argc != 4) {
      std::fprintf(stderr, "usage: scale_bench write DIR N\n");
      return 2;
    }
    for (const char* kind : {"chain", "wide"}) {
      Files f = describe(argv[2], kind, std::atoi(argv[3]));
      write_graph(f, kind, std::atoi(argv[3]));
      std::printf("%s %s (fetch %s = %.0f)\n", f.pb.c_str(), f.pbtxt.c_str(), f.fetch.c_str(), f.expected);
    }
    return 0;
  }
  std::vector<int> sizes;
  for (int i = 2; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {200000, 1000000};
  fs::path dir = fs::temp_directory_path() / ("tagflow_scale_bench." + std::to_string(getpid()));
  fs::create_directories(dir);
  for (int n : sizes)
    for (const char* kind : {"chain", "wide"})
      if (what == "all" || what == kind) measure(dir, kind, n);
  fs::remove_all(dir);
  return 0;
}
