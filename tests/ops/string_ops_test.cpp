// The string ops (ops/string_ops.cpp, string_split_ops.cpp,
// string_convert_ops.cpp): TensorFlow's documented examples and its
// kernels' tests, and edge cases worked out by hand from TensorFlow's
// kernels — empty strings and tensors, scalars and matrices, broadcasting,
// multibyte and ill-formed UTF-8, every AsString dtype and attr (the
// strings C's printf gives), every StringToNumber type with its limits.
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "op_result.hpp"

using namespace tagflow::ops;
using namespace tagflow::ops::testing;

namespace {

Tensor strings(std::vector<std::string> v) { return Tensor::vector<std::string>(v); }
Tensor str(std::string s) { return Tensor::string_scalar(std::move(s)); }
Tensor matrix(int64_t rows, int64_t cols, std::vector<std::string> v) {
  return tensor<std::string>(Shape{rows, cols}, v);
}
Tensor ints(std::vector<int32_t> v) { return Tensor::vector<int32_t>(v); }

// The three outputs of a split: "indices | values | shape".
std::string split(const std::string& op, std::vector<Tensor> inputs, AttrMap attrs = {}) {
  auto out = run_op(op, std::move(inputs), std::move(attrs));
  if (!out.ok()) return "error: " + out.status().to_string();
  return (*out)[0].values_string() + " | " + (*out)[1].values_string() + " | " + (*out)[2].values_string();
}

std::string substr(std::vector<Tensor> inputs, std::string unit = "BYTE") {
  const DType t = inputs[1].dtype();
  return result("Substr", std::move(inputs), {{"T", t}, {"unit", unit}});
}

// AsString of one tensor with attrs: its values.
std::string as_string(Tensor in, AttrMap attrs = {}) {
  Expected<Tensor> out = run_op1("AsString", {std::move(in)}, std::move(attrs));
  if (!out.ok()) return "error: " + out.status().to_string();
  return out->values_string();
}

// The output shapes the op's shape function gives for these input shapes
// (and known input values), "[?,2] [?] [2]", or its error.
std::string shapes_of(const std::string& op, std::vector<PartialShape> in, AttrMap attrs = {},
                      std::vector<std::optional<Tensor>> values = {}) {
  const OpDef* def = OpRegistry::global().find(op);
  if (def == nullptr || def->shape_function() == nullptr) return "no shape function for " + op;
  def->add_default_attrs(attrs);
  std::vector<OutputInfo> inputs(in.size());
  std::vector<const OutputInfo*> input_ptrs;
  for (size_t i = 0; i < in.size(); ++i) {
    inputs[i].shape = in[i];
    if (i < values.size()) inputs[i].value = values[i];
    input_ptrs.push_back(&inputs[i]);
  }
  std::vector<OutputInfo> outputs(def->outputs().size());
  InferenceContext c("n", op, attrs, input_ptrs, &outputs, nullptr);
  Status status = def->shape_function()(c);
  if (!status.ok()) return "error: " + status.message();
  std::string text;
  for (const OutputInfo& o : outputs) text += (text.empty() ? "" : " ") + o.shape.to_string();
  return text;
}

PartialShape known(std::vector<int64_t> dims) { return {false, std::move(dims)}; }
const PartialShape kUnknown{true, {}};

}  // namespace

BOOST_AUTO_TEST_SUITE(string_ops)

BOOST_AUTO_TEST_CASE(shape_functions) {
  BOOST_TEST(shapes_of("StringSplit", {known({-1}), known({})}) == "[?,2] [?] [2]");
  BOOST_TEST(shapes_of("StringSplitV2", {kUnknown, kUnknown}) == "[?,2] [?] [2]");
  BOOST_TEST(contains(shapes_of("StringSplit", {known({2, 2}), known({})}), "input must be a vector"));
  BOOST_TEST(contains(shapes_of("StringSplitV2", {known({2}), known({1})}), "must be a scalar"));
  BOOST_TEST(shapes_of("Substr", {known({3, 3}), known({3}), known({3})}) == "[3,3]");
  BOOST_TEST(shapes_of("Substr", {known({2, 1}), known({-1}), known({4})}) == "[2,4]");
  BOOST_TEST(contains(shapes_of("Substr", {known({2}), known({3}), known({3})}), "cannot broadcast"));
  BOOST_TEST(contains(shapes_of("Substr", {known({3}), known({3}), known({2})}), "pos and len shapes must match"));
  const Tensor axis = Tensor::vector<int32_t>({-1});
  BOOST_TEST(shapes_of("ReduceJoin", {known({2, 3}), known({1})}, {}, {std::nullopt, axis}) == "[2]");
  BOOST_TEST(shapes_of("ReduceJoin", {known({2, 3}), known({1})}, {{"keep_dims", true}}, {std::nullopt, axis}) ==
             "[2,1]");
  BOOST_TEST(shapes_of("RegexReplace", {known({-1, 3}), known({}), known({})}) == "[?,3]");
  BOOST_TEST(contains(shapes_of("RegexReplace", {known({2}), known({}), known({2})}), "must be a scalar"));
  BOOST_TEST(contains(shapes_of("RegexFullMatch", {known({2}), known({1})}), "must be a scalar"));
  for (const char* op : {"StaticRegexReplace", "StaticRegexFullMatch", "StringLower", "StringUpper", "StringStrip",
                         "StringLength", "AsString", "StringToNumber"})
    BOOST_TEST(shapes_of(op, {known({4, -1})}) == "[4,?]", op);
}

// --- StringSplit, StringSplitV2 ------------------------------------------------

BOOST_AUTO_TEST_CASE(string_split_tf_examples) {
  BOOST_TEST(split("StringSplit", {strings({"#a", "b#", "#c#"}), str("#")}, {{"skip_empty", false}}) ==
             "[[0,0],[0,1],[1,0],[1,1],[2,0],[2,1],[2,2]] | [\"\",\"a\",\"b\",\"\",\"\",\"c\",\"\"] | [3,3]");
  BOOST_TEST(split("StringSplit", {strings({"#a", "b#", "#c#"}), str("#")}) ==
             "[[0,0],[1,0],[2,0]] | [\"a\",\"b\",\"c\"] | [3,1]");
  BOOST_TEST(split("StringSplit", {strings({"pigs on the wing", "animals"}), str(" ")}) ==
             "[[0,0],[0,1],[0,2],[0,3],[1,0]] | [\"pigs\",\"on\",\"the\",\"wing\",\"animals\"] | [2,4]");
}

BOOST_AUTO_TEST_CASE(string_split_any_delimiter_char_and_bytes) {
  // Every byte of the delimiter splits; an empty delimiter splits bytes;
  // an empty string has no tokens even without skip_empty (TensorFlow's
  // str_util::Split), while ",," has three empty ones.
  BOOST_TEST(split("StringSplit", {strings({"a,b;c", ""}), str(",;")}, {{"skip_empty", false}}) ==
             "[[0,0],[0,1],[0,2]] | [\"a\",\"b\",\"c\"] | [2,3]");
  BOOST_TEST(split("StringSplit", {strings({",,"}), str(",")}, {{"skip_empty", false}}) ==
             "[[0,0],[0,1],[0,2]] | [\"\",\"\",\"\"] | [1,3]");
  BOOST_TEST(split("StringSplit", {strings({"ab", "", "c"}), str("")}) ==
             "[[0,0],[0,1],[2,0]] | [\"a\",\"b\",\"c\"] | [3,2]");
  BOOST_TEST(split("StringSplit", {strings({"", ""}), str(",")}) == "[] | [] | [2,0]");
  BOOST_TEST(split("StringSplit", {strings({}), str(",")}) == "[] | [] | [0,0]");
}

BOOST_AUTO_TEST_CASE(string_split_errors) {
  BOOST_TEST(split("StringSplit", {str("a b"), str(" ")}) ==
             "error: invalid_argument: input must be a vector, got shape: []");
  BOOST_TEST(split("StringSplit", {strings({"a"}), strings({" "})}) ==
             "error: invalid_argument: delimiter must be a scalar, got shape: [1]");
  BOOST_TEST(split("StringSplitV2", {matrix(1, 1, {"a"}), str(" ")}) ==
             "error: invalid_argument: input must be a vector, got shape: [1,1]");
  BOOST_TEST(split("StringSplitV2", {strings({"a"}), strings({})}) ==
             "error: invalid_argument: sep must be a scalar, got shape: [0]");
}

BOOST_AUTO_TEST_CASE(string_split_v2_tf_examples) {
  BOOST_TEST(split("StringSplitV2", {strings({"pigs on the wing", "animals"}), str(" ")}) ==
             "[[0,0],[0,1],[0,2],[0,3],[1,0]] | [\"pigs\",\"on\",\"the\",\"wing\",\"animals\"] | [2,4]");
  BOOST_TEST(split("StringSplitV2", {strings({"1<>2<>3", "<><>4<>5<><>6<>"}), str("<>")}) ==
             "[[0,0],[0,1],[0,2],[1,0],[1,1],[1,2],[1,3],[1,4],[1,5],[1,6]] | "
             "[\"1\",\"2\",\"3\",\"\",\"\",\"4\",\"5\",\"\",\"6\",\"\"] | [2,7]");
  BOOST_TEST(split("StringSplitV2", {strings({"1,2,3", "4,5,,6,"}), str(",")}) ==
             "[[0,0],[0,1],[0,2],[1,0],[1,1],[1,2],[1,3],[1,4]] | [\"1\",\"2\",\"3\",\"4\",\"5\",\"\",\"6\",\"\"] | "
             "[2,5]");
  BOOST_TEST(split("StringSplitV2", {strings({"1 2 3", "  4  5    6  "}), str("")}) ==
             "[[0,0],[0,1],[0,2],[1,0],[1,1],[1,2]] | [\"1\",\"2\",\"3\",\"4\",\"5\",\"6\"] | [2,3]");
}

BOOST_AUTO_TEST_CASE(string_split_v2_maxsplit_and_empty) {
  BOOST_TEST(split("StringSplitV2", {strings({"1,2,3,4"}), str(",")}, {{"maxsplit", int64_t{2}}}) ==
             "[[0,0],[0,1],[0,2]] | [\"1\",\"2\",\"3,4\"] | [1,3]");
  BOOST_TEST(split("StringSplitV2", {strings({"a,b"}), str(",")}, {{"maxsplit", int64_t{0}}}) ==
             "[[0,0]] | [\"a,b\"] | [1,1]");
  // Whitespace: the rest after maxsplit keeps its inner and trailing
  // whitespace, and is there even when empty.
  BOOST_TEST(split("StringSplitV2", {strings({" a  b  c ", "a b "}), str("")}, {{"maxsplit", int64_t{1}}}) ==
             "[[0,0],[0,1],[1,0],[1,1]] | [\"a\",\"b  c \",\"a\",\"b \"] | [2,2]");
  BOOST_TEST(split("StringSplitV2", {strings({"a b "}), str("")}, {{"maxsplit", int64_t{2}}}) ==
             "[[0,0],[0,1],[0,2]] | [\"a\",\"b\",\"\"] | [1,3]");
  // "" with a separator is one empty token; "" or whitespace without one
  // is none.
  BOOST_TEST(split("StringSplitV2", {strings({""}), str(",")}) == "[[0,0]] | [\"\"] | [1,1]");
  BOOST_TEST(split("StringSplitV2", {strings({"", " \t\n"}), str("")}) == "[] | [] | [2,0]");
}

// --- ReduceJoin ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(reduce_join_tf_examples) {
  const Tensor a = matrix(2, 2, {"a", "b", "c", "d"});
  BOOST_TEST(result("ReduceJoin", {a, Tensor::scalar<int32_t>(0)}) == strings({"ac", "bd"}).debug_string());
  BOOST_TEST(result("ReduceJoin", {a, Tensor::scalar<int32_t>(1)}) == strings({"ab", "cd"}).debug_string());
  BOOST_TEST(result("ReduceJoin", {a, Tensor::scalar<int32_t>(-2)}) == strings({"ac", "bd"}).debug_string());
  BOOST_TEST(result("ReduceJoin", {a, Tensor::scalar<int32_t>(-1)}) == strings({"ab", "cd"}).debug_string());
  BOOST_TEST(result("ReduceJoin", {a, Tensor::scalar<int32_t>(0)}, {{"keep_dims", true}}) ==
             matrix(1, 2, {"ac", "bd"}).debug_string());
  BOOST_TEST(result("ReduceJoin", {a, Tensor::scalar<int32_t>(1)}, {{"keep_dims", true}}) ==
             matrix(2, 1, {"ab", "cd"}).debug_string());
  BOOST_TEST(result("ReduceJoin", {a, Tensor::scalar<int32_t>(0)}, {{"separator", "."}}) ==
             strings({"a.c", "b.d"}).debug_string());
  BOOST_TEST(result("ReduceJoin", {a, ints({0, 1})}) == str("acbd").debug_string());
  BOOST_TEST(result("ReduceJoin", {a, ints({1, 0})}) == str("abcd").debug_string());
  BOOST_TEST(result("ReduceJoin", {a, ints({})}) == a.debug_string());
  BOOST_TEST(result("ReduceJoin", {a, ints({})}, {{"keep_dims", true}}) == a.debug_string());
  BOOST_TEST(result("ReduceJoin", {a, ints({1, 0})}, {{"keep_dims", true}}) == matrix(1, 1, {"abcd"}).debug_string());
}

BOOST_AUTO_TEST_CASE(reduce_join_rank3_order_and_empty) {
  // [2,2,2] "a".."h": joining dims [2,0] varies dim 2 fastest, then dim 0.
  const Tensor t = tensor<std::string>(Shape{2, 2, 2}, {"a", "b", "c", "d", "e", "f", "g", "h"});
  BOOST_TEST(result("ReduceJoin", {t, ints({2, 0})}) == strings({"abef", "cdgh"}).debug_string());
  BOOST_TEST(result("ReduceJoin", {t, ints({0, 2})}) == strings({"aebf", "cgdh"}).debug_string());
  // Reducing an empty dimension gives empty strings; keeping one, nothing.
  const Tensor empty = tensor<std::string>(Shape{0, 3}, {});
  BOOST_TEST(result("ReduceJoin", {empty, Tensor::scalar<int32_t>(0)}) == strings({"", "", ""}).debug_string());
  BOOST_TEST(result("ReduceJoin", {empty, Tensor::scalar<int32_t>(1)}) == strings({}).debug_string());
  BOOST_TEST(result("ReduceJoin", {str("x"), ints({})}) == str("x").debug_string());
}

BOOST_AUTO_TEST_CASE(reduce_join_errors) {
  const Tensor a = matrix(2, 2, {"a", "b", "c", "d"});
  BOOST_TEST(error_of("ReduceJoin", {a, Tensor::scalar<int32_t>(2)}) ==
             "out_of_range: Invalid reduction dimension 2 for input with 2 dimension(s)");
  BOOST_TEST(error_of("ReduceJoin", {a, Tensor::scalar<int32_t>(-3)}) ==
             "out_of_range: Invalid reduction dimension -3 for input with 2 dimension(s)");
  BOOST_TEST(error_of("ReduceJoin", {str("x"), Tensor::scalar<int32_t>(0)}) ==
             "out_of_range: Invalid reduction dimension 0 for input with 0 dimension(s)");
  BOOST_TEST(error_of("ReduceJoin", {a, ints({1, -1})}) == "invalid_argument: Duplicate reduction dimension -1");
}

// --- Substr ------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(substr_bytes) {
  BOOST_TEST(substr({str("Hello"), Tensor::scalar<int32_t>(1), Tensor::scalar<int32_t>(3)}) ==
             str("ell").debug_string());
  // Negative pos counts from the end; len past the end or negative: to the end.
  BOOST_TEST(substr({strings({"Hello", "World"}), Tensor::scalar<int64_t>(-3), Tensor::scalar<int64_t>(2)}) ==
             strings({"ll", "rl"}).debug_string());
  BOOST_TEST(substr({strings({"Hello", "abc"}), ints({2, 3}), ints({10, -1})}) == strings({"llo", ""}).debug_string());
  BOOST_TEST(substr({strings({"", "ab"}), ints({0, -2}), ints({1, 1})}) == strings({"", "a"}).debug_string());
}

BOOST_AUTO_TEST_CASE(substr_broadcasts) {
  // TF's example: a [3,3] matrix of strings with a [3] pos and len.
  const Tensor in = matrix(3, 3, {"ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                  "seventeen", "eighteen"});
  BOOST_TEST(substr({in, ints({1, 2, 3}), ints({2, 3, 4})}) ==
             matrix(3, 3, {"en", "eve", "lve", "hi", "urt", "teen", "ix", "ven", "htee"}).debug_string());
  // A scalar string against a vector of positions.
  BOOST_TEST(substr({str("abcde"), ints({0, 1, 2}), ints({1, 2, 3})}) ==
             strings({"a", "bc", "cde"}).debug_string());
  // A column of strings against a row of positions: [2,1] x [3] -> [2,3].
  BOOST_TEST(substr({matrix(2, 1, {"abc", "xyz"}), ints({0, 1, 2}), ints({1, 1, 1})}) ==
             matrix(2, 3, {"a", "b", "c", "x", "y", "z"}).debug_string());
  // Rank 3, past TensorFlow's rank-2 limit: [2,1,2] x [2,1] -> [2,2,2].
  const Tensor in3 = tensor<std::string>(Shape{2, 1, 2}, {"abcd", "efgh", "ijkl", "mnop"});
  BOOST_TEST(substr({in3, tensor<int32_t>(Shape{2, 1}, {0, 2}), tensor<int32_t>(Shape{2, 1}, {1, 2})}) ==
             tensor<std::string>(Shape{2, 2, 2}, {"a", "e", "cd", "gh", "i", "m", "kl", "op"}).debug_string());
  // Empty: nothing to cut.
  BOOST_TEST(substr({strings({}), Tensor::scalar<int32_t>(5), Tensor::scalar<int32_t>(1)}) ==
             strings({}).debug_string());
}

BOOST_AUTO_TEST_CASE(substr_utf8_chars) {
  // "héllo wörld": é and ö are two bytes each.
  const std::string s = "h\xC3\xA9llo w\xC3\xB6rld";
  BOOST_TEST(substr({str(s), Tensor::scalar<int32_t>(1), Tensor::scalar<int32_t>(4)}, "UTF8_CHAR") ==
             str("\xC3\xA9llo").debug_string());
  BOOST_TEST(substr({str(s), Tensor::scalar<int32_t>(-5), Tensor::scalar<int32_t>(2)}, "UTF8_CHAR") ==
             str("w\xC3\xB6").debug_string());
  BOOST_TEST(substr({str(s), Tensor::scalar<int32_t>(-3), Tensor::scalar<int32_t>(10)}, "UTF8_CHAR") ==
             str("rld").debug_string());
  // A negative len is empty from a non-negative pos; pos = length is "".
  BOOST_TEST(substr({str(s), Tensor::scalar<int32_t>(2), Tensor::scalar<int32_t>(-1)}, "UTF8_CHAR") ==
             str("").debug_string());
  BOOST_TEST(substr({str(s), Tensor::scalar<int32_t>(11), Tensor::scalar<int32_t>(1)}, "UTF8_CHAR") ==
             str("").debug_string());
  // The same positions in bytes cut é in two.
  BOOST_TEST(substr({str(s), Tensor::scalar<int32_t>(1), Tensor::scalar<int32_t>(1)}) ==
             str("\xC3").debug_string());
}

BOOST_AUTO_TEST_CASE(substr_errors) {
  BOOST_TEST(substr({str("abc"), Tensor::scalar<int32_t>(4), Tensor::scalar<int32_t>(1)}) ==
             "error: invalid_argument: pos 4 out of range for string b'abc' at index 0");
  BOOST_TEST(substr({strings({"abcdef", "abc"}), Tensor::scalar<int32_t>(-4), Tensor::scalar<int32_t>(1)}) ==
             "error: invalid_argument: pos -4 out of range for string b'abc' at index 1");
  BOOST_TEST(substr({str("h\xC3\xA9"), Tensor::scalar<int32_t>(3), Tensor::scalar<int32_t>(1)}, "UTF8_CHAR") ==
             "error: invalid_argument: pos 3 out of range for string at index 0");
  BOOST_TEST(substr({str("h\xC3\xA9"), Tensor::scalar<int32_t>(-3), Tensor::scalar<int32_t>(1)}, "UTF8_CHAR") ==
             "error: invalid_argument: pos -3 out of range for string at index 0");
  // A negative pos with a negative len has nothing to take (TensorFlow).
  BOOST_TEST(substr({str("abc"), Tensor::scalar<int32_t>(-1), Tensor::scalar<int32_t>(-1)}, "UTF8_CHAR") ==
             "error: invalid_argument: pos -1 out of range for string at index 0");
  BOOST_TEST(substr({str("abc"), Tensor::scalar<int64_t>(INT64_MIN), Tensor::scalar<int64_t>(INT64_MIN)},
                    "UTF8_CHAR") == "error: invalid_argument: pos -9223372036854775808 out of range for string at "
                                    "index 0");
  BOOST_TEST(substr({strings({"a", "b"}), ints({0}), ints({0, 1})}) ==
             "error: invalid_argument: pos and len should have the same shape, got: [1] vs. [2]");
  BOOST_TEST(contains(substr({strings({"a", "b", "c"}), ints({0, 0}), ints({0, 0})}), "incompatible shapes"));
  BOOST_TEST(contains(substr({str("a"), Tensor::scalar<int32_t>(0), Tensor::scalar<int32_t>(0)}, "CHAR"),
                      "unit must be \"BYTE\" or \"UTF8_CHAR\""));
}

// --- regular expressions -----------------------------------------------------------

BOOST_AUTO_TEST_CASE(regex_replace) {
  const Tensor in = strings({"aabba", "xyz", ""});
  BOOST_TEST(result("RegexReplace", {in, str("a+"), str("-")}) == strings({"-bb-", "xyz", ""}).debug_string());
  BOOST_TEST(result("RegexReplace", {in, str("a"), str("-")}, {{"replace_global", false}}) ==
             strings({"-abba", "xyz", ""}).debug_string());
  // Groups in the rewrite; \0 is the whole match.
  BOOST_TEST(result("RegexReplace", {strings({"john smith", "ada lovelace"}), str("(\\w+) (\\w+)"), str("\\2, \\1")}) ==
             strings({"smith, john", "lovelace, ada"}).debug_string());
  BOOST_TEST(result("StaticRegexReplace", {strings({"ab12cd3"})},
                    {{"pattern", "[0-9]+"}, {"rewrite", "<\\0>"}}) == strings({"ab<12>cd<3>"}).debug_string());
  BOOST_TEST(result("StaticRegexReplace", {strings({"ab12cd3"})},
                    {{"pattern", "[0-9]"}, {"rewrite", "#"}, {"replace_global", false}}) ==
             strings({"ab#2cd3"}).debug_string());
  // RE2 syntax TensorFlow patterns use: flags and Unicode classes.
  BOOST_TEST(result("StaticRegexReplace", {matrix(1, 2, {"HeLLo", "w\xC3\xB6rld"})},
                    {{"pattern", "(?i)l|\\pL\\pM*"}, {"rewrite", "."}}) == matrix(1, 2, {".....", "....."}).debug_string());
}

BOOST_AUTO_TEST_CASE(regex_replace_errors) {
  BOOST_TEST(error_of("RegexReplace", {strings({"a"}), str("(a"), str("b")}) ==
             "invalid_argument: invalid pattern '(a': missing ): (a");
  BOOST_TEST(error_of("StaticRegexReplace", {strings({"a"})}, {{"pattern", "a**"}, {"rewrite", ""}}) ==
             "invalid_argument: invalid pattern 'a**': bad repetition operator: **");
  BOOST_TEST(error_of("RegexReplace", {strings({"a"}), strings({"a"}), str("b")}) ==
             "invalid_argument: pattern must be a scalar, got shape [1]");
  BOOST_TEST(error_of("RegexReplace", {strings({"a"}), str("a"), strings({})}) ==
             "invalid_argument: rewrite must be a scalar, got shape [0]");
  BOOST_TEST(contains(error_of("RegexReplace", {strings({"a"}), str("(a)"), str("\\2")}),
                      "invalid rewrite '\\2' for pattern '(a)'"));
  BOOST_TEST(contains(error_of("StaticRegexReplace", {strings({"a"})}, {{"pattern", "a"}, {"rewrite", "\\x"}}),
                      "invalid rewrite '\\x'"));
}

BOOST_AUTO_TEST_CASE(regex_full_match) {
  const Tensor in = matrix(2, 2, {"s3://bucket", "/tmp/s3://x", "S3://B", ""});
  BOOST_TEST(result("RegexFullMatch", {in, str("s3://.*")}) ==
             tensor<bool>(Shape{2, 2}, {true, false, false, false}).debug_string());
  BOOST_TEST(result("StaticRegexFullMatch", {in}, {{"pattern", "(?i)s3://.*"}}) ==
             tensor<bool>(Shape{2, 2}, {true, false, true, false}).debug_string());
  BOOST_TEST(result("RegexFullMatch", {strings({"abc"}), str("b")}) == Tensor::vector<bool>({false}).debug_string());
  // The pattern input may change from call to call.
  BOOST_TEST(result("RegexFullMatch", {str(""), str("a*")}) == Tensor::scalar<bool>(true).debug_string());
  BOOST_TEST(error_of("RegexFullMatch", {strings({"a"}), str("[a")}) ==
             "invalid_argument: invalid pattern '[a': missing ]: [a");
  BOOST_TEST(error_of("StaticRegexFullMatch", {strings({"a"})}, {{"pattern", "(?P<n>a"}}) ==
             "invalid_argument: invalid pattern '(?P<n>a': missing ): (?P<n>a");
  BOOST_TEST(error_of("RegexFullMatch", {strings({"a"}), strings({"a", "b"})}) ==
             "invalid_argument: pattern must be a scalar, got shape [2]");
}

// --- case, whitespace, length --------------------------------------------------------

BOOST_AUTO_TEST_CASE(string_lower_upper) {
  const Tensor in = strings({"Hello World 42", "\xC3\x89t\xC3\xA9", ""});  // "Été"
  // ASCII only by default: É and é stay as they are.
  BOOST_TEST(result("StringLower", {in}) == strings({"hello world 42", "\xC3\x89t\xC3\xA9", ""}).debug_string());
  BOOST_TEST(result("StringUpper", {in}) == strings({"HELLO WORLD 42", "\xC3\x89T\xC3\xA9", ""}).debug_string());
  BOOST_TEST(result("StringLower", {in}, {{"encoding", "utf-8"}}) ==
             strings({"hello world 42", "\xC3\xA9t\xC3\xA9", ""}).debug_string());
  BOOST_TEST(result("StringUpper", {in}, {{"encoding", "utf-8"}}) ==
             strings({"HELLO WORLD 42", "\xC3\x89T\xC3\x89", ""}).debug_string());
  // Greek (2 bytes), Cyrillic, Deseret (4 bytes), fullwidth (3 bytes).
  BOOST_TEST(result("StringUpper", {matrix(1, 2, {"\xCF\x83\xD0\xB4", "\xF0\x90\x90\xA8\xEF\xBD\x81"})},
                    {{"encoding", "utf-8"}}) ==
             matrix(1, 2, {"\xCE\xA3\xD0\x94", "\xF0\x90\x90\x80\xEF\xBC\xA1"}).debug_string());
  BOOST_TEST(result("StringLower", {str("\xCE\xA3\xD0\x94\xF0\x90\x90\x80")}, {{"encoding", "utf-8"}}) ==
             str("\xCF\x83\xD0\xB4\xF0\x90\x90\xA8").debug_string());
}

BOOST_AUTO_TEST_CASE(string_case_ill_formed_utf8) {
  // Each ill-formed piece becomes one U+FFFD (EF BF BD): a lone
  // continuation byte, a truncated 3-byte sequence, an overlong C0 80 (two
  // pieces), a surrogate ED A0 80 (three pieces); bytes 0x80+ in ASCII
  // mode pass through.
  const std::string bad = "A\x80" "b\xE2\x82" "c\xC0\x80" "d\xED\xA0\x80";
  const std::string fffd = "\xEF\xBF\xBD";
  BOOST_TEST(result("StringLower", {str(bad)}, {{"encoding", "utf-8"}}) ==
             str("a" + fffd + "b" + fffd + "c" + fffd + fffd + "d" + fffd + fffd + fffd).debug_string());
  BOOST_TEST(result("StringUpper", {str(bad)}) == str("A\x80" "B\xE2\x82" "C\xC0\x80" "D\xED\xA0\x80").debug_string());
  BOOST_TEST(error_of("StringLower", {str("a")}, {{"encoding", "latin-1"}}) ==
             "invalid_argument: only utf-8 or '' (no encoding) is supported, received 'latin-1'");
}

BOOST_AUTO_TEST_CASE(string_strip) {
  BOOST_TEST(result("StringStrip", {strings({"  a b \t\n", "\v\f\rx", "   ", "", "y"})}) ==
             strings({"a b", "x", "", "", "y"}).debug_string());
  // Only ASCII whitespace: a no-break space (C2 A0) stays.
  BOOST_TEST(result("StringStrip", {matrix(1, 1, {"\xC2\xA0z "})}) == matrix(1, 1, {"\xC2\xA0z"}).debug_string());
}

BOOST_AUTO_TEST_CASE(string_length) {
  const Tensor in = strings({"hello", "h\xC3\xA9llo", "\xF0\x9F\x98\x80", "", "\x80\x80" "a"});
  BOOST_TEST(result("StringLength", {in}) == ints({5, 6, 4, 0, 3}).debug_string());
  // Characters: bytes that do not continue one (a stray continuation
  // byte is part of the character before it).
  BOOST_TEST(result("StringLength", {in}, {{"unit", "UTF8_CHAR"}}) == ints({5, 5, 1, 0, 1}).debug_string());
  BOOST_TEST(result("StringLength", {matrix(1, 2, {"ab", ""})}) ==
             tensor<int32_t>(Shape{1, 2}, {2, 0}).debug_string());
  BOOST_TEST(contains(error_of("StringLength", {in}, {{"unit", "utf8"}}), "unit must be"));
}

// --- AsString ----------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(as_string_integers) {
  BOOST_TEST(as_string(Tensor::vector<int32_t>({-20, 20})) == "[\"-20\",\"20\"]");
  BOOST_TEST(as_string(Tensor::vector<int64_t>({INT64_MIN, INT64_MAX})) ==
             "[\"-9223372036854775808\",\"9223372036854775807\"]");
  BOOST_TEST(as_string(Tensor::vector<int8_t>({-128, 127})) == "[\"-128\",\"127\"]");
  BOOST_TEST(as_string(Tensor::vector<int16_t>({-10, 10})) == "[\"-10\",\"10\"]");
  BOOST_TEST(as_string(Tensor::vector<uint8_t>({0, 255})) == "[\"0\",\"255\"]");
  BOOST_TEST(as_string(Tensor::vector<uint16_t>({65535})) == "[\"65535\"]");
  BOOST_TEST(as_string(Tensor::vector<uint32_t>({4294967295u})) == "[\"4294967295\"]");
  BOOST_TEST(as_string(Tensor::vector<uint64_t>({UINT64_MAX})) == "[\"18446744073709551615\"]");
  // width with each fill flag (TF's tests: " -42", "-42 ").
  const Tensor v = Tensor::vector<int64_t>({-42, 0, 42});
  BOOST_TEST(as_string(v, {{"width", int64_t{4}}}) == "[\" -42\",\"   0\",\"  42\"]");
  BOOST_TEST(as_string(v, {{"width", int64_t{4}}, {"fill", " "}}) == "[\" -42\",\"   0\",\"  42\"]");
  BOOST_TEST(as_string(v, {{"width", int64_t{4}}, {"fill", "-"}}) == "[\"-42 \",\"0   \",\"42  \"]");
  BOOST_TEST(as_string(v, {{"width", int64_t{4}}, {"fill", "0"}}) == "[\"-042\",\"0000\",\"0042\"]");
  BOOST_TEST(as_string(v, {{"width", int64_t{4}}, {"fill", "+"}}) == "[\" -42\",\"  +0\",\" +42\"]");
  BOOST_TEST(as_string(v, {{"width", int64_t{4}}, {"fill", "#"}}) == "[\" -42\",\"   0\",\"  42\"]");
  // A flag works without a width; a width narrower than the text is ignored.
  BOOST_TEST(as_string(v, {{"fill", "+"}}) == "[\"-42\",\"+0\",\"+42\"]");
  BOOST_TEST(as_string(v, {{"fill", " "}}) == "[\"-42\",\" 0\",\" 42\"]");
  BOOST_TEST(as_string(v, {{"width", int64_t{1}}}) == "[\"-42\",\"0\",\"42\"]");
  // '+' and ' ' do nothing to unsigned numbers.
  BOOST_TEST(as_string(Tensor::vector<uint8_t>({7}), {{"fill", "+"}, {"width", int64_t{3}}}) == "[\"  7\"]");
}

BOOST_AUTO_TEST_CASE(as_string_floats) {
  const Tensor f = Tensor::vector<float>({-1.5f, 0.0f, 1234.5678f});
  BOOST_TEST(as_string(f) == "[\"-1.500000\",\"0.000000\",\"1234.567749\"]");
  BOOST_TEST(as_string(f, {{"precision", int64_t{2}}}) == "[\"-1.50\",\"0.00\",\"1234.57\"]");
  BOOST_TEST(as_string(f, {{"scientific", true}}) == "[\"-1.500000e+00\",\"0.000000e+00\",\"1.234568e+03\"]");
  BOOST_TEST(as_string(f, {{"scientific", true}, {"precision", int64_t{1}}}) ==
             "[\"-1.5e+00\",\"0.0e+00\",\"1.2e+03\"]");
  BOOST_TEST(as_string(f, {{"shortest", true}}) == "[\"-1.5\",\"0\",\"1234.57\"]");
  BOOST_TEST(as_string(f, {{"shortest", true}, {"precision", int64_t{8}}}) == "[\"-1.5\",\"0\",\"1234.5677\"]");
  BOOST_TEST(as_string(f, {{"shortest", true}, {"fill", "#"}}) == "[\"-1.50000\",\"0.00000\",\"1234.57\"]");
  BOOST_TEST(as_string(f, {{"width", int64_t{10}}, {"precision", int64_t{1}}}) ==
             "[\"      -1.5\",\"       0.0\",\"    1234.6\"]");
  BOOST_TEST(as_string(f, {{"width", int64_t{8}}, {"precision", int64_t{1}}, {"fill", "0"}}) ==
             "[\"-00001.5\",\"000000.0\",\"001234.6\"]");
  BOOST_TEST(as_string(f, {{"width", int64_t{8}}, {"precision", int64_t{1}}, {"fill", "-"}}) ==
             "[\"-1.5    \",\"0.0     \",\"1234.6  \"]");
  BOOST_TEST(as_string(f, {{"precision", int64_t{0}}, {"fill", "#"}}) == "[\"-2.\",\"0.\",\"1235.\"]");
  BOOST_TEST(as_string(f, {{"precision", int64_t{0}}, {"fill", "+"}}) == "[\"-2\",\"+0\",\"+1235\"]");
  BOOST_TEST(as_string(Tensor::vector<double>({0.1, 1e100, -2.5e-7})) ==
             "[\"0.100000\",\"10000000000000000159028911097599180468360808563945281389781327557747838772170381060813469985856815104.000000\",\"-0.000000\"]");
  BOOST_TEST(as_string(Tensor::vector<double>({0.1, 1e100, -2.5e-7}), {{"shortest", true}}) ==
             "[\"0.1\",\"1e+100\",\"-2.5e-07\"]");
  const double inf = std::numeric_limits<double>::infinity();
  BOOST_TEST(as_string(Tensor::vector<double>({inf, -inf, std::nan("")}), {{"width", int64_t{5}}, {"fill", "0"}}) ==
             "[\"  inf\",\" -inf\",\"  nan\"]");
  // half and bfloat16 print as the float they hold.
  BOOST_TEST(as_string(Tensor::vector<Eigen::half>({Eigen::half(0.1f)}), {{"precision", int64_t{6}}}) ==
             "[\"0.099976\"]");
  BOOST_TEST(as_string(Tensor::vector<Eigen::bfloat16>({Eigen::bfloat16(3.0f)}), {{"shortest", true}}) ==
             "[\"3\"]");
}

BOOST_AUTO_TEST_CASE(as_string_complex_bool_string) {
  BOOST_TEST(as_string(Tensor::vector<std::complex<float>>({{1.5f, -2.0f}})) == "[\"(1.500000,-2.000000)\"]");
  BOOST_TEST(as_string(Tensor::vector<std::complex<double>>({{0.5, 3.0}}),
                       {{"precision", int64_t{1}}, {"width", int64_t{5}}}) == "[\"(  0.5,  3.0)\"]");
  BOOST_TEST(as_string(Tensor::vector<std::complex<double>>({{0.5, 3.0}}), {{"scientific", true}}) ==
             "[\"(5.000000e-01,3.000000e+00)\"]");
  // bool ignores width and fill.
  BOOST_TEST(as_string(Tensor::vector<bool>({true, false}), {{"width", int64_t{8}}}) == "[\"true\",\"false\"]");
  // Strings pass through unless a width pads them (spaces, on the left
  // unless fill is '-'); precision cuts a padded one.
  const Tensor s = strings({"ab", "abcdef"});
  BOOST_TEST(as_string(s) == "[\"ab\",\"abcdef\"]");
  BOOST_TEST(as_string(s, {{"precision", int64_t{1}}}) == "[\"ab\",\"abcdef\"]");
  BOOST_TEST(as_string(s, {{"width", int64_t{4}}}) == "[\"  ab\",\"abcdef\"]");
  BOOST_TEST(as_string(s, {{"width", int64_t{4}}, {"fill", "-"}}) == "[\"ab  \",\"abcdef\"]");
  BOOST_TEST(as_string(s, {{"width", int64_t{4}}, {"fill", "0"}, {"precision", int64_t{3}}}) ==
             "[\"  ab\",\" abc\"]");
  // Any shape, empty ones included.
  BOOST_TEST(result("AsString", {tensor<int32_t>(Shape{2, 0}, {})}) == tensor<std::string>(Shape{2, 0}, {}).debug_string());
  BOOST_TEST(as_string(Tensor::scalar<int32_t>(7)) == "\"7\"");
}

BOOST_AUTO_TEST_CASE(as_string_errors) {
  const Tensor i = Tensor::vector<int32_t>({1});
  BOOST_TEST(as_string(i, {{"fill", "ab"}}) == "error: invalid_argument: Fill string must be one or fewer characters");
  BOOST_TEST(contains(as_string(i, {{"fill", "s"}}), "Fill argument not supported: \"s\""));
  BOOST_TEST(contains(as_string(i, {{"fill", "%"}}), "Fill argument not supported: \"%\""));
  BOOST_TEST(as_string(Tensor::vector<float>({1}), {{"scientific", true}, {"shortest", true}}) ==
             "error: invalid_argument: Cannot select both scientific and shortest notation");
  BOOST_TEST(as_string(i, {{"scientific", true}}) ==
             "error: invalid_argument: scientific and shortest format not supported for datatype int32");
  BOOST_TEST(as_string(Tensor::vector<bool>({true}), {{"shortest", true}}) ==
             "error: invalid_argument: scientific and shortest format not supported for datatype bool");
  BOOST_TEST(as_string(Tensor::vector<uint64_t>({1}), {{"precision", int64_t{2}}}) ==
             "error: invalid_argument: precision not supported for datatype uint64");
  BOOST_TEST(as_string(i, {{"width", int64_t{1} << 40}}) ==
             "error: invalid_argument: attr width has value 1099511627776 out of range for an int32");
  BOOST_TEST(contains(as_string(Tensor(DType::variant, Shape{1})), "unimplemented"));
}

// --- StringToNumber ------------------------------------------------------------------

namespace {

template <class T>
std::string to_number(const std::string& s, DType out_type) {
  Expected<Tensor> out = run_op1("StringToNumber", {strings({s})}, {{"out_type", out_type}});
  if (!out.ok()) return "error: " + out.status().to_string();
  return out->values_string();
}

const std::string kBad = "error: invalid_argument: StringToNumberOp could not correctly convert string: ";

}  // namespace

BOOST_AUTO_TEST_CASE(string_to_number_float) {
  // TF's test cases, float32 (the default out_type).
  Expected<Tensor> out = run_op1("StringToNumber", {strings({"0", "3", "-1", "1.12", "0xF", "   -10.5",
                                                             "3.40282e+38", "3.40283e+38", "-3.40283e+38", "NAN",
                                                             "INF"})});
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  const float* f = out->data<float>();
  const std::vector<float> want = {0, 3, -1, 1.12f, 15, -10.5f, 3.40282e+38f};
  for (size_t k = 0; k < want.size(); ++k) BOOST_TEST(f[k] == want[k]);
  BOOST_TEST((std::isinf(f[7]) && f[7] > 0));
  BOOST_TEST((std::isinf(f[8]) && f[8] < 0));
  BOOST_TEST(std::isnan(f[9]));
  BOOST_TEST((std::isinf(f[10]) && f[10] > 0));
  BOOST_TEST(to_number<float>("10foobar", DType::float32) == kBad + "10foobar");
  // Signs, fractions, exponents, hex, case, whitespace around.
  BOOST_TEST(to_number<float>("+.5", DType::float32) == "[0.5]");
  BOOST_TEST(to_number<float>(" 5. \t", DType::float32) == "[5]");
  BOOST_TEST(to_number<float>("-0X1a", DType::float32) == "[-26]");
  BOOST_TEST(to_number<float>("1E3", DType::float32) == "[1000]");
  BOOST_TEST(to_number<float>("-iNf ", DType::float32) == "[-inf]");
  BOOST_TEST(to_number<float>("   ", DType::float32) == "[0]");  // TensorFlow's parser reads it as 0
  for (const char* bad : {"", "+", "-", ".", "e5", "1e", "1e+", "0x", "0x1p3", "1.5.2", "infinity", "nan(1)", "- 5",
                          "1,5", "5f", "0x1.8"})
    BOOST_TEST(to_number<float>(bad, DType::float32) == kBad + bad);
  // 32 bytes or more is refused, even with valid digits.
  BOOST_TEST(to_number<float>(std::string(31, '1'), DType::float32) == "[1.1111111e+30]");
  BOOST_TEST(to_number<float>(std::string(32, '1'), DType::float32) == kBad + std::string(32, '1'));
}

BOOST_AUTO_TEST_CASE(string_to_number_double) {
  BOOST_TEST(to_number<double>("3.40283e+38", DType::float64) == "[3.40283e+38]");
  BOOST_TEST(to_number<double>("-3.40283e+38", DType::float64) == "[-3.40283e+38]");
  BOOST_TEST(to_number<double>("0.1", DType::float64) == "[0.1]");
  BOOST_TEST(to_number<double>("1e400", DType::float64) == "[inf]");
  BOOST_TEST(to_number<double>("nan", DType::float64) == "[nan]");
  BOOST_TEST(to_number<double>("2.9x", DType::float64) == kBad + "2.9x");
}

BOOST_AUTO_TEST_CASE(string_to_number_integers) {
  BOOST_TEST(to_number<int32_t>("    -10", DType::int32) == "[-10]");
  BOOST_TEST(to_number<int32_t>("-2147483648", DType::int32) == "[-2147483648]");
  BOOST_TEST(to_number<int32_t>("2147483647 ", DType::int32) == "[2147483647]");
  BOOST_TEST(to_number<int32_t>("007", DType::int32) == "[7]");
  for (const char* bad : {"-2147483649", "2147483648", "2.9", "10foobar", "+5", "0x10", "", " ", "-", "1 2", "1e3"})
    BOOST_TEST(to_number<int32_t>(bad, DType::int32) == kBad + bad);
  BOOST_TEST(to_number<int64_t>("-2147483649", DType::int64) == "[-2147483649]");
  BOOST_TEST(to_number<int64_t>("-9223372036854775808", DType::int64) == "[-9223372036854775808]");
  BOOST_TEST(to_number<int64_t>("9223372036854775807", DType::int64) == "[9223372036854775807]");
  for (const char* bad : {"9223372036854775808", "-9223372036854775809", "2.9", "10foobar"})
    BOOST_TEST(to_number<int64_t>(bad, DType::int64) == kBad + bad);
  BOOST_TEST(to_number<uint32_t>("4294967295", DType::uint32) == "[4294967295]");
  BOOST_TEST(to_number<uint64_t>("18446744073709551615", DType::uint64) == "[18446744073709551615]");
  for (const char* bad : {"4294967296", "-1", "-0"}) BOOST_TEST(to_number<uint32_t>(bad, DType::uint32) == kBad + bad);
  BOOST_TEST(to_number<uint64_t>("18446744073709551616", DType::uint64) == kBad + "18446744073709551616");
  // A tensor of any shape; the first bad string is the error.
  BOOST_TEST(result("StringToNumber", {matrix(1, 2, {"1", "2"})}, {{"out_type", DType::int32}}) ==
             tensor<int32_t>(Shape{1, 2}, {1, 2}).debug_string());
  BOOST_TEST(error_of("StringToNumber", {strings({"1", "x", "y"})}, {{"out_type", DType::int64}}) ==
             "invalid_argument: StringToNumberOp could not correctly convert string: x");
  BOOST_TEST(contains(error_of("StringToNumber", {strings({"1"})}, {{"out_type", DType::int8}}), "out_type"));
}

BOOST_AUTO_TEST_SUITE_END()
