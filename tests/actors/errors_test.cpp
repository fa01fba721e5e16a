#include <boost/test/unit_test.hpp>

#include <chrono>
#include <thread>

#include "session_test_util.hpp"
#include "test_graphs.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

namespace {

// outer i = 0..2; inner j = 0..9, computing 10 / (7 - j) each iteration:
// the inner loop fails at j = 7 of every outer iteration, first at i = 0.
std::string failing_nested_loop() {
  std::string inner_body = int_const("o/in/ten", 10, {"^o/in/Identity"}) +
                           int_const("o/in/seven", 7, {"^o/in/Identity"}) +
                           binary("o/in/gap", "Sub", "o/in/seven", "o/in/Identity") +
                           binary("o/in/div", "FloorDiv", "o/in/ten", "o/in/gap") +
                           binary("o/in/next", "Add", "o/in/Add", "o/in/div");
  std::string body = int_const("o/zero", 0, {"^o/Identity"}) + int_const("o/lim", 10, {"^o/Identity"}) +
                     counting_loop("o/in", "o/zero", "o/lim", 1, 10, inner_body, "o/in/Add") +
                     binary("o/next", "Add", "o/Add", "o/in/Exit");
  // o/in/next is consumed by a control edge so that it runs every iteration.
  std::string text = int_const("start", 0) + int_const("n", 3) +
                     counting_loop("o", "start", "n", 1, 10, body, "o/next");
  // Make the inner NextIteration depend on the division.
  size_t pos = text.find("name: \"o/in/NextIteration\" op: \"NextIteration\" input: \"o/in/Add\"");
  text.insert(pos + std::string("name: \"o/in/NextIteration\" op: \"NextIteration\" input: \"o/in/Add\"").size(),
              " input: \"^o/in/next\"");
  return text;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(errors)

BOOST_AUTO_TEST_CASE(a_kernel_failure_in_iteration_7_of_an_inner_loop_names_node_tag_and_partition) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(failing_nested_loop()), m);
      auto r = s->run({}, {"o/Exit"});
      BOOST_REQUIRE(!r.ok());
      const std::string& msg = r.status().message();
      BOOST_TEST(msg.find("FloorDiv 'o/in/div'") != std::string::npos, msg);
      BOOST_TEST(msg.find("at tag o/0/o/in/7") != std::string::npos, msg);
      BOOST_TEST(msg.find("on partition CPU:0") != std::string::npos, msg);
      BOOST_TEST(no_step_actor_left(*s));
      // The session still works after the failure.
      BOOST_TEST(must_run(*s, {}, {"n"})[0].scalar_value<int32_t>() == 3);
    }
  }
}

BOOST_AUTO_TEST_CASE(max_iterations_stops_a_loop_with_a_clear_error) {
  std::string text = int_const("start", 0) + int_const("n", 1000) + counting_loop("w", "start", "n", 1);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      actors::SessionOptions o;
      o.max_iterations = 50;
      auto s = make_session(parse(text), m, o);
      auto r = s->run({}, {"w/Exit"});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(r.status().code() == ops::Error::resource_exhausted);
      BOOST_TEST(r.status().message().find("frame 'w' at tag w/50") != std::string::npos,
                 r.status().message());
      BOOST_TEST(no_step_actor_left(*s));
      auto small = s->run({{"n", Tensor::scalar<int32_t>(7)}}, {"w/Exit"});
      BOOST_REQUIRE(small.ok());
      BOOST_TEST(small->at(0).scalar_value<int32_t>() == 7);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_step_that_never_ends_is_stopped_by_its_timeout) {
  // while i < n: i += 0 — never ends.
  std::string text = int_const("start", 0) + int_const("n", 1) + counting_loop("w", "start", "n", 0);
  for (const Mode& m : modes()) {
    if (m.deterministic) continue;  // the testing scheduler has no clock
    BOOST_TEST_CONTEXT(m.name) {
      actors::SessionOptions o;
      o.timeout = std::chrono::milliseconds(100);
      auto s = make_session(parse(text), m, o);
      auto started = std::chrono::steady_clock::now();
      auto r = s->run({}, {"w/Exit"});
      auto took = std::chrono::steady_clock::now() - started;
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(r.status().code() == ops::Error::deadline_exceeded);
      BOOST_TEST((took < std::chrono::seconds(5)));
      BOOST_TEST(no_step_actor_left(*s));
      auto fine = s->run({{"n", Tensor::scalar<int32_t>(0)}}, {"w/Exit"});
      BOOST_REQUIRE(fine.ok());
      BOOST_TEST(fine->at(0).scalar_value<int32_t>() == 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(unknown_fetches_and_feeds_are_errors) {
  auto s = make_session(parse(int_const("a", 1)), modes()[0]);
  auto r = s->run({}, {"nope"});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message().find("fetch 'nope'") != std::string::npos);
  r = s->run({}, {"a:3"});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message().find("'a:3' names none") != std::string::npos, r.status().message());
  r = s->run({{"a", Tensor::scalar<float>(1)}}, {"a"});
  BOOST_REQUIRE(!r.ok());
  BOOST_TEST(r.status().message().find("feed 'a' is float32 but the graph produces int32") != std::string::npos,
             r.status().message());
}

BOOST_AUTO_TEST_SUITE_END()
