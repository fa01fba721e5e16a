#include <boost/test/unit_test.hpp>

#include <map>

#include "graph/analysis/control_flow.hpp"
#include "graph/device.hpp"
#include "graph/partition.hpp"
#include "graph/placement.hpp"
#include "graph/step_graph.hpp"
#include "graph_test_util.hpp"
#include "placed_graphs.hpp"

using namespace tagflow;
using namespace tagflow::graph;
using namespace tagflow::graph::testing;

namespace {

std::string cpu(int i) { return local_devices(i + 1)[static_cast<size_t>(i)]; }

// Validates `text` and puts each node on CPU:<devices[name]> (default 0).
Graph assigned(const std::string& text, const std::map<std::string, int>& devices) {
  Graph g = validated(text);
  for (NodeId id = 0; id < g.num_nodes(); ++id) {
    auto it = devices.find(g.node(id).name);
    g.mutable_node(id).device = cpu(it == devices.end() ? 0 : it->second);
  }
  return g;
}

std::vector<Partition> partitioned(const Graph& g, int devices) {
  auto p = partition_graph(g, local_devices(devices));
  if (!p.ok()) throw std::runtime_error(p.status().to_string());
  return std::move(p).value();
}

std::string partition_error(const Graph& g, int devices) {
  auto p = partition_graph(g, local_devices(devices));
  return p.ok() ? "<no error>" : p.status().to_string();
}

const Graph& on(const std::vector<Partition>& parts, int device) {
  for (const Partition& p : parts)
    if (p.device == cpu(device)) return p.graph;
  throw std::runtime_error("no partition for " + cpu(device));
}

const Node& find_node(const Graph& g, const std::string& name) {
  NodeId id = g.find(name);
  if (id == kNoNode) throw std::runtime_error("no node " + name);
  return g.node(id);
}

bool has(const Graph& g, const std::string& name) { return g.find(name) != kNoNode; }

std::string input_name(const Graph& g, const std::string& node, size_t input) {
  const Node& n = find_node(g, node);
  return g.endpoint_name(n.inputs.at(input));
}

std::vector<std::string> control_names(const Graph& g, const std::string& node) {
  std::vector<std::string> out;
  for (NodeId c : find_node(g, node).control_inputs) out.push_back(g.node(c).name);
  return out;
}

int count_with_prefix(const Graph& g, const std::string& prefix) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.name.rfind(prefix, 0) == 0;
  return n;
}

const std::string& str_attr(const Node& n, const std::string& key) {
  const std::string* s = n.attr<std::string>(key);
  if (s == nullptr) throw std::runtime_error(n.name + " has no string attr " + key);
  return *s;
}

// Every partition validates (partition_graph did) and analyses; every Send
// has exactly one Recv with its key on its recv_device, with equal attrs.
void check_structure(const std::vector<Partition>& parts) {
  std::map<std::string, const Partition*> by_device;
  for (const Partition& p : parts) {
    by_device[p.device] = &p;
    auto cf = analyze_control_flow(p.graph);
    BOOST_TEST(cf.ok(), p.device << ": " << cf.status().to_string());
    for (const Node& n : p.graph.nodes()) BOOST_TEST(n.device == p.device);
  }
  int sends = 0, recvs = 0;
  for (const Partition& p : parts)
    for (const Node& send : p.graph.nodes()) {
      recvs += send.op == "_Recv";
      if (send.op != "_Send") continue;
      ++sends;
      BOOST_TEST(str_attr(send, "send_device") == p.device);
      const std::string& key = str_attr(send, "tensor_name");
      auto dst = by_device.find(str_attr(send, "recv_device"));
      BOOST_REQUIRE(dst != by_device.end());
      int matching = 0;
      for (const Node& recv : dst->second->graph.nodes()) {
        if (recv.op != "_Recv" || str_attr(recv, "tensor_name") != key) continue;
        ++matching;
        BOOST_TEST(str_attr(recv, "send_device") == p.device);
        BOOST_TEST(str_attr(recv, "recv_device") == dst->first);
        BOOST_TEST((*recv.attr<DType>("tensor_type") == *send.attr<DType>("T")));
        BOOST_TEST(*recv.attr<int64_t>("send_device_incarnation") == 1);
        BOOST_TEST(*send.attr<int64_t>("send_device_incarnation") == 1);
        BOOST_TEST(!*recv.attr<bool>("client_terminated"));
      }
      BOOST_TEST(matching == 1, key);
    }
  BOOST_TEST(sends == recvs);
}

std::string loop_graph(const std::string& body_extra = "") {
  return int_const("start", 0) + int_const("n", 5) +
         counting_loop("w", "start", "n", 1, 10, body_extra);
}

// loop_graph with a second loop variable: w/acc doubles every iteration.
std::string two_variable_loop_graph() {
  std::string acc = enter("w/Enter_1", "start", "w", false) +
                    merge("w/Merge_1", {"w/Enter_1", "w/NextIteration_1"}) +
                    binary("w/Switch_1", "Switch", "w/Merge_1", "w/LoopCond") +
                    unary("w/Identity_1", "Identity", "w/Switch_1:1") +
                    binary("w/double", "Add", "w/Identity_1", "w/Identity_1") +
                    unary("w/NextIteration_1", "NextIteration", "w/double") +
                    unary("w/Exit_1", "Exit", "w/Switch_1");
  return loop_graph(acc);
}

// Outer loop `o` (frame "o") whose body runs an inner loop `in` (frame
// "in") from 0 to o's counter, plus a node `o/side` outside the inner loop.
std::string nested_graph() {
  std::string body = int_const("o/zero", 0, {"^o/Identity"}) +
                     counting_loop("in", "o/zero", "o/Identity", 1) +
                     unary("o/side", "Neg", "o/Identity") +
                     unary("o/inner_result", "Identity", "in/Exit");
  return int_const("start", 0) + int_const("n", 3) + counting_loop("o", "start", "n", 1, 10, body);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(partition)

BOOST_AUTO_TEST_CASE(the_key_names_the_edge) {
  BOOST_TEST(transfer_key("w/Add", 0, "CPU_1") == "edge_w/Add_0_to_CPU_1");
  BOOST_TEST(transfer_key("x", kControlPort, "CPU_0") == "edge_x_control_to_CPU_0");
}

BOOST_AUTO_TEST_CASE(a_graph_without_cross_edges_is_unchanged) {
  Graph g = assigned(loop_graph(), {});
  auto parts = partitioned(g, 4);
  BOOST_REQUIRE(parts.size() == 1u);
  BOOST_TEST(parts[0].device == cpu(0));
  std::string diff;
  BOOST_TEST(parts[0].graph.equals(g, &diff), diff);
}

BOOST_AUTO_TEST_CASE(data_edges_become_send_recv_pairs_one_per_endpoint_and_device) {
  std::string text = int_const("c", 2) + unary("a", "Identity", "c") + unary("b", "Neg", "c") +
                     binary("d", "Add", "c", "c") + binary("e", "Add", "a", "d");
  Graph g = assigned(text, {{"a", 1}, {"b", 1}, {"d", 2}, {"e", 0}});
  auto parts = partitioned(g, 3);
  BOOST_REQUIRE(parts.size() == 3u);
  check_structure(parts);
  const Graph& p0 = on(parts, 0);
  const Graph& p1 = on(parts, 1);
  const Graph& p2 = on(parts, 2);
  // c goes once to CPU:1 (read by a and b) and once to CPU:2 (read twice by d)
  BOOST_TEST(count_op(p0, "_Send") == 2);
  BOOST_TEST(count_op(p1, "_Recv") == 1);
  BOOST_TEST(count_op(p2, "_Recv") == 1);
  const std::string recv = "_recv/edge_c_0_to_CPU_1";
  BOOST_TEST(input_name(p1, "a", 0) == recv);
  BOOST_TEST(input_name(p1, "b", 0) == recv);
  BOOST_TEST(input_name(p2, "d", 0) == "_recv/edge_c_0_to_CPU_2");
  BOOST_TEST(input_name(p2, "d", 1) == "_recv/edge_c_0_to_CPU_2");
  BOOST_TEST(input_name(p0, "e", 0) == "_recv/edge_a_0_to_CPU_0");
  const Node& send = find_node(p0, "_send/edge_c_0_to_CPU_1");
  BOOST_TEST(input_name(p0, send.name, 0) == "c");
  BOOST_TEST(str_attr(send, "tensor_name") == "edge_c_0_to_CPU_1");
  BOOST_TEST(str_attr(send, "recv_device") == cpu(1));
  BOOST_TEST((*send.attr<DType>("T") == DType::int32));
  BOOST_TEST(find_node(p1, recv).control_inputs.empty());  // root frame: no trigger
}

BOOST_AUTO_TEST_CASE(control_edges_cross_as_a_value_of_the_source) {
  std::string text = int_const("x", 1) + int_const("y", 2, {"^x"});
  Graph g = assigned(text, {{"y", 1}});
  auto parts = partitioned(g, 2);
  check_structure(parts);
  const Graph& p0 = on(parts, 0);
  const Graph& p1 = on(parts, 1);
  const std::string key = "edge_x_control_to_CPU_1";
  BOOST_TEST((control_names(p0, "_send/" + key + "/control") == std::vector<std::string>{"x"}));
  BOOST_TEST(input_name(p0, "_send/" + key, 0) == "_send/" + key + "/control");
  BOOST_TEST((control_names(p1, "y") == std::vector<std::string>{"_recv/" + key}));
}

BOOST_AUTO_TEST_CASE(every_device_of_a_split_loop_gets_a_control_loop_on_the_continue_signal) {
  // The loop runs on CPU:0; CPU:1 only computes a side value of each iteration.
  Graph g = assigned(loop_graph(unary("w/side", "Neg", "w/Identity")), {{"w/side", 1}});
  auto parts = partitioned(g, 2);
  check_structure(parts);
  const Graph& p0 = on(parts, 0);
  const Graph& p1 = on(parts, 1);
  // CPU:0 holds the NextIteration: a live indicator of its input is the
  // continue signal, used by its own control loop and sent to CPU:1's
  const std::string live = "_cf/w/CPU_0/live/w/NextIteration";
  BOOST_TEST(input_name(p0, "_cf/w/CPU_0/live_of/w/NextIteration", 0) == "w/Add");
  BOOST_TEST((control_names(p0, live) == std::vector<std::string>{"_cf/w/CPU_0/live_of/w/NextIteration"}));
  BOOST_TEST(find_node(p0, live).op == "Const");
  BOOST_TEST(input_name(p0, "_cf/w/CPU_0/NextIteration", 0) == live);
  BOOST_TEST(count_with_prefix(p0, "_cf/w/CPU_0/") == 6);  // start, Enter, Merge, NextIteration, indicator
  BOOST_TEST(count_with_prefix(p1, "_cf/w/CPU_1/") == 4);
  for (const Graph* p : {&p0, &p1}) {
    const std::string cl = p == &p0 ? "_cf/w/CPU_0/" : "_cf/w/CPU_1/";
    BOOST_TEST(input_name(*p, cl + "Enter", 0) == cl + "start");
    BOOST_TEST(*find_node(*p, cl + "Enter").attr<std::string>("frame_name") == "w");
    BOOST_TEST(!*find_node(*p, cl + "Enter").attr<bool>("is_constant"));
    BOOST_TEST((*find_node(*p, cl + "Enter").attr<DType>("T") == DType::boolean));
    BOOST_TEST(input_name(*p, cl + "Merge", 0) == cl + "Enter");
    BOOST_TEST(input_name(*p, cl + "Merge", 1) == cl + "NextIteration");
  }
  const std::string signal = "_recv/edge__cf/w/CPU_0/live/w/NextIteration_0_to_CPU_1";
  BOOST_TEST(input_name(p1, "_cf/w/CPU_1/NextIteration", 0) == signal);
  // the pivot is no longer needed on CPU:1: no Switch there reads it
  BOOST_TEST(!has(p1, "_recv/edge_w/LoopCond_0_to_CPU_1"));
  // every Recv of the loop is triggered by the control loop's Merge
  for (const std::string& recv : {signal, std::string("_recv/edge_w/Identity_0_to_CPU_1")})
    BOOST_TEST((control_names(p1, recv) == std::vector<std::string>{"_cf/w/CPU_1/Merge"}));
  BOOST_TEST(input_name(p1, "w/side", 0) == "_recv/edge_w/Identity_0_to_CPU_1");
  auto cf = analyze_control_flow(p1);
  BOOST_REQUIRE(cf.ok());
  // Merge, NextIteration, the two Recvs and w/side
  BOOST_TEST(cf->frames[static_cast<size_t>(cf->find_frame("w"))].nodes.size() == 5u);
}

BOOST_AUTO_TEST_CASE(the_continue_signal_reads_a_next_iteration_value_where_it_arrives) {
  Graph g = assigned(loop_graph(), {{"w/Add", 1}, {"w/step", 1}});
  auto parts = partitioned(g, 2);
  check_structure(parts);
  const Graph& p0 = on(parts, 0);
  BOOST_TEST(input_name(p0, "w/NextIteration", 0) == "_recv/edge_w/Add_0_to_CPU_0");
  // one transfer of w/Add serves both the NextIteration and its indicator
  BOOST_TEST(input_name(p0, "_cf/w/CPU_0/live_of/w/NextIteration", 0) == "_recv/edge_w/Add_0_to_CPU_0");
  BOOST_TEST((control_names(p0, "_recv/edge_w/Add_0_to_CPU_0") ==
              std::vector<std::string>{"_cf/w/CPU_0/Merge"}));
  // w/step's control input from w/Identity crosses too
  BOOST_TEST((control_names(on(parts, 1), "w/step") ==
              std::vector<std::string>{"_recv/edge_w/Identity_control_to_CPU_1"}));
}

BOOST_AUTO_TEST_CASE(next_iterations_on_two_devices_merge_their_continue_signals) {
  // A second loop variable whose Merge, Switch and NextIteration are on CPU:1.
  Graph g = assigned(two_variable_loop_graph(), {{"w/Merge_1", 1}, {"w/Switch_1", 1},
                                                 {"w/Identity_1", 1}, {"w/double", 1},
                                                 {"w/NextIteration_1", 1}, {"w/Exit_1", 1},
                                                 {"w/Enter_1", 1}});
  auto parts = partitioned(g, 2);
  check_structure(parts);
  for (int d : {0, 1}) {
    const Graph& p = on(parts, d);
    const std::string cl = "_cf/w/CPU_" + std::to_string(d) + "/";
    const Node& any = find_node(p, cl + "continue");
    BOOST_TEST(any.op == "Merge");
    BOOST_TEST(*any.attr<bool>("_tagflow_first_live"));
    BOOST_TEST(any.inputs.size() == 2u);
    BOOST_TEST(input_name(p, cl + "NextIteration", 0) == cl + "continue");
  }
}

BOOST_AUTO_TEST_CASE(an_enter_read_on_another_device_is_cloned_there) {
  // w/limit (a loop invariant on CPU:0) is also read by w/bound on CPU:1.
  Graph g = assigned(loop_graph(binary("w/bound", "Add", "w/Identity", "w/limit")), {{"w/bound", 1}});
  auto parts = partitioned(g, 2);
  check_structure(parts);
  const Graph& p0 = on(parts, 0);
  const Graph& p1 = on(parts, 1);
  const Node& clone = find_node(p1, "w/limit/_on_CPU_1");
  BOOST_TEST(clone.op == "Enter");
  BOOST_TEST(*clone.attr<bool>("is_constant"));
  BOOST_TEST(*clone.attr<std::string>("frame_name") == "w");
  BOOST_TEST(input_name(p1, "w/limit/_on_CPU_1", 0) == "_recv/edge_n_0_to_CPU_1");
  BOOST_TEST(find_node(p1, "_recv/edge_n_0_to_CPU_1").control_inputs.empty());  // root frame
  BOOST_TEST(input_name(p1, "w/bound", 1) == "w/limit/_on_CPU_1");
  BOOST_TEST(input_name(p0, "w/Less", 1) == "w/limit");
  for (const Node& n : p0.nodes()) BOOST_TEST(n.name.find("edge_w/limit") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(nested_loop_across_three_devices_stacks_control_loops) {
  // CPU:0 runs both loops' pivots; the inner body is on CPU:2; CPU:1 holds
  // only an outer-loop node.
  Graph g = assigned(nested_graph(), {{"in/Add", 2}, {"in/step", 2}, {"o/side", 1}});
  auto parts = partitioned(g, 3);
  BOOST_REQUIRE(parts.size() == 3u);
  check_structure(parts);
  const Graph& p0 = on(parts, 0);
  const Graph& p1 = on(parts, 1);
  const Graph& p2 = on(parts, 2);
  // the outer frame is on all three devices (CPU:2 through the inner loop)
  for (int d = 0; d < 3; ++d) {
    const Graph& p = on(parts, d);
    const std::string cl = "_cf/o/CPU_" + std::to_string(d) + "/";
    BOOST_TEST(input_name(p, cl + "Enter", 0) == cl + "start");
    BOOST_TEST(has(p, cl + "NextIteration"));
  }
  // the inner frame is on CPU:0 and CPU:2: control loops stacked on the
  // outer ones, none on CPU:1
  BOOST_TEST(input_name(p2, "_cf/in/CPU_2/Enter", 0) == "_cf/o/CPU_2/Merge");
  BOOST_TEST(input_name(p0, "_cf/in/CPU_0/Enter", 0) == "_cf/o/CPU_0/Merge");
  BOOST_TEST(count_with_prefix(p1, "_cf/in/") == 0);
  BOOST_TEST(input_name(p2, "_cf/in/CPU_2/NextIteration", 0) ==
             "_recv/edge__cf/in/CPU_0/live/in/NextIteration_0_to_CPU_2");
  BOOST_TEST((control_names(p2, "_recv/edge_in/Identity_0_to_CPU_2") ==
              std::vector<std::string>{"_cf/in/CPU_2/Merge"}));
  BOOST_TEST((control_names(p2, "_recv/edge__cf/o/CPU_0/live/o/NextIteration_0_to_CPU_2") ==
              std::vector<std::string>{"_cf/o/CPU_2/Merge"}));
  BOOST_TEST(input_name(p0, "in/NextIteration", 0) == "_recv/edge_in/Add_0_to_CPU_0");
  auto cf = analyze_control_flow(p2);
  BOOST_REQUIRE(cf.ok());
  FrameId in = cf->find_frame("in");
  BOOST_REQUIRE(in > 0);
  BOOST_TEST(cf->frames[static_cast<size_t>(cf->frames[static_cast<size_t>(in)].parent)].name == "o");
}

BOOST_AUTO_TEST_CASE(random_placements_partition_into_consistent_graphs) {
  for (int devices = 2; devices <= 4; ++devices)
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      for (const std::string& text : {nested_graph(), loop_graph(binary("w/b", "Add", "w/Identity", "w/limit"))}) {
        Graph g = validated(text);
        PlacementOptions o;
        o.strategy = PlacementOptions::Strategy::random;
        o.seed = seed;
        BOOST_REQUIRE(place(&g, local_devices(devices), o).ok());
        auto parts = partition_graph(g, local_devices(devices));
        BOOST_REQUIRE_MESSAGE(parts.ok(), parts.status().to_string());
        check_structure(*parts);
        int nodes = 0;
        for (const Partition& p : *parts)
          for (const Node& n : p.graph.nodes()) nodes += n.name.rfind("_", 0) != 0 && n.name.find("/_on_") == std::string::npos;
        BOOST_TEST(nodes == g.num_nodes());  // every original node is in one partition
      }
    }
}

BOOST_AUTO_TEST_CASE(errors_name_the_node_or_frame) {
  Graph g = assigned(loop_graph(), {{"w/NextIteration", 1}});
  std::string e = partition_error(g, 2);
  BOOST_TEST(contains(e, "NextIteration 'w/NextIteration' is on device '" + cpu(1) +
                             "' but its consumer 'w/Merge' is on device '" + cpu(0) + "'"), e);

  e = partition_error(assigned(int_const("c", 1), {{"c", 3}}), 2);
  BOOST_TEST(contains(e, "node 'c' is on device '" + cpu(3) + "', which is not one of the devices"), e);
}

BOOST_AUTO_TEST_CASE(a_frame_without_next_iteration_splits_with_a_control_loop_of_one_iteration) {
  std::string text = int_const("c", 1) + enter("f/Enter", "c", "f") +
                     unary("f/Id", "Identity", "f/Enter") + unary("f/Exit", "Exit", "f/Id");
  auto parts = partitioned(assigned(text, {{"f/Id", 1}}), 2);
  check_structure(parts);
  for (int d : {0, 1}) {
    const Graph& p = on(parts, d);
    const std::string cl = "_cf/f/CPU_" + std::to_string(d) + "/";
    BOOST_TEST(find_node(p, cl + "Merge").inputs.size() == 1u);
    BOOST_TEST(!has(p, cl + "NextIteration"));
  }
}

BOOST_AUTO_TEST_CASE(a_fetched_recv_keeps_its_user_send) {
  Graph g = load_corpus("grappler_vsched_send_recv.pbtxt");
  BOOST_REQUIRE(validate(g).ok());
  auto step = make_step_graph(g, {}, {"Recv"}, {});
  BOOST_REQUIRE_MESSAGE(step.ok(), step.status().to_string());
  BOOST_TEST(has(step->graph, "Send"));
  BOOST_TEST(has(step->graph, "Const"));
}

BOOST_AUTO_TEST_SUITE_END()
