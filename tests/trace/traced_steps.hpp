// Steps recorded for the trace library's tests: graphs of the executor's
// suites run with their events in a MemorySink, on one or several
// devices.
#pragma once

#include <string>
#include <vector>

#include "actors/executor_graphs.hpp"
#include "actors/trace_harness.hpp"

namespace tagflow::testing {

const std::string kCpu = "/job:localhost/replica:0/task:0/device:CPU:";

// The graph with the nodes named in `on1` on CPU:1 and the rest on CPU:0.
inline graph::Graph split(graph::Graph g, const std::vector<std::string>& on1) {
  for (graph::NodeId id = 0; id < g.num_nodes(); ++id) g.mutable_node(id).device = kCpu + "0";
  for (const std::string& n : on1) g.mutable_node(g.find(n)).device = kCpu + "1";
  return g;
}

inline actors::SessionOptions on_devices(int n) {
  actors::SessionOptions o;
  o.num_devices = n;
  return o;
}

// cond_in_loop() with the cond's arithmetic on CPU:1: dead values cross
// the partitions in the iterations where a branch is not taken.
inline graph::Graph split_cond_in_loop() {
  return split(parse(cond_in_loop()), {"w/c/plus", "w/c/minus", "w/c/one", "w/mod", "w/two"});
}

}  // namespace tagflow::testing
