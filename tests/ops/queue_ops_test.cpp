// The FIFOQueueV2 family (ops/queue.hpp, ops/queue_kernels.cpp): FIFO order
// and shared names through the kernels, the checks that name the queue,
// closing, and waiting — a call without a Waiting never waits, one with it
// waits until another thread makes room or elements, the queue is closed,
// the step is cancelled or its deadline passes.
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "op_result.hpp"
#include "ops/resource.hpp"

using namespace tagflow::ops;
using testing::contains;
using testing::RunOptions;
using Tuple = FifoQueue::Tuple;

namespace {

const DType f32 = DType::float32;
const DType i32 = DType::int32;

AttrList types(std::vector<DType> t) {
  AttrList l;
  l.type = std::move(t);
  return l;
}

AttrList shapes(std::vector<PartialShape> s) {
  AttrList l;
  l.shape = std::move(s);
  return l;
}

struct QueueSession {
  ResourceManager rm;

  Expected<std::vector<Tensor>> run(const std::string& op, std::vector<Tensor> inputs, AttrMap attrs = {},
                                    const std::string& node = "") {
    return testing::run_op(op, std::move(inputs), std::move(attrs), RunOptions{&rm, 1, node});
  }
  Tensor make(const std::string& node, AttrMap attrs) {
    auto h = run("FIFOQueueV2", {}, std::move(attrs), node);
    BOOST_TEST_REQUIRE(h.ok(), h.status().to_string());
    return (*h)[0];
  }
  Status enqueue(const Tensor& h, std::vector<Tensor> components) {
    std::vector<DType> t;
    for (const Tensor& c : components) t.push_back(c.dtype());
    components.insert(components.begin(), h);
    auto r = run("QueueEnqueueV2", std::move(components), {{"Tcomponents", types(t)}});
    return r.ok() ? ok_status() : r.status();
  }
  Expected<std::vector<Tensor>> dequeue(const Tensor& h, std::vector<DType> t) {
    return run("QueueDequeueV2", {h}, {{"component_types", types(std::move(t))}});
  }
  int32_t size(const Tensor& h) {
    auto r = run("QueueSizeV2", {h});
    BOOST_TEST_REQUIRE(r.ok(), r.status().to_string());
    return (*r)[0].scalar_value<int32_t>();
  }
};

std::shared_ptr<FifoQueue> scalar_queue(int64_t capacity = -1) {
  return std::make_shared<FifoQueue>("q", DTypes{i32}, std::vector<PartialShape>{PartialShape{false, {}}}, capacity);
}

std::vector<Tuple> ints(std::vector<int32_t> values) {
  std::vector<Tuple> out;
  for (int32_t v : values) out.push_back({Tensor::scalar(v)});
  return out;
}

// Waits (briefly) until `q` has `n` waiting dequeues.
bool dequeues_wait(const FifoQueue& q, int64_t n) {
  for (int i = 0; i < 2000 && q.waiting_dequeues() != n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return q.waiting_dequeues() == n;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(queue_ops)

BOOST_AUTO_TEST_CASE(elements_leave_in_the_order_they_came) {
  QueueSession s;
  Tensor h = s.make("q", {{"component_types", types({i32, f32})}});
  BOOST_TEST(h.scalar_value<std::string>() == "q");
  for (int32_t v : {5, -1, 7}) BOOST_TEST(s.enqueue(h, {Tensor::scalar(v), Tensor::scalar(v * 0.5f)}).ok());
  BOOST_TEST(s.size(h) == 3);
  for (int32_t v : {5, -1, 7}) {
    auto out = s.dequeue(h, {i32, f32});
    BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
    BOOST_TEST((*out)[0].scalar_value<int32_t>() == v);
    BOOST_TEST((*out)[1].scalar_value<float>() == v * 0.5f);
  }
  BOOST_TEST(s.size(h) == 0);
}

BOOST_AUTO_TEST_CASE(a_shared_name_is_one_queue_and_must_agree) {
  QueueSession s;
  Tensor a = s.make("a", {{"component_types", types({f32})}, {"shared_name", std::string("shared")}});
  Tensor b = s.make("b", {{"component_types", types({f32})}, {"shared_name", std::string("shared")}});
  Tensor c = s.make("c", {{"component_types", types({f32})}, {"container", std::string("box")}});
  BOOST_TEST(a.scalar_value<std::string>() == "shared");
  BOOST_TEST(c.scalar_value<std::string>() == "box/c");
  BOOST_TEST(s.enqueue(a, {Tensor::scalar(2.5f)}).ok());
  BOOST_TEST(s.size(b) == 1);
  BOOST_TEST(s.size(c) == 0);
  auto other = s.run("FIFOQueueV2", {}, {{"component_types", types({i32})}, {"shared_name", std::string("shared")}}, "d");
  BOOST_TEST_REQUIRE(!other.ok());
  BOOST_TEST(other.status().message() ==
             "shared FIFOQueue 'shared' has component types [float32], but the node asks for [int32]");
  auto bounded = s.run("FIFOQueueV2", {}, {{"component_types", types({f32})}, {"capacity", int64_t{4}},
                                           {"shared_name", std::string("shared")}}, "e");
  BOOST_TEST_REQUIRE(!bounded.ok());
  BOOST_TEST(contains(bounded.status().message(), "has capacity unbounded, but the node asks for 4"));
}

BOOST_AUTO_TEST_CASE(an_element_must_fit_the_components_and_the_error_names_the_queue) {
  QueueSession s;
  Tensor h = s.make("q", {{"component_types", types({f32, i32})}, {"shapes", shapes({{false, {2}}, {false, {}}})}});
  Status few = s.enqueue(h, {Tensor::vector<float>({1, 2})});
  BOOST_TEST(few.code() == Error::invalid_argument);
  BOOST_TEST(few.message() == "FIFOQueue 'q' takes elements of 2 components, got 1");
  Status dtype = s.enqueue(h, {Tensor::vector<float>({1, 2}), Tensor::scalar(1.5f)});
  BOOST_TEST(dtype.message() == "component 1 of an element for FIFOQueue 'q' is float32, the queue holds int32");
  Status shape = s.enqueue(h, {Tensor::vector<float>({1, 2, 3}), Tensor::scalar(1)});
  BOOST_TEST(shape.message() ==
             "component 0 of an element for FIFOQueue 'q' has shape [3], the queue's component shape is [2]");
  BOOST_TEST(s.size(h) == 0);
  auto wrong = s.dequeue(h, {f32});
  BOOST_TEST_REQUIRE(!wrong.ok());
  BOOST_TEST(contains(wrong.status().message(), "are not those of FIFOQueue 'q' [float32, int32]"));
  auto unknown = s.dequeue(Tensor(DType::resource, Shape{}), {f32});
  BOOST_TEST(!unknown.ok());
  auto zero = s.run("FIFOQueueV2", {}, {{"component_types", types({f32})}, {"capacity", int64_t{0}}}, "z");
  BOOST_TEST(!zero.ok());
}

BOOST_AUTO_TEST_CASE(a_closed_queue_refuses_enqueues_and_drains_then_fails_dequeues) {
  QueueSession s;
  Tensor h = s.make("q", {{"component_types", types({i32})}});
  BOOST_TEST(s.enqueue(h, {Tensor::scalar(4)}).ok());
  auto closed0 = s.run("QueueIsClosedV2", {h});
  BOOST_TEST(!(*closed0)[0].scalar_value<bool>());
  BOOST_TEST(s.run("QueueCloseV2", {h}).ok());
  BOOST_TEST((*s.run("QueueIsClosedV2", {h}))[0].scalar_value<bool>());
  Status late = s.enqueue(h, {Tensor::scalar(5)});
  BOOST_TEST(late.code() == Error::cancelled);
  BOOST_TEST(late.message() == "FIFOQueue 'q' is closed");
  auto first = s.dequeue(h, {i32});  // what is in still comes out
  BOOST_TEST_REQUIRE(first.ok());
  BOOST_TEST((*first)[0].scalar_value<int32_t>() == 4);
  auto empty = s.dequeue(h, {i32});
  BOOST_TEST_REQUIRE(!empty.ok());
  BOOST_TEST(empty.status().code() == Error::out_of_range);
  BOOST_TEST(empty.status().message() ==
             "FIFOQueue 'q' is closed and has insufficient elements (requested 1, current size 0)");
}

BOOST_AUTO_TEST_CASE(enqueue_many_splits_and_dequeue_many_stacks) {
  QueueSession s;
  Tensor h = s.make("q", {{"component_types", types({f32})}, {"shapes", shapes({{false, {2}}})}});
  Tensor rows = Tensor::from_vector<float>(Shape{3, 2}, {1, 2, 3, 4, 5, 6});
  BOOST_TEST(s.run("QueueEnqueueManyV2", {h, rows}, {{"Tcomponents", types({f32})}}).ok());
  BOOST_TEST(s.size(h) == 3);
  auto two = s.run("QueueDequeueManyV2", {h, Tensor::scalar<int32_t>(2)}, {{"component_types", types({f32})}});
  BOOST_TEST_REQUIRE(two.ok(), two.status().to_string());
  BOOST_TEST((*two)[0].debug_string() == "float32[2,2] [[1,2],[3,4]]");
  auto one = s.dequeue(h, {f32});
  BOOST_TEST((*one)[0].debug_string() == "float32[2] [5,6]");
  BOOST_TEST(s.run("QueueCloseV2", {h}).ok());
  auto more = s.run("QueueDequeueManyV2", {h, Tensor::scalar<int32_t>(2)}, {{"component_types", types({f32})}});
  BOOST_TEST(more.status().message() ==
             "FIFOQueue 'q' is closed and has insufficient elements (requested 2, current size 0)");
}

BOOST_AUTO_TEST_CASE(without_a_waiting_a_call_that_would_wait_changes_nothing) {
  auto q = scalar_queue(2);
  std::vector<Tuple> out;
  bool would_block = false;
  BOOST_TEST(q->dequeue(1, nullptr, &would_block, &out).ok());
  BOOST_TEST(would_block);
  BOOST_TEST(out.empty());
  std::vector<Tuple> three = ints({1, 2, 3});
  would_block = false;
  BOOST_TEST(q->enqueue(three, nullptr, &would_block).ok());
  BOOST_TEST(would_block);  // all or nothing: two would fit
  BOOST_TEST(q->size() == 0);
  std::vector<Tuple> two = ints({1, 2});
  would_block = false;
  BOOST_TEST(q->enqueue(two, nullptr, &would_block).ok());
  BOOST_TEST(!would_block);
  BOOST_TEST(q->size() == 2);
}

BOOST_AUTO_TEST_CASE(a_waiting_dequeue_gets_what_another_thread_enqueues_in_order) {
  auto q = scalar_queue();
  Cancellation cancel;
  Waiting w{&cancel};
  auto take = [&] {
    std::vector<Tuple> out;
    bool would_block = false;
    Status s = q->dequeue(1, &w, &would_block, &out);
    return s.ok() ? out[0][0].scalar_value<int32_t>() : -1;
  };
  auto first = std::async(std::launch::async, take);
  BOOST_TEST_REQUIRE(dequeues_wait(*q, 1));
  auto second = std::async(std::launch::async, take);
  BOOST_TEST_REQUIRE(dequeues_wait(*q, 2));
  BOOST_TEST(cancel.waits().size() == 2u);
  BOOST_TEST(cancel.waits()[0] == "dequeue from FIFOQueue 'q'");
  std::vector<Tuple> values = ints({10, 20});
  bool would_block = false;
  BOOST_TEST(q->enqueue(values, nullptr, &would_block).ok());
  BOOST_TEST(first.get() == 10);  // the one that waited first
  BOOST_TEST(second.get() == 20);
  BOOST_TEST(cancel.waits().empty());
}

BOOST_AUTO_TEST_CASE(a_waiting_enqueue_goes_in_when_a_dequeue_makes_room) {
  auto q = scalar_queue(1);
  Cancellation cancel;
  Waiting w{&cancel};
  std::vector<Tuple> first = ints({1});
  bool would_block = false;
  BOOST_TEST(q->enqueue(first, &w, &would_block).ok());
  auto blocked = std::async(std::launch::async, [&] {
    std::vector<Tuple> second = ints({2});
    bool wb = false;
    return q->enqueue(second, &w, &wb);
  });
  for (int i = 0; i < 2000 && q->waiting_enqueues() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  BOOST_TEST_REQUIRE(q->waiting_enqueues() == 1);
  std::vector<Tuple> out;
  BOOST_TEST(q->dequeue(1, &w, &would_block, &out).ok());
  BOOST_TEST(blocked.get().ok());
  BOOST_TEST(q->dequeue(1, &w, &would_block, &out).ok());
  BOOST_TEST(out[0][0].scalar_value<int32_t>() == 1);
  BOOST_TEST(out[1][0].scalar_value<int32_t>() == 2);
}

BOOST_AUTO_TEST_CASE(a_wait_ends_when_cancelled_closed_or_past_its_deadline) {
  {
    auto q = scalar_queue();
    Cancellation cancel;
    Waiting w{&cancel};
    auto waiter = std::async(std::launch::async, [&] {
      std::vector<Tuple> out;
      bool wb = false;
      return q->dequeue(1, &w, &wb, &out);
    });
    BOOST_TEST_REQUIRE(dequeues_wait(*q, 1));
    cancel.cancel();
    Status s = waiter.get();
    BOOST_TEST(s.code() == Error::aborted);
    BOOST_TEST(s.message() == "the step ended while waiting to dequeue from FIFOQueue 'q'");
    std::vector<Tuple> out;
    bool wb = false;
    BOOST_TEST(q->dequeue(1, &w, &wb, &out).code() == Error::aborted);  // cancelled before it waits
  }
  {
    auto q = scalar_queue();
    Waiting w;
    auto waiter = std::async(std::launch::async, [&] {
      std::vector<Tuple> out;
      bool wb = false;
      return q->dequeue(1, &w, &wb, &out);
    });
    BOOST_TEST_REQUIRE(dequeues_wait(*q, 1));
    q->close(false);
    Status s = waiter.get();
    BOOST_TEST(s.code() == Error::out_of_range);
    BOOST_TEST(s.message() == "FIFOQueue 'q' is closed and has insufficient elements (requested 1, current size 0)");
  }
  {
    auto q = scalar_queue();
    Waiting w;
    w.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(30);
    std::vector<Tuple> out;
    bool wb = false;
    Status s = q->dequeue(1, &w, &wb, &out);
    BOOST_TEST(s.code() == Error::deadline_exceeded);
    BOOST_TEST(s.message() == "the step's timeout (--timeout) passed while waiting to dequeue from FIFOQueue 'q' "
                              "(current size 0)");
    BOOST_TEST((std::chrono::steady_clock::now() >= w.deadline));
  }
  {
    // Closing with cancel_pending_enqueues fails the enqueues that wait.
    auto q = scalar_queue(1);
    Waiting w;
    std::vector<Tuple> first = ints({1});
    bool wb = false;
    BOOST_TEST(q->enqueue(first, &w, &wb).ok());
    auto blocked = std::async(std::launch::async, [&] {
      std::vector<Tuple> second = ints({2});
      bool b = false;
      return q->enqueue(second, &w, &b);
    });
    for (int i = 0; i < 2000 && q->waiting_enqueues() == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    q->close(true);
    Status s = blocked.get();
    BOOST_TEST(s.code() == Error::cancelled);
    BOOST_TEST(contains(s.message(), "was cancelled: the queue was closed with cancel_pending_enqueues"));
    BOOST_TEST(q->size() == 1);
  }
}

BOOST_AUTO_TEST_SUITE_END()
