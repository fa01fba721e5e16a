#include <boost/test/unit_test.hpp>

#include "graph/device.hpp"
#include "graph/placement.hpp"
#include "graph_test_util.hpp"
#include "placed_graphs.hpp"

using namespace tagflow;
using namespace tagflow::graph;
using namespace tagflow::graph::testing;

namespace {

PlacementOptions round_robin() {
  PlacementOptions o;
  o.strategy = PlacementOptions::Strategy::round_robin;
  return o;
}

PlacementOptions random_seed(uint64_t seed) {
  PlacementOptions o;
  o.strategy = PlacementOptions::Strategy::random;
  o.seed = seed;
  return o;
}

// Every placement strategy worth checking a rule under.
std::vector<PlacementOptions> strategies() {
  std::vector<PlacementOptions> out = {PlacementOptions{}, round_robin()};
  for (uint64_t seed = 1; seed <= 20; ++seed) out.push_back(random_seed(seed));
  return out;
}

Graph placed(const std::string& text, int devices, const PlacementOptions& o) {
  Graph g = validated(text);
  Status s = place(&g, local_devices(devices), o);
  if (!s.ok()) throw std::runtime_error(s.to_string());
  return g;
}

std::string place_error(const std::string& text, int devices, const PlacementOptions& o = {}) {
  Graph g = validated(text);
  Status s = place(&g, local_devices(devices), o);
  return s.ok() ? "<no error>" : s.to_string();
}

const std::string kCpu(int i) { return local_devices(i + 1)[static_cast<size_t>(i)]; }

std::string chain(int n) {
  std::string text = int_const("c0", 1);
  for (int i = 1; i < n; ++i)
    text += unary("c" + std::to_string(i), "Identity", "c" + std::to_string(i - 1));
  return text;
}

std::string loop_graph() {
  return int_const("start", 0) + int_const("n", 5) + counting_loop("w", "start", "n", 1);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(placement)

BOOST_AUTO_TEST_CASE(place_options_parse) {
  BOOST_TEST((parse_place_option("default")->strategy == PlacementOptions::Strategy::by_default));
  BOOST_TEST((parse_place_option("round-robin")->strategy == PlacementOptions::Strategy::round_robin));
  auto r = parse_place_option("random:42");
  BOOST_REQUIRE(r.ok());
  BOOST_TEST((r->strategy == PlacementOptions::Strategy::random));
  BOOST_TEST(r->seed == 42u);
  for (const char* bad : {"random", "random:", "random:x", "spread", ""}) {
    auto e = parse_place_option(bad);
    BOOST_REQUIRE(!e.ok());
    BOOST_TEST(contains(e.status().message(), std::string("placement '") + bad + "'"));
  }
}

BOOST_AUTO_TEST_CASE(default_placement_puts_everything_on_the_first_device) {
  Graph g = placed(chain(5) + loop_graph(), 4, {});
  BOOST_TEST((devices_used(g) == std::set<std::string>{kCpu(0)}));
}

BOOST_AUTO_TEST_CASE(round_robin_spreads_and_random_is_deterministic) {
  Graph g = placed(chain(8), 4, round_robin());
  BOOST_TEST(devices_used(g).size() == 4u);
  BOOST_TEST(device_of(g, "c0") == kCpu(0));
  BOOST_TEST(device_of(g, "c5") == kCpu(1));
  Graph a = placed(chain(30), 4, random_seed(7));
  Graph b = placed(chain(30), 4, random_seed(7));
  Graph c = placed(chain(30), 4, random_seed(8));
  BOOST_TEST(a.equals(b));
  BOOST_TEST(!a.equals(c));
  BOOST_TEST(devices_used(a).size() > 1u);
}

BOOST_AUTO_TEST_CASE(explicit_devices_in_every_form_are_honoured) {
  std::string text = node("a", "Const", {}, type_attr("dtype", "DT_INT32") +
                          " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } } " +
                          with_device("/cpu:2")) +
                     node("b", "Identity", {"a"}, type_attr("T", "DT_INT32") + with_device("/device:CPU:3")) +
                     node("c", "Identity", {"b"}, type_attr("T", "DT_INT32") +
                          with_device("/job:localhost/replica:0/task:0/device:CPU:1")) +
                     node("d", "Identity", {"c"}, type_attr("T", "DT_INT32") +
                          with_device("/job:localhost/replica:0/task:0"));
  for (const PlacementOptions& o : strategies()) {
    Graph g = placed(text, 4, o);
    BOOST_TEST(device_of(g, "a") == kCpu(2));
    BOOST_TEST(device_of(g, "b") == kCpu(3));
    BOOST_TEST(device_of(g, "c") == kCpu(1));
    BOOST_TEST(contains(device_of(g, "d"), "/job:localhost/replica:0/task:0/device:CPU:"));
  }
}

BOOST_AUTO_TEST_CASE(class_colocation_and_a_missing_target_is_ignored) {
  auto loc = [](const std::string& target) {
    return "attr { key: \"_class\" value { list { s: \"loc:@" + target + "\" } } }";
  };
  std::string text = chain(6) +
                     node("x", "Identity", {"c0"}, type_attr("T", "DT_INT32") + loc("c4")) +
                     node("y", "Identity", {"c0"}, type_attr("T", "DT_INT32") + loc("pruned_away"));
  for (const PlacementOptions& o : strategies()) {
    Graph g = placed(text, 4, o);
    BOOST_TEST(device_of(g, "x") == device_of(g, "c4"));
  }
}

BOOST_AUTO_TEST_CASE(ref_and_resource_consumers_live_with_their_variable) {
  std::string shape = " attr { key: \"shape\" value { shape {} } }";
  std::string text =
      node("v", "VariableV2", {}, type_attr("dtype", "DT_INT32") + shape) + int_const("one", 1) +
      node("init", "Assign", {"v", "one"}, type_attr("T", "DT_INT32")) +
      node("bump", "AssignAdd", {"v", "one"}, type_attr("T", "DT_INT32")) +
      node("h", "VarHandleOp", {}, type_attr("dtype", "DT_INT32") + shape) +
      node("write", "AssignVariableOp", {"h", "one"}, type_attr("dtype", "DT_INT32")) +
      node("read", "ReadVariableOp", {"h", "^write"}, type_attr("dtype", "DT_INT32")) + chain(6);
  for (const PlacementOptions& o : strategies()) {
    Graph g = placed(text, 4, o);
    BOOST_TEST(device_of(g, "init") == device_of(g, "v"));
    BOOST_TEST(device_of(g, "bump") == device_of(g, "v"));
    BOOST_TEST(device_of(g, "write") == device_of(g, "h"));
    BOOST_TEST(device_of(g, "read") == device_of(g, "h"));
  }
}

BOOST_AUTO_TEST_CASE(control_flow_colocation_as_tensorflow_does_it) {
  bool spread = false;
  for (const PlacementOptions& o : strategies()) {
    Graph g = placed(loop_graph(), 4, o);
    BOOST_TEST(device_of(g, "w/Switch") == device_of(g, "w/Merge"));    // Switch with its data input
    BOOST_TEST(device_of(g, "w/Exit") == device_of(g, "w/Switch"));     // Exit with its input
    BOOST_TEST(device_of(g, "w/NextIteration") == device_of(g, "w/Merge"));  // with its consumer
    BOOST_TEST(device_of(g, "w/Enter") == device_of(g, "w/Merge"));     // with its first consumer
    BOOST_TEST(device_of(g, "w/limit") == device_of(g, "w/Less"));
    spread |= device_of(g, "w/Add") != device_of(g, "w/Merge") ||
              device_of(g, "w/LoopCond") != device_of(g, "w/Merge");
  }
  BOOST_TEST(spread);  // the loop is not glued into one group
}

BOOST_AUTO_TEST_CASE(conflicting_explicit_devices_are_an_error_naming_both) {
  std::string text = node("v", "VariableV2", {}, type_attr("dtype", "DT_INT32") +
                          " attr { key: \"shape\" value { shape {} } } " + with_device("/cpu:0")) +
                     int_const("one", 1) +
                     node("init", "Assign", {"v", "one"}, type_attr("T", "DT_INT32") + with_device("/device:CPU:1"));
  std::string e = place_error(text, 2);
  BOOST_TEST(contains(e, "node 'v' is on device '/cpu:0' and node 'init' on device '/device:CPU:1'"), e);
}

BOOST_AUTO_TEST_CASE(soft_placement_and_impossible_constraints) {
  std::string gpu = node("g", "Identity", {"c0"}, type_attr("T", "DT_INT32") + with_device("/device:GPU:0"));
  Graph g = placed(chain(2) + gpu, 2, round_robin());
  BOOST_TEST(contains(device_of(g, "g"), "/device:CPU:"));
  PlacementOptions hard;
  hard.soft = false;
  std::string e = place_error(chain(2) + gpu, 2, hard);
  BOOST_TEST(contains(e, "node 'g' requests device '/device:GPU:0'"), e);

  std::string cpu7 = node("x", "Identity", {"c0"}, type_attr("T", "DT_INT32") + with_device("/device:CPU:7"));
  e = place_error(chain(2) + cpu7, 4);
  BOOST_TEST(contains(e, "node 'x' requests device '/device:CPU:7'"), e);
  BOOST_TEST(contains(e, kCpu(0) + ", " + kCpu(1) + ", " + kCpu(2) + ", " + kCpu(3)), e);

  std::string job = node("x", "Identity", {"c0"}, type_attr("T", "DT_INT32") + with_device("/job:ps/device:GPU:0"));
  e = place_error(chain(2) + job, 2);
  BOOST_TEST(contains(e, "node 'x' requests device '/job:ps/device:GPU:0'"), e);

  std::string bad = node("x", "Identity", {"c0"}, type_attr("T", "DT_INT32") + with_device("/gpu:zero"));
  e = place_error(chain(2) + bad, 2);
  BOOST_TEST(contains(e, "node 'x': device name '/gpu:zero'"), e);
}

BOOST_AUTO_TEST_SUITE_END()
