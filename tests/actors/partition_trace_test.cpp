// Partitioned steps walked through message by message: a loop whose body is
// on another device than its pivot, and a nested loop over three devices.
#include <boost/test/unit_test.hpp>

#include <algorithm>

#include "executor_graphs.hpp"
#include "trace_harness.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

namespace {

const std::string kCpu0 = "/job:localhost/replica:0/task:0/device:CPU:0";
const std::string kCpu1 = "/job:localhost/replica:0/task:0/device:CPU:1";
const std::string kCpu2 = "/job:localhost/replica:0/task:0/device:CPU:2";

// `while i < n: i += 1` from `start`, the body (Identity, step, Add) on
// CPU:1 and everything else on CPU:0.
graph::Graph split_loop(int start, int n) {
  graph::Graph g = parse(int_const("start", start) + int_const("n", n) + counting_loop("w", "start", "n", 1));
  for (graph::NodeId id = 0; id < g.num_nodes(); ++id) g.mutable_node(id).device = kCpu0;
  for (const char* body : {"w/Identity", "w/step", "w/Add"}) g.mutable_node(g.find(body)).device = kCpu1;
  return g;
}

actors::SessionOptions devices(int n) {
  actors::SessionOptions o;
  o.num_devices = n;
  return o;
}

bool ran(const Trace& t, const std::string& partition, const std::string& node, const std::string& tag) {
  for (const Event& e : events_of(t, Kind::node_ran, partition))
    if (t.node_name(e) == node && t.tag_of(e) == tag) return true;
  return false;
}

std::string transfer_name(const Trace& t, const Event& e) { return t.names_of(e)->transfer(e.key); }

}  // namespace

BOOST_AUTO_TEST_SUITE(partition_trace)

BOOST_AUTO_TEST_CASE(a_distributed_loop_that_runs_zero_times) {
  Mode m = modes()[0];  // deterministic: one message at a time
  std::vector<Tensor> out;
  Trace t = trace_step(split_loop(7, 3), m, {}, {"w/Exit"}, &out, devices(2));
  BOOST_TEST(out[0].scalar_value<int32_t>() == 7);
  // the pivot's device runs Enter, Merge, the predicate and Switch once
  for (const char* n : {"w/Merge", "w/Less", "w/LoopCond", "w/Switch"}) BOOST_TEST(ran(t, "CPU:0", n, "w/0"), n);
  BOOST_TEST(ran(t, "CPU:0", "w/Enter", "/"));
  BOOST_TEST(iterations_per_frame_instance(t, "CPU:0")["w"] == 1);
  // the dead body input and the dead continue signal cross to CPU:1 (no
  // Switch there needs the predicate) ...
  std::vector<std::string> sent;
  for (const Event& e : events_of(t, Kind::message_sent, "CPU:0")) {
    if (e.message != trace::MessageKind::transfer || t.tag_of(e) != "w/0") continue;
    BOOST_TEST(e.dead, transfer_name(t, e));
    sent.push_back(transfer_name(t, e));
  }
  std::sort(sent.begin(), sent.end());
  BOOST_TEST((sent == std::vector<std::string>{"edge__cf/w/CPU_0/live/w/NextIteration_0_to_CPU_1",
                                               "edge_w/Switch_1_to_CPU_1"}),
             boost::test_tools::per_element());
  // ... whose control loop runs iteration 0 only and stops
  BOOST_TEST(iterations_per_frame_instance(t, "CPU:1")["w"] == 1);
  BOOST_TEST(events_of(t, Kind::frame_done, "CPU:1").size() == 2u);  // w and the root
  bool add_dead = false;
  for (const Event& e : events_of(t, Kind::value_dead, "CPU:1")) {
    BOOST_TEST(t.tag_of(e) == "w/0", t.node_name(e) << " dead at " << t.tag_of(e));
    add_dead = add_dead || t.node_name(e) == "w/Add";
  }
  BOOST_TEST(add_dead);  // the body ran, dead, once
  // nothing else: every transfer matched once, none after a frame ended
  BOOST_TEST(violations(t) == "");
  int64_t transfers = 0;
  for (const Event& e : events_of(t, Kind::message_sent))
    if (e.message == trace::MessageKind::transfer) ++transfers;
  BOOST_TEST(transfers == 3);  // body input and continue signal out, the dead Add back
}

BOOST_AUTO_TEST_CASE(a_distributed_loop_matches_every_transfer_per_iteration) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      std::vector<Tensor> out;
      Trace t = trace_step(split_loop(0, 5), m, {}, {"w/Exit"}, &out, devices(2));
      BOOST_TEST(out[0].scalar_value<int32_t>() == 5);
      BOOST_TEST(violations(t) == "");
      for (const char* p : {"CPU:0", "CPU:1"}) BOOST_TEST(iterations_per_frame_instance(t, p)["w"] == 6, p);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_nested_loop_over_three_devices_with_the_inner_loop_on_one) {
  // nested_loops(): outer `o` on CPU:0 and CPU:1, the inner loop `o/in`
  // entirely on CPU:2 — CPU:1 holds outer-loop nodes only.
  graph::Graph g = parse(nested_loops());
  for (graph::NodeId id = 0; id < g.num_nodes(); ++id) {
    graph::Node& n = g.mutable_node(id);
    if (n.name.rfind("o/in/", 0) == 0 || n.name == "o/zero" || n.name == "o/five") n.device = kCpu2;
    else if (n.name == "o/next" || n.name == "o/step" || n.name == "o/Add") n.device = kCpu1;
    else n.device = kCpu0;
  }
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      std::vector<Tensor> out;
      Trace t = trace_step(g, m, {}, {"o/Exit"}, &out, devices(3));
      BOOST_TEST(out[0].scalar_value<int32_t>() == 24);
      BOOST_TEST(violations(t) == "");
      // CPU:1 runs the outer frame's 5 iterations and no inner frame
      auto frames1 = iterations_per_frame_instance(t, "CPU:1");
      BOOST_TEST(frames1.size() == 1u);
      BOOST_TEST(frames1["o"] == 5);
      // CPU:2 runs an inner instance per live outer iteration; the one of
      // the last, dead outer iteration gets only dead Enters and, holding no
      // Send or Recv of the inner frame, is skipped
      auto frames2 = iterations_per_frame_instance(t, "CPU:2");
      BOOST_TEST(frames2["o"] == 5);
      int inner = 0;
      for (auto& [instance, n] : frames2)
        if (instance.find("/o/in") != std::string::npos) ++inner;
      BOOST_TEST(inner == 4);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
