// gradients() on random differentiable programs (gradient_programs.hpp),
// checked against central finite differences in float64: for each seed,
// y = f(xs) is built with GraphBuilder, its gradients w.r.t. every x are
// added and run, and each element is compared with (f(x+h) - f(x-h)) / 2h.
// A program may switch (select, cond, trip count) on a float comparison;
// where the step x ± h crosses a switching point, the two one-sided
// differences disagree and that element is not compared (counted, and
// bounded). A failure prints the seed, the mode and the program.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <set>

#include "gradient_programs.hpp"
#include "graph/autodiff/gradients.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using graph::GraphBuilder;
using ops::DType;
using ops::Tensor;

namespace {

struct Totals {
  int programs = 0;
  int elements = 0;
  int at_switching_points = 0;  // not compared
};

Tensor make(const std::vector<int64_t>& shape, const std::vector<double>& v) {
  return Tensor::from_vector<double>(ops::Shape::make(shape).value(), v);
}

// Builds the program of `seed`, runs its gradients at `mode` on `devices`
// devices (round-robin placement) and compares them with finite differences.
void check(uint64_t seed, const Mode& mode, int devices, Totals& totals) {
  GraphBuilder b;
  SeededChooser chooser(seed);
  GradientProgram p = GradientProgramGenerator(b, chooser).generate();
  const std::string where = "seed " + std::to_string(seed) + " (" + mode.name + ", " +
                            std::to_string(devices) + " device(s)), program:\n" + p.text;
  graph::GradientOptions go;
  go.unconnected = graph::GradientOptions::Unconnected::zeros;
  std::vector<graph::Output> dxs = b.gradients({p.y}, p.xs, {}, go);
  auto built = b.finish();
  if (!built.ok()) {
    BOOST_ERROR("gradients() failed: " << built.status().to_string() << "\n" << where);
    return;
  }
  actors::SessionOptions o;
  if (devices > 1) {
    o.num_devices = devices;
    o.placement.strategy = graph::PlacementOptions::Strategy::round_robin;
  }
  auto session = make_session(std::move(built).value(), mode, o);
  auto feeds_of = [&](const std::vector<std::vector<double>>& vals) {
    actors::Feeds feeds;
    for (size_t i = 0; i < p.xs.size(); ++i) feeds.push_back({p.xs[i].name(), make(p.shapes[i], vals[i])});
    return feeds;
  };
  std::vector<std::string> fetches{p.y.name()};
  for (const graph::Output& d : dxs) fetches.push_back(d.name());
  auto r = session->run(feeds_of(p.values), fetches);
  if (!r.ok()) {
    BOOST_ERROR("the step failed: " << r.status().to_string() << "\n" << where);
    return;
  }
  const double f0 = (*r)[0].scalar_value<double>();
  auto f_at = [&](const std::vector<std::vector<double>>& vals, bool* ok) {
    auto fr = session->run(feeds_of(vals), {p.y.name()});
    if (!fr.ok()) {
      BOOST_ERROR("the step failed: " << fr.status().to_string() << "\n" << where);
      *ok = false;
      return 0.0;
    }
    return (*fr)[0].scalar_value<double>();
  };
  ++totals.programs;
  const double h = 1e-6;
  for (size_t i = 0; i < p.xs.size(); ++i) {
    const Tensor& g = (*r)[i + 1];
    BOOST_REQUIRE(g.dtype() == DType::float64);
    if (static_cast<size_t>(g.num_elements()) != p.values[i].size()) {
      BOOST_ERROR("d y / d x" << i << " has " << g.num_elements() << " elements\n" << where);
      return;
    }
    for (size_t e = 0; e < p.values[i].size(); ++e) {
      auto plus = p.values, minus = p.values;
      plus[i][e] += h;
      minus[i][e] -= h;
      bool ok = true;
      const double fp = f_at(plus, &ok), fm = f_at(minus, &ok);
      if (!ok) return;
      ++totals.elements;
      const double want = (fp - fm) / (2 * h);
      const double forward = (fp - f0) / h, backward = (f0 - fm) / h;
      if (std::abs(forward - backward) > 1e-3 * std::max(1.0, std::abs(want))) {
        ++totals.at_switching_points;  // f switches between x - h and x + h
        continue;
      }
      const double got = g.data<double>()[e];
      BOOST_TEST(std::abs(got - want) <= 1e-5 * std::max(1.0, std::abs(want)),
                 "d y / d x" << i << "[" << e << "] = " << got << ", finite differences give " << want
                             << "; y = " << f0 << "\n" << where);
    }
  }
}

void check_seeds(uint64_t first, int count, const Mode& mode, int devices) {
  Totals totals;
  for (uint64_t seed = first; seed < first + static_cast<uint64_t>(count); ++seed)
    check(seed, mode, devices, totals);
  BOOST_TEST_MESSAGE(mode.name << ", " << devices << " device(s): " << totals.programs << " programs, "
                               << totals.elements << " gradient elements, " << totals.at_switching_points
                               << " at a switching point");
  BOOST_TEST(totals.programs == count);
  BOOST_TEST(totals.at_switching_points * 50 <= totals.elements);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(gradient_programs)

BOOST_AUTO_TEST_CASE(deterministic_one_device) { check_seeds(1, 400, modes()[0], 1); }

BOOST_AUTO_TEST_CASE(two_threads_one_device) { check_seeds(1001, 100, modes()[2], 1); }

BOOST_AUTO_TEST_CASE(deterministic_two_devices_round_robin) { check_seeds(2001, 60, modes()[0], 2); }

// The generator's text is the program: one seed always gives one program.
BOOST_AUTO_TEST_CASE(a_seed_gives_one_program) {
  for (uint64_t seed : {7u, 8u}) {
    GraphBuilder b1, b2;
    SeededChooser c1(seed), c2(seed);
    const GradientProgram p1 = GradientProgramGenerator(b1, c1).generate();
    const GradientProgram p2 = GradientProgramGenerator(b2, c2).generate();
    BOOST_TEST(p1.text == p2.text);
    BOOST_TEST(b1.graph().num_nodes() == b2.graph().num_nodes());
  }
}

BOOST_AUTO_TEST_SUITE_END()
