// Every executable graph of the corpus gives the value its INDEX.md derives
// (tests/data/corpus/ATTRIBUTION.md names the sources).
#include <boost/test/unit_test.hpp>

#include "session_test_util.hpp"
#include "test_graphs.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

BOOST_AUTO_TEST_SUITE(corpus_run)

BOOST_AUTO_TEST_CASE(merge_without_loops_takes_the_else_branch) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_corpus("grappler_merge_without_loops.pbtxt"), m);
      auto out = must_run(*s, {}, {"cond/Merge", "cond/Merge:1", "concat"});
      BOOST_TEST(out[0].debug_string() == "float32[1,2,1] [[[1],[1]]]");
      BOOST_TEST(out[1].scalar_value<int32_t>() == 1);
      BOOST_TEST(out[2].debug_string() == "float32[1,2,2] [[[1,1],[1,1]]]");
    }
  }
}

BOOST_AUTO_TEST_CASE(control_edges_from_a_live_switch_are_live) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_corpus("ov_switch_merge_several_cond_flows.pbtxt"), m);
      auto out = must_run(*s, {{"x", Tensor::vector<float>({10.0f, -2.5f})}}, {"AddV2_1", "Merge:1"});
      BOOST_TEST(out[0].debug_string() == "float32[2] [6,-6.5]");  // x - 4
      BOOST_TEST(out[1].scalar_value<int32_t>() == 1);
    }
  }
}

BOOST_AUTO_TEST_CASE(merge_with_four_inputs) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_corpus("tflite_merge4_placeholders.pbtxt"), m);
      // As in TensorFlow, every placeholder the Merge reads must be fed.
      auto r = s->run({{"a", Tensor::vector<float>({1.0f})}}, {"Merge"});
      BOOST_REQUIRE(!r.ok());
      BOOST_TEST(r.status().message().find("Placeholder 'b' must be fed") != std::string::npos);
      // Several live inputs in one tag: as in TensorFlow, the Merge
      // forwards whichever arrived first, with its index.
      auto out = must_run(*s, {{"a", Tensor::vector<float>({0.0f})}, {"b", Tensor::vector<float>({1.0f})},
                               {"c", Tensor::vector<float>({2.0f})}, {"d", Tensor::vector<float>({3.0f})}},
                          {"Merge", "Merge:1"});
      BOOST_TEST(ops::element_as_double(out[0], 0) == double(out[1].scalar_value<int32_t>()));
    }
  }
  // The same Merge, its inputs now the four outputs of a _SwitchN: exactly
  // one is live, and the Merge forwards it with its index.
  std::string text = node("x", "Placeholder", {}, type_attr("dtype", "DT_FLOAT")) +
                     node("i", "Placeholder", {}, type_attr("dtype", "DT_INT32")) +
                     node("sw", "_SwitchN", {"x", "i"}, type_attr("T", "DT_FLOAT") +
                          " attr { key: \"num_outs\" value { i: 4 } }") +
                     merge("Merge", {"sw", "sw:1", "sw:2", "sw:3"}, "DT_FLOAT");
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(text), m);
      for (int i = 0; i < 4; ++i) {
        auto out = must_run(*s, {{"x", Tensor::vector<float>({float(i), 7.0f})}, {"i", Tensor::scalar<int32_t>(i)}},
                            {"Merge", "Merge:1"});
        BOOST_TEST(ops::element_as_double(out[0], 0) == double(i));
        BOOST_TEST(out[1].scalar_value<int32_t>() == i);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(switch_n_takes_the_indexed_branch) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_corpus("mlir_switch_n_case_lowered.pbtxt"), m);
      auto out = must_run(*s, {}, {"Case/merge/_9", "Case/merge/_9:1"});
      BOOST_TEST(ops::element_as_double(out[0], 0) == 2.0);
      BOOST_TEST(out[1].scalar_value<int32_t>() == 0);
      // Branch 1 instead: feed the index.
      auto one = must_run(*s, {{"Case/branch_index", Tensor::scalar<int32_t>(1)}}, {"Case/merge/_9:1"});
      BOOST_TEST(one[0].scalar_value<int32_t>() == 1);
    }
  }
}

BOOST_AUTO_TEST_CASE(partial_device_names_run_on_the_local_partition) {
  std::vector<int32_t> a(10), b(10), want(10);
  for (int i = 0; i < 10; ++i) {
    a[static_cast<size_t>(i)] = i;
    b[static_cast<size_t>(i)] = 2 * i - 3;
    int32_t sum = a[static_cast<size_t>(i)] + b[static_cast<size_t>(i)];
    want[static_cast<size_t>(i)] = sum - sum * sum;
  }
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_corpus("mlir_partial_device_name.pbtxt"), m);
      auto out = must_run(*s, {{"input0", Tensor::vector<int32_t>(a)}, {"input1", Tensor::vector<int32_t>(b)}}, {"Sub"});
      BOOST_TEST(out[0].equals(Tensor::vector<int32_t>(want)), out[0].debug_string());
    }
  }
}

// A partition TensorFlow dumped on its own: its Empty runs, and its _Send,
// whose _Recv is in a partition the file does not hold, is refused with the
// key no one receives (not left waiting).
BOOST_AUTO_TEST_CASE(a_lone_partition_runs_up_to_its_send) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_corpus("mlir_partition_send_tpu.pbtxt"), m);
      auto out = must_run(*s, {}, {"Empty"});
      BOOST_TEST((out[0].dtype() == ops::DType::bfloat16));
      BOOST_TEST((out[0].shape() == ops::Shape({128, 128})));
      auto sent = s->run({}, {}, {"Empty/_0"});
      BOOST_REQUIRE(!sent.ok());
      BOOST_TEST(sent.status().to_string().find("no _Recv takes key 'edge_5_Empty'") != std::string::npos,
                 sent.status().to_string());
      // The session is still usable.
      BOOST_TEST(must_run(*s, {}, {"Empty"})[0].num_elements() == 128 * 128);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
