// The Chrome trace event format of a split loop's trace: the fields each
// phase needs, begin/end pairs that match, iterations within their frame
// instance's span, and one arrow end for every arrow start.
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include <map>
#include <set>

#include "trace/timeline.hpp"
#include "traced_steps.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using nlohmann::json;

BOOST_AUTO_TEST_SUITE(trace_timeline)

BOOST_AUTO_TEST_CASE(a_split_loop_as_a_chrome_trace) {
  for (const Mode& m : {modes()[0], modes()[2]}) {
    BOOST_TEST_CONTEXT(m.name) {
      Trace t = trace_step(split_cond_in_loop(), m, {}, {"w/acc_exit", "w/Exit"}, nullptr, on_devices(2));
      const json doc = json::parse(trace::timeline_json(t));
      BOOST_REQUIRE(doc.at("traceEvents").is_array());
      std::map<std::string, std::vector<double>> open;      // "cat id name" -> begin times
      std::map<std::string, std::pair<double, double>> spans;  // closed async spans
      std::map<std::string, int> flows;                      // id -> starts - ends
      std::set<int> pids, named;
      size_t slices = 0, arrows = 0;
      for (const json& e : doc.at("traceEvents")) {
        const std::string ph = e.at("ph").get<std::string>();
        BOOST_REQUIRE(e.contains("pid"));
        BOOST_REQUIRE(e.contains("tid"));
        if (ph == "M") {
          if (e.at("name") == "process_name") named.insert(e.at("pid").get<int>());
          continue;
        }
        BOOST_REQUIRE(e.contains("ts"));
        BOOST_REQUIRE(e.at("ts").is_number());
        pids.insert(e.at("pid").get<int>());
        if (ph == "X") {
          BOOST_TEST(e.at("dur").get<double>() >= 0);
          ++slices;
        } else if (ph == "b" || ph == "e") {
          const std::string key = e.at("cat").get<std::string>() + " " + e.at("id").get<std::string>() + " " +
                                  e.at("name").get<std::string>();
          if (ph == "b") {
            open[key].push_back(e.at("ts").get<double>());
          } else {
            BOOST_REQUIRE_MESSAGE(!open[key].empty(), "an end without a begin: " << key);
            spans[key] = {open[key].back(), e.at("ts").get<double>()};
            BOOST_TEST(spans[key].first <= spans[key].second, key);
            open[key].pop_back();
          }
        } else if (ph == "s" || ph == "f") {
          flows[e.at("id").get<std::string>()] += ph == "s" ? 1 : -1;
          ++arrows;
        }
      }
      for (const auto& [key, begins] : open) BOOST_TEST(begins.empty(), "never ended: " << key);
      for (const auto& [id, balance] : flows) BOOST_TEST(balance == 0, "arrow " << id);
      BOOST_TEST(arrows > 0u);
      BOOST_TEST(slices > 0u);
      for (int p : pids) BOOST_TEST(named.count(p) == 1u, "process " << p << " has no name");
      // every iteration inside a span of a frame instance of its partition
      size_t iterations = 0;
      for (const auto& [key, span] : spans) {
        if (key.rfind("iteration ", 0) != 0) continue;
        ++iterations;
        bool inside = false;
        for (const auto& [fkey, frame] : spans)
          inside |= fkey.rfind("frame ", 0) == 0 && frame.first <= span.first && span.second <= frame.second;
        BOOST_TEST(inside, key);
      }
      BOOST_TEST(iterations == 14u);  // 7 iterations of w on each of 2 partitions
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
