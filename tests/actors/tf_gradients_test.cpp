// tagflow's gradients agree with the ones TensorFlow built itself: the NER
// training graph of the corpus (tfnet_lstm_crf_ner_train.pbtxt, TF 1.13)
// holds TensorFlow's gradient loops of its forward LSTM loops. For one loop,
// with its inputs and an upstream gradient G fed, TensorFlow's gradient of
// the LSTM kernel and bias (the accumulators `.../Enter_grad/b_acc_3` that
// ApplyAdam reads) and tagflow's gradients of the same y w.r.t. the same
// variables with grad_ys = G run in one step of one session, after the
// variables' initialisers, and must agree to float32 tolerance. The
// gradient loop tagflow built must run as many iterations as the forward
// loop (and as TensorFlow's gradient loop), as the trace of the step shows.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "graph/autodiff/gradients.hpp"
#include "graph/step_graph.hpp"
#include "graph/validate.hpp"
#include "session_test_util.hpp"
#include "trace/sink.hpp"
#include "trace/stats.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::DType;
using ops::Tensor;

namespace {

const char* const kGraph = "tfnet_lstm_crf_ner_train.pbtxt";

// One forward LSTM loop of the graph, the y read from it, where
// TensorFlow's gradient subgraph holds dL/dy, and the inputs it runs on.
struct LstmLoop {
  std::string name;
  std::string cell;  // the variables' scope: cell + "/lstm_cell/kernel"
  std::string loop;  // the loop's scope: loop + "/while/while_context"
  std::string y;
  std::string tf_dy;
  std::vector<int64_t> y_shape;
  actors::Feeds inputs;
  std::vector<std::string> initialisers;  // Assign nodes
  int32_t iterations;                     // the forward iteration count

  std::string frame() const { return loop + "/while/while_context"; }
  std::string tf_frame() const { return "train_step/gradients/" + frame(); }
  std::string kernel() const { return cell + "/lstm_cell/kernel"; }
  std::string bias() const { return cell + "/lstm_cell/bias"; }
  // TensorFlow's accumulated gradients (what ApplyAdam reads).
  std::string tf_dkernel() const {
    return "train_step/gradients/" + loop + "/while/lstm_cell/MatMul/Enter_grad/b_acc_3";
  }
  std::string tf_dbias() const {
    return "train_step/gradients/" + loop + "/while/lstm_cell/BiasAdd/Enter_grad/b_acc_3";
  }
};

Tensor tensor_of(const std::vector<int64_t>& shape, const std::vector<int32_t>& values) {
  return Tensor::from_vector<int32_t>(ops::Shape::make(shape).value(), values);
}

Tensor uniform(const std::vector<int64_t>& shape, uint32_t seed) {
  const ops::Shape s = ops::Shape::make(shape).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(s.num_elements()));
  for (float& e : v) e = u(rng);
  return Tensor::from_vector<float>(s, v);
}

// The char-level loops read 2 sentences of 3 words of up to 5 characters;
// the longest word has 4, so the loops run 4 iterations (dynamic_rnn stops
// at the longest sequence), and shorter words carry their state through
// the Selects.
LstmLoop char_loop(const std::string& dir, const std::string& tf_dy) {
  std::vector<int32_t> ids(2 * 3 * 5);
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>((7 * i + 3) % 28);
  LstmLoop l;
  l.name = "chars " + dir;
  l.cell = "chars/bidirectional_rnn/" + dir;
  l.loop = l.cell + "/" + dir;
  l.y = l.loop + "/while/Exit_4";  // the final h, which chars/concat reads
  l.tf_dy = tf_dy;
  l.y_shape = {6, 100};
  l.inputs = {{"char_ids", tensor_of({2, 3, 5}, ids)},
              {"word_lengths", tensor_of({2, 3}, {3, 1, 4, 2, 4, 2})}};
  l.initialisers = {"chars/_char_embeddings/Assign", l.kernel() + "/Assign", l.bias() + "/Assign"};
  l.iterations = 4;
  return l;
}

// The word-level loops read 2 sentences of 3 and 2 words padded to 4
// (their input, the dropout's output, is fed): they run 3 iterations, and
// y, the stacked outputs the loss reads, has zeros for the unwritten 4th.
LstmLoop word_loop(const std::string& dir) {
  LstmLoop l;
  l.name = "bi-lstm " + dir;
  l.cell = "bi-lstm/bidirectional_rnn/" + dir;
  l.loop = l.cell + "/" + dir;
  l.y = l.loop + "/TensorArrayStack/TensorArrayGatherV3";
  l.tf_dy = "train_step/gradients/" + l.loop + "/transpose_1_grad/transpose";
  l.y_shape = {4, 2, 300};
  l.inputs = {{"dropout_1/mul_1", uniform({2, 4, 500}, 11)},
              {"sequence_lengths", Tensor::vector<int32_t>({3, 2})}};
  l.initialisers = {l.kernel() + "/Assign", l.bias() + "/Assign"};
  l.iterations = 3;
  return l;
}

// The part of `g` that `roots` need (data and control inputs, back edges
// included), cut at `cut`: each node named there becomes a Placeholder of
// its output's dtype, as feeding it makes it in a step. gradients() wants a
// graph every op of which tagflow knows, and the loss the fed gradients
// come from reads ops it does not (the CRF's GatherNd, ...); the loops and
// TensorFlow's gradient subgraph are kept as they are.
graph::Graph needed_part(const graph::Graph& g, const std::vector<std::string>& roots,
                         const std::vector<std::string>& cut) {
  std::vector<bool> keep(static_cast<size_t>(g.num_nodes())), is_cut(keep.size());
  for (const std::string& name : cut) is_cut[static_cast<size_t>(g.find(name))] = true;
  std::vector<graph::NodeId> todo;
  for (const std::string& name : roots) {
    graph::NodeId id = g.find(name);
    BOOST_REQUIRE_MESSAGE(id != graph::kNoNode, "no node '" << name << "'");
    todo.push_back(id);
  }
  while (!todo.empty()) {
    graph::NodeId id = todo.back();
    todo.pop_back();
    if (keep[static_cast<size_t>(id)]) continue;
    keep[static_cast<size_t>(id)] = true;
    if (is_cut[static_cast<size_t>(id)]) continue;
    for (const graph::Endpoint& e : g.node(id).inputs) todo.push_back(e.node);
    for (graph::NodeId c : g.node(id).control_inputs) todo.push_back(c);
  }
  graph::Graph part;
  part.set_versions(g.versions());
  std::vector<graph::NodeId> new_id(keep.size(), graph::kNoNode);
  for (graph::NodeId id = 0; id < g.num_nodes(); ++id) {
    if (!keep[static_cast<size_t>(id)]) continue;
    const graph::Node& n = g.node(id);
    graph::Node copy;
    copy.name = n.name;
    copy.device = n.device;
    if (is_cut[static_cast<size_t>(id)]) {
      copy.op = "Placeholder";
      copy.attrs.emplace("dtype", n.output_types.at(0));
    } else {
      copy.op = n.op;
      copy.attrs = n.attrs;
      copy.debug_info = n.debug_info;
    }
    auto added = part.add_node(std::move(copy));
    BOOST_REQUIRE_MESSAGE(added.ok(), added.status().to_string());
    new_id[static_cast<size_t>(id)] = added.value();
  }
  // Inputs once every node is there (back edges name later nodes).
  for (graph::NodeId id = 0; id < g.num_nodes(); ++id) {
    if (!keep[static_cast<size_t>(id)] || is_cut[static_cast<size_t>(id)]) continue;
    graph::Node& n = part.mutable_node(new_id[static_cast<size_t>(id)]);
    for (const graph::Endpoint& e : g.node(id).inputs) n.inputs.push_back({new_id[static_cast<size_t>(e.node)], e.port});
    for (graph::NodeId c : g.node(id).control_inputs) n.control_inputs.push_back(new_id[static_cast<size_t>(c)]);
  }
  return part;
}

// The part of the graph a comparison needs, with tagflow's gradients of
// l.y w.r.t. the loop's kernel and bias added, grad_ys a new Placeholder
// "tagflow_dy".
struct Built {
  graph::Graph graph;
  graph::GradientResult grads;
};

Built build(const LstmLoop& l) {
  graph::Graph whole = load_corpus(kGraph);
  {
    // As Session::create does: ops tagflow does not know (the CRF's
    // GatherNd, ApplyAdam, ...) are no error until a step needs them.
    graph::ValidateOptions vo;
    vo.allow_unknown_ops = true;
    auto v = graph::validate(whole, vo);
    BOOST_REQUIRE_MESSAGE(v.ok(), v.to_string());
  }
  std::vector<std::string> roots = l.initialisers;
  for (const std::string& r : {l.y, l.tf_dkernel(), l.tf_dbias()}) roots.push_back(r);
  std::vector<std::string> cut = {l.tf_dy};
  for (const auto& feed : l.inputs) cut.push_back(feed.first);
  Built b{needed_part(whole, roots, cut), {}};
  graph::Graph& g = b.graph;
  graph::Node dy;
  dy.name = "tagflow_dy";
  dy.op = "Placeholder";
  dy.attrs.emplace("dtype", DType::float32);
  auto added = g.add_node(std::move(dy));
  BOOST_REQUIRE_MESSAGE(added.ok(), added.status().to_string());
  auto valid = graph::validate(g);
  BOOST_REQUIRE_MESSAGE(valid.ok(), valid.to_string());
  auto at = [&](const std::string& name) {
    auto e = graph::parse_endpoint(g, name);
    BOOST_REQUIRE_MESSAGE(e.ok(), e.status().to_string());
    return e.value();
  };
  auto r = graph::gradients(g, {at(l.y)}, {at(l.kernel()), at(l.bias())}, {at("tagflow_dy")});
  BOOST_REQUIRE_MESSAGE(r.ok(), l.name << ": " << r.status().to_string());
  b.grads = std::move(r).value();
  BOOST_REQUIRE_EQUAL(b.grads.dxs.size(), 2u);
  // tagflow's own nodes, not TensorFlow's.
  for (const graph::Endpoint& d : b.grads.dxs) {
    BOOST_REQUIRE(d.node != graph::kNoNode);
    BOOST_REQUIRE(g.node(d.node).name.rfind(b.grads.scope + "/", 0) == 0);
  }
  return b;
}

const graph::GradientResult::Loop* loop_of(const graph::GradientResult& r, const std::string& frame) {
  for (const auto& l : r.loops)
    if (l.forward_frame == frame) return &l;
  return nullptr;
}

// Elementwise |got - want| <= 1e-4 max(1, |want|); returns the largest
// difference. Fails if want is all zeros (the comparison would prove
// nothing).
double compare(const std::string& what, const Tensor& got, const Tensor& want) {
  BOOST_REQUIRE(want.dtype() == DType::float32);
  BOOST_REQUIRE(got.dtype() == DType::float32);
  BOOST_REQUIRE_MESSAGE(got.shape() == want.shape(), what << ": tagflow's shape " << got.shape().to_string()
                                                          << ", TensorFlow's " << want.shape().to_string());
  const float* a = got.data<float>();
  const float* b = want.data<float>();
  double max_diff = 0, max_abs = 0;
  int64_t bad = 0;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    const double d = std::abs(double(a[i]) - double(b[i]));
    max_diff = std::max(max_diff, d);
    max_abs = std::max(max_abs, std::abs(double(b[i])));
    if (!(d <= 1e-4 * std::max(1.0, std::abs(double(b[i])))) && bad++ < 5)
      BOOST_ERROR(what << "[" << i << "]: tagflow " << a[i] << ", TensorFlow " << b[i]);
  }
  BOOST_TEST(bad == 0, what << ": " << bad << " of " << want.num_elements() << " elements differ");
  BOOST_TEST(max_abs > 1e-3, what << ": TensorFlow's gradient is all (near) zero");
  BOOST_TEST_MESSAGE(what << ": max |tagflow - TensorFlow| = " << max_diff << ", max |TensorFlow| = " << max_abs);
  return max_diff;
}

void check(const LstmLoop& l, const std::vector<Mode>& run_modes) {
  Built b = build(l);
  const auto* loop = loop_of(b.grads, l.frame());
  BOOST_REQUIRE_MESSAGE(loop, l.name << ": gradients() reports no gradient loop of " << l.frame());
  const graph::Graph& g = b.graph;
  const Tensor G = uniform(l.y_shape, 7);
  actors::Feeds feeds = l.inputs;
  feeds.push_back({l.tf_dy, G});
  feeds.push_back({"tagflow_dy", G});
  const std::vector<std::string> fetches = {l.tf_dkernel(), l.tf_dbias(), g.endpoint_name(b.grads.dxs[0]),
                                            g.endpoint_name(b.grads.dxs[1]), g.endpoint_name(loop->count)};
  for (const Mode& m : run_modes) {
    BOOST_TEST_CONTEXT(l.name << ", " << m.name) {
      trace::MemorySink sink;
      actors::SessionOptions o;
      o.events = &sink;
      auto s = make_session(g, m, o);
      must_run(*s, {}, {}, l.initialisers);
      sink.clear();
      auto out = must_run(*s, feeds, fetches);
      compare(l.name + " kernel gradient", out[2], out[0]);
      compare(l.name + " bias gradient", out[3], out[1]);
      BOOST_TEST(out[4].scalar_value<int32_t>() == l.iterations);
      // Each loop starts one iteration more than it runs its body: the
      // last finds its predicate false.
      auto frames = trace::stats(sink.trace()).begin()->second.frames;
      for (const std::string& f : {l.frame(), loop->gradient_frame, l.tf_frame()}) {
        BOOST_TEST(frames[f].instances == 1, f);
        BOOST_TEST(frames[f].iterations == l.iterations + 1, f);
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tf_gradients)

BOOST_AUTO_TEST_CASE(char_forward_lstm_gradients_match_tensorflow) {
  check(char_loop("fw", "train_step/gradients/chars/concat_grad/tuple/control_dependency"), modes());
}

BOOST_AUTO_TEST_CASE(char_backward_lstm_gradients_match_tensorflow) {
  check(char_loop("bw", "train_step/gradients/chars/concat_grad/tuple/control_dependency_1"), modes());
}

BOOST_AUTO_TEST_CASE(word_forward_lstm_gradients_match_tensorflow) {
  check(word_loop("fw"), modes());
}

BOOST_AUTO_TEST_CASE(word_backward_lstm_gradients_match_tensorflow) {
  check(word_loop("bw"), modes());
}

BOOST_AUTO_TEST_SUITE_END()
