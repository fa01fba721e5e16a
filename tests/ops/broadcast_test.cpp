#include <boost/test/unit_test.hpp>

#include "ops/broadcast.hpp"

using namespace tagflow::ops;

namespace {

// The collapsed view as "dims / strides of operand 0 / strides of operand 1".
std::string view(const Broadcast& b) {
  std::string s;
  for (int k = -1; k < 2; ++k) {
    if (k >= 0) s += " / ";
    for (int i = 0; i < b.rank(); ++i)
      s += (i ? "," : "") + std::to_string(k < 0 ? b.dim(i) : b.stride(k, i));
  }
  return s;
}

// Every row as "out:in0,in1" in visiting order.
std::string rows(const Broadcast& b, int operands = 2) {
  std::string s;
  b.for_each_row([&](int64_t out, const int64_t* in) {
    s += (s.empty() ? "" : " ") + std::to_string(out) + ":";
    for (int k = 0; k < operands; ++k) s += (k ? "," : "") + std::to_string(in[k]);
  });
  return s;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(broadcast)

BOOST_AUTO_TEST_CASE(equal_shapes_collapse_to_one_row) {
  auto b = Broadcast::make(Shape{2, 3, 4}, Shape{2, 3, 4});
  BOOST_REQUIRE(b.ok());
  BOOST_TEST(b->output_shape().to_string() == "[2,3,4]");
  BOOST_TEST(view(*b) == "24 / 1 / 1");
  BOOST_TEST(rows(*b) == "0:0,0");
}

BOOST_AUTO_TEST_CASE(a_trailing_vector_repeats_over_rows) {
  auto b = Broadcast::make(Shape{2, 3, 4}, Shape{4});
  BOOST_REQUIRE(b.ok());
  BOOST_TEST(b->output_shape().to_string() == "[2,3,4]");
  BOOST_TEST(view(*b) == "6,4 / 4,1 / 0,1");
  BOOST_TEST(rows(*b) == "0:0,0 4:4,0 8:8,0 12:12,0 16:16,0 20:20,0");
}

BOOST_AUTO_TEST_CASE(column_against_row) {
  auto b = Broadcast::make(Shape{3, 1}, Shape{1, 2});
  BOOST_REQUIRE(b.ok());
  BOOST_TEST(b->output_shape().to_string() == "[3,2]");
  BOOST_TEST(view(*b) == "3,2 / 1,0 / 0,1");
  BOOST_TEST(rows(*b) == "0:0,0 2:1,0 4:2,0");
}

BOOST_AUTO_TEST_CASE(size_one_dimensions_are_dropped) {
  auto b = Broadcast::make(Shape{1, 1}, Shape{3});
  BOOST_REQUIRE(b.ok());
  BOOST_TEST(b->output_shape().to_string() == "[1,3]");
  BOOST_TEST(view(*b) == "3 / 0 / 1");
  auto one = Broadcast::make(Shape{1}, Shape{});
  BOOST_REQUIRE(one.ok());
  BOOST_TEST(one->output_shape().to_string() == "[1]");
  BOOST_TEST(view(*one) == "1 / 1 / 1");
  BOOST_TEST(rows(*one) == "0:0,0");
}

BOOST_AUTO_TEST_CASE(three_operands) {
  auto b = Broadcast::make(Shape{2, 1}, Shape{3}, Shape{});
  BOOST_REQUIRE(b.ok());
  BOOST_TEST(b->output_shape().to_string() == "[2,3]");
  BOOST_TEST(b->stride(2, 0) == 0);
  BOOST_TEST(b->stride(2, 1) == 0);
  BOOST_TEST(rows(*b, 3) == "0:0,0,0 3:1,0,0");
}

BOOST_AUTO_TEST_CASE(empty_outputs_visit_nothing) {
  auto b = Broadcast::make(Shape{0, 3}, Shape{3});
  BOOST_REQUIRE(b.ok());
  BOOST_TEST(b->output_shape().to_string() == "[0,3]");
  BOOST_TEST(rows(*b).empty());
  BOOST_TEST(!Broadcast::make(Shape{0}, Shape{2}).ok());
  auto c = Broadcast::make(Shape{0}, Shape{1});
  BOOST_REQUIRE(c.ok());
  BOOST_TEST(c->output_shape().to_string() == "[0]");
}

BOOST_AUTO_TEST_CASE(incompatible_shapes_are_named) {
  auto b = Broadcast::make(Shape{2, 3}, Shape{4});
  BOOST_REQUIRE(!b.ok());
  BOOST_TEST(b.status().message() == "incompatible shapes for broadcasting: [2,3] and [4]");
  auto c = Broadcast::make(Shape{2}, Shape{1}, Shape{3});
  BOOST_REQUIRE(!c.ok());
  BOOST_TEST(c.status().message() == "incompatible shapes for broadcasting: [2], [1] and [3]");
}

BOOST_AUTO_TEST_SUITE_END()
