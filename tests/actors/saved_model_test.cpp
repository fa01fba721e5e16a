// SavedModels TensorFlow wrote (tests/data/savedmodels, see its
// ATTRIBUTION.md), loaded as TensorFlow Serving loads them: restored from
// their checkpoints by the graph's own restore op, init op run, signatures
// run by key. Expected values: the generator scripts' formulas (half plus
// two, the counter), and for the Keras models a forward pass computed here
// from the checkpoint's weights.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

#include "actors/saved_model.hpp"
#include <google/protobuf/text_format.h>

#include "graph/autodiff/gradients.hpp"
#include "graph/proto/graph_def.pb.h"
#include "graph/step_graph.hpp"
#include "graph/validate.hpp"
#include "ops/proto/example.pb.h"
#include "ops/tensor_bundle.hpp"
#include "session_test_util.hpp"

namespace tagflow {
namespace {

namespace fs = std::filesystem;
using actors::NamedTensors;
using actors::SavedModelSession;
using ops::Shape;
using ops::Tensor;

std::string model_dir(const std::string& name) {
  const std::string base = std::string(TAGFLOW_TEST_DATA) + "/savedmodels/" + name;
  return fs::exists(base + "/00000123") ? base + "/00000123" : base;
}

std::unique_ptr<SavedModelSession> load(const std::string& dir, const testing::Mode& m,
                                        actors::SavedModelOptions o = {}) {
  o.session.deterministic = m.deterministic;
  o.session.threads = m.threads;
  o.session.no_shortcuts = m.no_shortcuts;
  auto s = SavedModelSession::load(dir, o);
  BOOST_REQUIRE_MESSAGE(s.ok(), s.status().to_string());
  return std::move(s).value();
}

const Tensor& output(const NamedTensors& out, const std::string& key) {
  for (const auto& [k, t] : out)
    if (k == key) return t;
  BOOST_FAIL("no output " + key);
  static Tensor none;
  return none;
}

NamedTensors must_call(SavedModelSession& m, const std::string& sig, const NamedTensors& in) {
  auto r = m.run_signature(sig, in);
  BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  return std::move(r).value();
}

// The error loading `dir` gives (a load that succeeds fails the test).
std::string load_error(const std::string& dir, actors::SavedModelOptions o) {
  auto s = SavedModelSession::load(dir, std::move(o));
  BOOST_REQUIRE(!s.ok());
  return s.status().to_string();
}

float scalar_of(const Tensor& t) {
  BOOST_REQUIRE_EQUAL(t.num_elements(), 1);
  return t.data<float>()[0];
}

// A fresh directory under the system's temp folder, removed at the end.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("tagflow-savedmodel-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(std::random_device{}()));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

fs::path copy_model(const std::string& name, const TempDir& tmp) {
  fs::path to = tmp.path / name;
  fs::copy(model_dir(name), to, fs::copy_options::recursive);
  return to;
}

Tensor read_weight(const std::string& prefix, const std::string& name) {
  auto reader = ops::BundleReader::open(prefix);
  BOOST_REQUIRE_MESSAGE(reader.ok(), reader.status().to_string());
  auto t = reader->read(name);
  BOOST_REQUIRE_MESSAGE(t.ok(), t.status().to_string());
  return std::move(t).value();
}

// A serialized tf.Example with float feature "x" (none: without it).
std::string example_of_x(std::optional<float> x) {
  example::Example e;
  auto& features = *e.mutable_features()->mutable_feature();
  features["unrelated"].mutable_bytes_list()->add_value("ignored");
  if (x) features["x"].mutable_float_list()->add_value(*x);
  std::string out;
  BOOST_REQUIRE(e.SerializeToString(&out));
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(saved_model)

// The signatures that read serialized tf.Examples: ParseExample in TF 1's
// graph, ParseExampleV2 inside TF 2's library functions. The generator
// script: x is a required float [1] feature, y = 0.5 x + 2, y2 = 0.5 x + 3,
// classify's scores are y.
BOOST_AUTO_TEST_CASE(tf_example_signatures_of_tf1_and_tf2_half_plus_two) {
  const std::vector<float> xs = {0.0f, 1.5f, -3.0f, 10.0f};
  std::vector<std::string> batch;
  for (float x : xs) batch.push_back(example_of_x(x));
  struct SignatureCase {
    const char* signature;
    const char* output;
    float b;
  };
  const std::vector<SignatureCase> signatures = {
      {"regress_x_to_y", "outputs", 2.0f}, {"regress_x_to_y2", "outputs", 3.0f}, {"classify_x_to_y", "scores", 2.0f}};
  for (const char* name : {"saved_model_half_plus_two_cpu", "saved_model_half_plus_two_tf2_cpu"}) {
    for (const auto& m : testing::modes()) {
      BOOST_TEST_CONTEXT(name << ", " << m.name) {
        auto model = load(model_dir(name), m);
        for (const SignatureCase& sig : signatures) {
          BOOST_TEST_CONTEXT(sig.signature) {
            auto out = must_call(*model, sig.signature, {{"inputs", Tensor::vector<std::string>(batch)}});
            const Tensor& y = output(out, sig.output);
            BOOST_TEST(y.shape().to_string() == "[4,1]");
            BOOST_REQUIRE_EQUAL(y.num_elements(), 4);
            for (size_t i = 0; i < xs.size(); ++i) BOOST_TEST(y.data<float>()[i] == 0.5f * xs[i] + sig.b);
            auto one = must_call(*model, sig.signature, {{"inputs", Tensor::vector<std::string>({batch[1]})}});
            BOOST_TEST(scalar_of(output(one, sig.output)) == 0.5f * xs[1] + sig.b);
          }
        }
        // x has no default: an example without it is an error naming both.
        auto missing = model->run_signature(
            "regress_x_to_y", {{"inputs", Tensor::vector<std::string>({batch[0], example_of_x(std::nullopt)})}});
        BOOST_REQUIRE(!missing.ok());
        BOOST_TEST(missing.status().to_string().find("example 1: dense feature 'x' (float32 [1]) is missing") !=
                       std::string::npos,
                   missing.status().to_string());
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(tf1_half_plus_two_serves_every_float_signature) {
  for (const auto& m : testing::modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto model = load(model_dir("saved_model_half_plus_two_cpu"), m);
      const auto& info = model->info();
      BOOST_TEST(info.has_tag("serve"));
      BOOST_REQUIRE(info.saver.has_value());
      BOOST_TEST(info.saver->restore_op == "save/restore_all");
      const std::vector<float> xs = {0.0f, 1.0f, -3.5f, 10.0f};
      auto y = must_call(*model, "serving_default", {{"x", Tensor::from_vector<float>(Shape({4, 1}), xs)}});
      const Tensor& yt = output(y, "y");
      BOOST_REQUIRE_EQUAL(yt.num_elements(), 4);
      for (size_t i = 0; i < xs.size(); ++i) BOOST_TEST(yt.data<float>()[i] == 0.5f * xs[i] + 2.0f);
      auto y3 = must_call(*model, "regress_x2_to_y3", {{"inputs", Tensor::from_vector<float>(Shape({1, 1}), {4.0f})}});
      BOOST_TEST(output(y3, "outputs").data<float>()[0] == 0.5f * 4.0f + 3.0f);
    }
  }
}

// TF Serving's rule: a signature checks dtypes and leaves shapes to the
// kernels. TF 1's x is an Identity whose _output_shapes says [?,1]; TF 2's
// PlaceholderWithDefault declares [1]; both are fed [3] and answer
// 0.5 x + 2. --strict-shapes checks the signature's shapes.
BOOST_AUTO_TEST_CASE(signature_feeds_leave_shapes_to_the_kernels_unless_strict) {
  const Tensor x = Tensor::vector<float>({1, 2, 5});
  for (const auto& m : testing::modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      for (const char* name : {"saved_model_half_plus_two_cpu", "saved_model_half_plus_two_tf2_cpu"}) {
        BOOST_TEST_CONTEXT(name) {
          auto model = load(model_dir(name), m);
          auto y = must_call(*model, "serving_default", {{"x", x}});
          BOOST_TEST(output(y, "y").equals(Tensor::vector<float>({2.5f, 3.0f, 4.5f})), output(y, "y").debug_string());
          // the dtype still counts
          auto wrong = model->run_signature("serving_default", {{"x", Tensor::vector<int32_t>({1, 2, 5})}});
          BOOST_REQUIRE(!wrong.ok());
          BOOST_TEST(wrong.status().message() == "signature 'serving_default' input 'x' is float32, not int32",
                     wrong.status().message());
          actors::SavedModelOptions o;
          o.session.strict_shapes = true;
          auto strict = load(model_dir(name), m, o);
          auto r = strict->run_signature("serving_default", {{"x", x}});
          BOOST_REQUIRE(!r.ok());
          BOOST_TEST(r.status().message().find("signature 'serving_default' input 'x' is float32 [3] but the "
                                               "signature declares float32 [") == 0,
                     r.status().message());
          BOOST_TEST(r.status().message().find("(--strict-shapes, SessionOptions::strict_shapes)") != std::string::npos);
          const Tensor fits = std::string(name) == "saved_model_half_plus_two_cpu"
                                  ? Tensor::from_vector<float>(Shape({3, 1}), {1, 2, 5})
                                  : Tensor::vector<float>({1});
          must_call(*strict, "serving_default", {{"x", fits}});
        }
      }
    }
  }
}

// TensorFlow's loader reads saved_model.pbtxt when there is no
// saved_model.pb; so does tagflow, with errors at a line and column.
BOOST_AUTO_TEST_CASE(a_text_saved_model_loads_as_the_binary_one) {
  TempDir tmp;
  for (const char* name : {"saved_model_half_plus_two_cpu", "saved_model_half_plus_two_tf2_cpu"}) {
    BOOST_TEST_CONTEXT(name) {
      fs::path dir = copy_model(name, tmp);
      tensorflow::SavedModel model;
      {
        std::ifstream in(dir / "saved_model.pb", std::ios::binary);
        BOOST_REQUIRE(model.ParseFromIstream(&in));
      }
      std::string text;
      BOOST_REQUIRE(google::protobuf::TextFormat::PrintToString(model, &text));
      fs::remove(dir / "saved_model.pb");
      std::ofstream(dir / "saved_model.pbtxt") << text;
      BOOST_TEST(graph::is_saved_model_dir(dir.string()));
      for (const auto& m : testing::modes()) {
        BOOST_TEST_CONTEXT(m.name) {
          auto loaded = load(dir.string(), m);
          auto y = must_call(*loaded, "serving_default", {{"x", Tensor::vector<float>({1})}});
          BOOST_TEST(output(y, "y").equals(Tensor::vector<float>({2.5f})), output(y, "y").debug_string());
        }
      }
      std::ofstream(dir / "saved_model.pbtxt") << "meta_graphs { meta_info_def { tags: \"serve\" }\n  graph_def { node {";
      std::string e = load_error(dir.string(), {});
      BOOST_TEST(e.find("saved_model.pbtxt:2:") != std::string::npos, e);
      BOOST_TEST(e.find("parse_error") != std::string::npos, e);
    }
  }
}

// A meta graph without a saver_def whose directory holds a checkpoint (TF 1
// Hub modules) restores its variables by name, as TF Hub does.
BOOST_AUTO_TEST_CASE(a_meta_graph_without_a_saver_restores_its_variables_by_name) {
  TempDir tmp;
  fs::path dir = copy_model("saved_model_half_plus_two_cpu", tmp);
  tensorflow::SavedModel model;
  {
    std::ifstream in(dir / "saved_model.pb", std::ios::binary);
    BOOST_REQUIRE(model.ParseFromIstream(&in));
  }
  model.mutable_meta_graphs(0)->clear_saver_def();
  {
    std::ofstream out(dir / "saved_model.pb", std::ios::binary | std::ios::trunc);
    BOOST_REQUIRE(model.SerializeToOstream(&out));
  }
  for (const auto& m : testing::modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto loaded = load(dir.string(), m);
      BOOST_TEST(!loaded->info().saver.has_value());
      // a = 0.5, b = 2 come from the checkpoint: y = a x + b
      auto y = must_call(*loaded, "serving_default", {{"x", Tensor::from_vector<float>(Shape({2, 1}), {1, 4})}});
      BOOST_TEST(output(y, "y").equals(Tensor::from_vector<float>(Shape({2, 1}), {2.5f, 4.0f})),
                 output(y, "y").debug_string());
      auto y3 = must_call(*loaded, "regress_x2_to_y3", {{"inputs", Tensor::from_vector<float>(Shape({1, 1}), {4.0f})}});
      BOOST_TEST(output(y3, "outputs").data<float>()[0] == 0.5f * 4.0f + 3.0f);
    }
  }
}

// TensorFlow's colocation rules for every placement strategy: a resource's
// consumers inside function bodies (a TF 2 restore function's
// AssignVariableOps, saved with /device:CPU:0) share its device, so random
// and round-robin placements on 1-3 devices run every SavedModel of the
// test data and give the one device's values, bit for bit.
BOOST_AUTO_TEST_CASE(every_saved_model_runs_split_under_every_placement) {
  struct Case {
    const char* model;
    const char* signature;
    NamedTensors inputs;
  };
  std::vector<float> pixels(28 * 28);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<float>(i % 17) / 17.0f;
  const std::vector<Case> cases = {
      {"saved_model_half_plus_two_cpu", "serving_default", {{"x", Tensor::from_vector<float>(Shape({2, 1}), {1, 4})}}},
      {"saved_model_half_plus_two_tf2_cpu", "serving_default", {{"x", Tensor::vector<float>({3})}}},
      {"saved_model_counter", "incr_counter", {}},
      {"keras_lstm_from_sequential", "serving_default",
       {{"input_1", Tensor::from_vector<float>(Shape({1, 5, 3}), {1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 1, 1, 2, 2, 2})}}},
      {"keras_simple_model_from_auto_compile", "serving_default",
       {{"input_1", Tensor::from_vector<float>(Shape({1, 28, 28, 1}), pixels)}}},
      {"vocab_lookup_text", "serving_default", {{"words", Tensor::vector<std::string>({"cat", "dog", "the"})}}},
  };
  using Strategy = graph::PlacementOptions::Strategy;
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.model) {
      const testing::Mode one = testing::modes().front();
      auto reference = must_call(*load(model_dir(c.model), one), c.signature, c.inputs);
      for (int devices = 1; devices <= 3; ++devices)
        for (Strategy strategy : {Strategy::by_default, Strategy::round_robin, Strategy::random})
          for (uint64_t seed = 1; seed <= (strategy == Strategy::random ? 4u : 1u); ++seed) {
            BOOST_TEST_CONTEXT(devices << " devices, strategy " << static_cast<int>(strategy) << ", seed " << seed) {
              actors::SavedModelOptions o;
              o.session.num_devices = devices;
              o.session.placement.strategy = strategy;
              o.session.placement.seed = seed;
              auto split = must_call(*load(model_dir(c.model), one, o), c.signature, c.inputs);
              BOOST_REQUIRE_EQUAL(split.size(), reference.size());
              for (size_t i = 0; i < split.size(); ++i)
                BOOST_TEST(split[i].second.equals(reference[i].second), split[i].first << ": "
                                                                                      << split[i].second.debug_string());
            }
          }
    }
  }
}

// A meta graph is chosen by its tag set, as TensorFlow's loader chooses.
BOOST_AUTO_TEST_CASE(meta_graphs_are_chosen_by_tag_set) {
  TempDir tmp;
  fs::path dir = copy_model("saved_model_counter", tmp);
  tensorflow::SavedModel model;
  {
    std::ifstream in(dir / "saved_model.pb", std::ios::binary);
    BOOST_REQUIRE(model.ParseFromIstream(&in));
  }
  // Two more meta graphs of the same graph: [gpu,serve] and the empty set
  // (a TF 1 Hub module's).
  for (const std::vector<std::string>& tags : {std::vector<std::string>{"serve", "gpu"}, std::vector<std::string>{}}) {
    tensorflow::MetaGraphDef* meta = model.add_meta_graphs();
    *meta = model.meta_graphs(0);
    meta->mutable_meta_info_def()->clear_tags();
    for (const std::string& t : tags) meta->mutable_meta_info_def()->add_tags(t);
  }
  {
    std::ofstream out(dir / "saved_model.pb", std::ios::binary | std::ios::trunc);
    BOOST_REQUIRE(model.SerializeToOstream(&out));
  }
  const testing::Mode m = testing::modes().front();
  for (const std::vector<std::string>& tags :
       {std::vector<std::string>{"serve"}, std::vector<std::string>{"gpu", "serve"},
        std::vector<std::string>{"serve", "gpu", "serve"}, std::vector<std::string>{}}) {
    actors::SavedModelOptions o;
    o.tags = tags;
    auto loaded = load(dir.string(), m, o);
    BOOST_TEST(graph::parse_tag_set(loaded->info().tags) == graph::parse_tag_set(tags));
    auto out = must_call(*loaded, "incr_counter", {});
    BOOST_TEST(scalar_of(output(out, "output")) == 1.0f);
  }
  actors::SavedModelOptions o;
  o.tags = {"gpu"};  // a subset of a tag set is not it
  std::string e = load_error(dir.string(), o);
  BOOST_TEST(e.find("no meta graph has the tag set [gpu] (tag sets: [serve], [gpu,serve], [])") != std::string::npos, e);
  BOOST_TEST(graph::parse_tag_set(std::string("serve,gpu,,serve")) == (std::vector<std::string>{"gpu", "serve"}));
  BOOST_TEST(graph::parse_tag_set(std::string("")).empty());
}

BOOST_AUTO_TEST_CASE(tf2_half_plus_two_restores_resource_variables_inside_a_function) {
  for (const auto& m : testing::modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto model = load(model_dir("saved_model_half_plus_two_tf2_cpu"), m);
      BOOST_TEST(model->info().init_op == "NoOp");
      for (float x : {1.0f, -2.0f, 0.0f, 7.5f}) {
        BOOST_TEST_CONTEXT("x = " << x) {
          auto y = must_call(*model, "serving_default", {{"x", Tensor::vector<float>({x})}});
          BOOST_TEST(scalar_of(output(y, "y")) == 0.5f * x + 2.0f);
          auto y3 = must_call(*model, "regress_x2_to_y3", {{"inputs", Tensor::vector<float>({x})}});
          BOOST_TEST(scalar_of(output(y3, "outputs")) == 0.5f * x + 3.0f);
          auto scores = must_call(*model, "classify_x2_to_y3", {{"inputs", Tensor::vector<float>({x})}});
          BOOST_TEST(scalar_of(output(scores, "scores")) == 0.5f * x + 3.0f);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(a_stateful_signature_keeps_its_state_across_calls) {
  for (const auto& m : testing::modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto model = load(model_dir("saved_model_counter"), m);
      BOOST_TEST(scalar_of(output(must_call(*model, "get_counter", {}), "output")) == 0.0f);
      BOOST_TEST(scalar_of(output(must_call(*model, "incr_counter", {}), "output")) == 1.0f);
      BOOST_TEST(scalar_of(output(must_call(*model, "incr_counter", {}), "output")) == 2.0f);
      auto by = must_call(*model, "incr_counter_by", {{"delta", Tensor::scalar<float>(3.0f)}});
      BOOST_TEST(scalar_of(output(by, "output")) == 5.0f);
      BOOST_TEST(scalar_of(output(must_call(*model, "get_counter", {}), "output")) == 5.0f);
      BOOST_TEST(scalar_of(output(must_call(*model, "reset_counter", {}), "output")) == 0.0f);
      BOOST_TEST(scalar_of(output(must_call(*model, "get_counter", {}), "output")) == 0.0f);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_saved_checkpoint_restores_into_a_new_session) {
  // The counter after three increments is saved with the graph's own save
  // op; a new session restored from that checkpoint reads 3, one restored
  // from the model's own checkpoint 0.
  TempDir tmp;
  const std::string prefix = (tmp.path / "ckpt" / "counter").string();
  // TF 1 saves through save/SaveV2 and save/Identity; TF 2 through a
  // function that picks its temporary directory with a Select of strings,
  // shards and merges.
  for (const char* name : {"saved_model_counter", "saved_model_half_plus_two_cpu",
                           "saved_model_half_plus_two_tf2_cpu", "keras_lstm_from_sequential"}) {
    BOOST_TEST_CONTEXT(name) {
      auto model = load(model_dir(name), testing::modes()[2]);
      if (std::string(name) == "saved_model_counter") {
        for (int i = 0; i < 3; ++i) must_call(*model, "incr_counter", {});
      }
      const std::string p = prefix + "_" + name;
      ops::Status saved = model->save(p);
      BOOST_REQUIRE_MESSAGE(saved.ok(), saved.to_string());
      BOOST_TEST(fs::exists(p + ".index"));
      BOOST_TEST(fs::exists(p + ".data-00000-of-00001"));
      auto theirs = ops::BundleReader::open(model_dir(name) + "/variables/variables");
      auto ours = ops::BundleReader::open(p);
      BOOST_REQUIRE(theirs.ok());
      BOOST_REQUIRE_MESSAGE(ours.ok(), ours.status().to_string());
      // Every tensor of the model's own checkpoint is in the new one, with
      // the same value: all but the counter, which changed, and TF 2's
      // object graph, which the save function writes from a constant of
      // the graph (Keras wrote the checkpoint from another graph).
      for (const auto& e : theirs->entries()) {
        BOOST_TEST_CONTEXT(e.name) {
          BOOST_REQUIRE(ours->find(e.name) != nullptr);
          if (e.name == "counter" || e.name == "_CHECKPOINTABLE_OBJECT_GRAPH") continue;
          auto a = theirs->read(e.name);
          auto b = ours->read(e.name);
          BOOST_REQUIRE(a.ok());
          BOOST_REQUIRE_MESSAGE(b.ok(), b.status().to_string());
          BOOST_TEST(a->debug_string() == b->debug_string());
        }
      }
    }
  }
  actors::SavedModelOptions o;
  o.checkpoint = prefix + "_saved_model_counter";
  auto restored = load(model_dir("saved_model_counter"), testing::modes()[2], o);
  BOOST_TEST(scalar_of(output(must_call(*restored, "get_counter", {}), "output")) == 3.0f);
  auto fresh = load(model_dir("saved_model_counter"), testing::modes()[2]);
  BOOST_TEST(scalar_of(output(must_call(*fresh, "get_counter", {}), "output")) == 0.0f);
}

BOOST_AUTO_TEST_CASE(keras_mlp_serving_default_matches_a_forward_pass_of_its_weights) {
  const std::string dir = model_dir("keras_simple_model_from_auto_compile");
  const std::string prefix = dir + "/variables/variables";
  Tensor k0 = read_weight(prefix, "layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE");
  Tensor b0 = read_weight(prefix, "layer_with_weights-0/bias/.ATTRIBUTES/VARIABLE_VALUE");
  Tensor k1 = read_weight(prefix, "layer_with_weights-1/kernel/.ATTRIBUTES/VARIABLE_VALUE");
  Tensor b1 = read_weight(prefix, "layer_with_weights-1/bias/.ATTRIBUTES/VARIABLE_VALUE");
  BOOST_REQUIRE(k0.shape() == Shape({784, 100}));
  BOOST_REQUIRE(k1.shape() == Shape({100, 10}));
  // Two images with pixels in [0, 1).
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> pixel(0.0f, 1.0f);
  const int batch = 2;
  Tensor x(ops::DType::float32, Shape({batch, 28, 28, 1}));
  for (int64_t i = 0; i < x.num_elements(); ++i) x.mutable_data<float>()[i] = pixel(rng);
  // Flatten -> Dense(100, relu) -> Dense(10) -> softmax, in double.
  std::vector<double> expected(batch * 10);
  for (int n = 0; n < batch; ++n) {
    std::vector<double> h(100);
    for (int j = 0; j < 100; ++j) {
      double s = b0.data<float>()[j];
      for (int i = 0; i < 784; ++i) s += double(x.data<float>()[n * 784 + i]) * k0.data<float>()[i * 100 + j];
      h[j] = std::max(s, 0.0);
    }
    std::vector<double> z(10);
    double zmax = -1e300;
    for (int j = 0; j < 10; ++j) {
      z[j] = b1.data<float>()[j];
      for (int i = 0; i < 100; ++i) z[j] += h[i] * k1.data<float>()[i * 10 + j];
      zmax = std::max(zmax, z[j]);
    }
    double sum = 0;
    for (int j = 0; j < 10; ++j) sum += std::exp(z[j] - zmax);
    for (int j = 0; j < 10; ++j) expected[n * 10 + j] = std::exp(z[j] - zmax) / sum;
  }
  for (const auto& m : testing::modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto model = load(dir, m);
      auto out = must_call(*model, "serving_default", {{"input_1", x}});
      const Tensor& y = output(out, "softmax");
      BOOST_REQUIRE(y.shape() == Shape({batch, 10}));
      for (int i = 0; i < batch * 10; ++i) BOOST_TEST(y.data<float>()[i] == expected[i], boost::test_tools::tolerance(1e-5));
    }
  }
}

BOOST_AUTO_TEST_CASE(keras_lstm_serving_default_matches_an_lstm_of_its_weights) {
  const std::string dir = model_dir("keras_lstm_from_sequential");
  const std::string prefix = dir + "/variables/variables";
  Tensor kernel = read_weight(prefix, "variables/0/.ATTRIBUTES/VARIABLE_VALUE");
  Tensor recurrent = read_weight(prefix, "variables/1/.ATTRIBUTES/VARIABLE_VALUE");
  Tensor bias = read_weight(prefix, "variables/2/.ATTRIBUTES/VARIABLE_VALUE");
  Tensor dk = read_weight(prefix, "layer_with_weights-1/kernel/.ATTRIBUTES/VARIABLE_VALUE");
  Tensor db = read_weight(prefix, "layer_with_weights-1/bias/.ATTRIBUTES/VARIABLE_VALUE");
  const int units = 32, steps = 5, features = 3, batch = 3;
  BOOST_REQUIRE(kernel.shape() == Shape({features, 4 * units}));
  BOOST_REQUIRE(recurrent.shape() == Shape({units, 4 * units}));
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Tensor x(ops::DType::float32, Shape({batch, steps, features}));
  for (int64_t i = 0; i < x.num_elements(); ++i) x.mutable_data<float>()[i] = u(rng);
  // Keras' LSTM: gates i, f, c, o in the kernels' columns; sigmoid
  // recurrent activation, tanh activation; then Dense(1, sigmoid) on h_T.
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  std::vector<double> expected(batch);
  for (int n = 0; n < batch; ++n) {
    std::vector<double> h(units, 0.0), c(units, 0.0);
    for (int t = 0; t < steps; ++t) {
      std::vector<double> z(4 * units);
      for (int j = 0; j < 4 * units; ++j) {
        double s = bias.data<float>()[j];
        for (int i = 0; i < features; ++i)
          s += double(x.data<float>()[(n * steps + t) * features + i]) * kernel.data<float>()[i * 4 * units + j];
        for (int i = 0; i < units; ++i) s += h[i] * recurrent.data<float>()[i * 4 * units + j];
        z[j] = s;
      }
      for (int j = 0; j < units; ++j) {
        double ig = sigmoid(z[j]), fg = sigmoid(z[units + j]), cc = std::tanh(z[2 * units + j]),
               og = sigmoid(z[3 * units + j]);
        c[j] = fg * c[j] + ig * cc;
        h[j] = og * std::tanh(c[j]);
      }
    }
    double s = db.data<float>()[0];
    for (int i = 0; i < units; ++i) s += h[i] * dk.data<float>()[i];
    expected[n] = sigmoid(s);
  }
  for (const auto& m : testing::modes()) {
    BOOST_TEST_CONTEXT(m.name) {
      auto model = load(dir, m);
      auto out = must_call(*model, "serving_default", {{"input_1", x}});
      const Tensor& y = output(out, "dense");
      BOOST_REQUIRE(y.shape() == Shape({batch, 1}));
      for (int n = 0; n < batch; ++n) BOOST_TEST(y.data<float>()[n] == expected[n], boost::test_tools::tolerance(1e-5));
    }
  }
}

// The Keras LSTM (a StatelessWhile over TensorLists inside its signature's
// functions) differentiated the TensorFlow 2 way: d sum(dense) / d input_1
// through the calls and the While, against central differences of the
// signature, run as written and lowered.
BOOST_AUTO_TEST_CASE(keras_lstm_gradient_with_respect_to_its_input) {
  const std::string dir = model_dir("keras_lstm_from_sequential");
  const int steps = 5, features = 3, batch = 2;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Tensor x(ops::DType::float32, Shape({batch, steps, features}));
  for (int64_t i = 0; i < x.num_elements(); ++i) x.mutable_data<float>()[i] = u(rng);
  std::string input, dx;
  actors::SavedModelOptions o;
  o.transform = [&](graph::Graph* g, const graph::MetaGraphInfo& info) -> ops::Status {
    TF_ASSIGN_OR_RETURN(const graph::Signature* sig, actors::find_signature(info, "serving_default"));
    input = sig->inputs[0].tensor;
    graph::ValidateOptions v;
    v.allow_unknown_ops = true;
    TF_RETURN_IF_ERROR(graph::validate(*g, v));
    TF_ASSIGN_OR_RETURN(graph::Endpoint y, graph::parse_endpoint(*g, sig->outputs[0].tensor));
    TF_ASSIGN_OR_RETURN(graph::Endpoint in, graph::parse_endpoint(*g, input));
    graph::GradientOptions go;
    go.functional = true;
    TF_ASSIGN_OR_RETURN(graph::GradientResult r, graph::gradients(*g, {y}, {in}, {}, go));
    dx = g->endpoint_name(r.dxs[0]);
    return ops::ok_status();
  };
  for (bool lower : {false, true}) {
    BOOST_TEST_CONTEXT((lower ? "lowered" : "as written")) {
      o.session.lower_functional = lower;
      auto model = load(dir, testing::modes()[2], o);
      auto run = [&](const Tensor& in, const std::string& fetch) {
        auto r = model->session().run({{input, in}}, {fetch});
        BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
        return (*r)[0];
      };
      auto sig = actors::find_signature(model->info(), "serving_default");
      BOOST_REQUIRE(sig.ok());
      const std::string y = (*sig)->outputs[0].tensor;
      auto sum_of = [](const Tensor& t) {
        double s = 0;
        for (int64_t i = 0; i < t.num_elements(); ++i) s += t.data<float>()[i];
        return s;
      };
      const Tensor got = run(x, dx);
      BOOST_REQUIRE(got.shape() == x.shape());
      const float h = 1e-2f;
      double worst = 0;
      for (int64_t k = 0; k < x.num_elements(); ++k) {
        std::vector<float> uv(x.data<float>(), x.data<float>() + x.num_elements()), dv = uv;
        uv[static_cast<size_t>(k)] += h;
        dv[static_cast<size_t>(k)] -= h;
        const Tensor up = Tensor::from_vector<float>(x.shape(), uv), down = Tensor::from_vector<float>(x.shape(), dv);
        const double fd = (sum_of(run(up, y)) - sum_of(run(down, y))) / (2.0 * h);
        worst = std::max(worst, std::abs(fd - got.data<float>()[k]));
        BOOST_TEST(std::abs(got.data<float>()[k] - fd) <= 2e-3 * std::max(1.0, std::abs(fd)),
                   "d/d input[" << k << "] = " << got.data<float>()[k] << " vs finite differences " << fd);
      }
      BOOST_TEST_MESSAGE("Keras LSTM d/d input: largest difference from finite differences " << worst);
    }
  }
}

namespace {

// A Keras model's weights differentiated through its signature, as
// tape.gradient(loss, model.trainable_variables) does: the variable handles
// are passed to the signature's StatefulPartitionedCall and read inside
// nested functions (the LSTM's kernels then enter its StatelessWhile as
// captures). d sum(c * output) / d (each weight), c a fixed random
// weighting of the outputs, against central differences of the signature
// with the variable assigned value ± h (a sample of elements per weight),
// run as written and lowered.
void check_weight_gradients(const std::string& name, const std::vector<std::string>& weights, const Shape& input_shape,
                            const Shape& output_shape) {
  const std::string dir = model_dir(name);
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Tensor x(ops::DType::float32, input_shape);
  for (int64_t i = 0; i < x.num_elements(); ++i) x.mutable_data<float>()[i] = u(rng);
  Tensor c(ops::DType::float32, output_shape);
  for (int64_t i = 0; i < c.num_elements(); ++i) c.mutable_data<float>()[i] = u(rng);
  std::string input, y;
  std::vector<std::string> dws;
  actors::SavedModelOptions o;
  o.transform = [&](graph::Graph* g, const graph::MetaGraphInfo& info) -> ops::Status {
    TF_ASSIGN_OR_RETURN(const graph::Signature* sig, actors::find_signature(info, "serving_default"));
    input = sig->inputs[0].tensor;
    y = sig->outputs[0].tensor;
    graph::ValidateOptions v;
    v.allow_unknown_ops = true;
    // Per weight: a Placeholder `<w>/value` and `<w>/assign` to set it.
    for (const std::string& w : weights) {
      const graph::NodeId handle = g->find(w);
      if (handle == graph::kNoNode) return ops::Status(ops::Error::not_found, "no variable " + w);
      graph::Node value;
      value.name = w + "/value";
      value.op = "Placeholder";
      value.attrs = {{"dtype", ops::DType::float32}};
      TF_ASSIGN_OR_RETURN(graph::NodeId value_id, g->add_node(std::move(value)));
      graph::Node assign;
      assign.name = w + "/assign";
      assign.op = "AssignVariableOp";
      assign.attrs = {{"dtype", ops::DType::float32}};
      assign.inputs = {{handle, 0}, {value_id, 0}};
      TF_RETURN_IF_ERROR(g->add_node(std::move(assign)).status());
    }
    graph::Node weighting;
    weighting.name = "output_weighting";
    weighting.op = "Const";
    weighting.attrs = {{"dtype", ops::DType::float32}, {"value", c}};
    TF_ASSIGN_OR_RETURN(graph::NodeId weighting_id, g->add_node(std::move(weighting)));
    TF_RETURN_IF_ERROR(graph::validate(*g, v));
    TF_ASSIGN_OR_RETURN(graph::Endpoint out, graph::parse_endpoint(*g, y));
    std::vector<graph::Endpoint> xs;
    for (const std::string& w : weights) xs.push_back({g->find(w), 0});
    graph::GradientOptions go;
    go.functional = true;
    TF_ASSIGN_OR_RETURN(graph::GradientResult r, graph::gradients(*g, {out}, xs, {{weighting_id, 0}}, go));
    for (const graph::Endpoint& d : r.dxs) {
      if (d.node == graph::kNoNode) return ops::Status(ops::Error::internal, "a weight got no gradient");
      dws.push_back(g->endpoint_name(d));
    }
    return ops::ok_status();
  };
  for (bool lower : {false, true}) {
    BOOST_TEST_CONTEXT(name << (lower ? ", lowered" : ", as written")) {
      o.session.lower_functional = lower;
      auto model = load(dir, testing::modes()[2], o);
      auto run = [&](const std::vector<std::string>& fetches) {
        auto r = model->session().run({{input, x}}, fetches);
        BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
        return std::move(r).value();
      };
      auto assign = [&](const std::string& w, const Tensor& value) {
        auto r = model->session().run({{w + "/value", value}}, {}, {w + "/assign"});
        BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
      };
      auto weighted_sum = [&] {
        const Tensor t = run({y})[0];
        BOOST_REQUIRE(t.shape() == c.shape());
        double s = 0;
        for (int64_t i = 0; i < t.num_elements(); ++i) s += double(t.data<float>()[i]) * c.data<float>()[i];
        return s;
      };
      const std::vector<Tensor> got = run(dws);
      for (size_t k = 0; k < weights.size(); ++k) {
        BOOST_TEST_CONTEXT(weights[k]) {
          const Tensor original = run({weights[k] + "/Read/ReadVariableOp"})[0];
          BOOST_REQUIRE(got[k].shape() == original.shape());
          const float h = 1e-2f;
          double worst = 0;
          std::uniform_int_distribution<int64_t> pick(0, original.num_elements() - 1);
          for (int sample = 0; sample < 8; ++sample) {
            const int64_t e = pick(rng);
            std::vector<float> up(original.data<float>(), original.data<float>() + original.num_elements()),
                down = up;
            up[static_cast<size_t>(e)] += h;
            down[static_cast<size_t>(e)] -= h;
            assign(weights[k], Tensor::from_vector<float>(original.shape(), up));
            const double fu = weighted_sum();
            assign(weights[k], Tensor::from_vector<float>(original.shape(), down));
            const double fd = (fu - weighted_sum()) / (2.0 * h);
            assign(weights[k], original);
            const double g = got[k].data<float>()[e];
            worst = std::max(worst, std::abs(fd - g));
            BOOST_TEST(std::abs(g - fd) <= 2e-3 * std::max(1.0, std::abs(fd)),
                       "d/d" << weights[k] << "[" << e << "] = " << g << " vs finite differences " << fd);
          }
          BOOST_TEST_MESSAGE(name << " d/d " << weights[k] << ": largest difference from finite differences "
                                  << worst);
        }
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(keras_lstm_gradients_with_respect_to_its_weights) {
  check_weight_gradients("keras_lstm_from_sequential",
                         {"lstm/lstm_cell/kernel", "lstm/lstm_cell/recurrent_kernel", "lstm/lstm_cell/bias",
                          "dense/kernel", "dense/bias"},
                         Shape({2, 5, 3}), Shape({2, 1}));
}

BOOST_AUTO_TEST_CASE(keras_mlp_gradients_with_respect_to_its_weights) {
  check_weight_gradients("keras_simple_model_from_auto_compile",
                         {"dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"}, Shape({2, 28, 28, 1}),
                         Shape({2, 10}));
}

BOOST_AUTO_TEST_CASE(bad_checkpoints_and_requests_are_errors_that_name_what_is_wrong) {
  TempDir tmp;
  const testing::Mode m = testing::modes()[2];
  auto load_error = [&](const fs::path& dir, actors::SavedModelOptions o = {}) {
    o.session.threads = m.threads;
    auto s = SavedModelSession::load(dir.string(), o);
    BOOST_REQUIRE(!s.ok());
    return s.status().to_string();
  };
  {  // a data file cut short
    fs::path dir = copy_model("saved_model_half_plus_two_cpu", tmp);
    fs::path data = dir / "variables" / "variables.data-00000-of-00001";
    fs::resize_file(data, fs::file_size(data) - 2);
    std::string e = load_error(dir);
    BOOST_TEST(e.find("variables.data-00000-of-00001") != std::string::npos, e);
    BOOST_TEST(e.find("restoring") != std::string::npos, e);
  }
  {  // a flipped byte: the checksum names the file and the tensor
    fs::path dir = copy_model("saved_model_counter", tmp);
    fs::path data = dir / "variables" / "variables.data-00000-of-00001";
    std::fstream f(data, std::ios::in | std::ios::out | std::ios::binary);
    char c;
    f.seekg(0);
    f.get(c);
    f.seekp(0);
    f.put(static_cast<char>(c ^ 0x40));
    f.close();
    std::string e = load_error(dir);
    BOOST_TEST(e.find("counter") != std::string::npos, e);
    BOOST_TEST(e.find("variables.data-00000-of-00001") != std::string::npos, e);
  }
  {  // a checkpoint that lacks the variable the graph restores
    fs::path ckpt = tmp.path / "other" / "ckpt";
    ops::BundleWriter w(ckpt.string());
    BOOST_REQUIRE(w.add("not_the_counter", Tensor::scalar<float>(1.0f)).ok());
    BOOST_REQUIRE(w.finish().ok());
    actors::SavedModelOptions o;
    o.checkpoint = ckpt.string();
    std::string e = load_error(model_dir("saved_model_counter"), o);
    BOOST_TEST(e.find("counter") != std::string::npos, e);
    BOOST_TEST(e.find("not_found") != std::string::npos, e);
  }
  {  // an unknown tag lists the tag sets
    actors::SavedModelOptions o;
    o.tags = {"train"};
    std::string e = load_error(model_dir("saved_model_counter"), o);
    BOOST_TEST(e.find("serve") != std::string::npos, e);
  }
  auto model = load(model_dir("saved_model_half_plus_two_cpu"), m);
  auto no_sig = model->run_signature("nope", {});
  BOOST_REQUIRE(!no_sig.ok());
  BOOST_TEST(no_sig.status().to_string().find("serving_default") != std::string::npos);
  auto missing = model->run_signature("serving_default", {});
  BOOST_REQUIRE(!missing.ok());
  BOOST_TEST(missing.status().to_string().find("'x'") != std::string::npos);
  auto wrong_type = model->run_signature("serving_default", {{"x", Tensor::vector<int32_t>({1})}});
  BOOST_REQUIRE(!wrong_type.ok());
  BOOST_TEST(wrong_type.status().to_string().find("float") != std::string::npos);
  // The session is still usable after the failures.
  auto y = must_call(*model, "serving_default", {{"x", Tensor::from_vector<float>(Shape({1, 1}), {2.0f})}});
  BOOST_TEST(scalar_of(output(y, "y")) == 3.0f);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace tagflow
