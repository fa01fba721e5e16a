// MatMul and BatchMatMul on float run on oneDNN (ops/cpu/dnnl_matmul.hpp):
// checked against products computed in double, on the shapes oneDNN
// treats specially (empty, 1 x N, N x 1, inner dimension 0 or 1, every
// transpose, strided batches) and on large ones that split across threads.
// Within one ISA level, the blocks of a split product compute each output
// element with the same instructions in the same order as the whole
// product does, but oneDNN may block a sub-matrix's inner dimension
// differently, so thread counts are compared to the same tolerance as the
// reference: |got - want| <= 1e-5 * sum_k |a_ik b_kj| (float rounding of a
// k-term sum, FMA or not).
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "../op_test_util.hpp"
#include "ops/cpu/parallel.hpp"
#include "test_pool.hpp"

using namespace tagflow::ops;
using tagflow::ops::testing::ThreadPool;

namespace {

Tensor random_floats(const Shape& shape, uint32_t seed) {
  Tensor t(DType::float32, shape);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  float* p = t.mutable_data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i) p[i] = dist(gen);
  return t;
}

// Element (r, c) of op(m) for a row-major rows x cols matrix at p.
float op_at(const float* p, int64_t cols, bool transpose, int64_t r, int64_t c) {
  return transpose ? p[c * cols + r] : p[r * cols + c];
}

// Checks out (batch x m x n) against op(a) op(b) computed in double.
void check_product(const Tensor& out, const float* a, const float* b, int64_t batch, int64_t m, int64_t k,
                   int64_t n, bool ta, bool tb, int64_t a_batch_stride, int64_t b_batch_stride) {
  BOOST_REQUIRE(out.num_elements() == batch * m * n);
  const float* o = out.data<float>();
  const int64_t a_cols = ta ? m : k, b_cols = tb ? k : n;
  int bad = 0;
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0, scale = 0;
        for (int64_t q = 0; q < k; ++q) {
          const double x = op_at(a + p * a_batch_stride, a_cols, ta, i, q);
          const double y = op_at(b + p * b_batch_stride, b_cols, tb, q, j);
          want += x * y;
          scale += std::abs(x * y);
        }
        const double got = o[(p * m + i) * n + j];
        if (std::abs(got - want) > 1e-5 * scale + 1e-30 && ++bad < 5)
          BOOST_ERROR("element (" << p << "," << i << "," << j << "): " << got << " want " << want);
      }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dnnl_matmul)

BOOST_AUTO_TEST_CASE(matmul_agrees_with_double_on_special_and_large_shapes_at_every_thread_count) {
  struct Case {
    int64_t m, k, n;
  };
  const std::vector<Case> cases = {{1, 1, 1},   {1, 7, 1},     {1, 64, 300},   {300, 64, 1}, {5, 1, 9},
                                   {0, 4, 3},   {3, 4, 0},     {3, 0, 4},      {64, 64, 64}, {17, 33, 65},
                                   {257, 130, 190}, {2, 600, 700}, {700, 300, 3}};
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    cpu::WorkerPoolScope scope(&pool);
    for (const Case& c : cases)
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          BOOST_TEST_CONTEXT("threads " << threads << " m " << c.m << " k " << c.k << " n " << c.n << " ta "
                                        << ta << " tb " << tb) {
            Tensor a = random_floats(ta ? Shape{c.k, c.m} : Shape{c.m, c.k}, 1);
            Tensor b = random_floats(tb ? Shape{c.n, c.k} : Shape{c.k, c.n}, 2);
            auto out = testing::run_op1("MatMul", {a, b}, {{"transpose_a", ta}, {"transpose_b", tb}});
            BOOST_REQUIRE_MESSAGE(out.ok(), out.status().message());
            BOOST_TEST((out->shape() == Shape{c.m, c.n}));
            check_product(*out, a.data<float>(), b.data<float>(), 1, c.m, c.k, c.n, ta, tb, 0, 0);
          }
        }
  }
}

BOOST_AUTO_TEST_CASE(batch_matmul_with_and_without_broadcasting_at_every_thread_count) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    cpu::WorkerPoolScope scope(&pool);
    for (bool adj_x : {false, true})
      for (bool adj_y : {false, true}) {
        BOOST_TEST_CONTEXT("threads " << threads << " adj_x " << adj_x << " adj_y " << adj_y) {
          const int64_t m = 33, k = 70, n = 41;
          // equal batch dimensions: one batched primitive
          Tensor x = random_floats(adj_x ? Shape{3, 4, k, m} : Shape{3, 4, m, k}, 3);
          Tensor y = random_floats(adj_y ? Shape{3, 4, n, k} : Shape{3, 4, k, n}, 4);
          auto out = testing::run_op1("BatchMatMulV2", {x, y}, {{"adj_x", adj_x}, {"adj_y", adj_y}});
          BOOST_REQUIRE_MESSAGE(out.ok(), out.status().message());
          BOOST_TEST((out->shape() == Shape{3, 4, m, n}));
          check_product(*out, x.data<float>(), y.data<float>(), 12, m, k, n, adj_x, adj_y, m * k, k * n);
          // y broadcast over x's batch: every product uses the one y
          Tensor y1 = random_floats(adj_y ? Shape{n, k} : Shape{k, n}, 5);
          auto b = testing::run_op1("BatchMatMulV2", {x, y1}, {{"adj_x", adj_x}, {"adj_y", adj_y}});
          BOOST_REQUIRE_MESSAGE(b.ok(), b.status().message());
          BOOST_TEST((b->shape() == Shape{3, 4, m, n}));
          check_product(*b, x.data<float>(), y1.data<float>(), 12, m, k, n, adj_x, adj_y, m * k, 0);
        }
      }
    // empty batches and empty matrices
    auto e = testing::run_op1("BatchMatMulV2", {random_floats({0, 3, 4}, 6), random_floats({0, 4, 5}, 7)});
    BOOST_REQUIRE(e.ok());
    BOOST_TEST((e->shape() == Shape{0, 3, 5}));
    auto z = testing::run_op1("BatchMatMulV2", {random_floats({2, 3, 0}, 6), random_floats({2, 0, 5}, 7)});
    BOOST_REQUIRE(z.ok());
    for (int64_t i = 0; i < z->num_elements(); ++i) BOOST_REQUIRE(z->data<float>()[i] == 0.f);
  }
}

BOOST_AUTO_TEST_SUITE_END()
