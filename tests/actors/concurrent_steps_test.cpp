// A session is safe to run from many threads at once: 100 concurrent steps
// of loop graphs with different feeds — some failing on purpose — each get
// their own result, on one and on two devices, at every thread mode (the
// deterministic one runs them one after the other); and concurrent
// AssignAddVariableOps on one resource variable are atomic, as in
// TensorFlow.
#include <boost/test/unit_test.hpp>

#include <thread>

#include "session_test_util.hpp"
#include "test_graphs.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

namespace {

// acc = sum over i < n of 100 // d; d = 0 fails (integer division by zero)
// as soon as the loop body runs.
std::string divided_loop() {
  std::string body = enter("w/hundred", "hundred", "w", true) + enter("w/d", "d", "w", true) +
                     binary("w/quotient", "FloorDiv", "w/hundred", "w/d") +
                     enter("w/acc_enter", "zero", "w", false) +
                     merge("w/acc_merge", {"w/acc_enter", "w/acc_next"}) +
                     binary("w/acc_switch", "Switch", "w/acc_merge", "w/LoopCond") +
                     node("w/acc_id", "Identity", {"w/acc_switch:1"}, type_attr("T", "DT_INT32")) +
                     node("w/quotient_now", "Identity", {"w/quotient", "^w/Identity"}, type_attr("T", "DT_INT32")) +
                     binary("w/sum", "Add", "w/acc_id", "w/quotient_now") +
                     unary("w/acc_next", "NextIteration", "w/sum") + unary("w/acc_exit", "Exit", "w/acc_switch");
  return node("n", "Placeholder", {}, type_attr("dtype", "DT_INT32")) +
         node("d", "Placeholder", {}, type_attr("dtype", "DT_INT32")) + int_const("hundred", 100) +
         int_const("zero", 0) + int_const("start", 0) + counting_loop("w", "start", "n", 1, 10, body);
}

std::string shared_counter() {
  const std::string var = type_attr("dtype", "DT_INT32") + " attr { key: \"shape\" value { shape {} } }";
  return node("counter", "VarHandleOp", {}, var) + int_const("zero", 0) +
         node("k", "Placeholder", {}, type_attr("dtype", "DT_INT32")) +
         node("init", "AssignVariableOp", {"counter", "zero"}, type_attr("dtype", "DT_INT32")) +
         node("add", "AssignAddVariableOp", {"counter", "k"}, type_attr("dtype", "DT_INT32")) +
         node("read", "ReadVariableOp", {"counter"}, type_attr("dtype", "DT_INT32"));
}

struct Outcome {
  bool ok = false;
  int value = 0;
  std::string error;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(concurrent_steps)

BOOST_AUTO_TEST_CASE(a_hundred_concurrent_loop_steps_each_get_their_own_result) {
  for (const Mode& m : modes())
    for (int devices : {1, 2}) {
      BOOST_TEST_CONTEXT(m.name << ", " << devices << " device(s)") {
        actors::SessionOptions o;
        o.num_devices = devices;
        o.placement.strategy = graph::PlacementOptions::Strategy::round_robin;
        o.timeout = std::chrono::seconds(60);
        auto s = make_session(parse(divided_loop()), m, o);
        const int steps = 100;
        std::vector<Outcome> out(steps);
        std::vector<std::thread> threads;
        for (int k = 0; k < steps; ++k)
          threads.emplace_back([&, k] {
            const int n = 1 + k % 37, d = k % 7 == 3 ? 0 : 1 + k % 5;  // every 7th fails
            auto r = s->run({{"n", Tensor::scalar<int32_t>(n)}, {"d", Tensor::scalar<int32_t>(d)}},
                            {"w/acc_exit", "w/Exit"});
            if (r.ok()) {
              out[static_cast<size_t>(k)].ok = true;
              out[static_cast<size_t>(k)].value = r->at(0).scalar_value<int32_t>() * 1000 + r->at(1).scalar_value<int32_t>();
            } else {
              out[static_cast<size_t>(k)].error = r.status().to_string();
            }
          });
        for (std::thread& t : threads) t.join();
        for (int k = 0; k < steps; ++k) {
          const int n = 1 + k % 37, d = k % 7 == 3 ? 0 : 1 + k % 5;
          const Outcome& got = out[static_cast<size_t>(k)];
          if (d == 0) {
            BOOST_TEST(!got.ok, "step " << k);
            BOOST_TEST(got.error.find("integer division by zero") != std::string::npos, got.error);
            BOOST_TEST(got.error.find("w/quotient") != std::string::npos, got.error);
          } else {
            BOOST_TEST(got.ok, "step " << k << ": " << got.error);
            BOOST_TEST(got.value == n * (100 / d) * 1000 + n, "step " << k);
          }
        }
        BOOST_TEST(no_step_actor_left(*s));
        // and the session goes on
        auto again = must_run(*s, {{"n", Tensor::scalar<int32_t>(3)}, {"d", Tensor::scalar<int32_t>(3)}},
                              {"w/acc_exit"});
        BOOST_TEST(again[0].scalar_value<int32_t>() == 99);
      }
    }
}

BOOST_AUTO_TEST_CASE(concurrent_first_steps_of_different_signatures) {
  // Every thread's (feeds, fetches) is new to the session when the threads
  // start: the signatures are prepared concurrently.
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(divided_loop()), m);
      const std::vector<std::vector<std::string>> fetch_sets = {
          {"w/acc_exit"}, {"w/Exit"}, {"w/acc_exit", "w/Exit"}, {"w/Exit", "w/acc_exit"}, {"w/acc_exit:0"}};
      std::vector<std::string> errors(40);
      std::vector<std::thread> threads;
      for (int k = 0; k < 40; ++k)
        threads.emplace_back([&, k] {
          const auto& fetches = fetch_sets[static_cast<size_t>(k) % fetch_sets.size()];
          const int n = 2 + k % 9, d = 1 + k % 4;
          auto r = s->run({{"n", Tensor::scalar<int32_t>(n)}, {"d", Tensor::scalar<int32_t>(d)}}, fetches);
          if (!r.ok()) {
            errors[static_cast<size_t>(k)] = r.status().to_string();
            return;
          }
          for (size_t f = 0; f < fetches.size(); ++f) {
            const int want = fetches[f] == "w/Exit" ? n : n * (100 / d);
            if (r->at(f).scalar_value<int32_t>() != want)
              errors[static_cast<size_t>(k)] = fetches[f] + " is " + std::to_string(r->at(f).scalar_value<int32_t>()) +
                                                ", not " + std::to_string(want);
          }
        });
      for (std::thread& t : threads) t.join();
      for (int k = 0; k < 40; ++k) BOOST_TEST(errors[static_cast<size_t>(k)].empty(), "step " << k << ": " << errors[static_cast<size_t>(k)]);
      BOOST_TEST(no_step_actor_left(*s));
    }
  }
}

BOOST_AUTO_TEST_CASE(concurrent_assign_adds_on_one_variable_are_atomic) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(shared_counter()), m);
      must_run(*s, {}, {}, {"init"});
      const int steps = 100;
      std::vector<std::thread> threads;
      std::atomic<int> failures{0};
      for (int k = 1; k <= steps; ++k)
        threads.emplace_back([&, k] {
          if (!s->run({{"k", Tensor::scalar<int32_t>(k)}}, {}, {"add"}).ok()) ++failures;
        });
      for (std::thread& t : threads) t.join();
      BOOST_TEST(failures.load() == 0);
      auto total = must_run(*s, {}, {"read"});
      BOOST_TEST(total[0].scalar_value<int32_t>() == steps * (steps + 1) / 2);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
