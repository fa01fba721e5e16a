// Every real TensorFlow graph of the test data (tests/data/corpus, its
// ATTRIBUTION.md names the sources) runs on 1 to 3 devices under the
// default, round-robin and random placements and gives what one device
// gives: placement follows TensorFlow's colocation rules (resource and ref
// edges, `_class` groups) whatever the strategy, so no strategy makes a
// graph fail that the default runs. The SavedModels have the same suite in
// saved_model_test.cpp (every_saved_model_runs_split_under_every_placement).
// Left out: grappler_while_loop_var_handle_op_compact (not type-correct, as
// its INDEX says: refused before it runs), tfg_backedge_segment_cond_in_function
// (a function library with no nodes), grappler_vsched_send_recv (a _Send and
// _Recv pair TensorFlow had already partitioned).
#include <boost/test/unit_test.hpp>

#include "graph/io/variables.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Shape;
using ops::Tensor;

namespace {

struct Case {
  const char* file;
  actors::Feeds feeds;
  std::vector<std::string> fetches;
  std::vector<std::string> inits = {};  // targets run first, in a step of their own
  std::vector<std::string> targets = {};
  int min_devices = 1;  // a graph that names a device needs it
};

// The graph with every random op seeded: seeds 0, 0 draw fresh numbers in
// each session (as in TensorFlow), and the runs compared must draw the same.
graph::Graph seeded(graph::Graph g) {
  for (int i = 0; i < g.num_nodes(); ++i) {
    graph::Node& n = g.mutable_node(i);
    if (n.attrs.count("seed") == 0 || n.attrs.count("seed2") == 0) continue;
    n.attrs["seed"] = int64_t{87654321};
    n.attrs["seed2"] = int64_t{i + 1};
  }
  return g;
}

// Runs the case in a fresh session: its inits, then the step twice (state
// carried from one step to the next is part of what must agree).
std::vector<Tensor> run_case(const Case& c, actors::SessionOptions o) {
  auto s = make_session(seeded(load_corpus(c.file)), modes()[2], o);
  if (!c.inits.empty()) must_run(*s, c.feeds, {}, c.inits);
  std::vector<Tensor> out = must_run(*s, c.feeds, c.fetches, c.targets);
  std::vector<Tensor> again = must_run(*s, c.feeds, c.fetches, c.targets);
  out.insert(out.end(), again.begin(), again.end());
  return out;
}

// Ids in [0, bound) filling `shape`, the same every call.
Tensor ids(std::initializer_list<int64_t> shape, int bound) {
  const Shape s(shape);
  std::vector<int32_t> v(static_cast<size_t>(s.num_elements()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int32_t>((i * 7 + 3) % static_cast<size_t>(bound));
  return Tensor::from_vector<int32_t>(s, v);
}

std::vector<Case> cases() {
  // tfnet_kmeans_refswitch: 100 points of 784 dimensions; its cond samples
  // the clusters from them on the first step, updates them on the next.
  std::vector<float> points(100 * 784);
  for (size_t i = 0; i < points.size(); ++i) points[i] = static_cast<float>((i * 37) % 101) / 101.0f;
  const graph::Graph kmeans = load_corpus("tfnet_kmeans_refswitch.pbtxt");
  const graph::Graph ner = load_corpus("tfnet_lstm_crf_ner_train.pbtxt");
  std::vector<int32_t> a(10), b(10);
  for (int i = 0; i < 10; ++i) {
    a[static_cast<size_t>(i)] = i;
    b[static_cast<size_t>(i)] = 2 * i - 3;
  }
  return {
      {"grappler_merge_without_loops.pbtxt", {}, {"cond/Merge", "cond/Merge:1", "concat"}},
      {"ov_switch_merge_several_cond_flows.pbtxt", {{"x", Tensor::vector<float>({10.0f, -2.5f})}}, {"AddV2_1", "Merge:1"}},
      {"mlir_switch_n_case_lowered.pbtxt", {}, {"Case/merge/_9", "Case/merge/_9:1"}},
      {"mlir_switch_n_case_lowered.pbtxt", {{"Case/branch_index", Tensor::scalar<int32_t>(1)}}, {"Case/merge/_9:1"}},
      // Its Sub asks for CPU:1 by name: an explicit request, which must be met.
      {"mlir_partial_device_name.pbtxt", {{"input0", Tensor::vector<int32_t>(a)}, {"input1", Tensor::vector<int32_t>(b)}},
       {"Sub"}, {}, {}, 2},
      {"mlir_partition_send_tpu.pbtxt", {}, {"Empty"}},
      {"ov_injected_body_and_if_v2.pbtxt",
       {{"x", Tensor::vector<int32_t>({1, 20})}, {"y", Tensor::vector<int32_t>({3})}}, {"If:0"}},
      {"grappler_function_switch.pbtxt", {}, {"case/cond/Merge", "case/cond/Merge:1", "MyAdd_MPaeanipb7o"}},
      {"grappler_while_loop.pbtxt", {}, {"while/Exit", "while/Exit_1"}},
      {"mlir_graph_while_loop.pbtxt", {}, {"while/Exit"}},
      {"tfnet_cond_test.pbtxt", {}, {"cond/Merge"}},
      // Loops over a resource variable: its initializer first.
      {"grappler_loops_and_resource_vars.pbtxt", {}, {"while/Exit", "while/Exit_1"},
       graph::variable_initializers(load_corpus("grappler_loops_and_resource_vars.pbtxt"))},
      {"tfnet_kmeans_refswitch.pbtxt", {{"Placeholder", Tensor::from_vector<float>(Shape{100, 784}, points)}},
       {"clusters", "Variable"}, graph::variable_initializers(kmeans), {"cond/Merge"}},
      // A BiLSTM-CRF tagger's training step (Adam): the loss and a trained
      // variable after each of two steps.
      {"tfnet_lstm_crf_ner_train.pbtxt",
       {{"word_ids", ids({3, 4}, 23)}, {"sequence_lengths", Tensor::vector<int32_t>({4, 2, 3})},
        {"char_ids", ids({3, 4, 5}, 28)},
        {"word_lengths", Tensor::from_vector<int32_t>(Shape{3, 4}, {5, 3, 1, 4, 2, 5, 0, 0, 3, 3, 4, 0})},
        {"labels", ids({3, 4}, 9)}, {"dropout", Tensor::scalar<float>(1.0f)}, {"lr", Tensor::scalar<float>(0.01f)}},
       {"Mean", "train_step/beta1_power"}, graph::variable_initializers(ner), {"train_step/Adam"}},
  };
}

}  // namespace

BOOST_AUTO_TEST_SUITE(real_graphs_split)

BOOST_AUTO_TEST_CASE(every_real_graph_runs_split_under_every_placement) {
  using Strategy = graph::PlacementOptions::Strategy;
  for (const Case& c : cases()) {
    BOOST_TEST_CONTEXT(c.file) {
      const std::vector<Tensor> reference = run_case(c, {});
      for (int devices = c.min_devices; devices <= 3; ++devices)
        for (Strategy strategy : {Strategy::by_default, Strategy::round_robin, Strategy::random})
          for (uint64_t seed = 1; seed <= (strategy == Strategy::random ? 4u : 1u); ++seed) {
            BOOST_TEST_CONTEXT(devices << " devices, strategy " << static_cast<int>(strategy) << ", seed " << seed) {
              actors::SessionOptions o;
              o.num_devices = devices;
              o.placement.strategy = strategy;
              o.placement.seed = seed;
              const std::vector<Tensor> split = run_case(c, o);
              BOOST_REQUIRE_EQUAL(split.size(), reference.size());
              for (size_t i = 0; i < split.size(); ++i)
                BOOST_TEST(split[i].equals(reference[i]), i << ": " << split[i].debug_string() << " vs "
                                                             << reference[i].debug_string());
            }
          }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
