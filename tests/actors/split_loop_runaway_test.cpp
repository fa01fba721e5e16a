// A split loop ran away: a NextIteration whose value is live but which is
// dead through something else — a control input, a value from another
// partition, a cond of the body — starts no iteration on one device, but
// split, the continue signal read only its data input and stayed live, so
// a partition iterated until --max-iterations stopped it. The 12-node graph
// of the report (tests/data/graphs/next_iteration_dead_by_control.pbtxt)
// and its siblings, at every nesting depth and with the pivot on the
// NextIteration's partition or another, on 1-3 devices under every
// placement strategy and executor mode.
#include <boost/test/unit_test.hpp>

#include <fmt/format.h>

#include "session_test_util.hpp"
#include "test_graphs.hpp"

using namespace tagflow;
using namespace tagflow::testing;

namespace {

const std::vector<graph::PlacementOptions> placements() {
  std::vector<graph::PlacementOptions> out(1);  // default
  out.emplace_back();
  out.back().strategy = graph::PlacementOptions::Strategy::round_robin;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    out.emplace_back();
    out.back().strategy = graph::PlacementOptions::Strategy::random;
    out.back().seed = seed;
  }
  return out;
}

std::string describe(const graph::PlacementOptions& p) {
  switch (p.strategy) {
    case graph::PlacementOptions::Strategy::round_robin: return "round-robin";
    case graph::PlacementOptions::Strategy::random: return fmt::format("random:{}", p.seed);
    default: return "default";
  }
}

// Runs `g` fetching `fetch` with n = `n` on 1-3 devices under every
// placement and mode; every run must give `want`.
void runs_everywhere(const graph::Graph& g, const std::string& fetch, int32_t n, int32_t want,
                     const std::string& what) {
  graph::Graph unplaced = g;  // one device cannot hold the nodes that name CPU:1
  for (graph::NodeId id = 0; id < unplaced.num_nodes(); ++id) unplaced.mutable_node(id).device.clear();
  for (const Mode& m : modes())
    for (int devices = 1; devices <= 3; ++devices)
      for (const graph::PlacementOptions& place : placements()) {
        if (devices == 1 && place.strategy != graph::PlacementOptions::Strategy::by_default) continue;
        BOOST_TEST_CONTEXT(what << ", " << m.name << ", " << devices << " device(s), " << describe(place)) {
          actors::SessionOptions o;
          o.num_devices = devices;
          o.placement = place;
          o.max_iterations = 100;  // a runaway fails here instead of running for ever
          o.timeout = std::chrono::seconds(20);
          auto s = make_session(devices == 1 ? unplaced : g, m, o);
          auto r = s->run({{"n", ops::Tensor::scalar<int32_t>(n)}}, {fetch});
          BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
          BOOST_TEST(r->at(0).scalar_value<int32_t>() == want);
          BOOST_TEST(no_step_actor_left(*s));
        }
      }
}

// How the NextIteration of the innermost loop's variable v, whose value is
// the loop invariant n, is made dead in the loop's last iteration.
enum class Path {
  control,       // NextIteration(n, ^Identity)
  remote_value,  // NextIteration(Identity(n, ^Identity)), that Identity on another device
  cond_value,    // NextIteration(Merge of a cond on i < 100 passing n)
  cond_control,  // NextIteration(n, ^that Merge)
};

const char* path_name(Path p) {
  switch (p) {
    case Path::control: return "a control input";
    case Path::remote_value: return "a value from another partition";
    case Path::cond_value: return "a cond's value";
    case Path::cond_control: return "a control input from a cond";
  }
  return "?";
}

// A GraphDef of `depth` nested loops (TensorFlow's form, pivot edges
// included); the innermost runs `trips` iterations of (i += 1; v = n) from
// v = 4, the outer ones two iterations each of r = the inner result. The
// innermost variable's Merge, Switch, Exit and NextIteration are on CPU:0,
// its predicate on CPU:0 (`pivot_with_next`) or CPU:1, the nodes of `path`
// on CPU:1; the rest is left to the placement.
class SiblingWriter {
 public:
  SiblingWriter(Path path, int depth, bool pivot_with_next, int trips)
      : path_(path), depth_(depth), pivot_here_(pivot_with_next), trips_(trips) {}

  std::string write() {
    node("n", "Placeholder", {}, attr_type("dtype") + " attr { key: \"shape\" value { shape { } } }");
    node("zero", "Const", {}, int_const(0));
    node("four", "Const", {}, int_const(4));
    result_ = level(1, "", "n", "zero", "four");
    return out_;
  }
  const std::string& result() const { return result_; }

 private:
  static std::string attr_type(const char* key, const char* t = "DT_INT32") {
    return fmt::format(" attr {{ key: \"{}\" value {{ type: {} }} }}", key, t);
  }
  static std::string int_const(int v) {
    return attr_type("dtype") +
           fmt::format(" attr {{ key: \"value\" value {{ tensor {{ dtype: DT_INT32 tensor_shape {{ }} int_val: {} }} }} }}", v);
  }
  void node(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
            const std::string& attrs, const std::string& device = "") {
    out_ += "node { name: \"" + name + "\" op: \"" + op + "\"";
    for (const std::string& in : inputs) out_ += " input: \"" + in + "\"";
    if (!device.empty()) out_ += " device: \"" + device + "\"";
    out_ += attrs + " }\n";
  }
  std::string enter(const std::string& name, const std::string& in, const std::string& frame, bool invariant,
                    const std::string& control = "") {
    std::vector<std::string> inputs{in};
    if (!control.empty()) inputs.push_back("^" + control);
    node(name, "Enter", inputs,
         attr_type("T") + fmt::format(" attr {{ key: \"frame_name\" value {{ s: \"{}\" }} }}", frame) +
             fmt::format(" attr {{ key: \"is_constant\" value {{ b: {} }} }}", invariant ? "true" : "false") +
             " attr { key: \"parallel_iterations\" value { i: 10 } }");
    return name;
  }

  // Loop `k` (1: outermost) inside the body whose pivot is `pivot` (empty:
  // the root), with n, 0 and 4 as seen there; returns its result's Exit.
  std::string level(int k, const std::string& pivot, const std::string& n, const std::string& zero,
                    const std::string& four) {
    const bool innermost = k == depth_;
    const std::string L = pivot.empty() ? "" : pivot.substr(0, pivot.rfind('/') + 1);
    const std::string P = L + (innermost ? "w/" : fmt::format("o{}/", k)), F = P + "while_context";
    const std::string cpu0 = innermost ? "/device:CPU:0" : "", cpu1 = innermost ? "/device:CPU:1" : "";
    // TensorFlow's pivot edge on an Enter of an outer invariant
    const std::string inv = enter(P + "n", n, F, true, pivot);
    enter(P + "e_i", zero, F, false);
    enter(P + "e_v", innermost ? four : zero, F, false);
    node(P + "m_i", "Merge", {P + "e_i", P + "n_i"}, attr_type("T") + " attr { key: \"N\" value { i: 2 } }");
    node(P + "m_v", "Merge", {P + "e_v", P + "n_v"}, attr_type("T") + " attr { key: \"N\" value { i: 2 } }", cpu0);
    node(P + "limit", "Const", {"^" + P + "m_i"}, int_const(innermost ? trips_ : 2));
    const std::string pred_device = pivot_here_ ? cpu0 : cpu1;
    node(P + "less", "Less", {P + "m_i", P + "limit"}, attr_type("T"), pred_device);
    node(P + "cond", "LoopCond", {P + "less"}, "", pred_device);
    for (const char* v : {"i", "v"}) {
      const std::string d = std::string(v) == "v" ? cpu0 : "";
      node(P + "s_" + v, "Switch", {P + "m_" + v, P + "cond"}, attr_type("T"), d);
      node(P + "x_" + v, "Exit", {P + "s_" + v}, attr_type("T"), d);
      node(P + "id_" + v, "Identity", {P + "s_" + v + ":1"}, attr_type("T"));
    }
    const std::string id = P + "id_i";
    node(P + "one", "Const", {"^" + id}, int_const(1));
    node(P + "i_next", "Add", {id, P + "one"}, attr_type("T"));
    node(P + "n_i", "NextIteration", {P + "i_next"}, attr_type("T"));
    if (!innermost) {
      node(P + "zero", "Const", {"^" + id}, int_const(0));
      node(P + "four", "Const", {"^" + id}, int_const(4));
      const std::string inner = level(k + 1, id, inv, P + "zero", P + "four");
      node(P + "n_v", "NextIteration", {inner}, attr_type("T"), cpu0);
      return P + "x_v";
    }
    std::string merge;
    if (path_ == Path::cond_value || path_ == Path::cond_control) {
      node(P + "big", "Const", {"^" + id}, int_const(100));
      node(P + "p", "Less", {id, P + "big"}, attr_type("T"), cpu1);
      node(P + "sw", "Switch", {inv, P + "p"}, attr_type("T"), cpu1);
      node(P + "t", "Identity", {P + "sw:1"}, attr_type("T"));
      node(P + "f", "Identity", {P + "sw"}, attr_type("T"));
      merge = P + "merge";
      node(merge, "Merge", {P + "t", P + "f"}, attr_type("T") + " attr { key: \"N\" value { i: 2 } }", cpu1);
    }
    switch (path_) {
      case Path::control:
        node(P + "n_v", "NextIteration", {inv, "^" + id}, attr_type("T"), cpu0);
        break;
      case Path::remote_value:
        node(P + "far", "Identity", {inv, "^" + id}, attr_type("T"), cpu1);
        node(P + "n_v", "NextIteration", {P + "far"}, attr_type("T"), cpu0);
        break;
      case Path::cond_value:
        node(P + "n_v", "NextIteration", {merge}, attr_type("T"), cpu0);
        break;
      case Path::cond_control:
        node(P + "n_v", "NextIteration", {inv, "^" + merge}, attr_type("T"), cpu0);
        break;
    }
    return P + "x_v";
  }

  Path path_;
  int depth_;
  bool pivot_here_;
  int trips_;
  std::string out_, result_;
};

}  // namespace

BOOST_AUTO_TEST_SUITE(split_loop_runaway)

// The report's graph: a zero-iteration loop (a constant false predicate
// made dependent on the Merge) whose NextIteration takes a loop invariant
// and a control input from the body's Identity, dead in iteration 0. One
// device gives 4, as TensorFlow does; split, a partition iterated on.
BOOST_AUTO_TEST_CASE(a_next_iteration_dead_only_through_a_control_input_stops_a_split_loop) {
  auto read = graph::import_graph_file(std::string(TAGFLOW_TEST_DATA) + "/graphs/next_iteration_dead_by_control.pbtxt");
  BOOST_REQUIRE_MESSAGE(read.ok(), read.status().to_string());
  const graph::Graph& g = *read;
  BOOST_REQUIRE_EQUAL(g.num_nodes(), 12);
  runs_everywhere(g, "while/Exit", 3, 4, "the 12-node graph");
}

BOOST_AUTO_TEST_CASE(a_next_iteration_dead_through_any_path_stops_a_split_loop_at_every_depth) {
  for (Path path : {Path::control, Path::remote_value, Path::cond_value, Path::cond_control})
    for (int depth = 1; depth <= 3; ++depth)
      for (bool pivot_with_next : {true, false})
        for (int trips : {0, 2}) {
          SiblingWriter w(path, depth, pivot_with_next, trips);
          const std::string text = w.write();
          graph::Graph g = parse(text);
          const std::string what = fmt::format("dead through {}, depth {}, pivot {} the NextIteration, {} trips",
                                               path_name(path), depth, pivot_with_next ? "with" : "apart from", trips);
          runs_everywhere(g, w.result(), 7, trips == 0 ? 4 : 7, what);
        }
}

BOOST_AUTO_TEST_SUITE_END()
