// ScalarSummary (ops/summary_ops.cpp): the serialized Summary protocol
// buffer, checked byte by byte against an encoding worked out by hand from
// summary.proto (Summary.value = 1, Value.tag = 1, Value.simple_value = 2).
#include <boost/test/unit_test.hpp>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

BOOST_AUTO_TEST_SUITE(summary_ops)

BOOST_AUTO_TEST_CASE(scalar_summary_encodes_tag_and_simple_value) {
  Expected<Tensor> out = run_op1("ScalarSummary", {Tensor::string_scalar("loss"), Tensor::scalar<float>(1.0f)},
                                 {{"T", DType::float32}});
  BOOST_TEST_REQUIRE(out.ok());
  BOOST_TEST(out->shape().is_scalar());
  // value { tag: "loss" simple_value: 1.0 }: 0x0a len=11, then 0x0a 4 "loss",
  // 0x15 and 1.0f = 0x3f800000 little-endian.
  const std::string expected("\x0a\x0b\x0a\x04loss\x15\x00\x00\x80\x3f", 13);
  BOOST_TEST(out->scalar_value<std::string>() == expected);
}

BOOST_AUTO_TEST_CASE(scalar_summary_writes_one_value_per_element) {
  Expected<Tensor> out = run_op1(
      "ScalarSummary",
      {Tensor::vector<std::string>({"a", "bc"}), Tensor::vector<int32_t>({-2, 0})},
      {{"T", DType::int32}});
  BOOST_TEST_REQUIRE(out.ok());
  // -2.0f = 0xc0000000; 0.0 is written too (a set oneof field).
  const std::string expected("\x0a\x08\x0a\x01" "a" "\x15\x00\x00\x00\xc0"
                             "\x0a\x09\x0a\x02" "bc" "\x15\x00\x00\x00\x00", 21);
  BOOST_TEST(out->scalar_value<std::string>() == expected);
  Expected<Tensor> empty = run_op1("ScalarSummary", {Tensor::vector<std::string>({}), Tensor::vector<double>({})},
                                   {{"T", DType::float64}});
  BOOST_TEST_REQUIRE(empty.ok());
  BOOST_TEST(empty->scalar_value<std::string>().empty());
}

BOOST_AUTO_TEST_CASE(scalar_summary_errors) {
  BOOST_TEST(error_of("ScalarSummary",
                      {Tensor::vector<std::string>({"a", "b"}), Tensor::vector<float>({1, 2, 3})},
                      {{"T", DType::float32}}) ==
             "invalid_argument: ScalarSummary tags and values must have the same shape, got [2] "
             "and [3]");
  BOOST_TEST(contains(error_of("ScalarSummary", {Tensor::string_scalar("a"), Tensor::scalar<bool>(true)},
                               {{"T", DType::boolean}}),
                      "not one of"));
}

BOOST_AUTO_TEST_SUITE_END()
