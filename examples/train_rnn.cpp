// Training a recurrent network by gradient descent, built in C++ with
// tagflow's GraphBuilder: the gradients come from GraphBuilder::gradients
// through a while loop.
//
// The model is a tanh RNN over a sequence of T inputs (a batch of B sine
// waves of different phases), with a linear readout of its last state:
//
//   h_0 = 0;  h_{t+1} = tanh(x_t W + h_t U + b)  for t < T;  y = h_T V + c
//   loss = mean((y - target)^2),  target = the next value of each wave
//
// The recurrence is a while loop that gathers row t of the sequence in
// iteration t. The parameters are resource variables; one step of training
// fetches the loss and runs `train`, which subtracts learning_rate * the
// gradient from every parameter (AssignSubVariableOp). The gradients of the
// loop are a gradient loop that runs the forward loop's iterations
// backwards, popping the forward values it needs from stacks.
//
//   train_rnn [--steps N] [--devices N] [--export FILE.pbtxt]
//
// --devices N places the graph round-robin on N devices (each variable
// stays with the ops that use its handle). --export writes the graph it
// built (forward, gradients and updates), which `tagflow run FILE.pbtxt
// --init init --fetch loss --target train` runs one training step of. The
// data and the initial parameters are fixed, so every run prints the same
// losses up to float rounding; the program fails if the last loss is not
// below a tenth of the first.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "actors/session.hpp"
#include "graph/builder/builder.hpp"
#include "graph/io/export.hpp"

using tagflow::graph::GraphBuilder;
using tagflow::graph::Output;
using tagflow::ops::DType;
using tagflow::ops::PartialShape;
using tagflow::ops::Tensor;
using Vars = std::vector<Output>;

namespace {

constexpr int kSequence = 12;  // T
constexpr int kBatch = 8;      // B
constexpr int kHidden = 8;     // H
constexpr float kLearningRate = 0.1f;
// Wave k at time t: each wave has a frequency and phase of its own, so the
// network has to infer them from the sequence.
float wave(int k, int t) {
  const float kf = static_cast<float>(k);
  return std::sin((0.3f + 0.06f * kf) * static_cast<float>(t) + 0.7f * kf);
}

// Initial weights: uniform in [-scale, scale] from a fixed linear
// congruential generator, so runs agree on every machine.
Tensor initial(std::vector<int64_t> shape, float scale) {
  static uint32_t state = 12345;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (float& e : v) {
    state = state * 1664525u + 1013904223u;
    e = scale * (2.0f * static_cast<float>(state >> 8) / static_cast<float>(1u << 24) - 1.0f);
  }
  return Tensor::from_vector<float>(tagflow::ops::Shape::make(shape).value(), v);
}

// A float32 resource variable: its handle, an initialiser and its value
// read once per step.
struct Parameter {
  Output handle;
  Output init;
  Output value;
};

Parameter parameter(GraphBuilder& b, const std::string& name, const Tensor& start) {
  Parameter p;
  p.handle = b.op1("VarHandleOp", {},
                   {{"dtype", DType::float32}, {"shape", PartialShape{false, start.shape().dims()}},
                    {"shared_name", name}},
                   name);
  p.init = b.op("AssignVariableOp", {p.handle, b.constant(start, name + "/initial_value")}, {},
                name + "/init").control();
  p.value = b.op1("ReadVariableOp", {p.handle}, {{"dtype", DType::float32}}, name + "/read");
  return p;
}

struct Options {
  int steps = 300;
  int devices = 1;
  std::string export_path;
};

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      o->steps = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--devices") == 0 && i + 1 < argc) {
      o->devices = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--export") == 0 && i + 1 < argc) {
      o->export_path = argv[++i];
    } else {
      return false;
    }
  }
  return o->steps > 0 && o->devices > 0;
}

// The model, its loss, its gradients and the update; nodes "init", "loss"
// and "train".
void build(GraphBuilder& b) {
  std::vector<float> seq, target;
  for (int t = 0; t < kSequence; ++t)
    for (int k = 0; k < kBatch; ++k) seq.push_back(wave(k, t));
  for (int k = 0; k < kBatch; ++k) target.push_back(wave(k, kSequence));
  Output sequence = b.constant(Tensor::from_vector<float>({kSequence, kBatch, 1}, seq), "sequence");
  Output next = b.constant(Tensor::from_vector<float>({kBatch, 1}, target), "target");

  std::vector<Parameter> params = {
      parameter(b, "W", initial({1, kHidden}, 0.5f)),
      parameter(b, "U", initial({kHidden, kHidden}, 0.3f)),
      parameter(b, "b", initial({kHidden}, 0.1f)),
      parameter(b, "V", initial({kHidden, 1}, 0.3f)),
      parameter(b, "c", Tensor::vector<float>({0.0f})),
  };
  const Output &w = params[0].value, &u = params[1].value, &bias = params[2].value,
               &v = params[3].value, &c = params[4].value;

  // The recurrence: loop variables (t, h). W, U and b are loop invariants.
  Output h0 = b.constant(Tensor::from_vector<float>({kBatch, kHidden}, std::vector<float>(kBatch * kHidden, 0.0f)), "h0");
  auto rnn = b.while_loop(
      [&](const Vars& s) { return s[0] < double(kSequence); },
      [&](const Vars& s) {
        Output x_t = b.gather(sequence, s[0], b.scalar<int32_t>(0));  // [B, 1]
        Output h = b.op1("Tanh", {b.matmul(x_t, w) + b.matmul(s[1], u) + bias});
        return Vars{s[0] + 1.0, h};
      },
      {b.scalar<int32_t>(0), h0}, {/*parallel_iterations=*/10, {}, "rnn"});
  Output y = b.matmul(rnn[1], v) + c;
  Output loss = b.reduce_mean(b.square(y - next), b.vector<int32_t>({0, 1}), false, "loss");

  Vars values, inits, updates;
  for (const Parameter& p : params) {
    values.push_back(p.value);
    inits.push_back(p.init);
  }
  Vars grads = b.gradients({loss}, values);
  for (size_t i = 0; i < params.size(); ++i)
    updates.push_back(b.op("AssignSubVariableOp", {params[i].handle, grads[i] * kLearningRate}).control());
  b.group(inits, "init");
  b.group(updates, "train");
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, &o)) {
    std::fprintf(stderr, "usage: %s [--steps N] [--devices N] [--export FILE.pbtxt]\n", argv[0]);
    return 2;
  }
  GraphBuilder b;
  build(b);
  auto graph = b.finish();
  if (!graph.ok()) {
    std::fprintf(stderr, "train_rnn: %s\n", graph.status().to_string().c_str());
    return 1;
  }
  if (!o.export_path.empty()) {
    tagflow::ops::Status s = tagflow::graph::export_graph_file(*graph, o.export_path);
    if (!s.ok()) {
      std::fprintf(stderr, "train_rnn: %s\n", s.to_string().c_str());
      return 1;
    }
    std::printf("wrote %s (%d nodes)\n", o.export_path.c_str(), graph->num_nodes());
  }

  tagflow::actors::SessionOptions options;
  options.num_devices = o.devices;
  options.placement.strategy = tagflow::graph::PlacementOptions::Strategy::round_robin;
  auto session = tagflow::actors::Session::create(std::move(graph).value(), options);
  if (!session.ok()) {
    std::fprintf(stderr, "train_rnn: %s\n", session.status().to_string().c_str());
    return 1;
  }
  auto& s = **session;
  if (auto r = s.run({}, {}, {"init"}); !r.ok()) {
    std::fprintf(stderr, "train_rnn: init: %s\n", r.status().to_string().c_str());
    return 1;
  }

  // Each step fetches the loss (before the step's update) and runs `train`.
  const int every = o.steps >= 10 ? o.steps / 10 : 1;
  float first = 0, last = 0;
  for (int step = 0; step < o.steps; ++step) {
    auto r = s.run({}, {"loss"}, {"train"});
    if (!r.ok()) {
      std::fprintf(stderr, "train_rnn: step %d: %s\n", step, r.status().to_string().c_str());
      return 1;
    }
    last = (*r)[0].scalar_value<float>();
    if (step == 0) first = last;
    if (step % every == 0 || step == o.steps - 1) std::printf("step %4d  loss %.6f\n", step, last);
  }
  const bool learned = std::isfinite(last) && last < 0.1f * first;
  std::printf("loss %.6f -> %.6f after %d steps on %zu partition(s): %s\n", first, last, o.steps,
              s.last_partitions().size(), learned ? "learned" : "did NOT learn");
  return learned ? 0 : 1;
}
