// serialized_example (ops/example.hpp): the bytes it makes, read back with
// the proto classes, hold the features and kinds the text gives.
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <string>

#include "ops/example.hpp"
#include "ops/proto/example.pb.h"

using namespace tagflow::ops;

namespace {

namespace ex = tagflow::example;

ex::Example parsed(const std::string& text) {
  auto bytes = serialized_example(text);
  BOOST_TEST_REQUIRE(bytes.ok(), bytes.status().to_string());
  ex::Example e;
  BOOST_TEST_REQUIRE(e.ParseFromString(*bytes));
  return e;
}

const ex::Feature& feature(const ex::Example& e, const std::string& name) {
  const auto& map = e.features().feature();
  auto it = map.find(name);
  BOOST_TEST_REQUIRE((it != map.end()), "no feature " + name);
  return it->second;
}

std::string error(const std::string& text) {
  auto bytes = serialized_example(text);
  return bytes.ok() ? "ok" : bytes.status().to_string();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(example)

BOOST_AUTO_TEST_CASE(values_give_the_kind_of_each_feature) {
  ex::Example e = parsed(" x=1.5 ; n=[1, -2,3];s=\"a;b, \\\"c\\\"\";m=[1,2.5];big=-inf;f=[2.5,1]");
  BOOST_TEST(e.features().feature_size() == 6);
  BOOST_TEST(feature(e, "f").float_list().value(1) == 1.0f);
  const ex::Feature& x = feature(e, "x");
  BOOST_TEST_REQUIRE(x.has_float_list());
  BOOST_TEST(x.float_list().value_size() == 1);
  BOOST_TEST(x.float_list().value(0) == 1.5f);
  const ex::Feature& n = feature(e, "n");
  BOOST_TEST_REQUIRE(n.has_int64_list());
  BOOST_TEST(std::vector<int64_t>(n.int64_list().value().begin(), n.int64_list().value().end()) ==
             std::vector<int64_t>({1, -2, 3}));
  const ex::Feature& s = feature(e, "s");
  BOOST_TEST_REQUIRE(s.has_bytes_list());
  BOOST_TEST(s.bytes_list().value(0) == "a;b, \"c\"");
  const ex::Feature& m = feature(e, "m");
  BOOST_TEST_REQUIRE(m.has_float_list());  // an integer among floats is a float
  BOOST_TEST(m.float_list().value(0) == 1.0f);
  BOOST_TEST(m.float_list().value(1) == 2.5f);
  BOOST_TEST(std::isinf(feature(e, "big").float_list().value(0)));
  BOOST_TEST(parsed("").features().feature_size() == 0);
}

BOOST_AUTO_TEST_CASE(text_format_examples) {
  ex::Example e = parsed(
      "features { feature { key: \"x\" value { float_list { value: [2, 3.5] } } } "
      "feature { key: \"b\" value { bytes_list { value: \"\\001z\" } } } }");
  BOOST_TEST(feature(e, "x").float_list().value(1) == 3.5f);
  BOOST_TEST(feature(e, "b").bytes_list().value(0) == std::string("\x01z"));
  BOOST_TEST(error("features { feature { key: \"x\" value { nope {} } } }").find(
                 "parse_error: text-format tf.Example: line 1, column") == 0);
}

BOOST_AUTO_TEST_CASE(bad_text_is_an_error_naming_the_feature) {
  BOOST_TEST(error("x=") == "parse_error: feature 'x' has no values");
  BOOST_TEST(error("x=[]") == "parse_error: feature 'x' has no values");
  BOOST_TEST(error("x=1,\"a\"") == "parse_error: feature 'x' mixes quoted strings and numbers (\"a\")");
  BOOST_TEST(error("x=1;x=2") == "parse_error: feature 'x' is given twice");
  BOOST_TEST(error("x=abc") == "parse_error: feature 'x': 'abc' is not a number or a quoted string");
  BOOST_TEST(error("=1") == "parse_error: '=1' is not NAME=VALUES");
  BOOST_TEST(error("x=\"a") == "parse_error: 'x=\"a' has an unclosed quote");
  BOOST_TEST(error("x=\"a\"b\"") == "parse_error: 'x=\"a\"b\"' has an unclosed quote");
  BOOST_TEST(error("x=\"a\\n\"") == "parse_error: \"a\\n\": only \\\" and \\\\ are escapes in a quoted string");
  BOOST_TEST(error("n=99999999999999999999") == "parse_error: feature 'n': 99999999999999999999 is not an int64");
}

BOOST_AUTO_TEST_SUITE_END()
