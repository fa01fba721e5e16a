// The corpus k-means training graph (tfnet_kmeans_refswitch.pbtxt, written
// by TensorFlow's contrib KMeans: 25 clusters of 784-dimensional points,
// cosine distance, mini-batch updates) runs as TensorFlow wrote it: its
// initialisation cond samples clusters from the batch through RefSwitches,
// NearestNeighbors assigns points, and its ScatterAdds move the centres.
// Every value is checked against the same algorithm computed here from the
// fetched tensors.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>

#include "graph/io/variables.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

namespace {

constexpr int kClusters = 25, kDim = 784, kPoints = 100, kBlobs = 5;

using Rows = std::vector<std::vector<double>>;

Rows rows_of(const Tensor& t) {
  BOOST_REQUIRE(t.rank() == 2);
  const int64_t n = t.dim(0), d = t.dim(1);
  const float* p = t.data<float>();
  Rows out(static_cast<size_t>(n), std::vector<double>(static_cast<size_t>(d)));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) out[i][j] = p[i * d + j];
  return out;
}

std::vector<double> normalized(std::vector<double> v) {
  double s = 0;
  for (double x : v) s += x * x;
  const double r = 1.0 / std::sqrt(std::max(s, 1e-12));
  for (double& x : v) x *= r;
  return v;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// 100 points around 5 random directions.
Tensor blobs(uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> centres(kBlobs, std::vector<float>(kDim));
  for (auto& c : centres)
    for (float& x : c) x = normal(rng);
  std::vector<float> v;
  for (int i = 0; i < kPoints; ++i)
    for (int j = 0; j < kDim; ++j) v.push_back(centres[i % kBlobs][j] + 0.2f * normal(rng));
  return Tensor::from_vector<float>(ops::Shape({kPoints, kDim}), v);
}

struct Assignment {
  std::vector<int> nearest;
  double mean_distance = 0;  // mean of 1 - cos(x, centre)
};

Assignment assign(const Rows& points, const Rows& clusters) {
  Assignment a;
  for (const auto& x : points) {
    const auto xn = normalized(x);
    int best = 0;
    double best_cos = -2;
    for (size_t j = 0; j < clusters.size(); ++j) {
      const double c = dot(xn, normalized(clusters[j]));
      if (c > best_cos) best_cos = c, best = static_cast<int>(j);
    }
    a.nearest.push_back(best);
    a.mean_distance += (1.0 - best_cos) / static_cast<double>(points.size());
  }
  return a;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tf_kmeans)

BOOST_AUTO_TEST_CASE(the_corpus_kmeans_graph_initialises_assigns_and_updates_as_tensorflow_does) {
  const graph::Graph g = load_corpus("tfnet_kmeans_refswitch.pbtxt");
  const std::vector<std::string> inits = graph::variable_initializers(g);
  BOOST_TEST(inits.size() == 3u);  // clusters, initialized, Variable (the counts)
  const Tensor data = blobs(7);
  const Rows points = rows_of(data);
  const actors::Feeds feeds = {{"Placeholder", data}};
  for (const Mode& m : {modes()[0], modes()[2], modes()[4]}) {
    BOOST_TEST_CONTEXT(m.name) {
      auto session = make_session(g, m);
      must_run(*session, {}, {}, inits);
      // The initialisation cond: 25 clusters sampled from the batch,
      // normalised, and the flag set.
      must_run(*session, feeds, {}, {"cond/Merge"});
      auto state = must_run(*session, {}, {"clusters", "initialized", "Variable"});
      BOOST_REQUIRE((state[0].shape() == ops::Shape({kClusters, kDim})));
      BOOST_TEST(state[1].scalar_value<bool>());
      Rows clusters = rows_of(state[0]);
      for (const auto& c : clusters) {
        bool is_a_point = false;
        for (const auto& x : points) {
          const auto xn = normalized(x);
          double err = 0;
          for (int j = 0; j < kDim; ++j) err = std::max(err, std::abs(xn[j] - c[j]));
          is_a_point |= err < 1e-5;
        }
        BOOST_TEST(is_a_point);
      }
      // Running the cond again leaves the clusters alone (its assert branch).
      must_run(*session, feeds, {}, {"cond/Merge"});
      BOOST_TEST(rows_of(must_run(*session, {}, {"clusters"})[0]) == clusters);

      std::vector<double> counts(kClusters);
      for (int j = 0; j < kClusters; ++j) counts[j] = static_cast<double>(state[2].data<int64_t>()[j]);
      double first_distance = 0, last_distance = 0;
      for (int step = 0; step < 4; ++step) {
        BOOST_TEST_CONTEXT("step " << step) {
          const Assignment want = assign(points, clusters);
          auto out = must_run(*session, feeds, {"Mean", "Squeeze_1"}, {"group_deps"});
          BOOST_TEST(out[0].scalar_value<float>() == want.mean_distance, boost::test_tools::tolerance(1e-4));
          const int64_t* got = out[1].data<int64_t>();
          int agree = 0;
          for (int i = 0; i < kPoints; ++i) agree += got[i] == want.nearest[i];
          BOOST_TEST(agree == kPoints);
          if (step == 0) first_distance = want.mean_distance;
          last_distance = want.mean_distance;
          // The mini-batch update: c += (sum of its points - n c) / (count + n).
          std::vector<double> n(kClusters, 0.0);
          Rows sums(kClusters, std::vector<double>(kDim, 0.0));
          for (int i = 0; i < kPoints; ++i) {
            const int j = want.nearest[i];
            n[j] += 1;
            const auto xn = normalized(points[i]);
            for (int d = 0; d < kDim; ++d) sums[j][d] += xn[d];
          }
          for (int j = 0; j < kClusters; ++j) {
            if (n[j] == 0) continue;
            for (int d = 0; d < kDim; ++d)
              clusters[j][d] += (sums[j][d] - n[j] * clusters[j][d]) / (counts[j] + n[j]);
            counts[j] += n[j];
          }
          auto after = must_run(*session, {}, {"clusters", "Variable"});
          const Rows got_clusters = rows_of(after[0]);
          double err = 0;
          for (int j = 0; j < kClusters; ++j)
            for (int d = 0; d < kDim; ++d) err = std::max(err, std::abs(got_clusters[j][d] - clusters[j][d]));
          BOOST_TEST(err < 1e-5);
          for (int j = 0; j < kClusters; ++j)
            BOOST_TEST(static_cast<double>(after[1].data<int64_t>()[j]) == counts[j]);
          clusters = got_clusters;
        }
      }
      BOOST_TEST(last_distance <= first_distance + 1e-9);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
