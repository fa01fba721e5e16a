// Deep nesting: loops nested hundreds deep run in time linear in what they
// compute. A tag costs O(1) per message whatever the depth, and a frame
// instance whose Enters are all dead (the instances the last, dead
// iteration of every loop makes of the loops inside it: ~depth²/2 of them)
// is not started at all.
#include <boost/test/unit_test.hpp>

#include "actors/tag.hpp"
#include "executor_graphs.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using trace::Kind;


BOOST_AUTO_TEST_SUITE(deep_nesting)

BOOST_AUTO_TEST_CASE(dead_frame_instances_are_not_started) {
  const int depth = 60;  // 60 live instances; 1770 dead ones not started
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      trace::MemorySink sink;
      actors::SessionOptions o;
      o.events = &sink;
      auto s = make_session(parse(nested_chain(depth)), m, o);
      auto out = must_run(*s, {}, {"L0/exit"});
      BOOST_TEST(out[0].scalar_value<int32_t>() == depth);
      size_t frames = 0;
      for (const trace::Event& e : sink.events()) frames += e.kind == Kind::frame_created;
      BOOST_TEST(frames == static_cast<size_t>(depth + 1));  // and the root frame
      BOOST_TEST(no_step_actor_left(*s));
    }
  }
}

BOOST_AUTO_TEST_CASE(instances_with_a_live_invariant_still_run) {
  // The same chain, 25 deep, with a live invariant: every dead iteration's
  // inner loops run (25 * 26 / 2 instances), and the result is unchanged.
  const int depth = 25;
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      trace::MemorySink sink;
      actors::SessionOptions o;
      o.events = &sink;
      auto s = make_session(parse(nested_chain(depth, true)), m, o);
      auto out = must_run(*s, {}, {"L0/exit", "L0/v_exit"});
      BOOST_TEST(out[0].scalar_value<int32_t>() == depth);
      BOOST_TEST(out[1].scalar_value<int32_t>() == 1);
      size_t frames = 0;
      for (const trace::Event& e : sink.events()) frames += e.kind == Kind::frame_created;
      BOOST_TEST(frames == static_cast<size_t>(depth * (depth + 1) / 2 + 1));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_thousand_nested_loops_run) {
  auto s = make_session(parse(nested_chain(1000)), modes()[2]);
  auto out = must_run(*s, {}, {"L0/exit"});
  BOOST_TEST(out[0].scalar_value<int32_t>() == 1000);
  BOOST_TEST(no_step_actor_left(*s));
}

BOOST_AUTO_TEST_CASE(a_tag_is_the_same_size_and_cost_at_any_depth) {
  actors::Tag t;
  for (int k = 0; k < 5000; ++k) t = t.child("f" + std::to_string(k), k);
  BOOST_TEST(t.depth() == 5000);
  actors::Tag other = t.with_iteration(7);  // no copy of the path
  BOOST_TEST(other.iteration() == 7);
  BOOST_TEST(other.parent().frame_name() == "f4998");
  BOOST_TEST(other.frame_instance() == t.frame_instance());
  BOOST_TEST(!(other == t));
  BOOST_TEST((other.with_iteration(4999) == t));
  BOOST_TEST(sizeof(actors::Tag) <= 2 * sizeof(void*) + sizeof(int64_t));
  const std::string text = t.to_string();
  BOOST_TEST(text.rfind("f0/0/f1/1/", 0) == 0u);
  BOOST_TEST(text.size() > 5000u * 4);
}

BOOST_AUTO_TEST_SUITE_END()
