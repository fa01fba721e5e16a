// The shortcuts past the actors (docs/protocol.md): which frames run their
// iterations themselves, steps on the caller's thread, and that neither
// loses what the actors give — isolation between concurrent callers, the
// step's resources and limits, and an abort reaching a busy loop.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <thread>

#include "actors/executable.hpp"
#include "actors/execution_plan.hpp"
#include "executor_graphs.hpp"
#include "graph/validate.hpp"
#include "ops/resource.hpp"
#include "session_test_util.hpp"
#include "trace/sink.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

namespace {

std::shared_ptr<const actors::Executable> build(const std::string& text) {
  graph::Graph g = parse(text);
  ops::Status s = graph::validate(g);
  if (!s.ok()) throw std::runtime_error(s.to_string());
  auto exec = actors::Executable::build(std::move(g));
  if (!exec.ok()) throw std::runtime_error(exec.status().to_string());
  return std::move(exec).value();
}

bool runs_iterations(const actors::Executable& exec, const std::string& frame) {
  for (int f = 0; f < exec.num_frames(); ++f)
    if (exec.frame(f).name == frame) return exec.frame(f).runs_iterations;
  throw std::runtime_error("no frame " + frame);
}

std::string matrix(const std::string& name, float v, const std::vector<std::string>& control = {}) {
  std::string dims =
      "attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } int_val: 8 "
      "int_val: 8 } } }";
  return node(name + "/dims", "Const", control, type_attr("dtype", "DT_INT32") + " " + dims) +
         float_const(name + "/v", v, control) +
         node(name, "Fill", {name + "/dims", name + "/v"},
              type_attr("T", "DT_FLOAT") + " " + type_attr("index_type", "DT_INT32"));
}

// A loop with a MatMul in its body: of the loop variable m (each product
// waits for the one before) or of a loop invariant (every iteration's
// product is independent of the others).
std::string matmul_loop(bool carried) {
  std::string body = enter("w/m_enter", "m0", "w", false, 10, "DT_FLOAT") + enter("w/k", "k", "w", true, 10, "DT_FLOAT") +
                     merge("w/m_merge", {"w/m_enter", "w/m_next"}, "DT_FLOAT") +
                     binary("w/m_switch", "Switch", "w/m_merge", "w/LoopCond", "DT_FLOAT") +
                     unary("w/m_identity", "Identity", "w/m_switch:1", "DT_FLOAT") +
                     node("w/mm", "MatMul", {carried ? "w/m_identity" : "w/k", "w/k"}, type_attr("T", "DT_FLOAT")) +
                     binary("w/m_sum", "Add", "w/m_identity", "w/mm", "DT_FLOAT") +
                     unary("w/m_next", "NextIteration", carried ? "w/mm" : "w/m_sum", "DT_FLOAT") +
                     unary("w/m_exit", "Exit", "w/m_switch", "DT_FLOAT");
  return int_const("start", 0) + int_const("n", 3) + matrix("m0", 1) + matrix("k", 0.5f) +
         counting_loop("w", "start", "n", 1, 10, body);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(shortcuts)

BOOST_AUTO_TEST_CASE(cheap_frames_and_frames_whose_expensive_nodes_wait_on_themselves_run_their_iterations) {
  auto counting = build(int_const("start", 0) + int_const("n", 3) + counting_loop("w", "start", "n", 1));
  BOOST_TEST(runs_iterations(*counting, "w"));
  // An outer loop spawns an inner instance per iteration: iteration actors.
  auto nested = build(nested_loops());
  BOOST_TEST(!runs_iterations(*nested, "o"));
  BOOST_TEST(runs_iterations(*nested, "o/in"));
  // m = m k: one product at a time, whoever runs them.
  BOOST_TEST(runs_iterations(*build(matmul_loop(true)), "w"));
  // k k in every iteration: the products may overlap, on several cores.
  BOOST_TEST(!runs_iterations(*build(matmul_loop(false)), "w"));
}

// The execution plan's decision table (actors/execution_plan.hpp), row by
// row: each condition turns its shortcut off on its own, and no_shortcuts
// turns off all three.
BOOST_AUTO_TEST_CASE(the_execution_plan_takes_each_shortcut_exactly_when_its_table_says) {
  using actors::ExecutionPolicy;
  auto plan = [](std::vector<std::shared_ptr<const actors::Executable>> execs, bool remote, ExecutionPolicy p) {
    return actors::plan_execution(execs, remote, p);
  };
  const auto small = build(int_const("a", 2) + int_const("b", 3) + binary("s", "Add", "a", "b"));
  const auto two_matmuls = build(matrix("m", 1) + matrix("k", 2) + node("p", "MatMul", {"m", "k"}, type_attr("T", "DT_FLOAT")) +
                                 node("q", "MatMul", {"k", "m"}, type_attr("T", "DT_FLOAT")));
  const auto loop = build(int_const("start", 0) + int_const("n", 3) + counting_loop("w", "start", "n", 1));
  const auto nested = build(nested_loops());
  const ExecutionPolicy plain;
  // the caller's thread: one local partition without frames, transfers,
  // blocking kernels or a second expensive node, no events, determinism or timeout
  BOOST_TEST(plan({small}, false, plain).on_callers_thread);
  for (int flip = 0; flip < 4; ++flip) {
    ExecutionPolicy p;
    p.shortcuts = flip != 0;
    p.events = flip == 1;
    p.deterministic = flip == 2;
    p.timeout = flip == 3;
    BOOST_TEST(!plan({small}, false, p).on_callers_thread, "flip " << flip);
  }
  BOOST_TEST(!plan({small}, true, plain).on_callers_thread);
  BOOST_TEST(!plan({small, small}, false, plain).on_callers_thread);
  BOOST_TEST(!plan({two_matmuls}, false, plain).on_callers_thread);
  BOOST_TEST(!plan({loop}, false, plain).on_callers_thread);
  // a partition drives its root iteration when it has no loop
  BOOST_TEST(plan({two_matmuls}, false, plain).partitions[0].root_inline);
  BOOST_TEST(!plan({loop}, false, plain).partitions[0].root_inline);
  // a frame drives its iterations where its layout allows
  const actors::PartitionPlan n = actors::plan_partition(*nested, true);
  for (int f = 0; f < nested->num_frames(); ++f)
    BOOST_TEST(n.frame_runs_iterations[static_cast<size_t>(f)] == nested->frame(f).runs_iterations);
  BOOST_TEST(runs_iterations(*nested, "o/in"));
  // without shortcuts: none of the three
  ExecutionPolicy off;
  off.shortcuts = false;
  for (const auto& exec : {small, two_matmuls, loop, nested}) {
    const actors::ExecutionPlan p = plan({exec}, false, off);
    BOOST_TEST(!p.on_callers_thread);
    BOOST_TEST(!p.partitions[0].root_inline);
    for (bool b : p.partitions[0].frame_runs_iterations) BOOST_TEST(!b);
  }
}

// no_shortcuts reaches a graph without loops too: its root frame runs in a
// frame actor (which takes the step's messages), not inline in the
// partition.
BOOST_AUTO_TEST_CASE(without_shortcuts_a_graph_without_loops_runs_its_root_frame_in_a_frame_actor) {
  for (bool with_shortcuts : {true, false}) {
    BOOST_TEST_CONTEXT((with_shortcuts ? "shortcuts" : "no shortcuts")) {
      trace::MemorySink sink;
      actors::SessionOptions o;
      o.events = &sink;
      o.no_shortcuts = !with_shortcuts;
      o.num_devices = 2;
      o.placement.strategy = graph::PlacementOptions::Strategy::round_robin;
      auto s = make_session(parse(int_const("a", 2) + int_const("b", 3) + binary("s", "Add", "a", "b")),
                            {"2 threads", false, 2}, o);
      BOOST_TEST(must_run(*s, {}, {"s"})[0].scalar_value<int32_t>() == 5);
      int frame_takes = 0;
      const trace::Trace t = sink.trace();
      for (const trace::Event& e : t.events())
        frame_takes += e.kind == trace::Kind::message_taken && e.to.role == trace::Role::frame;
      BOOST_TEST((frame_takes > 0) == !with_shortcuts, frame_takes << " messages taken by frame actors");
    }
  }
}

BOOST_AUTO_TEST_CASE(matmul_loops_give_the_same_values_with_and_without_iteration_actors) {
  for (bool carried : {true, false}) {
    std::vector<Tensor> want;
    for (const Mode& m : modes()) {
      BOOST_TEST_CONTEXT(m.name << (carried ? ", carried" : ", invariant")) {
        auto s = make_session(parse(matmul_loop(carried)), m);
        auto out = must_run(*s, {}, {"w/m_exit", "w/Exit"});
        if (want.empty()) want = out;
        BOOST_TEST(out[0].equals(want[0]), out[0].debug_string(8));
        BOOST_TEST(out[1].scalar_value<int32_t>() == 3);
      }
    }
    // m0 = 1 everywhere, k = 0.5: m k sums 8 halves, 4 each step.
    BOOST_TEST(want[0].data<float>()[0] == (carried ? 64.0f : 1.0f + 3 * 2.0f));
  }
}

// Callers running the same small step at once each run it on their own
// thread with a state of their own: every one gets its own feed's result.
BOOST_AUTO_TEST_CASE(concurrent_callers_of_a_step_on_their_threads_get_their_own_values) {
  std::string text = node("x", "Placeholder", {}, type_attr("dtype", "DT_INT32")) + int_const("two", 2) +
                     int_const("one", 1) + binary("twice", "Mul", "x", "two") + binary("y", "Add", "twice", "one");
  for (const Mode& m : modes()) {
    if (m.deterministic) continue;  // one caller at a time
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(text), m);
      std::atomic<int> wrong{0}, failed{0};
      std::vector<std::thread> callers;
      for (int c = 0; c < 4; ++c)
        callers.emplace_back([&, c] {
          for (int i = 0; i < 2000; ++i) {
            const int x = c * 100000 + i;
            auto r = s->run({{"x", Tensor::scalar<int32_t>(x)}}, {"y"});
            if (!r.ok()) ++failed;
            else if (r->at(0).scalar_value<int32_t>() != 2 * x + 1) ++wrong;
          }
        });
      for (std::thread& t : callers) t.join();
      BOOST_TEST(failed.load() == 0);
      BOOST_TEST(wrong.load() == 0);
    }
  }
}

// A step without control flow keeps what a step through the actors has:
// its stacks end with it, its tensors count against the memory limit, and
// a failed step leaves the session usable.
BOOST_AUTO_TEST_CASE(a_step_on_the_callers_thread_ends_its_stacks_and_keeps_its_memory_limit) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto stacks = make_session(parse(stack_graph()), m);
      auto out = must_run(*stacks, {}, {"pop_1", "pop_3"});
      BOOST_TEST(out[0].scalar_value<int32_t>() == 3);
      BOOST_TEST(out[1].scalar_value<int32_t>() == 1);
      auto resources = stacks->resources("/job:localhost/replica:0/task:0/device:CPU:0");
      BOOST_REQUIRE(resources != nullptr);
      BOOST_TEST(resources->num_stacks() == 0u);

      actors::SessionOptions o;
      o.memory_limit = int64_t{1} << 20;
      std::string big = node("dims", "Const", {},
                             type_attr("dtype", "DT_INT32") +
                                 " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { "
                                 "size: 1 } } int_val: 1000000 } } }") +
                        float_const("v", 1) +
                        node("big", "Fill", {"dims", "v"},
                             type_attr("T", "DT_FLOAT") + " " + type_attr("index_type", "DT_INT32")) +
                        float_const("small", 2);
      auto s = make_session(parse(big), m, o);
      auto r = s->run({}, {"big"});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(r.status().code() == ops::Error::resource_exhausted);
      BOOST_TEST(r.status().message().find("'big'") != std::string::npos, r.status().message());
      BOOST_TEST(must_run(*s, {}, {"small"})[0].scalar_value<float>() == 2.0f);
    }
  }
}

// A loop that never ends, in a frame that runs its iterations, on one
// device; an error on the other device ends the step. The abort reaches the
// loop's frame between its turns of 256 iterations.
BOOST_AUTO_TEST_CASE(an_error_elsewhere_ends_a_step_whose_loop_runs_in_its_frame) {
  std::string text = int_const("start", 0) + int_const("n", 1) + counting_loop("w", "start", "n", 0) +
                     int_const("one", 1) + int_const("zero", 0) + binary("bad", "FloorDiv", "one", "zero");
  graph::Graph g = parse(text);
  for (graph::NodeId id = 0; id < g.num_nodes(); ++id)
    g.mutable_node(id).device = "/job:localhost/replica:0/task:0/device:CPU:0";
  for (const char* name : {"one", "zero", "bad"})
    g.mutable_node(g.find(name)).device = "/job:localhost/replica:0/task:0/device:CPU:1";
  for (const Mode& m : modes()) {
    if (m.deterministic) continue;  // the loop would never yield to the error
    BOOST_TEST_CONTEXT(m.name) {
      actors::SessionOptions o;
      o.num_devices = 2;
      o.timeout = std::chrono::seconds(60);  // a bound, far beyond what the test expects
      auto s = make_session(g, m, o);
      const auto started = std::chrono::steady_clock::now();
      auto r = s->run({}, {"w/Exit", "bad"});
      const auto took = std::chrono::steady_clock::now() - started;
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(r.status().message().find("'bad'") != std::string::npos, r.status().message());
      BOOST_TEST((took < std::chrono::seconds(10)));
      BOOST_TEST(no_step_actor_left(*s));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
