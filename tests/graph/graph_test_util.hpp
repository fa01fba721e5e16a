// Helpers shared by the graph/ test suites: the corpus of real TensorFlow
// GraphDefs in tests/data/corpus and small utilities to load it.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "graph/io/import.hpp"

namespace tagflow::graph::testing {

inline std::string corpus_path(const std::string& file) {
  return std::string(TAGFLOW_TEST_DATA) + "/corpus/" + file;
}

// Every file of the corpus with the given extension, sorted by name.
inline std::vector<std::string> corpus_files(const std::string& extension = ".pbtxt") {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TAGFLOW_TEST_DATA) + "/corpus"))
    if (entry.path().extension() == extension) out.push_back(entry.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Imports a corpus file; fails the calling test with the error if it does not import.
inline Graph load_corpus(const std::string& file) {
  auto g = import_graph_file(corpus_path(file));
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

inline int count_op(const Graph& g, const std::string& op) {
  return static_cast<int>(std::count_if(g.nodes().begin(), g.nodes().end(),
                                        [&](const Node& n) { return n.op == op; }));
}

// True if `text` contains `part`; for BOOST_TEST messages.
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace tagflow::graph::testing
