// Why is a value dead: in a cond inside a loop, the untaken branch's node
// is traced back to the cond's Switch and its predicate in that iteration
// — within one partition and across two (through the dead transfer).
#include <boost/test/unit_test.hpp>

#include "trace/explain.hpp"
#include "traced_steps.hpp"

using namespace tagflow;
using namespace tagflow::testing;

BOOST_AUTO_TEST_SUITE(trace_explain)

BOOST_AUTO_TEST_CASE(an_untaken_branch_is_traced_back_to_its_switch) {
  // cond_in_loop(): in odd iterations `i % 2 == 0` is false, so w/c/plus
  // (the true branch) is dead and w/c/minus live; in even ones the reverse.
  for (int devices : {1, 2}) {
    for (const Mode& m : modes()) {
      BOOST_TEST_CONTEXT(devices << " device(s), " << m.name) {
        graph::Graph g = devices == 1 ? parse(cond_in_loop()) : split_cond_in_loop();
        Trace t = trace_step(std::move(g), m, {}, {"w/acc_exit"}, nullptr, on_devices(devices));
        for (int64_t i : {1, 3, 5}) {
          trace::Explanation e = trace::explain(t, {"w/c/plus", std::nullopt, i});
          BOOST_REQUIRE(e.found);
          const bool at_switch =
              e.summary.find("because Switch 'w/c/sw_acc' at tag w/" + std::to_string(i)) != std::string::npos ||
              e.summary.find("because Switch 'w/c/sw_i' at tag w/" + std::to_string(i)) != std::string::npos;
          BOOST_TEST(at_switch, e.summary);
          BOOST_TEST(e.summary.find("had predicate false: its output 1 was not taken") != std::string::npos, e.summary);
          BOOST_TEST(e.chain.front().text.find("'w/c/plus' at tag w/" + std::to_string(i)) != std::string::npos);
          if (devices == 2) {
            bool crossed = false;
            for (const trace::DeadLink& l : e.chain) crossed |= l.text.find("its transfer came dead") != std::string::npos;
            BOOST_TEST(crossed, trace::format_explanation(e));
          }
        }
        trace::Explanation minus = trace::explain(t, {"w/c/minus", std::nullopt, 2});
        BOOST_REQUIRE(minus.found);
        BOOST_TEST(minus.summary.find("had predicate true: its output 0 was not taken") != std::string::npos,
                   minus.summary);
        // a live instance has nothing to explain
        trace::Explanation live = trace::explain(t, {"w/c/plus", std::nullopt, 2});
        BOOST_TEST(!live.found);
        BOOST_TEST(live.summary.find("no dead instance of 'w/c/plus'") != std::string::npos, live.summary);
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
