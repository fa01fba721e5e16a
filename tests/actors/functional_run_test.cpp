// TensorFlow 2 functional control flow run by value, lowered by the session
// (graph/functions/lower_functional.hpp): the corpus graphs with functions, functional
// While/If/Case graphs of tests/data/functional, and a functional While
// against its v1 twin — same values, same iterations in the message trace.
#include <boost/test/unit_test.hpp>

#include <array>
#include <fstream>
#include <sstream>

#include "session_test_util.hpp"
#include "test_graphs.hpp"
#include "trace_harness.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

namespace {

graph::Graph load_functional(const std::string& file) {
  auto g = graph::import_graph_file(std::string(TAGFLOW_TEST_DATA) + "/functional/" + file);
  if (!g.ok()) throw std::runtime_error(g.status().to_string());
  return std::move(g).value();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int32_t int_of(const Tensor& t) { return t.scalar_value<int32_t>(); }

Tensor m64() {
  std::vector<float> v(64 * 64, 0.01f);
  return Tensor::from_vector<float>(ops::Shape{64, 64}, v);
}

// The v1 twin of tests/data/functional/while_matmul.pbtxt, as tf.while_loop
// builds it: i counts in frame w up to the invariant n, acc += sum(m x m).
std::string v1_matmul_loop(int parallel_iterations) {
  const int p = parallel_iterations;
  std::string text = node("n", "Placeholder", {}, type_attr("dtype", "DT_INT32")) +
                     node("m", "Placeholder", {}, type_attr("dtype", "DT_FLOAT")) + int_const("zero", 0) +
                     node("acc0", "Const", {}, type_attr("dtype", "DT_FLOAT") +
                          " attr { key: \"value\" value { tensor { dtype: DT_FLOAT tensor_shape {} float_val: 0 } } }");
  std::string body =
      enter("w/acc_enter", "acc0", "w", false, p, "DT_FLOAT") + enter("w/m", "m", "w", true, p, "DT_FLOAT") +
      merge("w/acc_merge", {"w/acc_enter", "w/acc_next"}, "DT_FLOAT") +
      binary("w/acc_switch", "Switch", "w/acc_merge", "w/LoopCond", "DT_FLOAT") +
      unary("w/acc_identity", "Identity", "w/acc_switch:1", "DT_FLOAT") +
      node("w/mm", "MatMul", {"w/m", "w/m", "^w/Identity"}, type_attr("T", "DT_FLOAT")) +
      node("w/axes", "Const", {"^w/Identity"},
           type_attr("dtype", "DT_INT32") +
               " attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } } "
               "int_val: 0 int_val: 1 } } }") +
      node("w/sum", "Sum", {"w/mm", "w/axes"}, type_attr("T", "DT_FLOAT") + " " + type_attr("Tidx", "DT_INT32")) +
      binary("w/acc_add", "AddV2", "w/acc_identity", "w/sum", "DT_FLOAT") +
      unary("w/acc_next", "NextIteration", "w/acc_add", "DT_FLOAT") +
      unary("w/acc_exit", "Exit", "w/acc_switch", "DT_FLOAT");
  return text + counting_loop("w", "zero", "n", 1, p, body);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(functional_run)

BOOST_AUTO_TEST_CASE(corpus_if_with_a_non_scalar_predicate_takes_the_then_branch) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_corpus("ov_injected_body_and_if_v2.pbtxt"), m);
      Tensor x = Tensor::vector<int32_t>({1, 20}), y = Tensor::vector<int32_t>({3});
      auto out = must_run(*s, {{"x", x}, {"y", y}}, {"If:0"});
      BOOST_TEST(out[0].debug_string() == "int32[2] [4,23]");  // Greater(x, 10) = [F,T]: non-empty
      // A scalar false predicate fed in place of Greater: the else branch,
      // (x - y)^2 through the nested function call.
      out = must_run(*s, {{"x", x}, {"y", y}, {"Greater", Tensor::scalar<bool>(false)}}, {"If"});
      BOOST_TEST(out[0].debug_string() == "int32[2] [4,289]");
      out = must_run(*s, {{"x", x}, {"y", y}, {"Greater", Tensor::scalar<bool>(true)}}, {"If"});
      BOOST_TEST(out[0].debug_string() == "int32[2] [4,23]");
      // A non-scalar predicate without elements is false.
      out = must_run(*s, {{"x", x}, {"y", y}, {"Greater", Tensor::from_vector<bool>(ops::Shape{0}, {})}},
                     {"If"});
      BOOST_TEST(out[0].debug_string() == "int32[2] [4,289]");
      BOOST_TEST(no_step_actor_left(*s));
    }
  }
}

BOOST_AUTO_TEST_CASE(corpus_function_call_after_a_v1_cond) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_corpus("grappler_function_switch.pbtxt"), m);
      auto out = must_run(*s, {}, {"case/cond/Merge", "case/cond/Merge:1", "MyAdd_MPaeanipb7o"});
      BOOST_TEST(out[0].debug_string() == "float32[1,2] [[2,2]]");
      BOOST_TEST(int_of(out[1]) == 1);
      BOOST_TEST(out[2].debug_string() == "float32[1,2] [[4,4]]");
    }
  }
}

BOOST_AUTO_TEST_CASE(corpus_library_function_with_a_v1_cond_called_by_a_wrapper) {
  // foo(pred, x) = pred ? x : x + 1, called directly and via PartitionedCall.
  const std::string wrapper =
      read_text(std::string(TAGFLOW_TEST_DATA) + "/corpus/tfg_backedge_segment_cond_in_function.pbtxt") +
      node("p", "Placeholder", {}, type_attr("dtype", "DT_BOOL")) +
      node("x", "Placeholder", {}, type_attr("dtype", "DT_INT32")) + node("direct", "foo", {"p", "x"}) +
      node("partitioned", "StatefulPartitionedCall", {"p", "x"},
           "attr { key: \"Tin\" value { list { type: DT_BOOL type: DT_INT32 } } } "
           "attr { key: \"Tout\" value { list { type: DT_INT32 } } } "
           "attr { key: \"f\" value { func { name: \"foo\" } } }");
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(parse(wrapper), m);
      for (bool pred : {true, false}) {
        auto out = must_run(*s, {{"p", Tensor::scalar<bool>(pred)}, {"x", Tensor::scalar<int32_t>(5)}},
                            {"direct", "partitioned:0"});
        BOOST_TEST(int_of(out[0]) == (pred ? 5 : 6));
        BOOST_TEST(int_of(out[1]) == (pred ? 5 : 6));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_while_sums_and_may_run_zero_times) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_functional("while_sum.pbtxt"), m);
      auto out = must_run(*s, {{"start", Tensor::scalar<int32_t>(0)}, {"limit", Tensor::scalar<int32_t>(5)}},
                          {"While:0", "While:1", "While:2"});
      BOOST_TEST(int_of(out[0]) == 5);
      BOOST_TEST(int_of(out[1]) == 5);
      BOOST_TEST(int_of(out[2]) == 10);
      out = must_run(*s, {{"start", Tensor::scalar<int32_t>(7)}, {"limit", Tensor::scalar<int32_t>(5)}},
                     {"While:0", "While:2"});
      BOOST_TEST(int_of(out[0]) == 7);
      BOOST_TEST(int_of(out[1]) == 0);
      // `^While` waits for the loop.
      out = must_run(*s, {{"start", Tensor::scalar<int32_t>(0)}, {"limit", Tensor::scalar<int32_t>(1000)}},
                     {"While:2"}, {"While"});
      BOOST_TEST(int_of(out[0]) == 499500);
      BOOST_TEST(no_step_actor_left(*s));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_for_counts_up_and_down_and_refuses_a_zero_delta) {
  // The sum of i*i and the count over TensorFlow's For range, computed here.
  auto expect = [](int start, int limit, int delta) {
    std::pair<int32_t, int32_t> r{0, 0};
    for (int i = start; delta > 0 ? i < limit : i > limit; i += delta) r.first += i * i, r.second += 1;
    return r;
  };
  const std::vector<std::array<int, 3>> ranges = {{0, 5, 1}, {10, 0, -3}, {3, 3, 1}, {5, 0, 2}, {-4, 9, 4}, {2, 2, -1}};
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_functional("for.pbtxt"), m);
      for (const auto& r : ranges) {
        BOOST_TEST_CONTEXT("range " << r[0] << ", " << r[1] << ", " << r[2]) {
          auto out = must_run(*s,
                              {{"start", Tensor::scalar<int32_t>(r[0])},
                               {"limit", Tensor::scalar<int32_t>(r[1])},
                               {"delta", Tensor::scalar<int32_t>(r[2])}},
                              {"For:0", "For:1"});
          const auto want = expect(r[0], r[1], r[2]);
          BOOST_TEST(int_of(out[0]) == want.first);
          BOOST_TEST(int_of(out[1]) == want.second);
        }
      }
      auto zero = s->run({{"start", Tensor::scalar<int32_t>(0)},
                          {"limit", Tensor::scalar<int32_t>(5)},
                          {"delta", Tensor::scalar<int32_t>(0)}},
                         {"For:0"});
      BOOST_REQUIRE(!zero.ok());
      BOOST_TEST((zero.status().code() == ops::Error::invalid_argument), zero.status().to_string());
      BOOST_TEST(zero.status().to_string().find("For 'For': delta must be non-zero") != std::string::npos,
                 zero.status().to_string());
      // A For in a While body: total = sum over j < n of sum of i*i, i < j.
      for (int n : {0, 1, 4}) {
        int32_t want = 0;
        for (int j = 0; j < n; ++j) want += expect(0, j, 1).first;
        auto out = must_run(*s, {{"limit", Tensor::scalar<int32_t>(n)}}, {"Outer:2"});
        BOOST_TEST(int_of(out[0]) == want);
      }
      BOOST_TEST(no_step_actor_left(*s));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_while_in_a_while) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_functional("nested_while.pbtxt"), m);
      for (int n : {0, 1, 4, 10}) {
        auto out = must_run(*s, {{"n", Tensor::scalar<int32_t>(n)}}, {"While:2"});
        BOOST_TEST(int_of(out[0]) == n * (n - 1) / 2);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(ifs_in_a_while_with_bool_and_int_predicates) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_functional("if_in_while.pbtxt"), m);
      auto out = must_run(*s, {{"n", Tensor::scalar<int32_t>(5)}}, {"While:2"});
      BOOST_TEST(int_of(out[0]) == 55);
      out = must_run(*s, {{"n", Tensor::scalar<int32_t>(0)}}, {"While:2"});
      BOOST_TEST(int_of(out[0]) == 0);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_while_in_an_if) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_functional("while_in_if.pbtxt"), m);
      auto out = must_run(*s, {{"pred", Tensor::scalar<bool>(true)}, {"x", Tensor::scalar<int32_t>(3)}}, {"If"});
      BOOST_TEST(int_of(out[0]) == 192);
      out = must_run(*s, {{"pred", Tensor::scalar<bool>(false)}, {"x", Tensor::scalar<int32_t>(3)}}, {"If"});
      BOOST_TEST(int_of(out[0]) == 2);
      // The untaken loop leaves nothing behind either.
      BOOST_TEST(no_step_actor_left(*s));
    }
  }
}

BOOST_AUTO_TEST_CASE(a_case_takes_the_indexed_branch_and_the_last_when_out_of_range) {
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(load_functional("case.pbtxt"), m);
      const std::vector<std::pair<int, int>> want = {{0, 11}, {1, 20}, {2, 42}, {3, 42}, {7, 42}, {-1, 42}};
      for (auto [index, value] : want) {
        BOOST_TEST_CONTEXT("index " << index) {
          auto out = must_run(*s, {{"index", Tensor::scalar<int32_t>(index)}, {"x", Tensor::scalar<int32_t>(10)}},
                              {"Case"});
          BOOST_TEST(int_of(out[0]) == value);
        }
      }
    }
  }
}

// Lowered (SessionOptions::lower_functional), the While is the v1 loop.
BOOST_AUTO_TEST_CASE(a_functional_while_behaves_like_its_v1_twin) {
  const float want = 8 * 64 * 64 * 64 * 0.0001f;
  for (const Mode& m : modes()) {
    for (int p : {1, 2, 4}) {
      BOOST_TEST_CONTEXT(m.name << ", parallel_iterations " << p) {
        graph::Graph functional = load_functional("while_matmul.pbtxt");
        functional.mutable_node(functional.find("While")).attrs["parallel_iterations"] = int64_t{p};
        const actors::Feeds feeds = {{"n", Tensor::scalar<int32_t>(8)}, {"m", m64()}};
        std::vector<Tensor> fv, tv;
        actors::SessionOptions lowered;
        lowered.lower_functional = true;
        Trace f = trace_step(std::move(functional), m, feeds, {"While:0", "While:3"}, &fv, lowered);
        Trace t = trace_step(parse(v1_matmul_loop(p)), m, feeds, {"w/Exit", "w/acc_exit"}, &tv);
        BOOST_TEST(int_of(fv[0]) == int_of(tv[0]));
        BOOST_TEST(fv[1].scalar_value<float>() == tv[1].scalar_value<float>());
        BOOST_TEST(fv[1].scalar_value<float>() == want, boost::test_tools::tolerance(1e-3f));
        for (const Trace* trace : {&f, &t}) BOOST_TEST(violations(*trace) == "");
        // Same iterations of the one frame instance, same window, same overlap.
        BOOST_TEST(iterations_per_frame_instance(f)["While"] == iterations_per_frame_instance(t)["w"]);
        BOOST_TEST(iterations_per_frame_instance(f).size() == iterations_per_frame_instance(t).size());
        BOOST_TEST(max_outstanding_iterations(f, "While") <= p);
        BOOST_TEST(max_outstanding_iterations(t, "w") <= p);
        BOOST_TEST(iterations_overlap(f, "While") == (p > 1));
        BOOST_TEST(iterations_overlap(t, "w") == (p > 1));
        if (m.deterministic)
          BOOST_TEST(max_outstanding_iterations(f, "While") == max_outstanding_iterations(t, "w"));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_functional_op_that_cannot_be_lowered_is_a_clear_error_when_a_step_needs_it) {
  std::string text = node("x", "Placeholder", {}, type_attr("dtype", "DT_INT32")) +
                     node("call", "PartitionedCall", {"x"},
                          "attr { key: \"Tin\" value { list { type: DT_INT32 } } } "
                          "attr { key: \"Tout\" value { list { type: DT_INT32 } } } "
                          "attr { key: \"f\" value { func { name: \"nope\" } } }") +
                     unary("neg", "Neg", "x", "DT_INT32");
  auto s = actors::Session::create(parse(text), {});
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().to_string());
  auto neg = (*s)->run({{"x", Tensor::scalar<int32_t>(4)}}, {"neg"});
  BOOST_REQUIRE_MESSAGE(neg.ok(), neg.status().to_string());
  BOOST_TEST(int_of((*neg)[0]) == -4);
  auto call = (*s)->run({{"x", Tensor::scalar<int32_t>(4)}}, {"call"});
  BOOST_REQUIRE(!call.ok());
  BOOST_TEST(call.status().message().find("calls function 'nope', which is not in the function library") !=
             std::string::npos, call.status().message());
}

BOOST_AUTO_TEST_SUITE_END()
