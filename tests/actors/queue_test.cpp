// Queues (FIFOQueueV2 and its ops) in sessions: elements persist across
// steps in FIFO order, a loop dequeues what earlier or concurrent steps
// enqueue, and a dequeue that waits — off the scheduler threads
// (docs/protocol.md, "Kernels that block") — ends with the queue closed,
// the step's timeout, or the session destroyed, never hangs, and leaves
// the session usable. Reference values are sums computed in the test.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <numeric>
#include <thread>

#include "graph/builder/builder.hpp"
#include "ops/resource.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using graph::GraphBuilder;
using graph::NodeOptions;
using graph::Output;
using ops::DType;
using ops::Tensor;
using Vars = std::vector<Output>;

namespace {

ops::AttrList int_component() {
  ops::AttrList l;
  l.type = {DType::int32};
  return l;
}

// A queue "q" of int32 scalars; `enq` enqueues the fed `x`, `deq` dequeues
// one, `size` and `close` as named; `sum` is a while loop that dequeues
// `n` values (fed) and adds them up.
graph::Graph queue_graph(int64_t capacity = -1) {
  GraphBuilder b;
  Output q = b.op1("FIFOQueueV2", {},
                   {{"component_types", int_component()}, {"capacity", capacity}, {"shared_name", std::string("q")}},
                   "q");
  Output x = b.placeholder(DType::int32, {}, "x");
  b.op("QueueEnqueueV2", {q, x}, {}, "enq");
  b.op1("QueueDequeueV2", {q}, {{"component_types", int_component()}}, "deq");
  b.op1("QueueSizeV2", {q}, {}, "size");
  b.op("QueueCloseV2", {q}, {}, "close");
  Output n = b.placeholder(DType::int32, {}, "n");
  Vars out = b.while_loop([&](const Vars& v) { return v[0] < n; },
                          [&](const Vars& v) {
                            Output d = b.op1("QueueDequeueV2", {q}, {{"component_types", int_component()}},
                                             NodeOptions::unique("loop_deq"));
                            return Vars{v[0] + 1.0, v[1] + d};
                          },
                          {b.scalar<int32_t>(0), b.scalar<int32_t>(0)});
  b.identity(out[1], "sum");
  auto g = b.finish();
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

void enqueue(actors::Session& s, int32_t v) { must_run(s, {{"x", Tensor::scalar(v)}}, {}, {"enq"}); }
int32_t fetch(actors::Session& s, const actors::Feeds& feeds, const std::string& name) {
  return must_run(s, feeds, {name})[0].scalar_value<int32_t>();
}

// The queue "q" of the session's first device, once a step has made it.
std::shared_ptr<ops::FifoQueue> queue_of(actors::Session& s) {
  auto rm = s.resources(s.devices()[0]);
  if (!rm) return nullptr;
  auto q = rm->queue("q");
  return q.ok() ? *q : nullptr;
}

// Waits (up to 10 s) until a dequeue waits on "q".
bool a_dequeue_waits(actors::Session& s) {
  for (int i = 0; i < 2000; ++i) {
    auto q = queue_of(s);
    if (q && q->waiting_dequeues() > 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

std::vector<Mode> threaded_modes() {
  std::vector<Mode> out;
  for (const Mode& m : modes())
    if (!m.deterministic) out.push_back(m);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(queues)

BOOST_AUTO_TEST_CASE(elements_enqueued_in_earlier_steps_leave_in_fifo_order) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(queue_graph(), m);
      const std::vector<int32_t> values = {3, -8, 21};
      for (int32_t v : values) enqueue(*s, v);
      BOOST_TEST(fetch(*s, {}, "size") == 3);
      for (int32_t v : values) BOOST_TEST(fetch(*s, {}, "deq") == v);
      BOOST_TEST(fetch(*s, {}, "size") == 0);
      BOOST_TEST(no_step_actor_left(*s));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_while_loop_dequeues_what_earlier_steps_enqueued) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(queue_graph(), m);
      std::vector<int32_t> values;
      for (int32_t i = 1; i <= 7; ++i) values.push_back(i * i - 5);
      for (int32_t v : values) enqueue(*s, v);
      // Two loops: the first takes 4 values, the second the 3 left.
      const int32_t first = std::accumulate(values.begin(), values.begin() + 4, 0);
      const int32_t rest = std::accumulate(values.begin() + 4, values.end(), 0);
      BOOST_TEST(fetch(*s, {{"n", Tensor::scalar<int32_t>(4)}}, "sum") == first);
      BOOST_TEST(fetch(*s, {{"n", Tensor::scalar<int32_t>(3)}}, "sum") == rest);
      BOOST_TEST(fetch(*s, {}, "size") == 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_loop_waits_for_values_another_thread_enqueues) {
  for (const Mode& m : threaded_modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(queue_graph(), m);
      constexpr int32_t kValues = 12;
      auto summing = std::async(std::launch::async, [&] {
        return s->run({{"n", Tensor::scalar(kValues)}}, {"sum"});
      });
      BOOST_TEST_REQUIRE(a_dequeue_waits(*s));
      int32_t expected = 0;
      for (int32_t i = 0; i < kValues; ++i) {
        const int32_t v = 3 * i + 1;
        expected += v;
        enqueue(*s, v);
        if (i % 4 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      auto r = summing.get();
      BOOST_TEST_REQUIRE(r.ok(), r.status().to_string());
      BOOST_TEST(r.value()[0].scalar_value<int32_t>() == expected);
      BOOST_TEST(no_step_actor_left(*s));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_full_bounded_queue_holds_the_enqueue_until_a_dequeue) {
  for (const Mode& m : threaded_modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(queue_graph(1), m);
      enqueue(*s, 5);
      auto second = std::async(std::launch::async, [&] { return s->run({{"x", Tensor::scalar(6)}}, {}, {"enq"}); });
      bool waiting = false;
      for (int i = 0; i < 2000 && !waiting; ++i) {
        auto q = queue_of(*s);
        waiting = q && q->waiting_enqueues() > 0;
        if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      BOOST_TEST_REQUIRE(waiting);
      BOOST_TEST(fetch(*s, {}, "deq") == 5);
      auto r = second.get();
      BOOST_TEST(r.ok(), r.status().to_string());
      BOOST_TEST(fetch(*s, {}, "deq") == 6);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_dequeue_from_a_closed_empty_queue_ends_the_step_and_the_session_goes_on) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(queue_graph(), m);
      enqueue(*s, 4);
      enqueue(*s, 9);
      must_run(*s, {}, {}, {"close"});
      auto late = s->run({{"x", Tensor::scalar(1)}}, {}, {"enq"});
      BOOST_TEST_REQUIRE(!late.ok());
      BOOST_TEST(late.status().code() == ops::Error::cancelled);
      BOOST_TEST(late.status().message().find("QueueEnqueueV2 'enq'") != std::string::npos, late.status().message());
      BOOST_TEST(late.status().message().find("FIFOQueue 'q' is closed") != std::string::npos);
      // The loop takes the two values and fails on the third.
      auto r = s->run({{"n", Tensor::scalar<int32_t>(3)}}, {"sum"});
      BOOST_TEST_REQUIRE(!r.ok());
      BOOST_TEST(r.status().code() == ops::Error::out_of_range, r.status().to_string());
      BOOST_TEST(r.status().message().find("FIFOQueue 'q' is closed and has insufficient elements (requested 1, "
                                           "current size 0)") != std::string::npos,
                 r.status().message());
      BOOST_TEST(r.status().message().find("loop_deq") != std::string::npos, r.status().message());
      auto again = s->run({}, {"deq"});
      BOOST_TEST(again.status().code() == ops::Error::out_of_range);
      BOOST_TEST(fetch(*s, {}, "size") == 0);
      BOOST_TEST(no_step_actor_left(*s));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_step_waiting_on_an_empty_queue_ends_at_its_timeout) {
  for (const Mode& m : threaded_modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      actors::SessionOptions o;
      o.timeout = std::chrono::milliseconds(150);
      auto s = make_session(queue_graph(), m, o);
      for (const char* fetched : {"deq", "sum"}) {
        const auto start = std::chrono::steady_clock::now();
        auto r = s->run({{"n", Tensor::scalar<int32_t>(2)}}, {fetched});
        const auto took = std::chrono::steady_clock::now() - start;
        BOOST_TEST_REQUIRE(!r.ok());
        BOOST_TEST(r.status().code() == ops::Error::deadline_exceeded, r.status().to_string());
        BOOST_TEST(r.status().message().find("FIFOQueue 'q'") != std::string::npos, r.status().message());
        BOOST_TEST((took < std::chrono::seconds(10)));
        BOOST_TEST(no_step_actor_left(*s));
      }
      // The waits that ended took nothing: the next value goes to the next step.
      enqueue(*s, 11);
      BOOST_TEST(fetch(*s, {}, "deq") == 11);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_deterministic_session_fails_a_dequeue_that_would_wait) {
  actors::SessionOptions o;
  auto s = make_session(queue_graph(), modes()[0], o);
  auto r = s->run({}, {"deq"});
  BOOST_TEST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().code() == ops::Error::failed_precondition);
  BOOST_TEST(r.status().message().find("QueueDequeueV2 'deq'") != std::string::npos, r.status().message());
  enqueue(*s, 2);
  BOOST_TEST(fetch(*s, {}, "deq") == 2);
}

BOOST_AUTO_TEST_CASE(destroying_the_session_ends_a_step_waiting_on_a_queue) {
  for (const Mode& m : threaded_modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(queue_graph(), m);
      actors::Session* session = s.get();
      auto waiting = std::async(std::launch::async,
                                [session] { return session->run({{"n", Tensor::scalar<int32_t>(3)}}, {"sum"}); });
      BOOST_TEST_REQUIRE(a_dequeue_waits(*s));
      s.reset();  // returns: the wait is cancelled
      auto r = waiting.get();
      BOOST_TEST_REQUIRE(!r.ok());
      BOOST_TEST(r.status().code() == ops::Error::cancelled, r.status().to_string());
      BOOST_TEST(r.status().message().find("session was destroyed") != std::string::npos);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
