// A training graph TensorFlow wrote trains here: the corpus NER model
// (tfnet_lstm_crf_ner_train.pbtxt, TF 1.13: char and word bi-LSTMs over
// while loops, a CRF loss, TensorFlow's own gradient loops with stacks and
// its Adam update) runs its train op step after step in one session on a
// fixed synthetic batch, and its loss falls.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>

#include "graph/io/variables.hpp"
#include "session_test_util.hpp"

using namespace tagflow;
using namespace tagflow::testing;
using ops::Tensor;

namespace {

// The graph's sizes: 23 words, 28 characters, 9 tags.
constexpr int kWords = 23, kChars = 28, kTags = 9;
constexpr int kBatch = 3, kLength = 4, kWordLength = 5;

Tensor random_ids(const std::vector<int64_t>& shape, int bound, std::mt19937& rng) {
  const ops::Shape s = ops::Shape::make(shape).value();
  std::uniform_int_distribution<int32_t> d(0, bound - 1);
  std::vector<int32_t> v(static_cast<size_t>(s.num_elements()));
  for (int32_t& e : v) e = d(rng);
  return Tensor::from_vector<int32_t>(s, v);
}

actors::Feeds batch(uint32_t seed) {
  std::mt19937 rng(seed);
  return {{"word_ids", random_ids({kBatch, kLength}, kWords, rng)},
          {"sequence_lengths", Tensor::vector<int32_t>({4, 2, 3})},
          {"char_ids", random_ids({kBatch, kLength, kWordLength}, kChars, rng)},
          {"word_lengths", Tensor::from_vector<int32_t>(ops::Shape({kBatch, kLength}),
                                                        {5, 3, 1, 4, 2, 5, 0, 0, 3, 3, 4, 0})},
          {"labels", random_ids({kBatch, kLength}, kTags, rng)},
          {"dropout", Tensor::scalar<float>(1.0f)},
          {"lr", Tensor::scalar<float>(0.01f)}};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(tf_training)

BOOST_AUTO_TEST_CASE(the_corpus_ner_graph_trains_with_its_own_adam_op) {
  const graph::Graph g = load_corpus("tfnet_lstm_crf_ner_train.pbtxt");
  const std::vector<std::string> inits = graph::variable_initializers(g);
  // 13 model variables (12 trained: the word embeddings are fixed), two
  // Adam slots per trained one, and Adam's two powers.
  BOOST_TEST(inits.size() == 13u + 12u * 2 + 2);
  for (const Mode& m : {modes()[1], modes()[3]}) {
    BOOST_TEST_CONTEXT(m.name) {
      auto session = make_session(g, m);
      const actors::Feeds feeds = batch(5);
      must_run(*session, feeds, {}, inits);
      std::vector<float> losses;
      for (int step = 0; step < 20; ++step) {
        auto out = must_run(*session, feeds, {"Mean"}, {"train_step/Adam"});
        losses.push_back(out[0].scalar_value<float>());
        BOOST_REQUIRE(std::isfinite(losses.back()));
      }
      BOOST_TEST_MESSAGE(m.name << ": loss " << losses.front() << " -> " << losses.back());
      BOOST_TEST(losses.back() < 0.5f * losses.front());
      // Adam's power accumulators advanced once per step.
      auto powers = must_run(*session, {}, {"train_step/beta1_power"});
      BOOST_TEST(powers[0].scalar_value<float>() == std::pow(0.9f, 21.0f), boost::test_tools::tolerance(1e-4f));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
