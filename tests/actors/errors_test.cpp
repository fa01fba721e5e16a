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
  BOOST_TEST(r.status().message().find("feed 'a' is float32 [] but Const 'a' declares int32 []") != std::string::npos,
             r.status().message());
}

// A predicate of another shape than a scalar bool (or a _SwitchN index
// that is not a scalar int32) has no one answer: element 0 must not
// silently stand for it.
BOOST_AUTO_TEST_CASE(a_predicate_that_is_not_a_scalar_bool_names_node_and_shape) {
  std::string pred = node("p", "Placeholder", {}, type_attr("dtype", "DT_BOOL"));
  std::string index = node("i", "Placeholder", {}, type_attr("dtype", "DT_INT32"));
  std::string text = int_const("d", 5) + pred + index + binary("sw", "Switch", "d", "p") +
                     node("sn", "_SwitchN", {"d", "i"},
                          type_attr("T", "DT_INT32") + " attr { key: \"num_outs\" value { i: 2 } }");
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(text), m);
      auto r = s->run({{"p", Tensor::vector<bool>({true, false})}}, {"sw:1"});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST((r.status().code() == ops::Error::invalid_argument));
      BOOST_TEST(r.status().message() ==
                     "Switch 'sw' at tag / on partition CPU:0: the predicate must be a scalar bool, "
                     "not bool of shape [2]",
                 r.status().message());
      r = s->run({{"p", Tensor::from_vector<bool>({1, 1}, {true})}}, {"sw:1"});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(r.status().message().find("not bool of shape [1,1]") != std::string::npos, r.status().message());
      r = s->run({{"i", Tensor::vector<int32_t>({1, 0})}}, {"sn:1"});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(r.status().message().find("_SwitchN 'sn' at tag / on partition CPU:0: the branch index "
                                           "must be a scalar int32, not int32 of shape [2]") != std::string::npos,
                 r.status().message());
      BOOST_TEST(no_step_actor_left(*s));
      // Scalars still work, and the session goes on.
      BOOST_TEST(must_run(*s, {{"p", Tensor::scalar(true)}}, {"sw:1"})[0].scalar_value<int32_t>() == 5);
      BOOST_TEST(must_run(*s, {{"i", Tensor::scalar<int32_t>(0)}}, {"sn:0"})[0].scalar_value<int32_t>() == 5);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_loop_predicate_that_is_not_a_scalar_names_the_loopcond_and_tag) {
  // i < limit on vectors: the loop's predicate is bool[2].
  std::string text = node("start", "Placeholder", {}, type_attr("dtype", "DT_INT32")) +
                     node("n", "Placeholder", {}, type_attr("dtype", "DT_INT32")) +
                     counting_loop("w", "start", "n", 1);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(text), m);
      auto r = s->run({{"start", Tensor::vector<int32_t>({0, 5})}, {"n", Tensor::vector<int32_t>({3, 3})}},
                      {"w/Exit"});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(r.status().message() ==
                     "LoopCond 'w/LoopCond' at tag w/0 on partition CPU:0: the predicate must be a "
                     "scalar bool, not bool of shape [2]",
                 r.status().message());
      BOOST_TEST(no_step_actor_left(*s));
      auto ok = must_run(*s, {{"start", Tensor::scalar<int32_t>(0)}, {"n", Tensor::scalar<int32_t>(3)}}, {"w/Exit"});
      BOOST_TEST(ok[0].scalar_value<int32_t>() == 3);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_fed_value_that_contradicts_the_graph_is_refused_before_the_step) {
  std::string text = "versions { producer: 27 }\n" +
                     node("x", "Placeholder", {},
                          type_attr("dtype", "DT_INT32") +
                              " attr { key: \"shape\" value { shape { dim { size: 2 } } } }") +
                     int_const("c", 4) + binary("sum", "Add", "x", "c");
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(text), m);
      auto r = s->run({{"x", Tensor::vector<int32_t>({1, 2, 3})}}, {"sum"});
      BOOST_REQUIRE(!r.ok());
      const std::string how = " (--no-feed-shape-check, SessionOptions::check_feed_shapes = false: the dtype alone is "
                              "checked)";
      BOOST_TEST(r.status().message() == "feed 'x' is int32 [3] but Placeholder 'x' declares int32 [2]" + how,
                 r.status().message());
      r = s->run({{"x", Tensor::vector<int32_t>({1, 2})}, {"c", Tensor::vector<int32_t>({1, 2})}}, {"sum"});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(r.status().message() == "feed 'c' is int32 [2] but Const 'c' declares int32 []" + how,
                 r.status().message());
      auto out = must_run(*s, {{"x", Tensor::vector<int32_t>({1, 2})}}, {"sum"});
      BOOST_TEST(out[0].equals(Tensor::vector<int32_t>({5, 6})), out[0].debug_string());
      // Without the shape check, as TensorFlow's C API: the kernels see
      // the shapes; a wrong dtype is still refused.
      actors::SessionOptions o;
      o.check_feed_shapes = false;
      auto unchecked = make_session(parse(text), m, o);
      out = must_run(*unchecked, {{"x", Tensor::vector<int32_t>({1, 2, 3})}}, {"sum"});
      BOOST_TEST(out[0].equals(Tensor::vector<int32_t>({5, 6, 7})), out[0].debug_string());
      r = unchecked->run({{"x", Tensor::vector<float>({1, 2})}}, {"sum"});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(r.status().message() == "feed 'x' is float32 [2] but Placeholder 'x' declares int32",
                 r.status().message());
    }
  }
}

BOOST_AUTO_TEST_CASE(feeding_a_node_inside_a_loop_says_why_it_cannot_be_fed) {
  std::string text = int_const("start", 0) + int_const("n", 5) + counting_loop("w", "start", "n", 1);
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(text), m);
      auto r = s->run({{"w/Add", Tensor::scalar<int32_t>(1)}}, {"w/Exit"});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(r.status().message().find("feed 'w/Add': Add 'w/Add' is inside the loop frame 'w': it has "
                                           "a value in every iteration") != std::string::npos,
                 r.status().message());
      BOOST_TEST(must_run(*s, {{"start", Tensor::scalar<int32_t>(2)}}, {"w/Exit"})[0].scalar_value<int32_t>() == 5);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
