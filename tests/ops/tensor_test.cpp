#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>

#include "ops/tensor.hpp"

using namespace tagflow::ops;

BOOST_AUTO_TEST_SUITE(tensor)

BOOST_AUTO_TEST_CASE(copies_share_the_buffer) {
  Tensor a = Tensor::vector<float>({1, 2, 3});
  BOOST_TEST(a.is_unique());
  Tensor b = a;
  BOOST_TEST(a.shares_buffer_with(b));
  BOOST_TEST(!a.is_unique());
  BOOST_TEST(b.data<float>()[2] == 3.0f);
}

// A kernel may write into an input it finds unique. The other holder's
// reads, on another thread, must happen before: is_unique() once used only
// shared_ptr::use_count(), a relaxed load (ThreadSanitizer reported a loop's
// Add overwriting a Mul result another iteration's kernel had just read).
// Nothing but the reference count orders the two threads here; run under
// `scripts/sanitize.sh tsan` to check it.
BOOST_AUTO_TEST_CASE(a_buffer_found_unique_is_written_after_the_other_holders_reads) {
  for (int round = 0; round < 50; ++round) {
    Tensor mine = Tensor::vector<int32_t>({1, 2, 3, 4});
    Tensor theirs = mine;
    std::atomic<int64_t> sum{0};
    std::thread reader([t = std::move(theirs), &sum]() mutable {
      int64_t s = 0;
      for (int i = 0; i < 4; ++i) s += t.data<int32_t>()[i];
      sum.store(s, std::memory_order_relaxed);
      t = Tensor();  // the reader's reference goes: only `mine` is left
    });
    while (!mine.is_unique()) std::this_thread::yield();
    mine.mutable_data<int32_t>()[0] = 100;
    reader.join();
    BOOST_TEST(sum.load() == 10);
  }
}

BOOST_AUTO_TEST_CASE(new_tensors_are_zero_filled) {
  Tensor t(DType::int64, Shape{3, 5});
  BOOST_TEST(t.num_elements() == 15);
  for (int64_t i = 0; i < 15; ++i) BOOST_TEST(t.data<int64_t>()[i] == 0);
  Tensor s(DType::string, Shape{2});
  BOOST_TEST(s.data<std::string>()[1].empty());
}

BOOST_AUTO_TEST_CASE(large_buffers_are_aligned) {
  Tensor t(DType::float32, Shape{100});
  BOOST_TEST(reinterpret_cast<uintptr_t>(t.raw_data()) % 64 == 0);
}

BOOST_AUTO_TEST_CASE(shapes_of_rank_zero_to_eight) {
  BOOST_TEST(Shape{}.num_elements() == 1);
  auto eight = Shape::make({1, 2, 1, 2, 1, 2, 1, 2});
  BOOST_REQUIRE(eight.ok());
  BOOST_TEST(eight->num_elements() == 16);
  auto nine = Shape::make({1, 1, 1, 1, 1, 1, 1, 1, 1});
  BOOST_TEST(!nine.ok());
  BOOST_TEST(nine.status().message().find("rank 9") != std::string::npos);
  BOOST_TEST(!Shape::make({2, -1}).ok());
  BOOST_TEST(Shape({0, 3}).num_elements() == 0);
}

BOOST_AUTO_TEST_CASE(reshape_keeps_the_buffer_and_checks_the_count) {
  Tensor a = Tensor::vector<int32_t>({1, 2, 3, 4, 5, 6});
  auto b = a.reshaped(Shape{2, 3});
  BOOST_REQUIRE(b.ok());
  BOOST_TEST(b->shares_buffer_with(a));
  BOOST_TEST(b->values_string() == "[[1,2,3],[4,5,6]]");
  BOOST_TEST(!a.reshaped(Shape{4}).ok());
}

// A view (another shape or dtype of the same storage) is unique only when
// nobody else holds the view or the original; a view of a view looks at
// the original's storage directly.
BOOST_AUTO_TEST_CASE(a_view_is_unique_only_when_the_original_is_gone) {
  Tensor a = Tensor::vector<int32_t>({1, 2, 3, 4, 5, 6});
  Tensor v = *a.reshaped(Shape{3, 2});
  BOOST_TEST(v.raw_data() == a.raw_data());
  BOOST_TEST(!v.is_unique());
  BOOST_TEST(!a.is_unique());
  Tensor w = *v.reshaped(Shape{6, 1});
  Tensor u = v.with_dtype(DType::uint32);
  BOOST_TEST((u.dtype() == DType::uint32));
  BOOST_TEST((u.shape() == Shape({3, 2})));
  BOOST_TEST(w.shares_buffer_with(a));
  BOOST_TEST(u.shares_buffer_with(w));
  a = Tensor();
  v = Tensor();
  BOOST_TEST(!w.is_unique());  // u still sees the storage
  u = Tensor();
  BOOST_TEST(w.is_unique());
  w.mutable_data<int32_t>()[5] = 60;
  BOOST_TEST(w.values_string() == "[[1],[2],[3],[4],[5],[60]]");
  BOOST_TEST(w.byte_size() == 24u);
  // The same shape or dtype is the tensor itself, no view.
  Tensor x = Tensor::vector<float>({1, 2});
  BOOST_TEST(x.reshaped(Shape{2})->heap_bytes() == x.heap_bytes());
  BOOST_TEST(x.reshaped(Shape{1, 2})->heap_bytes() > x.heap_bytes());
}

// A borrowed tensor counts no reference: its owner stays unique-checked by
// the others, it is never unique itself, and whatever copies or moves it
// holds a counted reference that outlives the owner.
BOOST_AUTO_TEST_CASE(a_borrowed_tensor_counts_no_reference_and_its_copies_do) {
  Tensor owner = Tensor::vector<int64_t>({7, 8});
  Tensor lent = Tensor::borrow(owner);
  BOOST_TEST(lent.is_borrowed());
  BOOST_TEST(owner.is_unique());
  BOOST_TEST(!lent.is_unique());
  BOOST_TEST(lent.shares_buffer_with(owner));
  BOOST_TEST(lent.values_string() == "[7,8]");
  Tensor copy = lent;
  BOOST_TEST(!copy.is_borrowed());
  BOOST_TEST(!owner.is_unique());
  Tensor moved = std::move(lent);
  BOOST_TEST(!lent.valid());
  BOOST_TEST(!moved.is_borrowed());
  owner = Tensor();
  copy = Tensor();
  BOOST_TEST(moved.is_unique());
  BOOST_TEST(moved.values_string() == "[7,8]");
  BOOST_TEST(!Tensor::borrow(Tensor()).valid());
}

BOOST_AUTO_TEST_CASE(a_handle_is_one_pointer) { BOOST_TEST(sizeof(Tensor) == sizeof(void*)); }

BOOST_AUTO_TEST_CASE(equality_and_printing) {
  Tensor a = Tensor::from_vector<double>(Shape{2, 2}, {1.5, 2, 3, 4});
  Tensor b = Tensor::from_vector<double>(Shape{2, 2}, {1.5, 2, 3, 4});
  Tensor c = Tensor::from_vector<double>(Shape{4}, {1.5, 2, 3, 4});
  BOOST_TEST(a.equals(b));
  BOOST_TEST(!a.equals(c));
  BOOST_TEST(a.debug_string() == "float64[2,2] [[1.5,2],[3,4]]");
  BOOST_TEST(Tensor::scalar(true).values_string() == "true");
  BOOST_TEST(Tensor::string_scalar("a\"b").values_string() == "\"a\\\"b\"");
}

BOOST_AUTO_TEST_CASE(storage_only_dtypes) {
  Tensor h(DType::half, Shape{3});
  BOOST_TEST(h.byte_size() == 6u);
  h.mutable_data<Eigen::half>()[1] = Eigen::half(2.5f);
  BOOST_TEST(element_as_double(h, 1) == 2.5);
  Tensor u(DType::uint8, Shape{2});
  BOOST_TEST(u.byte_size() == 2u);
}

BOOST_AUTO_TEST_SUITE_END()
