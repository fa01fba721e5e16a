// libFuzzer harness for gradients(): the input's bytes choose a random
// differentiable float64 program (tests/actors/gradient_programs.hpp: conds,
// case_, while loops, scan and map_fn nested up to three deep), gradients()
// is added for every placeholder and, if the graph builds and validates,
// one step fetches y and the gradients in a Session under tight limits (at
// most kMaxIterations iterations per frame instance, kTimeout per step,
// kMemoryLimit of tensors), on one or two devices with random placement,
// on the deterministic or (rarely: it costs ~10 times as much) the threaded
// scheduler. A builder error or a step error is an ordinary outcome; a
// finding is a crash, a sanitizer report, a hang (libFuzzer's -timeout),
// an actor of a finished step left alive, or a gradient that is not
// finite where y is. Seeds: fuzz/corpus/gradients.
//
//   byte 0   bit 0: two devices; bits 1-3 all set: threaded (2 workers)
//   byte 1   placement seed
//   rest     the program's choices (GradientProgramGenerator), one byte each
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "actors/session.hpp"
#include "gradient_programs.hpp"
#include "graph/autodiff/gradients.hpp"

namespace {

using namespace tagflow;

constexpr int64_t kMaxIterations = 16;
constexpr std::chrono::seconds kTimeout{5};
constexpr int64_t kMemoryLimit = int64_t{64} << 20;

[[noreturn]] void finding(const std::string& what, const std::string& program) {
  std::fprintf(stderr, "tagflow fuzz gradients: %s\nprogram:\n%s", what.c_str(), program.c_str());
  std::abort();
}

bool finite(const ops::Tensor& t) {
  for (int64_t i = 0; i < t.num_elements(); ++i)
    if (!std::isfinite(t.data<double>()[i])) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return -1;
  const bool two_devices = data[0] & 1;
  const bool threaded = (data[0] & 0x0e) == 0x0e;
  const uint64_t placement_seed = data[1];
  testing::ByteChooser chooser(data + 2, size - 2);
  graph::GraphBuilder b;
  testing::GradientProgram p = testing::GradientProgramGenerator(b, chooser).generate();
  graph::GradientOptions go;
  go.unconnected = graph::GradientOptions::Unconnected::zeros;
  std::vector<graph::Output> dxs = b.gradients({p.y}, p.xs, {}, go);
  auto built = b.finish();
  if (!built.ok()) return -1;  // nothing to run: not worth keeping in the corpus

  actors::SessionOptions o;
  o.max_iterations = kMaxIterations;
  o.timeout = kTimeout;
  o.memory_limit = kMemoryLimit;
  o.deterministic = !threaded;
  o.threads = 2;
  o.num_devices = two_devices ? 2 : 1;
  o.placement.strategy = graph::PlacementOptions::Strategy::random;
  o.placement.seed = placement_seed;
  auto session = actors::Session::create(std::move(built).value(), o);
  if (!session.ok()) return 0;
  actors::Feeds feeds;
  for (size_t i = 0; i < p.xs.size(); ++i)
    feeds.push_back({p.xs[i].name(), ops::Tensor::from_vector<double>(ops::Shape::make(p.shapes[i]).value(), p.values[i])});
  std::vector<std::string> fetches{p.y.name()};
  for (const graph::Output& d : dxs) fetches.push_back(d.name());
  auto r = (*session)->run(feeds, fetches);
  if (o.deterministic && (*session)->running_actors() != (*session)->resident_actors())
    finding("the step left " + std::to_string((*session)->running_actors() - (*session)->resident_actors()) +
                " actors alive",
            p.text);
  if (r.ok() && finite((*r)[0]))
    for (size_t i = 1; i < r->size(); ++i)
      if (!finite((*r)[i])) finding("y is finite, d y / d x" + std::to_string(i - 1) + " is not", p.text);
  return 0;
}
