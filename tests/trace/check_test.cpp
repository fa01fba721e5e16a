// The checker on real traces — every graph of the multi-device suite on 1-3
// devices at every thread mode holds every invariant — and on traces
// broken one way at a time, where it names the rule and the event.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cctype>

#include "actors/partition_cases.hpp"
#include "trace/check.hpp"
#include "traced_steps.hpp"

using namespace tagflow;
using namespace tagflow::testing;

namespace {

Trace split_loop_trace() {
  Trace t = trace_step(split_cond_in_loop(), modes()[0], {}, {"w/acc_exit", "w/Exit"}, nullptr, on_devices(2));
  BOOST_REQUIRE(violations(t) == "");
  return t;
}

std::vector<Event> copy(const Trace& t) { return t.events(); }

Trace rebuild(const Trace& t, std::vector<Event> events) {
  std::map<uint64_t, std::shared_ptr<const trace::PartitionNames>> tables;
  for (const Event& e : t.events())
    if (e.kind == Kind::step_started) {
      auto names = t.names(e.step, e.partition);
      tables[e.key] = std::shared_ptr<const trace::PartitionNames>(names, [](const trace::PartitionNames*) {});
    }
  return Trace(std::move(events), std::move(tables));
}

// The rules broken, and the first index found for each.
std::map<std::string, size_t> broken(const Trace& t) {
  std::map<std::string, size_t> out;
  for (const trace::Violation& v : trace::check(t)) out.emplace(v.rule, v.index);
  return out;
}

size_t find(const Trace& t, Kind k, const std::function<bool(const Event&)>& also = [](const Event&) { return true; }) {
  for (size_t i = 0; i < t.size(); ++i)
    if (t[i].kind == k && also(t[i])) return i;
  BOOST_FAIL("no such event");
  return 0;
}

// Writes a trace the checker found wrong to a file, for `tagflow trace`.
std::string keep_trace(const Trace& t, std::string name) {
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  const std::string path = "/tmp/tagflow_check_" + name + ".jsonl";
  std::string error;
  if (!trace::write_trace(t, path, &error)) return error;
  return path;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(trace_check)

BOOST_AUTO_TEST_CASE(every_graph_of_the_multi_device_suite_holds_every_invariant) {
  using namespace partition_cases;
  for (const Case& c : cases()) {
    for (int devices : {1, 2, 3}) {
      for (const Mode& m : modes()) {
        BOOST_TEST_CONTEXT(c.name << ", " << devices << " devices, " << m.name) {
          trace::MemorySink sink;
          actors::SessionOptions o = on_devices(devices);
          o.placement.strategy = graph::PlacementOptions::Strategy::random;
          o.placement.seed = static_cast<uint64_t>(devices * 7 + m.threads);
          o.events = &sink;
          auto s = make_session(c.graph(), m, o);
          for (const Step& step : c.steps) (void)s->run(step.feeds, step.fetches, step.targets);
          s.reset();
          const std::string found = violations(sink.trace());
          BOOST_TEST(found == "");
          if (!found.empty()) BOOST_TEST_MESSAGE("the trace: " << keep_trace(sink.trace(), c.name));
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_node_that_runs_twice_at_a_tag) {
  Trace t = split_loop_trace();
  std::vector<Event> e = copy(t);
  const size_t i = find(t, Kind::node_ran, [&](const Event& x) { return t.node_name(x) == "w/c/Merge" && x.iteration == 2; });
  e.insert(e.begin() + static_cast<long>(i) + 1, e[i]);
  auto b = broken(rebuild(t, e));
  BOOST_REQUIRE(b.count("once per tag") == 1u);
  BOOST_TEST(b["once per tag"] == i + 1);
  for (const trace::Violation& v : trace::check(rebuild(t, e)))
    if (v.rule == "once per tag") BOOST_TEST(v.what.find("Merge 'w/c/Merge' fired at tag w/2") != std::string::npos, v.what);
}

BOOST_AUTO_TEST_CASE(a_transfer_never_received_or_received_twice) {
  Trace t = split_loop_trace();
  const size_t r = find(t, Kind::message_received, [](const Event& x) { return x.message == trace::MessageKind::transfer; });
  std::vector<Event> dropped = copy(t);
  dropped.erase(dropped.begin() + static_cast<long>(r));
  BOOST_TEST(broken(rebuild(t, dropped)).count("transfers") == 1u);
  std::vector<Event> twice = copy(t);
  twice.insert(twice.begin() + static_cast<long>(r), twice[r]);
  BOOST_TEST(broken(rebuild(t, twice)).count("transfers") == 1u);
  std::vector<Event> flipped = copy(t);
  flipped[r].dead = !flipped[r].dead;
  BOOST_TEST(broken(rebuild(t, flipped)).count("transfers") == 1u);
}

BOOST_AUTO_TEST_CASE(an_event_outside_its_iteration_frame_or_step) {
  Trace t = split_loop_trace();
  // an iteration that ends before one of its nodes ran
  const size_t ran = find(t, Kind::node_ran, [&](const Event& x) { return x.iteration == 3; });
  const size_t done = find(t, Kind::iteration_done,
                           [&](const Event& x) { return x.iteration == 3 && x.partition == t[ran].partition; });
  std::vector<Event> early = copy(t);
  std::swap(early[ran], early[done]);
  BOOST_TEST(broken(rebuild(t, early)).count("iterations close") == 1u);
  // an event after the step ended
  const size_t end = find(t, Kind::step_done);
  std::vector<Event> late = copy(t);
  Event extra = t[ran];
  extra.partition = t[end].partition;
  late.push_back(extra);
  auto b = broken(rebuild(t, late));
  BOOST_TEST(b.count("step end") == 1u);
  BOOST_TEST(b["step end"] == t.size());
}

BOOST_AUTO_TEST_CASE(a_control_loop_that_runs_other_iterations_than_the_pivot) {
  Trace t = split_loop_trace();
  std::vector<Event> e = copy(t);
  // the last iteration of the loop on CPU:1, gone
  const int32_t cpu1 = partition_named(t, "CPU:1");
  int64_t last = 0;
  for (const Event& x : t.events())
    if (x.kind == Kind::iteration_started && x.partition == cpu1 && x.instance != 0) last = std::max(last, x.iteration);
  e.erase(std::remove_if(e.begin(), e.end(), [&](const Event& x) {
            return x.partition == cpu1 && x.instance != 0 && x.iteration == last;
          }), e.end());
  auto b = broken(rebuild(t, e));
  BOOST_TEST(b.count("control loops") == 1u);
}

BOOST_AUTO_TEST_CASE(a_dead_value_from_a_live_input) {
  Trace t = trace_step(parse(cond_in_loop()), modes()[0], {}, {"w/acc_exit"});
  BOOST_REQUIRE(violations(t) == "");
  std::vector<Event> e = copy(t);
  // w/c/plus dead in an iteration where its Switch input was live: claim the
  // Switch took the other output
  const size_t dead = find(t, Kind::value_dead, [&](const Event& x) { return t.node_name(x) == "w/c/plus"; });
  const size_t sw = find(t, Kind::node_ran, [&](const Event& x) {
    return t.node_name(x) == "w/c/sw_acc" && x.iteration == t[dead].iteration && x.partition == t[dead].partition;
  });
  BOOST_REQUIRE(t[sw].port >= 0);
  e[sw].port = 1 - e[sw].port;
  auto b = broken(rebuild(t, e));
  BOOST_TEST(b.count("dead in, dead out") == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
