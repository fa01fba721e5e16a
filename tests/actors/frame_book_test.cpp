// A frame's book-keeping (actors/frame_book.hpp) without CAF: which
// iterations it starts and with what, the window of parallel iterations,
// loop invariants, transfers that come early or late, retiring in order,
// the Exits it forwards live and dead, and its errors — driven by hand
// through a host that records what it is asked.
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "actors/executable.hpp"
#include "actors/frame_book.hpp"
#include "graph/validate.hpp"
#include "test_graphs.hpp"

using namespace tagflow;
using namespace tagflow::actors;
using namespace tagflow::testing;

namespace {

std::shared_ptr<const Executable> loop_exec(int parallel_iterations) {
  graph::Graph g = parse(int_const("start", 0) + int_const("n", 3) +
                         counting_loop("w", "start", "n", 1, parallel_iterations));
  ops::Status s = graph::validate(g);
  if (!s.ok()) throw std::runtime_error(s.to_string());
  auto exec = Executable::build(std::move(g));
  if (!exec.ok()) throw std::runtime_error(exec.status().to_string());
  return std::move(exec).value();
}

int item(const Executable& exec, const std::string& node) {
  for (size_t i = 0; i < exec.items().size(); ++i)
    if (exec.items()[i].node->name == node) return static_cast<int>(i);
  throw std::runtime_error("no item " + node);
}

FrameId frame_named(const Executable& exec, const std::string& name) {
  for (int f = 0; f < exec.num_frames(); ++f)
    if (exec.frame(f).name == name) return f;
  throw std::runtime_error("no frame " + name);
}

// Records what the book asks, one line a call: "start 1: w/NextIteration w/limit".
struct Recorder final : FrameHost {
  const Executable* exec = nullptr;
  std::vector<std::string> calls;
  Status failed = ops::ok_status();

  std::string names(const std::vector<OutValue>& values) const {
    std::string s;
    for (const OutValue& v : values) s += " " + exec->items()[static_cast<size_t>(v.item)].node->name + (v.dead ? "(dead)" : "");
    return s;
  }
  void start(int64_t i, std::vector<OutValue>&& values) override {
    calls.push_back("start " + std::to_string(i) + ":" + names(values));
  }
  void deliver(int64_t i, std::vector<OutValue>&& values) override {
    calls.push_back("deliver " + std::to_string(i) + ":" + names(values));
  }
  void transfer(int64_t i, TransferBatch&& batch) override {
    calls.push_back("transfer " + std::to_string(i) + ": " + std::to_string(batch.values.size()));
  }
  void reported(const IterationReport& r) override { calls.push_back("reported " + std::to_string(r.iteration)); }
  void exits(std::vector<OutValue>&& live) override { calls.push_back("exits:" + names(live)); }
  void retire(int64_t i) override { calls.push_back("retire " + std::to_string(i)); }
  void done(std::vector<OutValue>&& values) override { calls.push_back("done:" + names(values)); }
  void fail(const Status& s) override {
    failed = s;
    calls.push_back("fail");
  }
  // The calls since the last take.
  std::vector<std::string> take() { return std::exchange(calls, {}); }
};

struct Loop {
  explicit Loop(int parallel_iterations = 10, int64_t max_iterations = 0)
      : exec(loop_exec(parallel_iterations)), frame(frame_named(*exec, "w")) {
    guard.max_iterations = max_iterations;
    host.exec = exec.get();
    book = std::make_unique<FrameBook>(*exec, frame, Tag().child("w", 0), guard, host);
  }
  OutValue value(const std::string& node, bool dead = false) const {
    return {item(*exec, node), dead ? ops::Tensor() : ops::Tensor::scalar<int32_t>(1), dead};
  }
  // Iteration i reports: what it sent on, whether it is quiescent, and
  // that it saw everything the book sent it.
  void report(int64_t i, std::vector<OutValue> next, std::vector<OutValue> exits, bool quiescent = true) {
    IterationReport r;
    r.iteration = i;
    r.next_iterations = std::move(next);
    r.exits = std::move(exits);
    r.quiescent = quiescent;
    r.received = book->is_active(i) ? book->sent(i) : 0;
    book->on_report(r);
  }
  void enter(std::vector<OutValue> values) { book->on_enter(values); }

  std::shared_ptr<const Executable> exec;
  FrameId frame;
  StepGuard guard;
  Recorder host;
  std::unique_ptr<FrameBook> book;
};

using Calls = std::vector<std::string>;

}  // namespace

BOOST_AUTO_TEST_SUITE(frame_book)

BOOST_AUTO_TEST_CASE(a_loop_runs_its_iterations_in_order_and_ends_with_its_dead_exits) {
  Loop l;
  l.enter({l.value("w/Enter")});
  // The loop variable starts iteration 0; the invariant is still to come,
  // so iteration 0 is not done even when it says it is quiescent.
  BOOST_TEST(l.host.take() == (Calls{"start 0: w/Enter"}));
  l.enter({l.value("w/limit")});
  BOOST_TEST(l.host.take() == (Calls{"deliver 0: w/limit"}));
  l.report(0, {l.value("w/NextIteration")}, {l.value("w/Exit", true)});
  // The invariant goes with every later iteration; 0 is retired once done.
  BOOST_TEST(l.host.take() == (Calls{"reported 0", "start 1: w/NextIteration w/limit", "retire 0"}));
  l.report(1, {l.value("w/NextIteration", true)}, {l.value("w/Exit")});
  // A live Exit leaves at once; the dead NextIteration is held, not started.
  BOOST_TEST(l.host.take() == (Calls{"reported 1", "exits: w/Exit", "retire 1", "done:"}));
  BOOST_TEST(l.book->finished());
  BOOST_TEST(l.host.failed.ok());
}

BOOST_AUTO_TEST_CASE(an_exit_that_never_ran_live_is_delivered_dead_when_the_frame_is_done) {
  Loop l;
  l.enter({l.value("w/Enter"), l.value("w/limit")});
  l.host.take();
  l.report(0, {}, {l.value("w/Exit", true)});
  BOOST_TEST(l.host.take() == (Calls{"reported 0", "retire 0", "done: w/Exit(dead)"}));
}

BOOST_AUTO_TEST_CASE(an_iteration_is_not_retired_before_it_has_seen_what_was_sent_to_it) {
  Loop l;
  l.enter({l.value("w/Enter"), l.value("w/limit")});
  l.host.take();
  IterationReport r;
  r.iteration = 0;
  r.quiescent = true;
  r.received = 0;  // the start is not counted yet
  l.book->on_report(r);
  BOOST_TEST(l.host.take() == (Calls{"reported 0"}));
  BOOST_TEST(l.book->is_active(0));
  l.report(0, {}, {});
  BOOST_TEST(l.host.take() == (Calls{"reported 0", "retire 0", "done: w/Exit(dead)"}));
}

BOOST_AUTO_TEST_CASE(the_window_of_parallel_iterations_defers_the_next_until_the_oldest_retires) {
  Loop l(/*parallel_iterations=*/1);
  l.enter({l.value("w/Enter"), l.value("w/limit")});
  l.host.take();
  // Iteration 0 sends its NextIteration but is not done: 1 must wait.
  l.report(0, {l.value("w/NextIteration")}, {}, /*quiescent=*/false);
  BOOST_TEST(l.host.take() == (Calls{"reported 0"}));
  BOOST_TEST(!l.book->is_active(1));
  l.report(0, {}, {});
  BOOST_TEST(l.host.take() == (Calls{"reported 0", "retire 0", "start 1: w/NextIteration w/limit"}));
  BOOST_TEST(l.book->is_active(1));
}

BOOST_AUTO_TEST_CASE(next_iteration_values_for_a_running_iteration_are_delivered_after_retiring) {
  Loop l;
  l.enter({l.value("w/Enter"), l.value("w/limit")});
  l.report(0, {l.value("w/NextIteration")}, {}, /*quiescent=*/false);
  l.host.take();
  // A second NextIteration value of 0 for 1, which runs: counted first,
  // sent after the book has retired what it can.
  l.report(0, {l.value("w/NextIteration")}, {});
  BOOST_TEST(l.host.take() == (Calls{"reported 0", "retire 0", "deliver 1: w/NextIteration"}));
}

BOOST_AUTO_TEST_CASE(a_transfer_before_its_iteration_is_held_and_one_after_it_is_an_error) {
  Loop l;
  TransferBatch early;
  early.iteration = 1;
  early.values.resize(2);
  l.book->on_transfer(early);
  l.enter({l.value("w/Enter"), l.value("w/limit")});
  BOOST_TEST(l.host.take() == (Calls{"start 0: w/Enter w/limit"}));
  l.report(0, {l.value("w/NextIteration")}, {});
  BOOST_TEST(l.host.take() == (Calls{"reported 0", "start 1: w/NextIteration w/limit", "transfer 1: 2", "retire 0"}));
  // Iteration 1 saw the start and the transfer: two messages.
  BOOST_TEST(l.book->sent(1) == 2);
  TransferBatch late;
  late.iteration = 0;
  late.values.resize(1);
  l.book->on_transfer(late);
  BOOST_TEST(l.book->stopped());
  BOOST_TEST(l.host.failed.code() == ops::Error::internal);
  BOOST_TEST(l.host.failed.message().find("an iteration that is done") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_frame_that_ends_with_a_transfer_for_an_iteration_that_never_ran_fails) {
  Loop l;
  TransferBatch early;
  early.iteration = 5;
  early.values.resize(1);
  l.book->on_transfer(early);
  l.enter({l.value("w/Enter"), l.value("w/limit")});
  l.report(0, {}, {});
  BOOST_TEST(l.book->stopped());
  BOOST_TEST(l.host.failed.message().find("an iteration that never ran") != std::string::npos);
  BOOST_TEST(l.host.failed.message().find("w/5") != std::string::npos, l.host.failed.message());
}

BOOST_AUTO_TEST_CASE(the_iteration_limit_stops_the_frame_naming_it_and_the_tag) {
  Loop l(10, /*max_iterations=*/2);
  l.enter({l.value("w/Enter"), l.value("w/limit")});
  l.report(0, {l.value("w/NextIteration")}, {});
  l.report(1, {l.value("w/NextIteration")}, {});
  BOOST_TEST(l.book->stopped());
  BOOST_TEST(l.host.failed.code() == ops::Error::resource_exhausted);
  BOOST_TEST(l.host.failed.message().find("frame 'w' at tag") != std::string::npos, l.host.failed.message());
  // Nothing after the failure: no iteration 2, no done.
  const Calls calls = l.host.take();
  BOOST_TEST(std::count(calls.begin(), calls.end(), "done:") == 0);
  BOOST_TEST(calls.back() == "fail");
}

BOOST_AUTO_TEST_CASE(a_second_live_value_of_one_exit_is_an_error) {
  Loop l;
  l.enter({l.value("w/Enter"), l.value("w/limit")});
  l.report(0, {l.value("w/NextIteration")}, {l.value("w/Exit")}, false);
  l.report(0, {}, {l.value("w/Exit")}, false);
  BOOST_TEST(l.host.failed.code() == ops::Error::invalid_graph);
  BOOST_TEST(l.host.failed.message().find("Exit 'w/Exit' got a second live value") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_report_for_an_iteration_that_is_not_running_is_an_error) {
  Loop l;
  l.enter({l.value("w/Enter"), l.value("w/limit")});
  l.report(3, {}, {});
  BOOST_TEST(l.host.failed.code() == ops::Error::internal);
  BOOST_TEST(l.host.failed.message().find("iteration 3, which is not running") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_enter_after_iteration_0_is_an_error) {
  Loop l;
  l.enter({l.value("w/Enter"), l.value("w/limit")});
  l.report(0, {l.value("w/NextIteration")}, {});
  l.host.take();
  l.enter({l.value("w/limit")});
  BOOST_TEST(l.host.failed.message().find("an Enter value after iteration 0") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_root_frame_starts_at_once_and_is_done_with_its_fetches) {
  auto exec = loop_exec(10);
  StepGuard guard;
  Recorder host;
  host.exec = exec.get();
  FrameBook book(*exec, graph::kRootFrame, Tag(), guard, host);
  BOOST_TEST(book.start_root());
  BOOST_TEST(host.take() == (Calls{"start 0:"}));
  IterationReport r;
  r.iteration = 0;
  r.quiescent = true;
  r.received = book.sent(0);
  r.fetches.push_back({item(*exec, "w/Exit"), ops::Tensor::scalar<int32_t>(3), false});
  book.on_report(r);
  BOOST_TEST(host.take() == (Calls{"reported 0", "retire 0", "done: w/Exit"}));
}

BOOST_AUTO_TEST_SUITE_END()
