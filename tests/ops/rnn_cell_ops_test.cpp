#include <boost/test/unit_test.hpp>

#include "nn_test_util.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

constexpr int64_t kBatch = 3, kInput = 4, kCell = 5;

double sigmoid(double v) { return 1 / (1 + std::exp(-v)); }

struct LstmInputs {
  Tensor x = random_tensor<double>({kBatch, kInput}, 1);
  Tensor cs_prev = random_tensor<double>({kBatch, kCell}, 2, -3, 3);
  Tensor h_prev = random_tensor<double>({kBatch, kCell}, 3);
  Tensor w = random_tensor<double>({kInput + kCell, 4 * kCell}, 4);
  Tensor wci = random_tensor<double>({kCell}, 5);
  Tensor wcf = random_tensor<double>({kCell}, 6);
  Tensor wco = random_tensor<double>({kCell}, 7);
  Tensor b = random_tensor<double>({4 * kCell}, 8);
  std::vector<Tensor> all() const { return {x, cs_prev, h_prev, w, wci, wcf, wco, b}; }
};

AttrMap lstm_attrs(bool peephole, double clip, double forget_bias = 1.0) {
  return {{"use_peephole", peephole}, {"cell_clip", static_cast<float>(clip)},
          {"forget_bias", static_cast<float>(forget_bias)}};
}

// One LSTM step written out element by element; the gate blocks of w's
// columns are i, ci, f, o. Returns i, cs, f, o, ci, co, h.
std::vector<std::vector<double>> lstm_step(const LstmInputs& in, bool peephole, double clip, double forget_bias) {
  const auto x = values_of(in.x), cs_prev = values_of(in.cs_prev), h_prev = values_of(in.h_prev);
  const auto w = values_of(in.w), b = values_of(in.b);
  const auto wci = values_of(in.wci), wcf = values_of(in.wcf), wco = values_of(in.wco);
  std::vector<std::vector<double>> out(7, std::vector<double>(kBatch * kCell));
  for (int64_t n = 0; n < kBatch; ++n)
    for (int64_t j = 0; j < kCell; ++j) {
      double pre[4];
      for (int g = 0; g < 4; ++g) {
        const int64_t col = g * kCell + j;
        double s = b[col];
        for (int64_t k = 0; k < kInput; ++k) s += x[n * kInput + k] * w[k * 4 * kCell + col];
        for (int64_t k = 0; k < kCell; ++k) s += h_prev[n * kCell + k] * w[(kInput + k) * 4 * kCell + col];
        pre[g] = s;
      }
      const double c_prev = cs_prev[n * kCell + j];
      const double i = sigmoid(pre[0] + (peephole ? c_prev * wci[j] : 0));
      const double ci = std::tanh(pre[1]);
      const double f = sigmoid(pre[2] + forget_bias + (peephole ? c_prev * wcf[j] : 0));
      double cs = i * ci + f * c_prev;
      if (clip > 0) cs = std::max(-clip, std::min(clip, cs));
      const double o = sigmoid(pre[3] + (peephole ? cs * wco[j] : 0));
      const double co = std::tanh(cs);
      const double vals[] = {i, cs, f, o, ci, co, o * co};
      for (int k = 0; k < 7; ++k) out[k][n * kCell + j] = vals[k];
    }
  return out;
}

// Column sums of a [rows, cols] tensor.
std::vector<double> column_sums(const Tensor& t) {
  std::vector<double> s(t.dim(1), 0.0);
  const std::vector<double> v = values_of(t);
  for (size_t i = 0; i < v.size(); ++i) s[i % t.dim(1)] += v[i];
  return s;
}

struct GruInputs {
  Tensor x = random_tensor<double>({kBatch, kInput}, 11);
  Tensor h_prev = random_tensor<double>({kBatch, kCell}, 12);
  Tensor w_ru = random_tensor<double>({kInput + kCell, 2 * kCell}, 13);
  Tensor w_c = random_tensor<double>({kInput + kCell, kCell}, 14);
  Tensor b_ru = random_tensor<double>({2 * kCell}, 15);
  Tensor b_c = random_tensor<double>({kCell}, 16);
  std::vector<Tensor> all() const { return {x, h_prev, w_ru, w_c, b_ru, b_c}; }
};

// One GRU step written out: r, u, c, h.
std::vector<std::vector<double>> gru_step(const GruInputs& in) {
  const auto x = values_of(in.x), h = values_of(in.h_prev), w_ru = values_of(in.w_ru);
  const auto w_c = values_of(in.w_c), b_ru = values_of(in.b_ru), b_c = values_of(in.b_c);
  std::vector<std::vector<double>> out(4, std::vector<double>(kBatch * kCell));
  for (int64_t n = 0; n < kBatch; ++n) {
    std::vector<double> r(kCell), u(kCell);
    for (int64_t j = 0; j < kCell; ++j) {
      double sr = b_ru[j], su = b_ru[kCell + j];
      for (int64_t k = 0; k < kInput; ++k) {
        sr += x[n * kInput + k] * w_ru[k * 2 * kCell + j];
        su += x[n * kInput + k] * w_ru[k * 2 * kCell + kCell + j];
      }
      for (int64_t k = 0; k < kCell; ++k) {
        sr += h[n * kCell + k] * w_ru[(kInput + k) * 2 * kCell + j];
        su += h[n * kCell + k] * w_ru[(kInput + k) * 2 * kCell + kCell + j];
      }
      r[j] = sigmoid(sr);
      u[j] = sigmoid(su);
    }
    for (int64_t j = 0; j < kCell; ++j) {
      double s = b_c[j];
      for (int64_t k = 0; k < kInput; ++k) s += x[n * kInput + k] * w_c[k * kCell + j];
      for (int64_t k = 0; k < kCell; ++k) s += r[k] * h[n * kCell + k] * w_c[(kInput + k) * kCell + j];
      const double c = std::tanh(s);
      out[0][n * kCell + j] = r[j];
      out[1][n * kCell + j] = u[j];
      out[2][n * kCell + j] = c;
      out[3][n * kCell + j] = u[j] * h[n * kCell + j] + (1 - u[j]) * c;
    }
  }
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(rnn_cell_ops)

BOOST_AUTO_TEST_CASE(lstm_block_cell_matches_a_written_out_step) {
  const LstmInputs in;
  struct Case { bool peephole; double clip, forget_bias; };
  // cs_prev spans [-3, 3], so a clip of 0.5 cuts some cells.
  for (const Case& c : {Case{false, 3.0, 1.0}, Case{true, -1.0, 0.5}, Case{true, 0.5, 1.0}, Case{false, 0.0, 0.0}}) {
    Expected<std::vector<Tensor>> out = run_op("LSTMBlockCell", in.all(), lstm_attrs(c.peephole, c.clip, c.forget_bias));
    BOOST_REQUIRE_MESSAGE(out.ok(), out.status().to_string());
    BOOST_REQUIRE(out->size() == 7u);
    const auto want = lstm_step(in, c.peephole, c.clip, c.forget_bias);
    for (int k = 0; k < 7; ++k)
      BOOST_TEST(max_abs_diff(values_of((*out)[k]), want[k]) < 1e-12,
                 "output " << k << " peephole " << c.peephole << " clip " << c.clip);
  }
  // The default attrs: forget_bias 1, cell_clip 3, no peephole.
  Expected<std::vector<Tensor>> d = run_op("LSTMBlockCell", in.all());
  BOOST_REQUIRE(d.ok());
  BOOST_TEST(max_abs_diff(values_of((*d)[6]), lstm_step(in, false, 3.0, 1.0)[6]) < 1e-12);
}

BOOST_AUTO_TEST_CASE(lstm_block_cell_grad_matches_finite_differences) {
  const LstmInputs in;
  const Tensor gh = random_tensor<double>({kBatch, kCell}, 20);
  const Tensor gcs = random_tensor<double>({kBatch, kCell}, 21);
  const std::vector<std::pair<int, Tensor>> objective = {{6, gh}, {1, gcs}};
  for (bool peephole : {false, true}) {
    const AttrMap attrs = lstm_attrs(peephole, -1.0);  // the gradient ignores clipping
    Expected<std::vector<Tensor>> fwd = run_op("LSTMBlockCell", in.all(), attrs);
    BOOST_REQUIRE(fwd.ok());
    std::vector<Tensor> grad_in = in.all();
    for (int k = 0; k < 6; ++k) grad_in.push_back((*fwd)[k]);  // i, cs, f, o, ci, co
    grad_in.push_back(gcs);
    grad_in.push_back(gh);
    Expected<std::vector<Tensor>> g = run_op("LSTMBlockCellGrad", grad_in, {{"use_peephole", peephole}});
    BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
    const char* p = peephole ? "peephole" : "plain";
    auto numeric = [&](int which) { return numeric_gradient("LSTMBlockCell", in.all(), attrs, which, objective, 1e-5); };
    BOOST_TEST(max_abs_diff(values_of((*g)[0]), numeric(1)) < 1e-8, p << " cs_prev");
    // b enters every gate pre-activation once per batch row.
    BOOST_TEST(max_abs_diff(column_sums((*g)[1]), numeric(7)) < 1e-8, p << " b");
    for (int k = 0; k < 3; ++k) {
      const std::vector<double> want = peephole ? numeric(4 + k) : std::vector<double>(kCell, 0.0);
      BOOST_TEST(max_abs_diff(values_of((*g)[2 + k]), want) < 1e-8, p << " peephole weight " << k);
    }
  }
}

BOOST_AUTO_TEST_CASE(gru_block_cell_matches_a_written_out_step) {
  const GruInputs in;
  Expected<std::vector<Tensor>> out = run_op("GRUBlockCell", in.all());
  BOOST_REQUIRE_MESSAGE(out.ok(), out.status().to_string());
  const auto want = gru_step(in);
  for (int k = 0; k < 4; ++k) BOOST_TEST(max_abs_diff(values_of((*out)[k]), want[k]) < 1e-12, "output " << k);
  // float32 too.
  std::vector<Tensor> f32;
  for (const Tensor& t : in.all()) {
    std::vector<float> v;
    for (double d : values_of(t)) v.push_back(static_cast<float>(d));
    f32.push_back(Tensor::from_vector<float>(t.shape(), v));
  }
  Expected<std::vector<Tensor>> o32 = run_op("GRUBlockCell", f32);
  BOOST_REQUIRE(o32.ok());
  BOOST_TEST(max_abs_diff(values_of((*o32)[3]), want[3]) < 1e-5);
}

BOOST_AUTO_TEST_CASE(gru_block_cell_grad_matches_finite_differences) {
  const GruInputs in;
  const Tensor dh = random_tensor<double>({kBatch, kCell}, 22);
  Expected<std::vector<Tensor>> fwd = run_op("GRUBlockCell", in.all());
  BOOST_REQUIRE(fwd.ok());
  std::vector<Tensor> grad_in = in.all();
  for (int k = 0; k < 3; ++k) grad_in.push_back((*fwd)[k]);
  grad_in.push_back(dh);
  Expected<std::vector<Tensor>> g = run_op("GRUBlockCellGrad", grad_in);
  BOOST_REQUIRE_MESSAGE(g.ok(), g.status().to_string());
  auto numeric = [&](int which) { return numeric_gradient("GRUBlockCell", in.all(), {}, which, dh, 1e-5, 3); };
  BOOST_TEST(max_abs_diff(values_of((*g)[0]), numeric(0)) < 1e-8);            // d_x
  BOOST_TEST(max_abs_diff(values_of((*g)[1]), numeric(1)) < 1e-8);            // d_h_prev
  BOOST_TEST(max_abs_diff(column_sums((*g)[2]), numeric(5)) < 1e-8);          // b_c
  BOOST_TEST(max_abs_diff(column_sums((*g)[3]), numeric(4)) < 1e-8);          // b_ru
}

BOOST_AUTO_TEST_CASE(rnn_cell_errors) {
  const LstmInputs in;
  std::vector<Tensor> v = in.all();
  v[0] = random_tensor<double>({kInput}, 1);
  BOOST_TEST(error_of("LSTMBlockCell", v) ==
             "invalid_argument: LSTMBlockCell: x must be a matrix [batch, input_size], got shape [4]");
  v = in.all();
  v[3] = random_tensor<double>({kInput + kCell, 3 * kCell}, 1);
  BOOST_TEST(error_of("LSTMBlockCell", v) == "invalid_argument: LSTMBlockCell: w must have shape [9,20], got [9,15]");
  v = in.all();
  v[2] = random_tensor<double>({kBatch + 1, kCell}, 1);
  BOOST_TEST(contains(error_of("LSTMBlockCell", v), "h_prev must be a matrix [3, cell_size], got shape [4,5]"));
  v = in.all();
  v[7] = random_tensor<float>({4 * kCell}, 1);
  BOOST_TEST(contains(error_of("LSTMBlockCell", v), "LSTMBlockCell expects float64 inputs"));
  const GruInputs g;
  std::vector<Tensor> gv = g.all();
  gv[5] = random_tensor<double>({kCell + 1}, 1);
  BOOST_TEST(error_of("GRUBlockCell", gv) == "invalid_argument: GRUBlockCell: b_c must have shape [5], got [6]");
  BOOST_TEST(contains(error_of("GRUBlockCellGrad", g.all()), "takes 10 inputs, got 6"));
}

BOOST_AUTO_TEST_SUITE_END()
