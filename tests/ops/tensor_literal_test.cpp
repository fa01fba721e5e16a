#include <boost/test/unit_test.hpp>

#include "ops/tensor_literal.hpp"

using namespace tagflow::ops;

BOOST_AUTO_TEST_SUITE(tensor_literal)

BOOST_AUTO_TEST_CASE(scalars_take_the_expected_dtype) {
  auto i = parse_tensor_literal("3", DType::int32);
  BOOST_REQUIRE(i.ok());
  BOOST_TEST(i->debug_string() == "int32[] 3");
  auto f = parse_tensor_literal("2.5", DType::float32);
  BOOST_REQUIRE(f.ok());
  BOOST_TEST(f->debug_string() == "float32[] 2.5");
  auto whole = parse_tensor_literal("4", DType::float64);
  BOOST_REQUIRE(whole.ok());
  BOOST_TEST(whole->scalar_value<double>() == 4.0);
  auto b = parse_tensor_literal("true", DType::boolean);
  BOOST_REQUIRE(b.ok());
  BOOST_TEST(b->scalar_value<bool>());
  auto s = parse_tensor_literal("\"hi\"", DType::string);
  BOOST_REQUIRE(s.ok());
  BOOST_TEST(s->scalar_value<std::string>() == "hi");
}

BOOST_AUTO_TEST_CASE(nested_lists_give_the_shape) {
  auto v = parse_tensor_literal("[1,2]", DType::int64);
  BOOST_REQUIRE(v.ok());
  BOOST_TEST(v->debug_string() == "int64[2] [1,2]");
  auto m = parse_tensor_literal("[[1.5,2],[3,4]]", DType::float32);
  BOOST_REQUIRE(m.ok());
  BOOST_TEST(m->debug_string() == "float32[2,2] [[1.5,2],[3,4]]");
  auto empty = parse_tensor_literal("[]", DType::float32);
  BOOST_REQUIRE(empty.ok());
  BOOST_TEST(empty->shape().to_string() == "[0]");
}

BOOST_AUTO_TEST_CASE(bad_literals_are_clear_errors) {
  auto syntax = parse_tensor_literal("[1,", DType::int32);
  BOOST_REQUIRE(!syntax.ok());
  BOOST_TEST(syntax.status().message().find("syntax error at byte") != std::string::npos);
  auto ragged = parse_tensor_literal("[[1,2],[3]]", DType::int32);
  BOOST_REQUIRE(!ragged.ok());
  BOOST_TEST(ragged.status().message().find("ragged") != std::string::npos);
  auto fraction = parse_tensor_literal("2.5", DType::int32);
  BOOST_REQUIRE(!fraction.ok());
  BOOST_TEST(fraction.status().message().find("expected an integer") != std::string::npos);
  auto big = parse_tensor_literal("3000000000", DType::int32);
  BOOST_REQUIRE(!big.ok());
  BOOST_TEST(big.status().message().find("does not fit") != std::string::npos);
  auto not_bool = parse_tensor_literal("1", DType::boolean);
  BOOST_TEST(!not_bool.ok());
}

BOOST_AUTO_TEST_SUITE_END()
