// StepGuard: one check and one error text per limit of a step, whoever
// checks it (a frame, a partition's inline root iteration, a loop run as
// written, the partition's timer).
#include <boost/test/unit_test.hpp>

#include <thread>

#include "actors/step_guard.hpp"

using namespace tagflow;
using actors::StepGuard;

BOOST_AUTO_TEST_SUITE(step_guard)

BOOST_AUTO_TEST_CASE(the_iteration_limit_counts_from_zero_and_names_what_ran_over) {
  StepGuard g;
  g.step_id = 4;
  BOOST_TEST(g.check_iterations(1000000, "frame 'w'").ok());  // 0: no limit
  g.max_iterations = 3;
  BOOST_TEST(g.check_iterations(2, "frame 'w'").ok());
  ops::Status s = g.check_iterations(3, "frame 'w' at tag w/3 on partition CPU:0");
  BOOST_TEST(s.code() == ops::Error::resource_exhausted);
  BOOST_TEST(s.message() ==
             "frame 'w' at tag w/3 on partition CPU:0 exceeded the limit of 3 iterations (--max-iterations, "
             "[tagflow] max-iterations)");
}

BOOST_AUTO_TEST_CASE(the_deadline_and_the_cancellation_say_the_step_and_where) {
  StepGuard g;
  g.step_id = 7;
  BOOST_TEST(!g.past_deadline());  // no deadline
  BOOST_TEST(g.check_deadline(" here").ok());
  g.deadline = std::chrono::steady_clock::now() - std::chrono::milliseconds(1);
  ops::Status late = g.check_deadline(" in frame 'w' at tag w/2 on partition CPU:1");
  BOOST_TEST(late.code() == ops::Error::deadline_exceeded);
  BOOST_TEST(late.message() == "step 7 exceeded its timeout (--timeout) in frame 'w' at tag w/2 on partition CPU:1");
  BOOST_TEST(g.timed_out(" on partition CPU:0").message() == "step 7 exceeded its timeout (--timeout) on partition CPU:0");
  ops::Cancellation c;
  g.cancellation = &c;
  BOOST_TEST(g.check_cancelled(" here").ok());
  c.cancel();
  ops::Status cancelled = g.check_cancelled(" in iteration 256 of the loop");
  BOOST_TEST(cancelled.code() == ops::Error::cancelled);
  BOOST_TEST(cancelled.message() == "step 7 was cancelled in iteration 256 of the loop");
}

BOOST_AUTO_TEST_CASE(a_loop_checks_its_iterations_always_and_the_clock_every_so_often) {
  StepGuard g;
  g.step_id = 1;
  g.max_iterations = 10000;
  g.deadline = std::chrono::steady_clock::now() - std::chrono::milliseconds(1);  // already past
  // between checkpoints the clock is not read
  BOOST_TEST(g.check_loop(1, "the loop").ok());
  BOOST_TEST(g.check_loop(StepGuard::kCheckEvery - 1, "the loop").ok());
  ops::Status s = g.check_loop(StepGuard::kCheckEvery, "the loop");
  BOOST_TEST(s.code() == ops::Error::deadline_exceeded);
  BOOST_TEST(s.message() == "step 1 exceeded its timeout (--timeout) in iteration 256 of the loop");
  // the iteration limit comes first, at any iteration
  g.max_iterations = 5;
  BOOST_TEST(g.check_loop(5, "the loop").code() == ops::Error::resource_exhausted);
}

BOOST_AUTO_TEST_SUITE_END()
