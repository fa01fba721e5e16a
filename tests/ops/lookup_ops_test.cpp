// The lookup-table ops (ops/lookup_table.hpp, ops/lookup_ops.cpp) through
// their kernels: HashTableV2 initialized from tensors and from text files
// (tests/data/vocab/), the mutable tables, shared names, TensorFlow's
// errors, the shape rules, and Find racing Insert on several threads.
#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>
#include <vector>

#include "op_result.hpp"
#include "ops/lookup_table.hpp"
#include "ops/resource.hpp"

using namespace tagflow::ops;
using testing::contains;
using testing::RunOptions;

namespace {

const DType i32 = DType::int32;
const DType i64 = DType::int64;
const DType str = DType::string;
const DType f32 = DType::float32;

std::string vocab(const std::string& file) { return std::string(TAGFLOW_TEST_DATA) + "/vocab/" + file; }

Tensor strings(std::vector<std::string> v) { return Tensor::vector<std::string>(v); }
Tensor int64s(std::vector<int64_t> v) { return Tensor::vector<int64_t>(v); }

struct Session {
  ResourceManager rm;

  Expected<std::vector<Tensor>> run(const std::string& op, std::vector<Tensor> inputs, AttrMap attrs = {},
                                    const std::string& node = "") {
    return testing::run_op(op, std::move(inputs), std::move(attrs), RunOptions{&rm, 1, node});
  }
  // The handle a table-making op outputs; fails the test on an error.
  Tensor table(const std::string& node, DType key, DType value, AttrMap more = {},
               const std::string& op = "HashTableV2") {
    more["key_dtype"] = key;
    more["value_dtype"] = value;
    auto h = run(op, {}, std::move(more), node);
    BOOST_TEST_REQUIRE(h.ok(), h.status().to_string());
    return (*h)[0];
  }
  Status init(const Tensor& h, const Tensor& keys, const Tensor& values) {
    auto r = run("InitializeTableV2", {h, keys, values}, {{"Tkey", keys.dtype()}, {"Tval", values.dtype()}});
    return r.status();
  }
  Status init_file(const Tensor& h, const std::string& path, AttrMap attrs) {
    return run("InitializeTableFromTextFileV2", {h, Tensor::string_scalar(path)}, std::move(attrs)).status();
  }
  Expected<Tensor> find(const Tensor& h, const Tensor& keys, const Tensor& fallback) {
    auto r = run("LookupTableFindV2", {h, keys, fallback}, {{"Tin", keys.dtype()}, {"Tout", fallback.dtype()}});
    if (!r.ok()) return r.status();
    return (*r)[0];
  }
  std::string found(const Tensor& h, const Tensor& keys, const Tensor& fallback) {
    auto r = find(h, keys, fallback);
    return r.ok() ? r->debug_string() : "error: " + r.status().to_string();
  }
  Status insert(const Tensor& h, const Tensor& keys, const Tensor& values) {
    return run("LookupTableInsertV2", {h, keys, values}, {{"Tin", keys.dtype()}, {"Tout", values.dtype()}}).status();
  }
  Status remove(const Tensor& h, const Tensor& keys) {
    return run("LookupTableRemoveV2", {h, keys}, {{"Tin", keys.dtype()}}).status();
  }
  Status import(const Tensor& h, const Tensor& keys, const Tensor& values) {
    return run("LookupTableImportV2", {h, keys, values}, {{"Tin", keys.dtype()}, {"Tout", values.dtype()}}).status();
  }
  int64_t size(const Tensor& h) {
    auto r = run("LookupTableSizeV2", {h});
    BOOST_TEST_REQUIRE(r.ok(), r.status().to_string());
    BOOST_TEST_REQUIRE(((*r)[0].dtype() == i64 && (*r)[0].shape().is_scalar()));
    return (*r)[0].scalar_value<int64_t>();
  }
  Expected<std::vector<Tensor>> exported(const Tensor& h, DType key, DType value) {
    return run("LookupTableExportV2", {h}, {{"Tkeys", key}, {"Tvalues", value}});
  }
};

// An exported table as "key=value" pairs, sorted: export order is not set.
std::vector<std::string> pairs(const std::vector<Tensor>& out) {
  std::vector<std::string> p;
  const Tensor& k = out[0];
  const Tensor& v = out[1];
  const int64_t n = k.num_elements();
  const int64_t width = n == 0 ? 0 : v.num_elements() / n;
  for (int64_t i = 0; i < n; ++i) {
    std::string s = std::to_string(k.data<int64_t>()[i]) + "=";
    for (int64_t j = 0; j < width; ++j) s += (j ? "," : "") + std::to_string(v.data<float>()[i * width + j]);
    p.push_back(s);
  }
  std::sort(p.begin(), p.end());
  return p;
}

std::string code(const Status& s) { return to_string(s.code()); }

}  // namespace

BOOST_AUTO_TEST_SUITE(lookup_ops)

BOOST_AUTO_TEST_CASE(an_initialized_table_finds_hits_and_gives_the_default_for_misses) {
  Session s;
  Tensor h = s.table("t", i64, str);
  BOOST_TEST(h.scalar_value<std::string>() == "t");
  BOOST_TEST(s.init(h, int64s({1, 2, 3}), strings({"one", "two", "three"})).ok());
  BOOST_TEST(s.found(h, int64s({3, 7, 1}), Tensor::string_scalar("?")) == R"(string[3] ["three","?","one"])");
  BOOST_TEST(s.found(h, Tensor::scalar<int64_t>(2), Tensor::string_scalar("?")) == R"(string[] "two")");
  BOOST_TEST(s.found(h, testing::tensor<int64_t>(Shape{2, 2}, {1, 9, 2, 3}), Tensor::string_scalar("-")) ==
             R"(string[2,2] [["one","-"],["two","three"]])");
  BOOST_TEST(s.found(h, int64s({}), Tensor::string_scalar("-")) == "string[0] []");
  BOOST_TEST(s.size(h) == 3);

  Tensor w = s.table("words", str, i64);
  BOOST_TEST(s.init(w, strings({"a", "b"}), int64s({10, 20})).ok());
  BOOST_TEST(s.found(w, testing::tensor<std::string>(Shape{1, 3}, {"b", "zz", "a"}), Tensor::scalar<int64_t>(-1)) ==
             "int64[1,3] [[20,-1,10]]");
}

BOOST_AUTO_TEST_CASE(find_checks_dtypes_and_the_default_shape_first) {
  Session s;
  Tensor h = s.table("t", i64, str);
  auto wrong_keys = s.find(h, Tensor::vector<int32_t>({1}), Tensor::string_scalar(""));
  BOOST_TEST_REQUIRE(!wrong_keys.ok());
  BOOST_TEST(wrong_keys.status().message() == "keys are int32, but HashTableV2 't' (int64 -> string) has int64 keys");
  auto wrong_default = s.find(h, int64s({1, 2}), strings({"a", "b", "c"}));
  BOOST_TEST_REQUIRE(!wrong_default.ok());
  BOOST_TEST(contains(wrong_default.status().message(), "default_value has shape [3]"));
  // Arguments are checked before initialization, as TensorFlow does.
  auto early = s.find(h, int64s({1}), Tensor::string_scalar(""));
  BOOST_TEST_REQUIRE(!early.ok());
  BOOST_TEST(code(early.status()) == "failed_precondition");
  BOOST_TEST(contains(early.status().message(), "Table not initialized"));
  BOOST_TEST(s.size(h) == 0);
  auto none = s.exported(h, i64, str);
  BOOST_TEST_REQUIRE(!none.ok());
  BOOST_TEST(code(none.status()) == "aborted");
  auto unknown = s.find(make_handle("nothing"), int64s({1}), Tensor::string_scalar(""));
  BOOST_TEST(code(unknown.status()) == "not_found");
  auto bad_output = s.run("LookupTableFindV2", {h, int64s({1}), Tensor::string_scalar("")},
                          {{"Tin", i64}, {"Tout", i32}});
  BOOST_TEST(contains(bad_output.status().message(), "declares output 'values' as int32"));
}

BOOST_AUTO_TEST_CASE(a_shared_name_is_one_table_and_must_be_declared_alike) {
  Session s;
  Tensor a = s.table("a", i64, f32, {{"shared_name", std::string("vocab")}});
  Tensor b = s.table("b", i64, f32, {{"shared_name", std::string("vocab")}});
  Tensor c = s.table("c", i64, f32, {{"container", std::string("box")}, {"shared_name", std::string("vocab")}});
  BOOST_TEST(a.scalar_value<std::string>() == "vocab");
  BOOST_TEST(c.scalar_value<std::string>() == "box/vocab");
  BOOST_TEST(s.init(a, int64s({5}), Tensor::vector<float>({0.5f})).ok());
  BOOST_TEST(s.found(b, int64s({5}), Tensor::scalar(0.0f)) == "float32[1] [0.5]");
  BOOST_TEST(s.size(c) == 0);

  auto dtypes = s.run("HashTableV2", {}, {{"key_dtype", i64}, {"value_dtype", i32}, {"shared_name", std::string("vocab")}}, "d");
  BOOST_TEST_REQUIRE(!dtypes.ok());
  BOOST_TEST(code(dtypes.status()) == "invalid_argument");
  BOOST_TEST(dtypes.status().message() ==
             "Conflicting key/value dtypes: the node declares HashTableV2 int64 -> int32, but the shared table "
             "'vocab' is HashTableV2 int64 -> float32");
  auto kind = s.run("MutableHashTableV2", {}, {{"key_dtype", i64}, {"value_dtype", f32}, {"shared_name", std::string("vocab")}}, "e");
  BOOST_TEST_REQUIRE(!kind.ok());
  BOOST_TEST(contains(kind.status().message(), "declares MutableHashTableV2 int64 -> float32"));
  // Without a shared name each node has its own table.
  Tensor own = s.table("own", i64, f32);
  BOOST_TEST(own.scalar_value<std::string>() == "own");
  BOOST_TEST(s.size(own) == 0);
}

BOOST_AUTO_TEST_CASE(initializing_again_is_accepted_only_with_as_many_entries) {
  Session s;
  Tensor h = s.table("t", str, i64);
  BOOST_TEST(s.init(h, strings({"a", "b"}), int64s({1, 2})).ok());
  // TensorFlow compares the number of entries, not the entries.
  BOOST_TEST(s.init(h, strings({"x", "y"}), int64s({8, 9})).ok());
  BOOST_TEST(s.found(h, strings({"a", "x"}), Tensor::scalar<int64_t>(0)) == "int64[2] [1,0]");
  Status more = s.init(h, strings({"a", "b", "c"}), int64s({1, 2, 3}));
  BOOST_TEST(code(more) == "failed_precondition");
  BOOST_TEST(contains(more.message(), "Table was already initialized with different data"));
  // LookupTableImportV2 initializes a HashTable the same way.
  BOOST_TEST(s.import(h, strings({"p", "q"}), int64s({3, 4})).ok());
  BOOST_TEST(code(s.import(h, strings({"p"}), int64s({3}))) == "failed_precondition");
}

BOOST_AUTO_TEST_CASE(initialization_checks_its_data_and_a_failed_one_leaves_the_table_empty) {
  Session s;
  Tensor h = s.table("t", str, i64);
  Status twice = s.init(h, strings({"a", "b", "a"}), int64s({1, 2, 3}));
  BOOST_TEST(code(twice) == "failed_precondition");
  BOOST_TEST(twice.message() == "HashTable has different value for same key: HashTableV2 't' (string -> int64) is "
                                "given key \"a\" with 1 and 3");
  BOOST_TEST(s.size(h) == 0);
  BOOST_TEST(code(s.find(h, strings({"a"}), Tensor::scalar<int64_t>(0)).status()) == "failed_precondition");
  BOOST_TEST(contains(s.init(h, strings({}), int64s({})).message(), "keys and values cannot be empty"));
  BOOST_TEST(contains(s.init(h, testing::tensor<std::string>(Shape{1, 1}, {"a"}), testing::tensor<int64_t>(Shape{1, 1}, {1}))
                          .message(),
                      "Keys must be a vector"));
  BOOST_TEST(contains(s.init(h, strings({"a", "b"}), int64s({1})).message(), "same size"));
  BOOST_TEST(contains(s.init(h, strings({"a"}), Tensor::vector<int32_t>({1})).message(), "values are int32"));
  // A key given twice with one value is one entry.
  BOOST_TEST(s.init(h, strings({"a", "b", "a"}), int64s({1, 2, 1})).ok());
  BOOST_TEST(s.size(h) == 2);
  BOOST_TEST(code(s.insert(h, strings({"c"}), int64s({3}))) == "unimplemented");
  BOOST_TEST(code(s.remove(h, strings({"a"}))) == "unimplemented");
  auto out = s.exported(h, str, i64);
  BOOST_TEST_REQUIRE(out.ok());
  BOOST_TEST((*out)[0].shape().to_string() == "[2]");
}

BOOST_AUTO_TEST_CASE(a_mutable_table_inserts_removes_imports_and_exports) {
  Session s;
  Tensor h = s.table("m", i64, f32, {}, "MutableHashTableV2");
  BOOST_TEST(s.size(h) == 0);
  BOOST_TEST(s.found(h, int64s({1}), Tensor::scalar(-1.0f)) == "float32[1] [-1]");
  BOOST_TEST(s.insert(h, int64s({1, 2, 3}), Tensor::vector<float>({1, 2, 3})).ok());
  BOOST_TEST(s.insert(h, int64s({2, 4, 4}), Tensor::vector<float>({20, 4, 40})).ok());  // later duplicates win
  BOOST_TEST(s.size(h) == 4);
  BOOST_TEST(s.found(h, int64s({4, 2, 9}), Tensor::scalar(-1.0f)) == "float32[3] [40,20,-1]");
  // A default per key.
  BOOST_TEST(s.found(h, int64s({9, 1, 8}), Tensor::vector<float>({-9, -1, -8})) == "float32[3] [-9,1,-8]");
  BOOST_TEST(s.remove(h, int64s({1, 77})).ok());
  BOOST_TEST(s.size(h) == 3);
  auto out = s.exported(h, i64, f32);
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST(pairs(*out) == (std::vector<std::string>{"2=20.000000", "3=3.000000", "4=40.000000"}));
  BOOST_TEST(s.import(h, int64s({5}), Tensor::vector<float>({0.5f})).ok());
  BOOST_TEST(s.size(h) == 1);
  BOOST_TEST(s.found(h, int64s({2, 5}), Tensor::scalar(0.0f)) == "float32[2] [0,0.5]");
  BOOST_TEST(s.import(h, int64s({}), Tensor::vector<float>({})).ok());
  BOOST_TEST(s.size(h) == 0);
  BOOST_TEST(contains(s.insert(h, int64s({1, 2}), Tensor::vector<float>({1})).message(),
                      "values of shape [1] for keys of shape [2]"));
  BOOST_TEST(contains(s.init(h, int64s({1}), Tensor::vector<float>({1})).message(), "is not initializable"));
}

BOOST_AUTO_TEST_CASE(a_table_of_tensors_holds_vector_values) {
  Session s;
  Tensor h = s.table("v", i64, f32, {{"value_shape", PartialShape{false, {2}}}}, "MutableHashTableOfTensorsV2");
  BOOST_TEST(s.insert(h, int64s({1, 2}), testing::tensor<float>(Shape{2, 2}, {1, 1.5f, 2, 2.5f})).ok());
  BOOST_TEST(s.found(h, int64s({2, 3}), Tensor::vector<float>({0, -1})) == "float32[2,2] [[2,2.5],[0,-1]]");
  BOOST_TEST(s.found(h, testing::tensor<int64_t>(Shape{1, 2}, {3, 1}),
                     testing::tensor<float>(Shape{1, 2, 2}, {7, 8, 9, 10})) == "float32[1,2,2] [[[7,8],[1,1.5]]]");
  BOOST_TEST(s.found(h, Tensor::scalar<int64_t>(1), Tensor::vector<float>({0, 0})) == "float32[2] [1,1.5]");
  BOOST_TEST(s.insert(h, int64s({1, 3}), testing::tensor<float>(Shape{2, 2}, {10, 11, 30, 31})).ok());
  BOOST_TEST(s.remove(h, int64s({2})).ok());
  auto out = s.exported(h, i64, f32);
  BOOST_TEST_REQUIRE(out.ok(), out.status().to_string());
  BOOST_TEST((*out)[1].shape().to_string() == "[2,2]");
  BOOST_TEST(pairs(*out) == (std::vector<std::string>{"1=10.000000,11.000000", "3=30.000000,31.000000"}));
  BOOST_TEST(s.import(h, int64s({4}), testing::tensor<float>(Shape{1, 2}, {4, 44})).ok());
  BOOST_TEST(s.size(h) == 1);
  Status scalars = s.insert(h, int64s({5}), Tensor::vector<float>({5}));
  BOOST_TEST(contains(scalars.message(), "expects [1,2]"));
  auto scalar_default = s.find(h, int64s({4}), Tensor::scalar(0.0f));
  BOOST_TEST(contains(scalar_default.status().message(), "takes [2] (one for all keys) or [1,2] (one per key)"));
  auto matrix = s.run("MutableHashTableOfTensorsV2", {},
                      {{"key_dtype", i64}, {"value_dtype", f32}, {"value_shape", PartialShape{false, {2, 2}}}}, "x");
  BOOST_TEST(contains(matrix.status().message(), "Default value must be a vector"));
  auto scalar = s.run("MutableHashTableOfTensorsV2", {}, {{"key_dtype", i64}, {"value_dtype", f32}}, "y");
  BOOST_TEST(!scalar.ok());
}

BOOST_AUTO_TEST_CASE(only_tensorflows_dtype_pairs_have_kernels) {
  Session s;
  int n = 0;
  for (auto [k, v] : std::vector<std::pair<DType, DType>>{{i32, str}, {i64, i64}, {str, DType::boolean}, {str, str}})
    BOOST_TEST(s.run("HashTableV2", {}, {{"key_dtype", k}, {"value_dtype", v}}, "ok" + std::to_string(n++)).ok());
  auto f = s.run("HashTableV2", {}, {{"key_dtype", f32}, {"value_dtype", i64}}, "f");
  BOOST_TEST(code(f.status()) == "unimplemented");
  BOOST_TEST(!s.run("HashTableV2", {}, {{"key_dtype", i64}, {"value_dtype", DType::boolean}}, "g").ok());
  BOOST_TEST(!s.run("MutableHashTableV2", {}, {{"key_dtype", str}, {"value_dtype", str}}, "h").ok());
  BOOST_TEST(!s.run("MutableHashTableV2", {}, {{"key_dtype", i32}, {"value_dtype", i64}}, "i").ok());
  BOOST_TEST(s.run("MutableHashTableV2", {}, {{"key_dtype", i64}, {"value_dtype", DType::variant}}, "j").ok());
  BOOST_TEST(!s.run("MutableHashTableOfTensorsV2", {},
                    {{"key_dtype", i64}, {"value_dtype", DType::variant}, {"value_shape", PartialShape{false, {1}}}}, "k")
                  .ok());
  auto none = testing::run_op("HashTableV2", {}, {{"key_dtype", i64}, {"value_dtype", i64}});
  BOOST_TEST(code(none.status()) == "failed_precondition");
}

BOOST_AUTO_TEST_CASE(a_text_file_fills_a_table_by_line_field_and_line_number) {
  Session s;
  Tensor by_word = s.table("w", str, i64);
  BOOST_TEST(s.init_file(by_word, vocab("words.txt"), {{"key_index", int64_t{-2}}, {"value_index", int64_t{-1}}}).ok());
  BOOST_TEST(s.found(by_word, strings({"cherry", "apple", "kiwi"}), Tensor::scalar<int64_t>(-1)) == "int64[3] [2,0,-1]");

  Tensor by_line = s.table("l", i64, str);
  BOOST_TEST(s.init_file(by_line, vocab("words.txt"),
                         {{"key_index", int64_t{-1}}, {"value_index", int64_t{-2}}, {"offset", int64_t{100}}})
                 .ok());
  BOOST_TEST(s.found(by_line, int64s({100, 102, 0}), Tensor::string_scalar("")) == R"(string[3] ["apple","cherry",""])");

  Tensor fields = s.table("f", str, f32);
  BOOST_TEST(s.init_file(fields, vocab("fields.tsv"), {{"key_index", int64_t{0}}, {"value_index", int64_t{2}}}).ok());
  BOOST_TEST(s.found(fields, strings({"banana"}), Tensor::scalar(0.0f)) == "float32[1] [1.5]");

  Tensor comma = s.table("c", i64, str);
  BOOST_TEST(s.init_file(comma, vocab("numbers.csv"),
                         {{"key_index", int64_t{0}}, {"value_index", int64_t{1}}, {"delimiter", std::string(",")}})
                 .ok());
  BOOST_TEST(s.found(comma, int64s({20, 30}), Tensor::string_scalar("")) == R"(string[2] ["twenty","thirty"])");

  // A whole line read as a number; TensorFlow adds the offset to int32 fields.
  Tensor ints = s.table("i", i32, str);
  BOOST_TEST(s.init_file(ints, vocab("ints.txt"), {{"key_index", int64_t{-2}}, {"value_index", int64_t{-2}},
                                                   {"offset", int64_t{1}}})
                 .ok());
  BOOST_TEST(s.found(ints, Tensor::vector<int32_t>({8, -2, 7}), Tensor::string_scalar("")) ==
             R"(string[3] ["7","-3",""])");

  // '\r' before '\n' is dropped; the last line needs no '\n'.
  Tensor crlf = s.table("r", str, i64);
  BOOST_TEST(s.init_file(crlf, vocab("crlf.txt"), {{"key_index", int64_t{-2}}, {"value_index", int64_t{-1}}}).ok());
  BOOST_TEST(s.found(crlf, strings({"beta", "gamma"}), Tensor::scalar<int64_t>(-1)) == "int64[2] [1,2]");
}

BOOST_AUTO_TEST_CASE(vocab_size_must_not_exceed_the_file_and_truncates_it) {
  Session s;
  AttrMap word_ids{{"key_index", int64_t{-2}}, {"value_index", int64_t{-1}}};
  Tensor two = s.table("two", str, i64);
  AttrMap first_two = word_ids;
  first_two["vocab_size"] = int64_t{2};
  BOOST_TEST(s.init_file(two, vocab("words.txt"), first_two).ok());
  BOOST_TEST(s.size(two) == 2);
  Tensor four = s.table("four", str, i64);
  AttrMap too_many = word_ids;
  too_many["vocab_size"] = int64_t{4};
  Status fewer = s.init_file(four, vocab("words.txt"), too_many);
  BOOST_TEST(code(fewer) == "invalid_argument");
  BOOST_TEST(contains(fewer.message(), "Invalid vocab_size in " + vocab("words.txt") +
                                           ": expected 4 lines but the file has 3"));
  BOOST_TEST(s.size(four) == 0);
  Tensor empty = s.table("e", str, i64);
  BOOST_TEST(code(s.init_file(empty, vocab("empty.txt"), word_ids)) == "out_of_range");
}

BOOST_AUTO_TEST_CASE(a_bad_text_file_is_an_error_naming_the_file_and_line) {
  Session s;
  Tensor h = s.table("t", str, i64);
  Status number = s.init_file(h, vocab("bad_number.tsv"), {{"key_index", int64_t{0}}, {"value_index", int64_t{1}}});
  BOOST_TEST(code(number) == "invalid_argument");
  BOOST_TEST(number.message() == vocab("bad_number.tsv") + ":2: field \"lots\" is not a valid int64");
  // Numbers as TensorFlow's safe_strto* read them (ops/number_text.hpp):
  // hex and exponents for floats, no '+' for integers.
  Status plus = s.init_file(s.table("p", str, i64), vocab("plus_int.tsv"),
                            {{"key_index", int64_t{0}}, {"value_index", int64_t{1}}});
  BOOST_TEST(plus.message() == vocab("plus_int.tsv") + ":1: field \"+3\" is not a valid int64");
  Tensor floats = s.table("f", str, f32);
  BOOST_TEST(s.init_file(floats, vocab("floats_tf_style.tsv"), {{"key_index", int64_t{0}}, {"value_index", int64_t{1}}})
                 .ok());
  BOOST_TEST(s.found(floats, Tensor::vector<std::string>({"hex", "exp", "spaced"}), Tensor::scalar(0.0f)) ==
             "float32[3] [16,15,2.5]");
  Status columns = s.init_file(h, vocab("short_line.tsv"), {{"key_index", int64_t{0}}, {"value_index", int64_t{1}}});
  BOOST_TEST(contains(columns.message(), "Invalid number of columns in " + vocab("short_line.tsv") +
                                             ":2 (\"banana\"): expected at least 2 fields, got 1"));
  Status blank = s.init_file(h, vocab("empty_line.txt"), {{"key_index", int64_t{-2}}, {"value_index", int64_t{-1}}});
  BOOST_TEST(blank.message() == "Invalid content in " + vocab("empty_line.txt") + ":2: an empty line");
  Status repeated = s.init_file(h, vocab("repeated.txt"), {{"key_index", int64_t{-2}}, {"value_index", int64_t{-1}}});
  BOOST_TEST(code(repeated) == "failed_precondition");
  Status missing = s.init_file(h, vocab("no_such_file.txt"), {{"key_index", int64_t{-2}}, {"value_index", int64_t{-1}}});
  BOOST_TEST(code(missing) == "not_found");
  BOOST_TEST(contains(missing.message(), vocab("no_such_file.txt")));
  Status line_number = s.init_file(h, vocab("words.txt"), {{"key_index", int64_t{-1}}, {"value_index", int64_t{-2}}});
  BOOST_TEST(contains(line_number.message(), "key_index -1 (the line number) needs int64 table keys, not string"));
  BOOST_TEST(contains(s.init_file(h, "", {{"key_index", int64_t{-2}}, {"value_index", int64_t{-1}}}).message(),
                      "filename cannot be empty"));
  auto delimiter = s.run("InitializeTableFromTextFileV2", {h, Tensor::string_scalar(vocab("words.txt"))},
                         {{"key_index", int64_t{0}}, {"value_index", int64_t{1}}, {"delimiter", std::string("::")}});
  BOOST_TEST(contains(delimiter.status().message(), "delimiter should be only 1 char"));
  auto below = s.run("InitializeTableFromTextFileV2", {h, Tensor::string_scalar(vocab("words.txt"))},
                     {{"key_index", int64_t{-3}}, {"value_index", int64_t{1}}});
  BOOST_TEST(!below.ok());
  BOOST_TEST(s.size(h) == 0);  // every failure left it empty
  // Once initialized, a text file initialization that reads leaves it alone.
  BOOST_TEST(s.init_file(h, vocab("words.txt"), {{"key_index", int64_t{-2}}, {"value_index", int64_t{-1}}}).ok());
  BOOST_TEST(s.init_file(h, vocab("fields.tsv"), {{"key_index", int64_t{0}}, {"value_index", int64_t{1}}}).ok());
  BOOST_TEST(s.found(h, strings({"banana"}), Tensor::scalar<int64_t>(-1)) == "int64[1] [1]");
  Tensor m = s.table("m", str, i64, {}, "MutableHashTableV2");
  BOOST_TEST(contains(s.init_file(m, vocab("words.txt"), {{"key_index", int64_t{-2}}, {"value_index", int64_t{-1}}})
                          .message(),
                      "is not initializable"));
}

BOOST_AUTO_TEST_CASE(the_ops_are_registered_as_tensorflow_declares_them) {
  const OpRegistry& r = OpRegistry::global();
  for (const char* name : {"HashTableV2", "MutableHashTableV2", "MutableHashTableOfTensorsV2"}) {
    const OpDef* d = r.find(name);
    BOOST_TEST_REQUIRE(d != nullptr, name);
    BOOST_TEST(d->is_stateful(), name);
    BOOST_TEST(d->find_attr("use_node_name_sharing")->default_value->get<bool>() == false);
  }
  BOOST_TEST(r.find("MutableHashTableV2")->find_attr("value_shape") == nullptr);
  // Reading a table is not stateful; changing one is, so that no graph pass
  // drops an initializer (ops/lookup_ops.cpp).
  for (const char* name : {"LookupTableFindV2", "LookupTableSizeV2", "LookupTableExportV2"})
    BOOST_TEST(!r.find(name)->is_stateful(), name);
  for (const char* name : {"LookupTableInsertV2", "LookupTableRemoveV2", "LookupTableImportV2", "InitializeTableV2",
                           "InitializeTableFromTextFileV2"})
    BOOST_TEST(r.find(name)->is_stateful(), name);
  for (const char* name : {"LookupTableFindV2", "LookupTableInsertV2", "LookupTableRemoveV2", "LookupTableSizeV2",
                           "LookupTableExportV2", "LookupTableImportV2", "InitializeTableV2",
                           "InitializeTableFromTextFileV2"}) {
    const OpDef* d = r.find(name);
    BOOST_TEST_REQUIRE(d != nullptr, name);
    BOOST_TEST(d->has_kernel(), name);
    BOOST_TEST(d->shape_function() != nullptr, name);
  }
  const OpDef* text = r.find("InitializeTableFromTextFileV2");
  BOOST_TEST(text->find_attr("delimiter")->default_value->get<std::string>() == "\t");
  BOOST_TEST(text->find_attr("vocab_size")->default_value->get<int64_t>() == -1);
  BOOST_TEST(*text->find_attr("key_index")->minimum == -2);
}

namespace {

// Runs op's shape function on inputs of the given shapes.
Expected<std::vector<OutputInfo>> shapes_of(const std::string& op, std::vector<PartialShape> in, int outputs) {
  std::vector<OutputInfo> inputs(in.size());
  std::vector<const OutputInfo*> ptrs;
  for (size_t i = 0; i < in.size(); ++i) {
    inputs[i].shape = in[i];
    ptrs.push_back(&inputs[i]);
  }
  std::vector<OutputInfo> out(static_cast<size_t>(outputs));
  AttrMap attrs;
  InferenceContext c("n", op, attrs, ptrs, &out, nullptr);
  TF_RETURN_IF_ERROR(OpRegistry::global().find(op)->shape_function()(c));
  return out;
}

std::string shape_text(const std::string& op, std::vector<PartialShape> in, int outputs = 1, int which = 0) {
  auto out = shapes_of(op, std::move(in), outputs);
  return out.ok() ? (*out)[static_cast<size_t>(which)].shape.to_string() : "error";
}

const PartialShape kScalar{false, {}};
const PartialShape kUnknown{true, {}};

}  // namespace

BOOST_AUTO_TEST_CASE(shape_functions_give_what_the_inputs_tell) {
  BOOST_TEST(shape_text("HashTableV2", {}) == "[]");
  BOOST_TEST(shape_text("LookupTableFindV2", {kScalar, {false, {4, 2}}, kScalar}) == "[4,2]");
  BOOST_TEST(shape_text("LookupTableFindV2", {kScalar, kScalar, {false, {3}}}) == "[3]");
  BOOST_TEST(shape_text("LookupTableFindV2", {kScalar, {false, {4}}, {false, {4, 3}}}) == "[4,3]");
  BOOST_TEST(shape_text("LookupTableFindV2", {kScalar, {false, {4}}, {false, {3}}}) == "?");
  BOOST_TEST(shape_text("LookupTableFindV2", {{false, {2}}, {false, {4}}, kScalar}) == "error");
  BOOST_TEST(shape_text("LookupTableSizeV2", {kScalar}) == "[]");
  BOOST_TEST(shape_text("LookupTableExportV2", {kScalar}, 2, 0) == "[?]");
  BOOST_TEST(shape_text("LookupTableExportV2", {kScalar}, 2, 1) == "?");
  BOOST_TEST(shapes_of("LookupTableRemoveV2", {kScalar, kScalar}, 0).status().code() == Error::invalid_argument);
  BOOST_TEST(shapes_of("LookupTableImportV2", {kScalar, {false, {3}}, {false, {3, 2}}}, 0).ok());
  BOOST_TEST(!shapes_of("LookupTableImportV2", {kScalar, {false, {3}}, {false, {4, 2}}}, 0).ok());
  BOOST_TEST(shapes_of("InitializeTableV2", {kScalar, {false, {3}}, kUnknown}, 0).ok());
  BOOST_TEST(!shapes_of("InitializeTableV2", {kScalar, {false, {3}}, {false, {2}}}, 0).ok());
  BOOST_TEST(!shapes_of("InitializeTableFromTextFileV2", {kScalar, {false, {1}}}, 0).ok());
}

// Finds race inserts (and, on a HashTable, initializations) on `threads`
// threads: every value read is one some insert wrote, or the default.
void race(int threads) {
  Session s;
  Tensor m = s.table("m", i64, i64, {}, "MutableHashTableV2");
  Tensor h = s.table("h", i64, i64);
  constexpr int64_t kKeys = 64;
  constexpr int kRounds = 40;
  std::atomic<int> bad{0};
  auto work = [&](int id) {
    std::vector<int64_t> keys(kKeys), values(kKeys);
    for (int64_t k = 0; k < kKeys; ++k) {
      keys[static_cast<size_t>(k)] = k;
      values[static_cast<size_t>(k)] = k * 10;
    }
    for (int round = 0; round < kRounds; ++round) {
      if ((id + round) % 2 == 0) {
        if (!s.insert(m, int64s({round % kKeys, (round * 7 + id) % kKeys}),
                      int64s({(round % kKeys) * 10, ((round * 7 + id) % kKeys) * 10}))
                 .ok())
          ++bad;
        if (round % 8 == 0 && !s.remove(m, int64s({(round + id) % kKeys})).ok()) ++bad;
        if (!s.init(h, int64s(keys), int64s(values)).ok()) ++bad;
      }
      auto found = s.find(m, int64s(keys), Tensor::scalar<int64_t>(-1));
      if (!found.ok()) {
        ++bad;
        continue;
      }
      for (int64_t k = 0; k < kKeys; ++k) {
        const int64_t v = found->data<int64_t>()[k];
        if (v != -1 && v != k * 10) ++bad;
      }
      auto fixed = s.find(h, int64s({3}), Tensor::scalar<int64_t>(-1));
      if (fixed.ok() && fixed->data<int64_t>()[0] != 30) ++bad;
      if (!fixed.ok() && !contains(fixed.status().message(), "Table not initialized")) ++bad;
      // (No Boost.Test assertion off the main thread: they are not thread-safe.)
      auto size = s.run("LookupTableSizeV2", {m});
      if (!size.ok() || (*size)[0].scalar_value<int64_t>() > kKeys) ++bad;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
  for (std::thread& t : pool) t.join();
  BOOST_TEST(bad.load() == 0, threads << " threads");
  BOOST_TEST(s.size(h) == kKeys);
  auto out = s.exported(m, i64, i64);
  BOOST_TEST_REQUIRE(out.ok());
  BOOST_TEST((*out)[0].num_elements() == s.size(m));
  for (int64_t i = 0; i < (*out)[0].num_elements(); ++i)
    BOOST_TEST((*out)[1].data<int64_t>()[i] == (*out)[0].data<int64_t>()[i] * 10);
}

BOOST_AUTO_TEST_CASE(find_and_insert_race_safely_at_1_2_and_8_threads) {
  for (int threads : {1, 2, 8}) race(threads);
}

BOOST_AUTO_TEST_SUITE_END()
