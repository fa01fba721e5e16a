// Gradients of the convolution (Conv2D, DepthwiseConv2dNative), pooling,
// fused batch norm and fused RNN cell ops built by gradients() and run
// through a Session, checked against central finite differences of
// y = sum(weights * op(xs)) in float64.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <functional>

#include "graph/autodiff/gradients.hpp"
#include "graph/builder/builder.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using graph::GraphBuilder;
using graph::Output;
using ops::DType;
using ops::Shape;
using ops::Tensor;
using Vars = std::vector<Output>;

namespace {

ops::AttrList ints(std::vector<int64_t> v) {
  ops::AttrList l;
  l.i = std::move(v);
  return l;
}

std::vector<double> pattern(int64_t n, int seed) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(1.3 * static_cast<double>(i + 1) * (seed + 1)) * 1.5;
  return v;
}

// Builds y = sum(weights * f(xs)) and d y / d xs, and checks every element
// of every gradient against central finite differences through the session.
void check(const std::string& name, const std::vector<Shape>& shapes,
           const std::function<Output(GraphBuilder&, const Vars&)>& f) {
  GraphBuilder b;
  Vars xs;
  for (size_t i = 0; i < shapes.size(); ++i)
    xs.push_back(b.placeholder(DType::float64, ops::PartialShape{false, shapes[i].dims()}, "x" + std::to_string(i)));
  Output z = f(b, xs);
  // The weights need z's shape: build them from a product of z by a
  // pattern of its size, fed as a constant of the shape the op gives.
  Output y = b.reduce_sum(b.mul(z, b.placeholder(DType::float64, {true, {}}, "weights")),
                          b.op1("Range", {b.scalar<int32_t>(0), b.op1("Rank", {z}), b.scalar<int32_t>(1)}));
  Vars dxs = b.gradients({y}, xs);
  auto built = b.finish();
  BOOST_REQUIRE_MESSAGE(built.ok(), name << ": " << built.status().to_string());
  auto session = make_session(std::move(built).value(), modes()[1]);

  std::vector<Tensor> values;
  for (size_t i = 0; i < shapes.size(); ++i)
    values.push_back(Tensor::from_vector<double>(shapes[i], pattern(shapes[i].num_elements(), static_cast<int>(i))));
  auto feeds_of = [&](const std::vector<Tensor>& vals, const Tensor& w) {
    actors::Feeds feeds;
    for (size_t i = 0; i < xs.size(); ++i) feeds.push_back({xs[i].name(), vals[i]});
    feeds.push_back({"weights", w});
    return feeds;
  };
  // z's shape first, with scalar weights (broadcast), then the real weights.
  const Tensor zt = must_run(*session, feeds_of(values, Tensor::scalar(1.0)), {z.name()})[0];
  const Tensor w = Tensor::from_vector<double>(zt.shape(), pattern(zt.num_elements(), 7));
  std::vector<std::string> fetches;
  for (const Output& d : dxs) {
    BOOST_REQUIRE_MESSAGE(d.valid(), name << ": an x got no gradient");
    fetches.push_back(d.name());
  }
  const std::vector<Tensor> grads = must_run(*session, feeds_of(values, w), fetches);
  const double h = 1e-5;
  for (size_t i = 0; i < xs.size(); ++i)
    for (int64_t e = 0; e < values[i].num_elements(); ++e) {
      auto at = [&](double delta) {
        std::vector<Tensor> v = values;
        std::vector<double> flat(v[i].data<double>(), v[i].data<double>() + v[i].num_elements());
        flat[e] += delta;
        v[i] = Tensor::from_vector<double>(v[i].shape(), flat);
        return must_run(*session, feeds_of(v, w), {y.name()})[0].scalar_value<double>();
      };
      const double want = (at(h) - at(-h)) / (2 * h);
      const double got = grads[i].data<double>()[e];
      BOOST_TEST(std::abs(got - want) <= 1e-6 * std::max(1.0, std::abs(want)),
                 name << ": d y / d x" << i << "[" << e << "] = " << got << ", finite differences give " << want);
    }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(nn_gradients)

BOOST_AUTO_TEST_CASE(conv2d) {
  for (const char* padding : {"SAME", "VALID"})
    check(std::string("Conv2D ") + padding, {Shape{2, 5, 4, 2}, Shape{3, 2, 2, 3}}, [&](GraphBuilder& b, const Vars& x) {
      return b.op1("Conv2D", {x[0], x[1]}, {{"strides", ints({1, 2, 1, 1})}, {"padding", padding}});
    });
  check("Conv2D dilated, explicit padding", {Shape{1, 5, 5, 2}, Shape{2, 2, 2, 2}}, [](GraphBuilder& b, const Vars& x) {
    return b.op1("Conv2D", {x[0], x[1]},
                 {{"strides", ints({1, 1, 1, 1})}, {"padding", "EXPLICIT"},
                  {"explicit_paddings", ints({0, 0, 1, 0, 0, 2, 0, 0})}, {"dilations", ints({1, 2, 2, 1})}});
  });
}

BOOST_AUTO_TEST_CASE(depthwise_conv2d) {
  check("DepthwiseConv2dNative", {Shape{2, 4, 5, 2}, Shape{2, 3, 2, 2}}, [](GraphBuilder& b, const Vars& x) {
    return b.op1("DepthwiseConv2dNative", {x[0], x[1]}, {{"strides", ints({1, 1, 2, 1})}, {"padding", "SAME"}});
  });
}

BOOST_AUTO_TEST_CASE(pooling) {
  for (const char* op : {"MaxPool", "AvgPool"})
    check(op, {Shape{2, 5, 4, 3}}, [&](GraphBuilder& b, const Vars& x) {
      return b.op1(op, {x[0]}, {{"ksize", ints({1, 2, 3, 1})}, {"strides", ints({1, 2, 1, 1})}, {"padding", "SAME"}});
    });
}

BOOST_AUTO_TEST_CASE(fused_batch_norm) {
  for (bool training : {true, false})
    check(std::string("FusedBatchNormV3 ") + (training ? "training" : "inference"),
          {Shape{2, 3, 2, 3}, Shape{3}, Shape{3}}, [&](GraphBuilder& b, const Vars& x) {
            Output mean = b.constant(Tensor::from_vector<double>(Shape{3}, {0.1, -0.2, 0.3}));
            Output var = b.constant(Tensor::from_vector<double>(Shape{3}, {1.5, 0.7, 2.0}));
            return b.op("FusedBatchNormV3", {x[0], x[1], x[2], mean, var}, {{"is_training", training}})[0];
          });
  check("FusedBatchNorm", {Shape{4, 1, 2, 2}, Shape{2}, Shape{2}}, [](GraphBuilder& b, const Vars& x) {
    Output empty = b.constant(Tensor(DType::float64, Shape{0}));
    return b.op("FusedBatchNorm", {x[0], x[1], x[2], empty, empty})[0];
  });
}

// y weighs h and cs of one LSTM step (the outputs whose gradients flow);
// x, cs_prev, h_prev, w, the peephole weights and b are all xs.
BOOST_AUTO_TEST_CASE(lstm_block_cell) {
  for (bool peephole : {false, true})
    check(std::string("LSTMBlockCell") + (peephole ? " with peepholes" : ""),
          {Shape{2, 3}, Shape{2, 4}, Shape{2, 4}, Shape{7, 16}, Shape{4}, Shape{4}, Shape{4}, Shape{16}},
          [&](GraphBuilder& b, const Vars& x) {
            graph::Outputs o = b.op("LSTMBlockCell", x, {{"use_peephole", peephole}, {"cell_clip", -1.0f}});
            return b.concat({o[6], b.mul(o[1], b.scalar(0.5))}, b.scalar<int32_t>(1));
          });
}

BOOST_AUTO_TEST_CASE(gru_block_cell) {
  check("GRUBlockCell", {Shape{2, 3}, Shape{2, 4}, Shape{7, 8}, Shape{7, 4}, Shape{8}, Shape{4}},
        [](GraphBuilder& b, const Vars& x) { return b.op("GRUBlockCell", x)[3]; });
}

BOOST_AUTO_TEST_SUITE_END()
