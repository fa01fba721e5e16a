// Limits for untrusted graphs and steps: the per-step memory limit, frame
// nesting depth, node count, iterations from the configuration, and the
// ranges of the session options.
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <fstream>

#include "executor_graphs.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string int_vector_const(const std::string& name, int value, const std::vector<std::string>& control = {}) {
  return node(name, "Const", control,
              type_attr("dtype", "DT_INT32") +
                  " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } } "
                  "int_val: " + std::to_string(value) + " } } }");
}

// big = Fill(dims, 1.0): as many float32s as `dims` says; n = Size(big).
std::string fill_graph() {
  return node("dims", "Placeholder", {}, type_attr("dtype", "DT_INT32")) + float_const("one", 1) +
         node("big", "Fill", {"dims", "one"}, type_attr("T", "DT_FLOAT") + " " + type_attr("index_type", "DT_INT32")) +
         node("n", "Size", {"big"}, type_attr("T", "DT_FLOAT") + " " + type_attr("out_type", "DT_INT32"));
}

// acc = [1.0]; 22 times: acc = concat(acc, acc) — 16 MiB at the end.
std::string growing_loop() {
  std::string body =
      enter("w/acc_enter", "acc0", "w", false, 10, "DT_FLOAT") +
      merge("w/acc_merge", {"w/acc_enter", "w/acc_next"}, "DT_FLOAT") +
      binary("w/acc_switch", "Switch", "w/acc_merge", "w/LoopCond", "DT_FLOAT") +
      unary("w/acc_identity", "Identity", "w/acc_switch:1", "DT_FLOAT") + int_const("w/axis", 0, {"^w/Identity"}) +
      node("w/grow", "ConcatV2", {"w/acc_identity", "w/acc_identity", "w/axis"},
           type_attr("T", "DT_FLOAT") + " " + type_attr("Tidx", "DT_INT32") + " attr { key: \"N\" value { i: 2 } }") +
      unary("w/acc_next", "NextIteration", "w/grow", "DT_FLOAT") + unary("w/acc_exit", "Exit", "w/acc_switch", "DT_FLOAT");
  std::string acc0 = node("acc0", "Const", {},
                          type_attr("dtype", "DT_FLOAT") +
                              " attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } } "
                              "float_val: 1 } } }");
  return acc0 + int_const("start", 0) + int_const("n", 22) + counting_loop("w", "start", "n", 1, 10, body);
}

// 100 iterations, each filling 64 KiB and summing it: 6.4 MiB allocated in
// all, at most 10 iterations' (640 KiB) alive at once.
std::string churning_loop() {
  std::string body = int_vector_const("w/dims", 16384, {"^w/Identity"}) + float_const("w/one", 1, {"^w/Identity"}) +
                     node("w/fill", "Fill", {"w/dims", "w/one"},
                          type_attr("T", "DT_FLOAT") + " " + type_attr("index_type", "DT_INT32")) +
                     int_const("w/axis", 0, {"^w/Identity"}) +
                     node("w/sum", "Sum", {"w/fill", "w/axis"}, type_attr("T", "DT_FLOAT") + " " + type_attr("Tidx", "DT_INT32")) +
                     node("w/after", "Identity", {"w/Add", "^w/sum"}, type_attr("T", "DT_INT32"));
  return int_const("start", 0) + int_const("n", 100) + counting_loop("w", "start", "n", 1, 10, body, "w/after");
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/tagflow_limits_test_" + name;
  std::ofstream(path) << text;
  return path;
}

std::string create_error(const graph::Graph& g, const actors::SessionOptions& o) {
  auto s = actors::Session::create(g, o);
  return s.ok() ? std::string("<created>") : s.status().to_string();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(limits)

BOOST_AUTO_TEST_CASE(a_step_over_its_memory_limit_ends_naming_node_and_tag_and_the_session_goes_on) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      actors::SessionOptions o;
      o.memory_limit = kMiB;
      auto s = make_session(parse(fill_graph()), m, o);
      auto r = s->run({{"dims", Tensor::vector<int32_t>({1 << 20})}}, {"n"});  // 4 MiB
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST((r.status().code() == ops::Error::resource_exhausted));
      BOOST_TEST(r.status().message() ==
                     "Fill 'big' at tag / on partition CPU:0: a tensor of 4.0 MiB with 0 bytes already held "
                     "by the step's tensors is over the step's memory limit of 1.0 MiB (--memory-limit, "
                     "[tagflow] memory-limit)",
                 r.status().message());
      BOOST_TEST(no_step_actor_left(*s));
      auto small = must_run(*s, {{"dims", Tensor::vector<int32_t>({1000})}}, {"n"});
      BOOST_TEST(small[0].scalar_value<int32_t>() == 1000);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_loop_whose_tensors_grow_past_the_limit_fails_in_the_iteration_that_crosses_it) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      actors::SessionOptions o;
      o.memory_limit = kMiB;
      auto s = make_session(parse(growing_loop()), m, o);
      auto r = s->run({}, {"w/acc_exit"});
      BOOST_REQUIRE(!r.ok());
      const std::string& msg = r.status().message();
      BOOST_TEST((r.status().code() == ops::Error::resource_exhausted));
      BOOST_TEST(contains(msg, "ConcatV2 'w/grow' at tag w/1"), msg);  // iterations 16 to 18
      BOOST_TEST(contains(msg, "over the step's memory limit of 1.0 MiB"), msg);
      BOOST_TEST(no_step_actor_left(*s));
      BOOST_TEST(must_run(*s, {}, {"n"})[0].scalar_value<int32_t>() == 22);
      // Fewer iterations fit.
      auto fits = must_run(*s, {{"n", Tensor::scalar<int32_t>(10)}}, {"w/acc_exit"});
      BOOST_TEST(fits[0].num_elements() == 1024);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_limit_counts_the_tensors_held_at_once_not_all_ever_allocated) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      actors::SessionOptions o;
      o.memory_limit = kMiB;
      auto s = make_session(parse(churning_loop()), m, o);
      BOOST_TEST(must_run(*s, {}, {"w/Exit"})[0].scalar_value<int32_t>() == 100);
    }
  }
}

BOOST_AUTO_TEST_CASE(the_memory_limit_holds_for_a_step_split_over_devices) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      actors::SessionOptions o;
      o.memory_limit = kMiB;
      o.num_devices = 3;
      o.placement.strategy = graph::PlacementOptions::Strategy::round_robin;
      auto s = make_session(parse(growing_loop()), m, o);
      auto r = s->run({}, {"w/acc_exit"});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(contains(r.status().message(), "over the step's memory limit of 1.0 MiB"), r.status().message());
      BOOST_TEST(no_step_actor_left(*s));
      BOOST_TEST(must_run(*s, {{"n", Tensor::scalar<int32_t>(4)}}, {"w/acc_exit"})[0].num_elements() == 16);
    }
  }
}

BOOST_AUTO_TEST_CASE(frames_nested_deeper_than_the_limit_are_refused_naming_frame_and_option) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      actors::SessionOptions o;
      o.max_frame_depth = 2;
      auto s = make_session(parse(three_nested_loops()), m, o);
      auto r = s->run({}, {"a/s_exit"});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST((r.status().code() == ops::Error::resource_exhausted));
      BOOST_TEST(contains(r.status().message(), "is nested 3 frames deep, over the limit of 2 "
                                                "(--max-frame-depth, [tagflow] max-frame-depth)"),
                 r.status().message());
      o.max_frame_depth = 3;
      auto deep_enough = make_session(parse(three_nested_loops()), m, o);
      must_run(*deep_enough, {}, {"a/s_exit"});
    }
  }
}

BOOST_AUTO_TEST_CASE(a_graph_with_more_nodes_than_the_limit_is_refused) {
  actors::SessionOptions o;
  o.max_nodes = 5;
  std::string e = create_error(parse(fill_graph()), o);
  BOOST_TEST(e == "<created>", e);  // 4 nodes
  e = create_error(parse(growing_loop()), o);
  BOOST_TEST(contains(e, "resource_exhausted: the graph has 22 nodes, over the limit of 5 (--max-nodes, "
                         "[tagflow] max-nodes)"), e);
}

BOOST_AUTO_TEST_CASE(limits_come_from_the_configuration_when_the_options_leave_them_unset) {
  const std::string ini = write_file("limits.ini", "[tagflow]\nmax-iterations=7\nmemory-limit=\"2M\"\nmax-nodes=50\n");
  actors::SessionOptions o;
  o.config_file = ini;
  auto resolved = actors::Session::resolve_options(o);
  BOOST_REQUIRE_MESSAGE(resolved.ok(), resolved.status().to_string());
  BOOST_TEST(*resolved->max_iterations == 7);
  BOOST_TEST(*resolved->memory_limit == 2 * kMiB);
  BOOST_TEST(*resolved->max_nodes == 50);
  BOOST_TEST(*resolved->max_frame_depth == actors::limits::kDefaultMaxFrameDepth);
  // Options win over the configuration.
  o.max_iterations = 0;
  o.memory_limit = 3 * kMiB;
  resolved = actors::Session::resolve_options(o);
  BOOST_REQUIRE(resolved.ok());
  BOOST_TEST(*resolved->max_iterations == 0);
  BOOST_TEST(*resolved->memory_limit == 3 * kMiB);
  // The configured iteration limit ends a loop.
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      actors::SessionOptions c;
      c.config_file = ini;
      auto s = make_session(parse(int_const("start", 0) + int_const("n", 100) + counting_loop("w", "start", "n", 1)), m, c);
      auto r = s->run({}, {"w/Exit"});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(contains(r.status().message(), "exceeded the limit of 7 iterations (--max-iterations, [tagflow] "
                                                "max-iterations)"),
                 r.status().message());
    }
  }
  std::remove(ini.c_str());
}

BOOST_AUTO_TEST_CASE(options_outside_their_range_are_errors_naming_the_range) {
  auto error = [](actors::SessionOptions o) {
    auto r = actors::Session::resolve_options(o);
    return r.ok() ? std::string("<ok>") : r.status().to_string();
  };
  actors::SessionOptions o;
  o.threads = 100000;
  BOOST_TEST(error(o) == "invalid_argument: --threads 100000 is outside the allowed range (0 to 256); 0: one per core");
  o = {};
  o.num_devices = 2147483647;
  BOOST_TEST(error(o) == "invalid_argument: --devices 2147483647 is outside the allowed range (1 to 1024)");
  o = {};
  o.timeout = std::chrono::hours(24 * 400);
  BOOST_TEST(contains(error(o), "is outside the allowed range (0 to 366 days)"), error(o));
  o = {};
  o.memory_limit = 1000;
  BOOST_TEST(error(o) == "invalid_argument: --memory-limit 1000 bytes is outside the allowed range (1.0 MiB to 1.0 PiB)");
  o = {};
  o.max_nodes = 0;
  BOOST_TEST(error(o) == "invalid_argument: --max-nodes 0 is outside the allowed range (1 to 1073741824)");
  o = {};
  o.max_iterations = -1;
  BOOST_TEST(contains(error(o), "--max-iterations -1 is outside the allowed range (at least 0)"), error(o));
  auto t = actors::timeout_from_ms(INT64_MAX);
  BOOST_REQUIRE(!t.ok());
  BOOST_TEST(t.status().message() == "--timeout 9223372036854775807 ms is outside the allowed range (0 to "
                                     "31622400000 ms: 366 days)");
  BOOST_TEST(actors::timeout_from_ms(1000).ok());
}

BOOST_AUTO_TEST_SUITE_END()
