// Import time of a large real GraphDef (the 2 MB LSTM training graph of the
// corpus): tagflow's import (protobuf TextFormat parse + graph IR) and
// validation, against protobuf's TextFormat parse alone, in the same run.
//   bench/import_bench [GRAPH.pbtxt] [REPS]
#include <google/protobuf/text_format.h>

#include <fstream>
#include <sstream>

#include "bench/bench_util.hpp"
#include "graph/analysis/control_flow.hpp"
#include "graph/io/import.hpp"
#include "graph/proto/graph_def.pb.h"
#include "graph/validate.hpp"

using namespace tagflow;

int main(int argc, char** argv) {
  std::string path = argc > 1 ? argv[1]
                              : std::string(TAGFLOW_SOURCE_DIR) + "/tests/data/corpus/tfnet_lstm_crf_ner_train.pbtxt";
  int reps = argc > 2 ? std::atoi(argv[2]) : 9;
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  if (text.empty()) {
    std::fprintf(stderr, "import_bench: cannot read %s\n", path.c_str());
    return 1;
  }

  double baseline = bench::median_seconds(reps, [&] {
    tensorflow::GraphDef def;
    google::protobuf::TextFormat::ParseFromString(text, &def);
    bench::keep(def);
  });
  int nodes = 0;
  double import_only = bench::median_seconds(reps, [&] {
    auto g = graph::import_graph_text(text, path);
    nodes = g.ok() ? g->num_nodes() : -1;
  });
  double full = bench::median_seconds(reps, [&] {
    auto g = graph::import_graph_text(text, path);
    graph::ValidateOptions o;
    o.allow_unknown_ops = true;
    (void)graph::validate(*g, o);
    auto cf = graph::analyze_control_flow(*g);
    bench::keep(cf);
  });
  std::printf("graph: %s (%zu bytes, %d nodes), median of %d\n", path.c_str(), text.size(), nodes, reps);
  std::printf("baseline protobuf TextFormat parse:      %8.1f ms\n", baseline * 1e3);
  std::printf("tagflow import (parse + graph IR):       %8.1f ms  (%.2fx baseline)\n", import_only * 1e3,
              import_only / baseline);
  std::printf("tagflow import + validate + frames:      %8.1f ms  (%.2fx baseline)\n", full * 1e3,
              full / baseline);
  return nodes > 0 ? 0 : 1;
}
