// The per-step memory budget: what tensor buffers charge, when they give it
// back, and how run_kernel turns running out of it (or of memory) into an
// error.
#include <boost/test/unit_test.hpp>

#include <stdexcept>

#include "ops/kernel.hpp"
#include "ops/memory_budget.hpp"
#include "ops/tensor.hpp"

using namespace tagflow::ops;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Allocates a float32 tensor of as many elements as input 0 says.
Status allocate_n(KernelContext& ctx) {
  ctx.set_output(0, Tensor(DType::float32, Shape{ctx.input(0).scalar_value<int64_t>()}));
  return ok_status();
}

Status throw_bad_alloc(KernelContext&) { throw std::bad_alloc(); }
Status throw_length_error(KernelContext&) { throw std::length_error("vector::reserve"); }

Status run(FunctionKernel::Fn fn, int64_t n, MemoryBudget* budget, Tensor* out) {
  Tensor in = Tensor::scalar<int64_t>(n);
  KernelContext ctx(&in, 1, out, 1, nullptr, 1, budget);
  return run_kernel(FunctionKernel(fn), ctx);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(memory_budget)

BOOST_AUTO_TEST_CASE(buffers_charge_their_bytes_and_give_them_back) {
  auto budget = std::make_shared<MemoryBudget>(4096);
  Tensor kept;
  {
    MemoryBudgetScope scope(budget.get());
    Tensor a(DType::float32, Shape{256});  // 1 KiB
    BOOST_TEST(budget->used() == 1024);
    kept = Tensor(DType::int64, Shape{128});  // 1 KiB
    BOOST_TEST(budget->used() == 2048);
    // Scalars live inside the buffer object and are not counted.
    Tensor s = Tensor::scalar<double>(1.0);
    BOOST_TEST(budget->used() == 2048);
    // Strings count their std::string objects.
    Tensor strings(DType::string, Shape{4});
    BOOST_TEST(budget->used() == int64_t(2048 + 4 * sizeof(std::string)));
  }
  BOOST_TEST(budget->used() == 1024);
  // Outside a scope nothing is counted.
  Tensor uncounted(DType::float32, Shape{4096});
  BOOST_TEST(budget->used() == 1024);
  // A buffer keeps its budget alive and pays it back when it goes.
  std::weak_ptr<MemoryBudget> weak = budget;
  budget.reset();
  BOOST_TEST(!weak.expired());
  kept = Tensor();
  BOOST_TEST(weak.expired());
}

BOOST_AUTO_TEST_CASE(an_allocation_over_the_budget_throws_and_charges_nothing) {
  auto budget = std::make_shared<MemoryBudget>(4096);
  MemoryBudgetScope scope(budget.get());
  Tensor a(DType::float32, Shape{512});  // 2 KiB
  try {
    Tensor b(DType::float32, Shape{1024});  // 4 KiB more
    BOOST_FAIL("no exception");
  } catch (const MemoryLimitExceeded& e) {
    BOOST_TEST(std::string(e.what()) ==
               "a tensor of 4.0 KiB with 2.0 KiB already held by the step's tensors is over the "
               "step's memory limit of 4.0 KiB (--memory-limit, [tagflow] memory-limit)");
  }
  BOOST_TEST(budget->used() == 2048);
  // A size that does not fit in 64 bits is over any budget, not a wrap.
  BOOST_CHECK_THROW(Tensor(DType::string, Shape{int64_t{1} << 40, int64_t{1} << 22}), std::bad_alloc);
  BOOST_TEST(budget->used() == 2048);
}

BOOST_AUTO_TEST_CASE(run_kernel_turns_running_out_into_resource_exhausted) {
  auto budget = std::make_shared<MemoryBudget>(int64_t{1} << 20);
  Tensor out;
  BOOST_TEST(run(allocate_n, 1000, budget.get(), &out).ok());
  BOOST_TEST(budget->used() == 4032);  // rounded up to the 64-byte alignment
  Status s = run(allocate_n, 1 << 20, budget.get(), &out);
  BOOST_TEST((s.code() == Error::resource_exhausted));
  BOOST_TEST(contains(s.message(), "a tensor of 4.0 MiB with 3.9 KiB already held"), s.message());
  BOOST_TEST(contains(s.message(), "memory limit of 1.0 MiB"), s.message());
  // No budget: no limit.
  BOOST_TEST(run(allocate_n, 1 << 20, nullptr, &out).ok());
  s = run(throw_bad_alloc, 0, budget.get(), &out);
  BOOST_TEST((s.code() == Error::resource_exhausted));
  BOOST_TEST(contains(s.message(), "out of memory"), s.message());
  s = run(throw_length_error, 0, nullptr, &out);
  BOOST_TEST((s.code() == Error::resource_exhausted));
  BOOST_TEST(contains(s.message(), "vector::reserve"), s.message());
  // The scope ends with the call.
  BOOST_TEST(current_memory_budget() == nullptr);
}

BOOST_AUTO_TEST_CASE(sizes_are_read_as_people_write_them) {
  BOOST_TEST(*parse_byte_size("1048576") == 1048576);
  BOOST_TEST(*parse_byte_size("512K") == 512 * 1024);
  BOOST_TEST(*parse_byte_size("64MiB") == 64 << 20);
  BOOST_TEST(*parse_byte_size("4G") == int64_t{4} << 30);
  BOOST_TEST(*parse_byte_size("2 GB") == int64_t{2} << 30);
  BOOST_TEST(*parse_byte_size("1T") == int64_t{1} << 40);
  for (const char* bad : {"", "G", "-1", "4X", "4GiBs", "99999999999999999999", "16777216T"}) {
    auto r = parse_byte_size(bad);
    BOOST_TEST(!r.ok(), bad);
    if (!r.ok()) BOOST_TEST(contains(r.status().message(), "is not a size"), r.status().message());
  }
  BOOST_TEST(format_bytes(100) == "100 bytes");
  BOOST_TEST(format_bytes(1536) == "1.5 KiB");
  BOOST_TEST(format_bytes(int64_t{3} << 30) == "3.0 GiB");
  BOOST_TEST(default_memory_limit() > 0);
  if (physical_memory_bytes() > 0) BOOST_TEST(default_memory_limit() == physical_memory_bytes() / 4);
}

BOOST_AUTO_TEST_SUITE_END()
