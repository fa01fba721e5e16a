// The gradients of the TensorList ops (graph/autodiff/list_gradient_functions.cpp)
// with GradientOptions::functional: scalar float64 functions built from
// list ops, their gradients against central finite differences and, taken
// again, their second derivatives against central differences of the
// first (and, for one, against a derivative worked out by hand).
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "gradient_check.hpp"
#include "graph/autodiff/gradients.hpp"
#include "graph/builder/builder.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using graph::Endpoint;
using graph::GraphBuilder;
using graph::Output;
using ops::DType;
using ops::Tensor;

namespace {

const ops::PartialShape kScalar{false, {}};

// A graph with scalar float64 Placeholders `xs` (fed `values`) and one
// float64 scalar output `y`.
struct Program {
  graph::Graph g;
  std::vector<std::string> xs;
  std::vector<double> values;
  std::string y;
};

Program finish(GraphBuilder& b, std::vector<std::string> xs, std::vector<double> values, Output y) {
  BOOST_REQUIRE_MESSAGE(b.ok(), b.status().to_string());
  auto g = b.finish();
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  return {std::move(g).value(), std::move(xs), std::move(values), y.name()};
}

// `in` with the functional gradients of `y` for every x added; their names.
std::pair<graph::Graph, std::vector<std::string>> differentiate(const graph::Graph& in, const std::string& y,
                                                                const std::vector<std::string>& xs) {
  graph::Graph g = in;
  std::vector<Endpoint> x_endpoints;
  for (const std::string& x : xs) x_endpoints.push_back(endpoint(g, x));
  graph::GradientOptions o;
  o.functional = true;
  o.unconnected = graph::GradientOptions::Unconnected::zeros;
  auto r = graph::gradients(g, {endpoint(g, y)}, x_endpoints, {}, o);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  std::vector<std::string> names;
  for (const Endpoint& d : r->dxs) names.push_back(g.endpoint_name(d));
  return {std::move(g), std::move(names)};
}

actors::Feeds feeds(const std::vector<std::string>& xs, const std::vector<double>& values) {
  actors::Feeds f;
  for (size_t i = 0; i < xs.size(); ++i) f.push_back({xs[i], Tensor::scalar<double>(values[i])});
  return f;
}

double run_scalar(actors::Session& s, const Program& p, const std::vector<double>& values, const std::string& y) {
  return must_run(s, feeds(p.xs, values), {y})[0].scalar_value<double>();
}

// Central differences of `y` (an output of the session's graph) along
// every x.
std::vector<double> finite_differences(actors::Session& s, const Program& p, const std::string& y) {
  const double h = 1e-6;
  std::vector<double> d;
  for (size_t i = 0; i < p.xs.size(); ++i) {
    std::vector<double> up = p.values, down = p.values;
    up[i] += h;
    down[i] -= h;
    d.push_back((run_scalar(s, p, up, y) - run_scalar(s, p, down, y)) / (2 * h));
  }
  return d;
}

// First derivatives against finite differences of y, second derivatives
// (the gradient of each first derivative) against finite differences of
// the first; returns the second derivatives, row i the gradient of dy/dx_i.
std::vector<std::vector<double>> check(const Program& p) {
  auto first = differentiate(p.g, p.y, p.xs);
  const graph::Graph& g1 = first.first;
  const std::vector<std::string>& dxs = first.second;
  std::vector<std::vector<double>> hessian;
  for (const Mode& m : {modes()[0], modes()[2]}) {
    BOOST_TEST_CONTEXT(m.name) {
      const std::vector<double> want = finite_differences(*make_session(p.g, m), p, p.y);
      auto s1 = make_session(g1, m);
      const std::vector<Tensor> got = must_run(*s1, feeds(p.xs, p.values), dxs);
      for (size_t i = 0; i < p.xs.size(); ++i)
        BOOST_TEST(close(got[i].scalar_value<double>(), want[i], 1e-6),
                   "d/d" << p.xs[i] << ": " << got[i].scalar_value<double>() << " vs " << want[i]);
      hessian.clear();
      for (size_t i = 0; i < p.xs.size(); ++i) {
        auto second = differentiate(g1, dxs[i], p.xs);
        const std::vector<double> want2 = finite_differences(*s1, p, dxs[i]);
        const std::vector<Tensor> got2 = must_run(*make_session(second.first, m), feeds(p.xs, p.values), second.second);
        hessian.emplace_back();
        for (size_t j = 0; j < p.xs.size(); ++j) {
          const double v = got2[j].scalar_value<double>();
          BOOST_TEST(close(v, want2[j], 1e-5), "d2/d" << p.xs[i] << "d" << p.xs[j] << ": " << v << " vs " << want2[j]);
          hessian.back().push_back(v);
        }
      }
    }
  }
  return hessian;
}

ops::AttrMap f64_list() { return {{"element_dtype", DType::float64}}; }
ops::AttrMap f64_list_shaped() { return {{"element_dtype", DType::float64}, {"shape_type", DType::int32}}; }

Output empty_list(GraphBuilder& b) {
  return b.op1("EmptyTensorList", {b.vector<int32_t>({}), b.scalar<int32_t>(-1)}, f64_list_shaped());
}
Output exp(GraphBuilder& b, Output x) { return b.op1("Exp", {x}); }
Output tanh(GraphBuilder& b, Output x) { return b.op1("Tanh", {x}); }
Output stack(GraphBuilder& b, Output list) { return b.op1("TensorListStack", {list, b.vector<int32_t>({})}, f64_list()); }
Output weighted_sum(GraphBuilder& b, Output v, const std::vector<double>& w) {
  return b.reduce_sum(b.mul(v, b.constant(Tensor::from_vector<double>(ops::Shape{static_cast<int64_t>(w.size())}, w))),
                      b.vector<int32_t>({0}));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(list_gradients)

BOOST_AUTO_TEST_CASE(second_derivative_through_push_and_stack_by_hand) {
  // y = (sum(stack(push(push(empty, x*x), tanh x))))^2 = s^2, s = x^2 + t,
  // t = tanh x: s' = 2x + 1 - t^2, s'' = 2 - 2t(1 - t^2), y'' = 2 s'^2 + 2 s s''.
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output l = b.op1("TensorListPushBack", {empty_list(b), b.mul(x, x)}, f64_list());
  l = b.op1("TensorListPushBack", {l, tanh(b, x)}, f64_list());
  Output s = b.reduce_sum(stack(b, l), b.vector<int32_t>({0}));
  Program p = finish(b, {"x"}, {0.6}, b.mul(s, s));
  const auto hessian = check(p);
  const double xv = p.values[0], t = std::tanh(xv), sv = xv * xv + t, ds = 2 * xv + 1 - t * t;
  BOOST_TEST(close(hessian[0][0], 2 * ds * ds + 2 * sv * (2 - 2 * t * (1 - t * t)), 1e-10));
}

BOOST_AUTO_TEST_CASE(push_back_pop_back_without_list_gradient) {
  // Two pops of three pushes: the rest of the list is unused (its gradient
  // absent), the first element only reaches y through the popped list.
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output l = b.op1("TensorListPushBack", {empty_list(b), b.mul(x, y)}, f64_list());
  l = b.op1("TensorListPushBack", {l, tanh(b, x)}, f64_list());
  l = b.op1("TensorListPushBack", {l, b.mul(y, y)}, f64_list());
  graph::Outputs last = b.op("TensorListPopBack", {l, b.vector<int32_t>({})}, f64_list());
  graph::Outputs middle = b.op("TensorListPopBack", {last[0], b.vector<int32_t>({})}, f64_list());
  Output rest = b.reduce_sum(stack(b, middle[0]), b.vector<int32_t>({0}));
  Output out = b.add(b.mul(last[1], exp(b, middle[1])), b.mul(rest, x));
  check(finish(b, {"x", "y"}, {0.8, -0.5}, out));
}

BOOST_AUTO_TEST_CASE(gather_and_scatter) {
  // l = from_tensor([x, y, x*y, exp x]); g = gather(l, [3, 1]);
  // s = scatter_v2(tanh(g) * g, [0, 2], num_elements 3) (element 1 unset);
  // y = w . stack(s) + sum(g^2) + w' . gather(scatter(g, [1, 0]), [0, 1]).
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output l = b.op1("TensorListFromTensor", {b.stack({x, y, b.mul(x, y), exp(b, x)}), b.vector<int32_t>({})},
                   f64_list_shaped());
  Output g = b.op1("TensorListGather", {l, b.vector<int32_t>({3, 1}), b.vector<int32_t>({})}, f64_list());
  Output s = b.op1("TensorListScatterV2",
                   {b.mul(tanh(b, g), g), b.vector<int32_t>({0, 2}), b.vector<int32_t>({}), b.scalar<int32_t>(3)},
                   f64_list_shaped());
  Output swapped = b.op1("TensorListScatter", {g, b.vector<int32_t>({1, 0}), b.vector<int32_t>({})}, f64_list_shaped());
  Output back = b.op1("TensorListGather", {swapped, b.vector<int32_t>({0, 1}), b.vector<int32_t>({})}, f64_list());
  Output out = b.add(b.add(weighted_sum(b, stack(b, s), {1.0, 2.0, 3.0}), b.reduce_sum(b.mul(g, g), b.vector<int32_t>({0}))),
                     weighted_sum(b, back, {0.5, -1.5}));
  check(finish(b, {"x", "y"}, {0.7, -1.1}, out));
}

BOOST_AUTO_TEST_CASE(scatter_into_an_existing_list) {
  // A reserved list of 4: element 0 set to x*x, then [x*y, tanh y] scattered
  // into elements 0 (overwriting x*x) and 3; element 2 set to y.
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output l = b.op1("TensorListReserve", {b.vector<int32_t>({}), b.scalar<int32_t>(4)}, f64_list_shaped());
  l = b.op1("TensorListSetItem", {l, b.scalar<int32_t>(0), b.mul(x, x)}, f64_list());
  Output before = b.op1("TensorListGetItem", {l, b.scalar<int32_t>(0), b.vector<int32_t>({})}, f64_list());
  l = b.op1("TensorListScatterIntoExistingList", {l, b.stack({b.mul(x, y), tanh(b, y)}), b.vector<int32_t>({0, 3})},
            f64_list());
  l = b.op1("TensorListSetItem", {l, b.scalar<int32_t>(2), y}, f64_list());
  Output out = b.add(weighted_sum(b, stack(b, l), {1.5, 2.0, -1.0, 3.0}), b.mul(before, y));
  check(finish(b, {"x", "y"}, {0.9, 0.4}, out));
}

BOOST_AUTO_TEST_CASE(split_and_concat) {
  // [x, y, x*y, x-y, tanh x] split into lengths [2, 3]; the second part
  // squared pushed back; everything concatenated again, weighted.
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output t = b.stack({x, y, b.mul(x, y), b.sub(x, y), tanh(b, x)});
  Output l = b.op1("TensorListSplit", {t, b.vector<int32_t>({-1}), b.vector<int64_t>({2, 3})}, f64_list_shaped());
  Output second = b.op1("TensorListGetItem", {l, b.scalar<int32_t>(1), b.vector<int32_t>({-1})}, f64_list());
  l = b.op1("TensorListPushBack", {l, b.mul(second, second)}, f64_list());
  graph::Outputs c = b.op("TensorListConcatV2", {l, b.vector<int32_t>({-1}), b.vector<int64_t>({})}, f64_list_shaped());
  check(finish(b, {"x", "y"}, {0.3, -0.7}, weighted_sum(b, c[0], {1, -2, 3, 0.5, 1.5, -1, 2, 0.25})));
}

BOOST_AUTO_TEST_CASE(resize) {
  // [x, y, x*y] resized to 2 (x*y dropped), then to 4 (two unset elements).
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output l = b.op1("TensorListFromTensor", {b.stack({x, y, b.mul(x, y)}), b.vector<int32_t>({})}, f64_list_shaped());
  Output shorter = b.op1("TensorListResize", {l, b.scalar<int32_t>(2)});
  Output longer = b.op1("TensorListResize", {shorter, b.scalar<int32_t>(4)});
  longer = b.op1("TensorListSetItem", {longer, b.scalar<int32_t>(3), b.mul(x, x)}, f64_list());
  Output stacked = stack(b, longer);
  check(finish(b, {"x", "y"}, {1.2, 0.6}, weighted_sum(b, b.mul(stacked, stacked), {1, 2, 3, 4})));
}

BOOST_AUTO_TEST_CASE(length_and_element_shape_take_no_gradient) {
  // y = sum(stack(l)) * len(l) * prod(element_shape + 2): the sizes are
  // constants to the gradient.
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output l = b.op1("TensorListFromTensor", {b.stack({b.mul(x, y), exp(b, y), x}), b.vector<int32_t>({})},
                   f64_list_shaped());
  Output n = b.cast(b.op1("TensorListLength", {l}), DType::float64);
  Output shape = b.op1("TensorListElementShape", {l}, {{"shape_type", DType::int32}});
  Output rank_plus = b.cast(b.add(b.op1("Size", {shape}), b.scalar<int32_t>(2)), DType::float64);
  Output sum = b.reduce_sum(stack(b, l), b.vector<int32_t>({0}));
  check(finish(b, {"x", "y"}, {0.5, 1.3}, b.mul(b.mul(b.mul(sum, sum), n), rank_plus)));
}

BOOST_AUTO_TEST_CASE(a_list_read_several_times) {
  // One list read by GetItem twice, Gather and Stack: its gradients add up
  // as lists.
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output l = b.op1("TensorListFromTensor", {b.stack({x, tanh(b, y), b.mul(x, y)}), b.vector<int32_t>({})},
                   f64_list_shaped());
  Output a = b.op1("TensorListGetItem", {l, b.scalar<int32_t>(0), b.vector<int32_t>({})}, f64_list());
  Output c = b.op1("TensorListGetItem", {l, b.scalar<int32_t>(2), b.vector<int32_t>({})}, f64_list());
  Output g = b.op1("TensorListGather", {l, b.vector<int32_t>({2, 1}), b.vector<int32_t>({})}, f64_list());
  Output out = b.add(b.mul(a, c), b.add(weighted_sum(b, b.mul(g, g), {1.0, -2.0}), weighted_sum(b, stack(b, l), {3, 1, 2})));
  check(finish(b, {"x", "y"}, {-0.4, 0.9}, out));
}

BOOST_AUTO_TEST_CASE(the_builders_tf2_scan_and_map_fn) {
  // GraphBuilder's tf2 scan and map_fn: While loops reading a TensorList
  // (TensorListFromTensor, GetItem) and setting the results into a
  // reserved one (SetItem, Stack), differentiated twice.
  GraphBuilder b(GraphBuilder::Style::tf2);
  Output x = b.placeholder(DType::float64, kScalar, "x");
  Output y = b.placeholder(DType::float64, kScalar, "y");
  Output elems = b.stack({x, b.mul(x, y), tanh(b, y), y});
  graph::Outputs s = b.scan(
      [&](const std::vector<Output>& acc, const std::vector<Output>& e) {
        return std::vector<Output>{tanh(b, b.add(b.mul(acc[0], x), e[0])), b.add(acc[1], b.mul(e[0], e[0]))};
      },
      {elems}, {y, b.scalar(0.0)});
  graph::Outputs m = b.map_fn(
      [&](const std::vector<Output>& e) { return std::vector<Output>{b.mul(exp(b, e[0]), e[1])}; }, {elems, s[0]},
      {DType::float64});
  Output out = b.add(b.add(weighted_sum(b, s[0], {1.0, 2.0, 3.0, -1.0}), weighted_sum(b, s[1], {0.5, 0.25, 1, 2})),
                     weighted_sum(b, m[0], {0.3, -0.2, 0.1, 0.4}));
  check(finish(b, {"x", "y"}, {0.4, -0.7}, out));
}

BOOST_AUTO_TEST_SUITE_END()
