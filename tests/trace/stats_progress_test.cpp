// Stats of a recorded step agree with the trace's own events; progress
// counts a long loop while it runs.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>

#include "trace/progress.hpp"
#include "trace/stats.hpp"
#include "traced_steps.hpp"

using namespace tagflow;
using namespace tagflow::testing;

BOOST_AUTO_TEST_SUITE(trace_stats_and_progress)

BOOST_AUTO_TEST_CASE(stats_count_iterations_nodes_dead_values_and_messages_per_frame) {
  for (int devices : {1, 2}) {
    graph::Graph g = devices == 1 ? parse(cond_in_loop()) : split_cond_in_loop();
    Trace t = trace_step(std::move(g), modes()[2], {}, {"w/acc_exit"}, nullptr, on_devices(devices));
    auto all = trace::stats(t);
    BOOST_REQUIRE(all.size() == 1u);
    const trace::StepStats& s = all.begin()->second;
    BOOST_TEST(s.partitions == devices);
    BOOST_TEST(s.error.empty());
    const std::string frame = t.frame_name(events_of(t, Kind::iteration_started).back().instance);
    const trace::FrameStats& w = s.frames.at(frame);
    BOOST_TEST(w.instances == 1);
    BOOST_TEST(w.iterations == 7 * devices);  // 6 live iterations and the last, on each partition
    int64_t ran = 0, dead = 0, sent = 0;
    for (const Event& e : t.events()) {
      if (e.instance == 0) continue;
      ran += e.kind == Kind::node_ran;
      dead += e.kind == Kind::value_dead;
      sent += e.kind == Kind::message_sent;
    }
    BOOST_TEST(w.nodes_run == ran);
    BOOST_TEST(w.dead_values == dead);
    BOOST_TEST(w.messages == sent);
    BOOST_TEST(trace::format_stats(all).find(frame) != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(progress_shows_a_live_loop_and_its_iterations) {
  for (const Mode& m : {modes()[1], modes()[2]}) {
    BOOST_TEST_CONTEXT(m.name) {
      trace::ProgressSink progress;
      actors::SessionOptions o;
      o.events = &progress;
      auto s = make_session(parse(int_const("start", 0) + node("n", "Placeholder", {}, type_attr("dtype", "DT_INT32")) +
                                  counting_loop("w", "start", "n", 1)),
                            m, o);
      std::atomic<bool> done{false};
      std::thread step([&] {
        must_run(*s, {{"n", ops::Tensor::scalar<int32_t>(200000)}}, {"w/Exit"});
        done = true;
      });
      trace::Progress seen;
      for (int i = 0; i < 200 && !done; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        trace::Progress p = progress.snapshot();
        if (p.live_frames > 0 && !p.iterations.empty()) seen = p;
      }
      step.join();
      BOOST_TEST(seen.live_frames >= 1, "the loop was never seen running");
      BOOST_TEST(seen.iterations.size() == 1u);
      if (!seen.iterations.empty()) BOOST_TEST(seen.iterations.begin()->second > 0);
      BOOST_TEST(seen.nodes_run > 0);
      const trace::Progress after = progress.snapshot();
      BOOST_TEST(after.live_frames == 0);
      BOOST_TEST(after.steps_done == 1);
      BOOST_TEST(after.nodes_run > seen.nodes_run);
      BOOST_TEST(trace::ProgressSink::format(seen).find("live frame instance") != std::string::npos);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
