// TensorLists through the executor: a TF1-style while loop (Enter, Merge,
// Switch, NextIteration, Exit) whose loop variables are a counter and a
// list, pushing the counter each iteration and stacking the list after the
// loop, at every executor mode; checked against a plain C++ vector.
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <vector>

#include "graph/builder/builder.hpp"
#include "ops/variant.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using graph::GraphBuilder;
using graph::Output;
using ops::DType;
using ops::Tensor;
using Vars = std::vector<Output>;

BOOST_AUTO_TEST_SUITE(tensor_list_run)

BOOST_AUTO_TEST_CASE(a_while_loop_pushes_its_counter_and_the_list_is_stacked_after_it) {
  GraphBuilder b;
  Output n = b.placeholder(DType::int32, {}, "n");
  Output empty = b.op1("EmptyTensorList", {b.vector<int32_t>({}), b.scalar<int32_t>(-1)},
                       {{"element_dtype", DType::int32}});
  auto loop = b.while_loop([&](const Vars& v) { return v[0] < n; },
                           [&](const Vars& v) {
                             Output pushed = b.op1("TensorListPushBack", {v[1], v[0] * 3.0});
                             return Vars{v[0] + 1.0, pushed};
                           },
                           {b.scalar<int32_t>(0), empty});
  Output stacked = b.op1("TensorListStack", {loop[1], b.scalar<int32_t>(-1)}, {{"element_dtype", DType::int32}});
  Output length = b.op1("TensorListLength", {loop[1]});
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  for (const Mode& m : modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto s = make_session(*g, m);
      for (int32_t count : {0, 1, 7, 100}) {
        std::vector<int32_t> expected;
        for (int32_t i = 0; i < count; ++i) expected.push_back(i * 3);
        auto r = must_run(*s, {{"n", Tensor::scalar(count)}}, {stacked.name(), length.name(), loop[1].name()});
        BOOST_TEST(r[0].shape().to_string() == "[" + std::to_string(count) + "]");
        BOOST_TEST((r[0] == Tensor::vector<int32_t>(expected)));
        BOOST_TEST(r[1].scalar_value<int32_t>() == count);
        // The fetched list itself.
        BOOST_TEST(r[2].debug_string() ==
                   "variant[] TensorList<int32>[" + std::to_string(count) + " element" + (count == 1 ? "" : "s") + "]");
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
