#include <boost/test/unit_test.hpp>

#include <atomic>
#include <cstring>
#include <memory>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "ops/cpu/parallel.hpp"
#include "ops/memory_budget.hpp"
#include "ops/tensor.hpp"
#include "../op_test_util.hpp"
#include "test_pool.hpp"

using namespace tagflow::ops;
using tagflow::ops::testing::ThreadPool;

BOOST_AUTO_TEST_SUITE(cpu_parallel)

BOOST_AUTO_TEST_CASE(without_a_pool_everything_runs_inline) {
  BOOST_TEST(cpu::current_worker_pool() == nullptr);
  BOOST_TEST(cpu::parallel_blocks(int64_t{1} << 40, 64) == 1);
  const auto caller = std::this_thread::get_id();
  int calls = 0;
  cpu::parallel_for(1000, 1 << 20, [&](int64_t b, int64_t e) {
    BOOST_TEST(b == 0);
    BOOST_TEST(e == 1000);
    BOOST_TEST((std::this_thread::get_id() == caller));
    ++calls;
  });
  BOOST_TEST(calls == 1);
}

BOOST_AUTO_TEST_CASE(every_item_runs_once_at_every_thread_count) {
  for (int threads : {1, 2, 3, 4, 8}) {
    BOOST_TEST_CONTEXT("threads " << threads) {
      ThreadPool pool(threads);
      cpu::WorkerPoolScope scope(&pool);
      for (int64_t n : {int64_t{1}, int64_t{7}, int64_t{1000}, int64_t{100003}}) {
        std::vector<std::atomic<int>> seen(n);
        std::mutex mu;
        std::set<std::thread::id> ran_on;
        std::atomic<int> empty_ranges{0};  // Boost.Test checks on the caller's thread only
        cpu::parallel_for(n, 1 << 12, [&](int64_t b, int64_t e) {
          if (b >= e) empty_ranges.fetch_add(1);
          for (int64_t i = b; i < e; ++i) seen[i].fetch_add(1);
          std::lock_guard<std::mutex> lock(mu);
          ran_on.insert(std::this_thread::get_id());
        });
        BOOST_TEST(empty_ranges.load() == 0);
        for (int64_t i = 0; i < n; ++i) BOOST_REQUIRE(seen[i].load() == 1);
        // never more threads than the pool has
        BOOST_TEST(ran_on.size() <= static_cast<size_t>(threads));
      }
      // a large job is split into as many blocks as threads, small ones not
      BOOST_TEST(cpu::parallel_blocks(int64_t{1} << 30, 1000) == threads);
      BOOST_TEST(cpu::parallel_blocks(cpu::kMinParallelCost, 1000) == 1);
      BOOST_TEST(cpu::parallel_blocks(int64_t{1} << 30, 1) == 1);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_thread_outside_the_pool_only_waits) {
  // A step run on the session caller's thread: its kernels' blocks run on
  // the pool's threads, the caller sleeping — unless they have not claimed
  // them after a moment (here: the helpers are held up): then the caller
  // runs what is left. An exception still reaches it after every block ran.
  for (int threads : {2, 3, 4}) {
    BOOST_TEST_CONTEXT("threads " << threads) {
      ThreadPool pool(threads);
      cpu::WorkerPoolScope scope(&pool, cpu::WorkerPoolScope::Role::outside);
      const auto caller = std::this_thread::get_id();
      std::mutex mu;
      std::set<std::thread::id> ran_on;
      std::vector<std::atomic<int>> seen(100003);
      cpu::parallel_for(100003, 1 << 12, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) seen[i].fetch_add(1);
        std::lock_guard<std::mutex> lock(mu);
        ran_on.insert(std::this_thread::get_id());
      });
      for (auto& s : seen) BOOST_REQUIRE(s.load() == 1);
      BOOST_TEST(!ran_on.empty());
      // Helpers held up (the pool's threads busy): the caller runs blocks.
      {
        std::atomic<bool> release{false};
        for (int h = 1; h < threads; ++h)
          pool.schedule([&] {
            while (!release.load()) std::this_thread::yield();
          });
        std::set<std::thread::id> held;
        cpu::parallel_run(threads, [&](int) {
          std::lock_guard<std::mutex> lock(mu);
          held.insert(std::this_thread::get_id());
        });
        BOOST_TEST(held.count(caller) == 1);
        release = true;
      }
      std::atomic<int> ran{0};
      BOOST_CHECK_THROW(cpu::parallel_run(threads,
                                          [&](int i) {
                                            ran.fetch_add(1);
                                            if (i == 1) throw std::runtime_error("block 1");
                                          }),
                        std::runtime_error);
      BOOST_TEST(ran.load() == threads);
    }
  }
}

BOOST_AUTO_TEST_CASE(blocks_do_not_nest) {
  ThreadPool pool(4);
  cpu::WorkerPoolScope scope(&pool);
  std::atomic<int> inner_blocks{0}, split_inside{0};
  cpu::parallel_run(4, [&](int) {
    if (cpu::parallel_blocks(int64_t{1} << 30, 1000) != 1) split_inside.fetch_add(1);
    cpu::parallel_run(3, [&](int) { inner_blocks.fetch_add(1); });
  });
  BOOST_TEST(inner_blocks.load() == 12);
  BOOST_TEST(split_inside.load() == 0);
}

BOOST_AUTO_TEST_CASE(an_exception_in_a_block_reaches_the_caller_after_all_blocks) {
  ThreadPool pool(3);
  cpu::WorkerPoolScope scope(&pool);
  std::atomic<int> ran{0};
  BOOST_CHECK_THROW(cpu::parallel_run(6,
                                      [&](int i) {
                                        ran.fetch_add(1);
                                        if (i == 2) throw std::runtime_error("block 2");
                                      }),
                    std::runtime_error);
  BOOST_TEST(ran.load() == 6);
}

BOOST_AUTO_TEST_CASE(allocations_in_blocks_count_against_the_callers_budget) {
  ThreadPool pool(2);
  cpu::WorkerPoolScope scope(&pool);
  auto budget = std::make_shared<MemoryBudget>(int64_t{1} << 20);
  MemoryBudgetScope in_budget(budget.get());
  // Two blocks each holding 400 KiB fit; a third block's 400 KiB does not.
  std::vector<Tensor> kept(3);
  BOOST_CHECK_THROW(cpu::parallel_run(3,
                                      [&](int i) {
                                        kept[i] = Tensor(DType::uint8, Shape{400 * 1024});
                                      }),
                    MemoryLimitExceeded);
  BOOST_TEST(budget->used() <= budget->limit());
  kept.clear();
  BOOST_TEST(budget->used() == 0);
}

BOOST_AUTO_TEST_SUITE_END()

// Large elementwise kernels split into 64-byte-aligned ranges
// (ops/cwise_kernel.hpp): the values are bitwise those of one thread.
BOOST_AUTO_TEST_SUITE(cpu_parallel_elementwise)

BOOST_AUTO_TEST_CASE(split_elementwise_kernels_are_bitwise_those_of_one_thread) {
  const int64_t n = 3 * 262144 + 37;  // large enough to split, not a multiple of any vector
  Tensor x(DType::float32, Shape{n}), y(DType::float32, Shape{n});
  for (int64_t i = 0; i < n; ++i) {
    x.mutable_data<float>()[i] = static_cast<float>((i * 7919) % 20011) / 1000.f - 10.f;
    y.mutable_data<float>()[i] = static_cast<float>((i * 104729) % 30011) / 3000.f + 0.5f;
  }
  auto run = [&](const char* op, std::vector<Tensor> in) {
    auto out = tagflow::ops::testing::run_op1(op, std::move(in));
    BOOST_REQUIRE_MESSAGE(out.ok(), out.status().message());
    return std::move(out).value();
  };
  const Tensor scalar = Tensor::scalar<float>(1.5f);
  const std::vector<std::pair<const char*, std::vector<Tensor>>> ops = {
      {"Tanh", {x}}, {"Exp", {x}}, {"Sigmoid", {x}}, {"Mul", {x, y}}, {"RealDiv", {x, y}}, {"Add", {x, scalar}},
      {"Sub", {scalar, y}}};
  std::vector<Tensor> one_thread;
  for (const auto& [op, in] : ops) one_thread.push_back(run(op, in));
  for (int threads : {2, 3, 4}) {
    ThreadPool pool(threads);
    cpu::WorkerPoolScope scope(&pool);
    for (size_t k = 0; k < ops.size(); ++k) {
      BOOST_TEST_CONTEXT(ops[k].first << " at " << threads << " threads") {
        const Tensor got = run(ops[k].first, ops[k].second);
        BOOST_REQUIRE(got.num_elements() == n);
        BOOST_TEST(std::memcmp(got.data<float>(), one_thread[k].data<float>(), sizeof(float) * n) == 0);
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
